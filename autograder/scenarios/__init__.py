"""Scenarios: small deterministic programs over the public API of one implementation.

Each module here runs inside a worker process, so it imports only the standard library,
numpy and its sibling modules (relatively). A scenario's first parameter is named after the
submission file it uses (`value`, `tensor` or `dual`) and receives that module; the other
parameters are plain data, and it returns plain data: numbers, lists, dicts, strings, arrays.
Its docstring is a snippet a student can paste to reproduce it, with `{name}` placeholders
filled from its arguments (and from the `inputs` of the case that failed, if it has cases).
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent


@cache
def sources() -> dict[str, str]:
    """Every scenario module's source, by module name, to send to a worker."""
    return {path.stem: path.read_text(encoding="utf-8")
            for path in sorted(HERE.glob("*.py")) if path.stem != "__init__"}


def module(name: str):
    return importlib.import_module(f"{__name__}.{name}")
