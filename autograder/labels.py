"""The snippet's own names for the numbers of an answer, so that a message says `a.grad`.

A snippet prints, in order, exactly the values a case of its scenario holds (the kit's tests
hold every snippet to that). So the k-th value of a case is named by the k-th expression the
snippet prints, counting each pass of a loop: `a.grad, the second time round the loop`. Where
the snippet's prints cannot be counted so (a loop over something other than a range or a
tuple, a print under an `if`), or do not line up with the case, there is no label and a
message names the value by its place in the answer instead.
"""

from __future__ import annotations

import ast
import re

from .answers import shown_values

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
CASE = re.compile(r"^\[(\d+)\]\.?")
SUFFIX = re.compile(r" (shape|length)$")


class Uncountable(Exception):
    """A snippet whose prints cannot be counted without running it."""


def printed(code: str) -> list[str] | None:
    """The expressions `code` prints, in the order it prints them (a loop's once per pass, said
    so), or None when they cannot be counted without running it."""
    try:
        tree = ast.parse(code)
        found: list[str] = []
        _walk(tree.body, code, "", found)
    except (SyntaxError, Uncountable):
        return None
    return found


def _walk(statements: list[ast.stmt], code: str, suffix: str, found: list[str]) -> None:
    for statement in statements:
        if isinstance(statement, ast.For):
            passes = _passes(statement)
            prints = any(_prints(node) for node in ast.walk(statement))
            if prints and (passes is None or statement.orelse):
                raise Uncountable
            for index in range(passes if prints else 0):
                _walk(statement.body, code, f"{suffix}, the {ordinal(index)} time round the loop", found)
        elif _prints(statement) and isinstance(statement, ast.Expr):
            found += [ast.get_source_segment(code, argument) + suffix for argument in statement.value.args]
        elif any(_prints(node) for node in ast.walk(statement)):
            raise Uncountable


def ordinal(index: int) -> str:
    """`first` for 0, `second` for 1, ... `11th` for 10."""
    return ORDINALS[index] if index < len(ORDINALS) else f"{index + 1}th"


def _prints(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
        and getattr(node.value.func, "id", None) == "print"


def _passes(loop: ast.For) -> int | None:
    """How many times a loop runs: `range(N)`, or a literal tuple or list; else None."""
    over = loop.iter
    if isinstance(over, ast.Call) and getattr(over.func, "id", None) == "range" and len(over.args) == 1 \
            and isinstance(over.args[0], ast.Constant) and type(over.args[0].value) is int:
        return over.args[0].value
    if isinstance(over, (ast.Tuple, ast.List)):
        return len(over.elts)
    return None


def label(path: str, observations: object, code: str) -> str | None:
    """The snippet's name for the value at `path` (as a Mismatch names it) of `observations`
    (the reference's answer), where `code` is the snippet filled in for the case the path is
    in; None when there is none."""
    names = printed(code)
    if names is None:
        return None
    suffix = SUFFIX.search(path)
    path = SUFFIX.sub("", path)
    case = observations
    if found := CASE.match(path):
        if not isinstance(observations, list) or int(found[1]) >= len(observations):
            return None
        case, path = observations[int(found[1])], path[found.end():]
    name = _by_value(path, case, names) or _by_key(path, case, names)
    if name is None:
        return None
    return f"{name} {suffix[1]}" if suffix else name


def _by_value(path: str, case: object, names: list[str]) -> str | None:
    """The name of the value at `path`, where the snippet prints each value of the case."""
    paths = [where for where, _ in shown_values(case)]
    return names[paths.index(path)] if len(paths) == len(names) and path in paths else None


def _by_key(path: str, case: object, names: list[str]) -> str | None:
    """The name of the value at `path`, where the snippet prints each key of the case whole (a
    list of losses): the key's name, and the rest of the path."""
    if not isinstance(case, dict):
        return None
    keys = [key for key in case if key != "inputs" and not key.endswith("_fd")]
    found = re.match(r"^(\w+)(.*)$", path)
    if len(keys) != len(names) or found is None or found[1] not in keys:
        return None
    return names[keys.index(found[1])] + found[2]
