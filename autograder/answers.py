"""An answer as the judge reads it: its structure, and where it first differs from the reference's.

Observations are plain JSON. An array is `{"ndarray": [...], "shape": [...]}`; a key `k_fd`
beside `k` is a central difference of the same side's forward pass, compared with that `k`
alone; a dict holding `inputs` is one case (the reference's inputs fill the snippet), and a
case that raised is `{"inputs": ..., "raised": {"type", "message", "where"}}`. The submission's
answer must have the reference's structure (`malformed`) before any value is compared.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

FD_SUFFIX = "_fd"
MAX_TEXT = 10_000  # characters of a text in an answer


@dataclass(frozen=True)
class Tolerance:
    """A relative and an absolute tolerance, as grading.toml gives them."""

    rel: float
    abs: float

    def close(self, got: float, expected: float) -> bool:
        """|got - expected| <= abs + rel * |expected|; a nan or inf must be matched exactly."""
        if math.isnan(expected) or math.isinf(expected):
            return got == expected or (math.isnan(got) and math.isnan(expected))
        return abs(got - expected) <= self.abs + self.rel * abs(expected)


@dataclass
class Mismatch:
    """Where an answer first differs (`path`, such as `[2].grad`), both values, the case's inputs."""

    path: str
    got: object
    expected: object
    inputs: dict | None = None


def is_number(x: object) -> bool:
    """A plain float, or an int a float can hold (JSON has ints of any size)."""
    return type(x) is float or (type(x) is int and abs(x) <= sys.float_info.max)


def is_array(x: object) -> bool:
    """Is `x` an array as observations carry one, `{"ndarray": ..., "shape": ...}`?"""
    return isinstance(x, dict) and "ndarray" in x and "shape" in x


def is_raised(x: object) -> bool:
    """A case that raised instead of answering."""
    return isinstance(x, dict) and "raised" in x and isinstance(x["raised"], dict)


def cases_of(observations: object) -> list:
    """The cases of an answer: its list, or the answer itself as the one case."""
    return observations if isinstance(observations, list) else [observations]


# -- the structure of an answer ------------------------------------------------------------------

def malformed(expected: object, got: object, path: str = "") -> str | None:
    """Why `got` cannot be an answer to the scenario whose reference answer is `expected`, or
    None when it has its structure. A wrong shape or length is an answer (a wrong one), and so
    is None, a text, a bool, nan or inf for a number; an array whose numbers do not fill its
    shape, a missing or unknown key, or a value of a type the reference never gives is not."""
    here = path or "the answer"
    if is_array(expected):
        return _malformed_array(got, here)
    if isinstance(expected, dict):
        return _malformed_dict(expected, got, path, here)
    if isinstance(expected, list):
        return _malformed_list(expected, got, path, here)
    if is_number(expected):
        if is_number(got) or got is None or isinstance(got, (str, bool)):
            return None  # inf or nan where the reference is finite is a wrong answer (it never passes)
        return f"{here} is not a number"
    if isinstance(expected, str) and isinstance(got, str) and len(got) > MAX_TEXT:
        return f"{here} is a text of {len(got)} characters"
    return None


def _malformed_array(got: object, here: str) -> str | None:
    if not is_array(got) or set(got) != {"ndarray", "shape"}:
        return f"{here} should be an array"
    shape, numbers = got["shape"], got["ndarray"]
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
        return f"{here} has no valid shape"
    if not isinstance(numbers, list) or len(numbers) != math.prod(shape):
        held = len(numbers) if isinstance(numbers, list) else "no"
        return f"{here} holds {held} numbers for its shape {tuple(shape)}"
    return next((f"{here} holds {x!r}, not a number" for x in numbers if not is_number(x)), None)


def _malformed_dict(expected: dict, got: object, path: str, here: str) -> str | None:
    if is_raised(got) and "inputs" in expected and not is_raised(expected):
        return malformed_exception(got, here)
    if not isinstance(got, dict) or is_array(got):
        return f"{here} should be a dict"
    if set(got) != set(expected):
        return f"{here} has the keys {sorted(got)[:8]}, not {sorted(expected)}"
    for key, value in expected.items():
        if key != "inputs" and (problem := malformed(value, got[key], f"{path}.{key}" if path else key)):
            return problem
    return None


def _malformed_list(expected: list, got: object, path: str, here: str) -> str | None:
    if not isinstance(got, list):
        return f"{here} should be a list"
    if len(got) != len(expected):
        return None  # a wrong length is a wrong answer, judged as such
    for index, (e, g) in enumerate(zip(expected, got)):
        if problem := malformed(e, g, f"{path}[{index}]"):
            return problem
    return None


def malformed_exception(got: dict, here: str) -> str | None:
    """Why the case `got` is not a valid record of a raised exception, or None."""
    raised = got["raised"]
    if set(got) != {"inputs", "raised"} or set(raised) != {"type", "message", "where"}:
        return f"{here} is not a valid exception record"
    if not all(isinstance(raised[key], str) and len(raised[key]) <= MAX_TEXT for key in raised):
        return f"{here} is not a valid exception record"
    return None


# -- the first difference --------------------------------------------------------------------------

def first_mismatch(expected: object, got: object, tol: Tolerance, path: str = "",
                   inputs: dict | None = None) -> Mismatch | None:
    """The first place where `got` differs from `expected`: structure first, then values.
    `got` has already passed `malformed`."""
    here = path or "result"
    if is_array(expected):
        if got["shape"] != expected["shape"]:
            return Mismatch(f"{here} shape", tuple(got["shape"]), tuple(expected["shape"]), inputs)
        if all(tol.close(g, e) for g, e in zip(got["ndarray"], expected["ndarray"])):
            return None
        return Mismatch(here, got, expected, inputs)
    if isinstance(expected, dict):
        inputs = expected.get("inputs", inputs)
        if is_raised(got):
            return Mismatch(here, got, expected, inputs)
        found = (first_mismatch(value, got[key], tol, f"{path}.{key}" if path else key, inputs)
                 for key, value in expected.items() if key != "inputs" and not key.endswith(FD_SUFFIX))
        return next((mismatch for mismatch in found if mismatch), None)
    if isinstance(expected, list):
        if len(got) != len(expected):
            return Mismatch(f"{here} length", len(got), len(expected), inputs)
        found = (first_mismatch(e, g, tol, f"{path}[{index}]", inputs)
                 for index, (e, g) in enumerate(zip(expected, got)))
        return next((mismatch for mismatch in found if mismatch), None)
    if is_number(expected):
        return None if is_number(got) and tol.close(got, expected) else Mismatch(here, got, expected, inputs)
    return None if got == expected else Mismatch(here, got, expected, inputs)


def fd_mismatch(got: object, tol: Tolerance, path: str = "", inputs: dict | None = None) -> Mismatch | None:
    """The first gradient that disagrees with the finite difference of its own forward pass."""
    if isinstance(got, list):
        for index, item in enumerate(got):
            if found := fd_mismatch(item, tol, f"{path}[{index}]", inputs):
                return found
    if isinstance(got, dict) and not is_array(got) and not is_raised(got):
        inputs = got.get("inputs", inputs)
        for key, value in got.items():
            where = f"{path}.{key}" if path else key
            twin = got.get(key + FD_SUFFIX)
            if twin is not None and first_mismatch(twin, value, tol, where) is not None:
                return Mismatch(where, value, twin, inputs)
            if key != "inputs" and (found := fd_mismatch(value, tol, where, inputs)):
                return found
    return None


# -- reading numbers out of an answer -------------------------------------------------------------------

def numbers_at(tree: object, key: str) -> Iterator[float]:
    """Every number stored under `key`, in order, however deep."""
    if isinstance(tree, list):
        for item in tree:
            yield from numbers_at(item, key)
    elif isinstance(tree, dict):
        for name, value in tree.items():
            if name == key:
                yield from flat_numbers(value)
            elif not is_array(value):
                yield from numbers_at(value, key)


def flat_numbers(x: object) -> Iterator[float]:
    """The numbers of `x` (a number, an array or a list of them), in order."""
    if is_array(x):
        yield from x["ndarray"]
    elif isinstance(x, list):
        for item in x:
            yield from flat_numbers(item)
    elif is_number(x):
        yield x


def arrays_at(tree: object, key: str) -> Iterator[dict]:
    """Every array stored under `key`, in order, however deep."""
    if isinstance(tree, list):
        for item in tree:
            yield from arrays_at(item, key)
    elif isinstance(tree, dict) and not is_array(tree):
        for name, value in tree.items():
            if name == key and is_array(value):
                yield value
            else:
                yield from arrays_at(value, key)


def shown_values(case: object, path: str = "") -> Iterator[tuple[str, object]]:
    """The values of a case a message can show, in order, each with its path (as a Mismatch
    names it): every number, and every array as one value; never its inputs nor the finite
    differences beside a gradient."""
    if is_array(case) or not isinstance(case, (dict, list)):
        if is_array(case) or is_number(case):
            yield path, case
        return
    if isinstance(case, list):
        for index, item in enumerate(case):
            yield from shown_values(item, f"{path}[{index}]")
        return
    for key, value in case.items():
        if key != "inputs" and not key.endswith(FD_SUFFIX):
            yield from shown_values(value, f"{path}.{key}" if path else key)


@dataclass(frozen=True)
class Series:
    """A list of an answer that a run fills one entry per step (the losses of a training run),
    and what it means that the first entry, or a later one, is the first to differ."""

    key: str
    unit: str  # what one entry is: "step", "epoch"
    first: str = ""  # why the first entry differs, where the kind of run says
    later: str = ""  # why a later one does

    def departure(self, path: str) -> str | None:
        """The sentence on where the run departs, when the mismatch `path` is an entry of it."""
        found = re.fullmatch(rf"{re.escape(self.key)}\[(\d+)\]", path)
        if found is None:
            return None
        index = int(found[1])
        if index == 0:
            return f"The run departs from the reference's in its first {self.unit}. {self.first}".strip()
        return (f"The run follows the reference's for {index} {self.unit}{'s' if index > 1 else ''}, and "
                f"departs in {self.unit} {index + 1}. {self.later}").strip()


def raised_cases(observations: object) -> list[dict]:
    """The cases of an answer that raised instead of answering."""
    return [case for case in observations if is_raised(case)] if isinstance(observations, list) else []


def answered(reply) -> bool:
    """A worker's reply ran its scenario to the end: no failure, no exception, in no case either."""
    return not (reply.failure or reply.raised or raised_cases(reply.observations))
