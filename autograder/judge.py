"""The one judge: compare a submission's observations with the reference's, and diagnose.

Observations are plain JSON data. Arrays travel as `{"ndarray": [...], "shape": [...]}`.
A key `k_fd` beside a key `k` holds a central difference of the implementation's own
forward pass; it is never compared with the reference, only with `k` of the same side.
A dict holding `inputs` is one case: when it fails, its inputs fill the snippet.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .misconceptions import CATALOGUE
from .worker import Answer

FD_SUFFIX = "_fd"
UNSTEADY = textwrap.fill(
    "Run again in a fresh process, this scenario gave a different answer. Your engine's result "
    "depends on an order that memory addresses decide, such as the order of a set of parents: "
    "a correct engine gives the same answer in any order, so look for a rule that assigns "
    "instead of adding, or a traversal that visits a node before its consumers.", 88)


@dataclass(frozen=True)
class Tolerance:
    rel: float
    abs: float

    def close(self, got: float, expected: float) -> bool:
        if math.isnan(expected) or math.isinf(expected):
            return got == expected or (math.isnan(got) and math.isnan(expected))
        return abs(got - expected) <= self.abs + self.rel * abs(expected)


@dataclass
class Mismatch:
    path: str
    got: object
    expected: object
    inputs: dict | None = None


@dataclass
class Verdict:
    passed: bool
    message: str = ""
    misconception: str | None = None


Suspect = Callable[[object, Answer], bool]


def is_number(x: object) -> bool:
    return type(x) in (int, float)


def is_array(x: object) -> bool:
    return isinstance(x, dict) and "ndarray" in x and "shape" in x


def show(x: object) -> str:
    """A short human form of an observation."""
    if is_array(x):
        values = ", ".join(show(v) for v in x["ndarray"][:6])
        more = ", ..." if len(x["ndarray"]) > 6 else ""
        return f"array of shape {tuple(x['shape'])}: [{values}{more}]"
    if isinstance(x, dict) and set(x) == {"object"}:
        return f"an object of type {x['object']}"
    if type(x) is float:
        text = f"{x:.10g}"
        return text if any(c in text for c in ".ein") else text + ".0"
    if isinstance(x, list):
        return "[" + ", ".join(show(v) for v in x[:8]) + (", ..." if len(x) > 8 else "") + "]"
    return repr(x)


def first_mismatch(expected: object, got: object, tol: Tolerance, path: str = "",
                   inputs: dict | None = None) -> Mismatch | None:
    """The first place where `got` differs from `expected`: structure first, then values."""
    here = path or "result"
    if is_array(expected):
        if not is_array(got):
            return Mismatch(here, got, expected, inputs)
        if got["shape"] != expected["shape"]:
            return Mismatch(f"{here} shape", tuple(got["shape"]), tuple(expected["shape"]), inputs)
        for g, e in zip(got["ndarray"], expected["ndarray"]):
            if not is_number(g) or not tol.close(g, e):
                return Mismatch(here, got, expected, inputs)
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict) or is_array(got):
            return Mismatch(here, got, expected, inputs)
        inputs = expected.get("inputs", inputs)
        for key, value in expected.items():
            if key.endswith(FD_SUFFIX):
                continue
            where = f"{path}.{key}" if path else key
            if key not in got:
                return Mismatch(where, "nothing", value, inputs)
            found = first_mismatch(value, got[key], tol, where, inputs)
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(got, list):
            return Mismatch(here, got, expected, inputs)
        if len(got) != len(expected):
            return Mismatch(f"{here} length", len(got), len(expected), inputs)
        for index, (e, g) in enumerate(zip(expected, got)):
            found = first_mismatch(e, g, tol, f"{path}[{index}]", inputs)
            if found:
                return found
        return None
    if is_number(expected):
        if is_number(got) and tol.close(got, expected):
            return None
        return Mismatch(here, got, expected, inputs)
    return None if got == expected else Mismatch(here, got, expected, inputs)


def fd_mismatch(got: object, tol: Tolerance, path: str = "") -> Mismatch | None:
    """The first gradient that disagrees with the finite difference of its own forward pass."""
    if isinstance(got, list):
        for index, item in enumerate(got):
            if found := fd_mismatch(item, tol, f"{path}[{index}]"):
                return found
    if isinstance(got, dict) and not is_array(got):
        for key, value in got.items():
            where = f"{path}.{key}" if path else key
            twin = got.get(key + FD_SUFFIX)
            if twin is not None and first_mismatch(twin, value, tol, where) is not None:
                return Mismatch(where, value, twin, got.get("inputs"))
            if found := fd_mismatch(value, tol, where):
                return found
    return None


# -- suspects: predicates over (expected observations, submission's answer) -----------------------

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
    if is_array(x):
        yield from x["ndarray"]
    elif isinstance(x, list):
        for item in x:
            yield from flat_numbers(item)
    elif is_number(x):
        yield x


def raised(*names: str) -> Suspect:
    """The submission raised one of these exceptions."""
    return lambda expected, got: got.raised in names


def ratio(key: str, factor: float, tol: float = 1e-6) -> Suspect:
    """Every number under `key` is `factor` times the reference's (and at least one is not 0)."""
    def test(expected: object, got: Answer) -> bool:
        pairs = list(zip(numbers_at(expected, key), numbers_at(got.observations, key)))
        return (any(e != 0 for e, _ in pairs)
                and all(is_number(g) and abs(g - factor * e) <= tol * (1 + abs(e)) for e, g in pairs))
    return test


def sequence(key: str, values: list[float], tol: float = 1e-6) -> Suspect:
    """The numbers under `key` are exactly `values`."""
    def test(expected: object, got: Answer) -> bool:
        found = list(numbers_at(got.observations, key))
        return len(found) == len(values) and all(
            is_number(g) and abs(g - v) <= tol * (1 + abs(v)) for g, v in zip(found, values))
    return test


def shape_is(key: str, shape: Callable[[list[int]], list[int]]) -> Suspect:
    """Every array under `key` has the shape `shape(expected shape)`."""
    def test(expected: object, got: Answer) -> bool:
        pairs = list(zip(arrays_at(expected, key), arrays_at(got.observations, key)))
        mismatched = [(e, g) for e, g in pairs if e["shape"] != g["shape"]]
        return bool(mismatched) and all(g["shape"] == list(shape(e["shape"])) for e, g in mismatched)
    return test


def arrays_at(tree: object, key: str) -> Iterator[dict]:
    if isinstance(tree, list):
        for item in tree:
            yield from arrays_at(item, key)
    elif isinstance(tree, dict) and not is_array(tree):
        for name, value in tree.items():
            if name == key and is_array(value):
                yield value
            else:
                yield from arrays_at(value, key)


# -- the verdict ---------------------------------------------------------------------------------

def fill(snippet: str, values: dict) -> str:
    text = textwrap.dedent(snippet).strip("\n")
    for name, value in values.items():
        text = text.replace("{" + name + "}", repr(value))
    return text


def first_case(observations: object) -> object:
    """The observations of the first case, or all of them when there are no cases."""
    if isinstance(observations, list) and observations and isinstance(observations[0], dict):
        return observations[0]
    return observations


def diagnose(expected: object, got: Answer, suspects: dict[str, Suspect]) -> str | None:
    for misconception_id, suspect in suspects.items():
        try:
            if suspect(expected, got):
                return misconception_id
        except (KeyError, TypeError, ValueError, IndexError):
            continue
    return None


def judge(*, situation: str, snippet: str, kwargs: dict, expected: Answer, got: Answer,
          tolerance: Tolerance, fd_tolerance: Tolerance, suspects: dict[str, Suspect],
          timeout: float) -> Verdict:
    """Compare one scenario's answers and explain any difference to the student."""
    if expected.failure or (expected.raised and expected.raised != got.raised):
        raise RuntimeError(f"the reference failed this scenario: {expected.failure or expected.raised}"
                           f" {expected.message}")
    mismatch = fd_hint = None
    if got.failure:
        came_out = got.failure
        if got.failure.startswith("timed out"):
            came_out += f"; the reference takes {expected.seconds:.3f} s (limit {timeout:.1f} s)"
    elif got.raised:
        if got.raised == expected.raised:
            return Verdict(True)
        came_out = f"raised {got.raised}: {got.message}" + (f"\n    at {got.where}" if got.where else "")
    else:
        mismatch = first_mismatch(expected.observations, got.observations, tolerance)
        if mismatch is None:
            mismatch = fd_mismatch(got.observations, fd_tolerance)
            if mismatch is None:
                return Verdict(True)
            fd_hint = ("That is the central difference of your own forward pass: the forward"
                       " values are right, the backward rule is not.")
        came_out = f"{mismatch.path} = {show(mismatch.got)}"
    case = first_case(expected.observations)
    if expected.raised:
        wanted = f"raises {expected.raised}"
    elif mismatch is not None:
        wanted = f"{mismatch.path} = {show(mismatch.expected)}"
    else:
        wanted = ", ".join(f"{key} = {show(value)}" for key, value in case.items()
                           if key != "inputs" and not key.endswith(FD_SUFFIX)) if isinstance(case, dict) \
            else show(case)
    inputs = mismatch.inputs if mismatch else case.get("inputs") if isinstance(case, dict) else None
    values = {**kwargs, **(inputs or {})}
    misconception = diagnose(expected.observations, got, suspects)
    lines = [situation.strip(), "", "To reproduce:", textwrap.indent(fill(snippet, values), "    "), "",
             f"Came out: {came_out}", f"Expected: {wanted}"]
    if fd_hint:
        lines.append(fd_hint)
    if misconception:
        entry = CATALOGUE[misconception]
        lines += ["", f"Likely cause [{misconception}]: {entry.title}.", textwrap.fill(entry.idea, 88)]
    if got.raised == "NotImplementedError":
        lines += ["", "This part is still a stub: implement it in your file."]
    if got.output.strip():
        lines += ["", "Your code printed:", textwrap.indent(got.output.strip()[:2000], "    ")]
    return Verdict(False, "\n".join(lines), misconception)
