"""`autograder release`: check the kit (check.py), then build the release it names (release.py).

The command stands above both, as the check itself tries every release format.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import KIT_ROOT
from .check import findings
from .release import ReleaseError, build_gradescope, build_student, building


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder release`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("target", choices=("student", "classroom", "gradescope", "nbgrader"),
                        help="what to build")
    parser.add_argument("-o", "--output", type=Path, required=True,
                        help="a new folder (student, classroom, nbgrader) or a .zip file (gradescope)")


def run(args: argparse.Namespace) -> int:
    """Run `autograder release` after `autograder check`; returns the exit status."""
    try:
        found = findings(KIT_ROOT)
        if found.errors:
            raise ReleaseError("`autograder check` finds the kit inconsistent; fix these first:\n  "
                               + "\n  ".join(found.errors))
        for warning in found.warnings:
            print(f"autograder release: warning: {warning}", file=sys.stderr)
        if args.target == "gradescope":
            build_gradescope(KIT_ROOT, args.output, found.tests)
        elif args.target == "nbgrader":
            try:  # nbformat and nbgrader are extras: load them only here
                from .nbgrader_course import write_notebooks
            except ImportError as error:
                raise ReleaseError(f"the nbgrader notebooks need nbgrader ({error}); "
                                   "pip install -e '.[nbgrader]'") from None
            with building(args.output) as folder:
                write_notebooks(KIT_ROOT, folder)
        else:
            with building(args.output) as folder:
                build_student(KIT_ROOT, folder, classroom=args.target == "classroom", tests=found.tests)
    except ReleaseError as error:
        print(f"autograder release: {error}", file=sys.stderr)
        return 1
    print(f"{args.target} release written to {args.output}")
    return 0
