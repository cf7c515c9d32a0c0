"""Make the course's secret, which every official grading draws its questions from.

`autograder secret [FILE]` (default: grading.secret in the kit). Keep the file, readable by the
course staff alone, and never hand it out: with another secret every submission gets other
questions (the same grade, other numbers in its feedback).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config import KIT_ROOT
from ..questions import SecretError, make_secret, read_secret

# The course's secret, which every official grading draws its questions from: made on first use.
DEFAULT_SECRET = KIT_ROOT / "grading.secret"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder secret`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("file", type=Path, nargs="?", default=DEFAULT_SECRET, metavar="FILE",
                        help=f"where the secret is kept (default: {DEFAULT_SECRET})")


def run(args: argparse.Namespace) -> int:
    """Run `autograder secret`; returns the exit status."""
    try:
        made = make_secret(args.file)
        read_secret(args.file)
    except SecretError as error:
        print(f"autograder secret: {error}")
        return 2
    print(f"{args.file}: {'a new secret, made now' if made else 'the secret is already there; kept'}")
    return 0
