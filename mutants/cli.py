"""`autograder mutate [PART ...] [--jobs N]`: the mutation score of those parts' stubs."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from autograder.config import KIT_ROOT as KIT
from autograder.config import ConfigError
from autograder.parts import PartError, declared
from autograder.stubs import StubError

from .generate import MutantError
from .replay import suite_calls
from .run import mutation_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder mutate`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("parts", nargs="*", metavar="PART",
                        help="the parts whose stubs to mutate (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, metavar="N",
                        help="gradings at a time (default: the number of cores)")


def run(args: argparse.Namespace) -> int:
    """The mutation score of the parts asked for: every behaviour-changing mutant must lose points
    in its own part and in no part but those it may also cost. Exit status 1 when one does not,
    or when a part's tests never run its stubs; 2 when the kit cannot be mutated as it is."""
    try:
        known = list(declared(KIT / "autograder" / "suites"))
        if unknown := [part for part in args.parts if part not in known]:
            print(f"autograder mutate: no part {unknown[0]!r}; name one of {', '.join(known)}")
            return 2
        with tempfile.TemporaryDirectory(prefix="autograder-mutate-") as folder:
            scratch = Path(folder)
            sealed, calls = suite_calls(KIT, scratch / "reference")
            result = mutation_run(sealed, scratch / "mutants", args.jobs, parts=args.parts or known,
                                  calls=calls)
    except (ConfigError, PartError, StubError, MutantError, RuntimeError) as error:
        print(f"autograder mutate: {error}")
        return 2
    print(result.report())
    return 1 if result.survivors or result.costs_others() or result.unprobed() else 0
