"""The grader: what students, Gradescope and GitHub Classroom run, as `pytest autograder`."""

import sys

# The oldest Python the grader runs on; pyproject.toml's requires-python says the same (a kit
# test checks that they agree).
MINIMUM_PYTHON = (3, 9)

if sys.version_info < MINIMUM_PYTHON:
    raise SystemExit(f"autograder: needs Python {'.'.join(map(str, MINIMUM_PYTHON))} or newer, and this "
                     f"is {sys.version.split()[0]}; install a newer one and its numpy and pytest")
