"""`autograder release`: check the kit (check.py), then build the release it names (release.py).

The command stands above both, as the check itself tries every release format.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from ..config import KIT_ROOT
from .check import findings
from .release import ReleaseError, SuiteTest, build_gradescope, build_student, building, prepare

# Every release, by the name `autograder release all` gives it in its folder.
EVERY = {"student": "student", "classroom": "classroom", "nbgrader": "nbgrader",
         "gradescope": "autograder.zip"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder release`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("target", choices=(*EVERY, "all"),
                        help="what to build; all: each of them, checked once, into one folder")
    parser.add_argument("-o", "--output", type=Path, required=True,
                        help="a new folder (student, classroom, nbgrader, all) or a .zip file (gradescope)")


def run(args: argparse.Namespace) -> int:
    """Run `autograder release` after `autograder check`; returns the exit status."""
    try:
        if args.target in ("nbgrader", "all"):
            notebooks()  # before the check, which takes a while
        if args.target == "all":
            prepare(args.output)
        found = findings(KIT_ROOT)
        if found.errors:
            raise ReleaseError("`autograder check` finds the kit inconsistent; fix these first:\n  "
                               + "\n  ".join(found.errors))
        for warning in found.warnings:
            print(f"autograder release: warning: {warning}", file=sys.stderr)
        if args.target == "all":
            with building(args.output) as folder:  # all of them, or none
                for target, name in EVERY.items():
                    build(target, folder / name, found.tests)
        else:
            build(args.target, args.output, found.tests)
    except ReleaseError as error:
        print(f"autograder release: {error}", file=sys.stderr)
        return 1
    print(f"{args.target} release{'s' if args.target == 'all' else ''} written to {args.output}")
    return 0


def build(target: str, out: Path, tests: list[SuiteTest]) -> None:
    """Build the release `target` into `out`, with the suites' tests as check collected them."""
    if target == "gradescope":
        build_gradescope(KIT_ROOT, out, tests)
    elif target == "nbgrader":
        with building(out) as folder:
            notebooks()(KIT_ROOT, folder)
    else:
        with building(out) as folder:
            build_student(KIT_ROOT, folder, classroom=target == "classroom", tests=tests)


def notebooks() -> Callable[[Path, Path], None]:
    """nbgrader_release.write_notebooks; raises ReleaseError where nbgrader, which the notebooks are
    for, or nbformat, which writes them, is not installed."""
    try:  # extras: nbformat is loaded only here, nbgrader (a second to import) only looked for
        if importlib.util.find_spec("nbgrader") is None:
            raise ModuleNotFoundError("No module named 'nbgrader'", name="nbgrader")
        from .nbgrader_release import write_notebooks
    except ImportError as error:
        raise ReleaseError(f"the nbgrader notebooks need nbgrader ({error}); "
                           "pip install -e '.[nbgrader]'") from None
    return write_notebooks
