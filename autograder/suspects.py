"""Suspects: the shapes of a wrong answer that name a misconception.

A suspect is a predicate over (the reference's observations, the submission's reply): does
the wrong answer have the shape one misconception gives? The suites name one per
misconception they can tell (`suspects={"overwrites-gradient": ratio("grad", 0.5)}`), with
these as their vocabulary; the judge asks them in order (`judge.diagnose`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .answers import arrays_at, cases_of, numbers_at, raised_cases

if TYPE_CHECKING:
    from .worker import Reply

Suspect = Callable[[object, "Reply"], bool]


def paired(expected: object, got: Reply, key: str) -> list[tuple[float, float]] | None:
    """The numbers under `key` on both sides, paired; None when they do not line up (a case
    raised, or a list came back shorter), so that no suspect reads a misaligned pair."""
    wanted, found = list(numbers_at(expected, key)), list(numbers_at(got.observations, key))
    return list(zip(wanted, found)) if len(wanted) == len(found) and wanted else None


def raised(*names: str) -> Suspect:
    """The submission raised one of these exceptions (in the scenario, or in any case of it)."""
    def test(expected: object, got: Reply) -> bool:
        return (got.raised is not None and got.raised.type in names) or any(
            case["raised"]["type"] in names for case in raised_cases(got.observations))
    return test


def raised_saying(name: str, *texts: str) -> Suspect:
    """The submission raised `name` with one of `texts` in its message (here or in a case)."""
    def test(expected: object, got: Reply) -> bool:
        found = [(c["raised"]["type"], c["raised"]["message"]) for c in raised_cases(got.observations)]
        if got.raised is not None:
            found.append((got.raised.type, got.raised.message))
        return any(kind == name and any(text in message for text in texts) for kind, message in found)
    return test


def unwrapped(attribute: str) -> Suspect:
    """A plain number was used where the engine's class was expected: it has no `.data` (or
    `.val`), or an operator refused the pair."""
    no_attribute = raised_saying("AttributeError", f"has no attribute '{attribute}'")
    refused = raised_saying("TypeError", "unsupported operand type")
    return lambda expected, got: no_attribute(expected, got) or refused(expected, got)


def ratio(key: str, factor: float, tol: float = 1e-6) -> Suspect:
    """Every number under `key` is `factor` times the reference's (and at least one is not 0)."""
    def test(expected: object, got: Reply) -> bool:
        pairs = paired(expected, got, key)
        return bool(pairs) and any(e != 0 for e, _ in pairs) and all(
            abs(g - factor * e) <= tol * (1 + abs(e)) for e, g in pairs)
    return test


def sequence(key: str, values: list[float], tol: float = 1e-6) -> Suspect:
    """The numbers under `key` are exactly `values`."""
    def test(expected: object, got: Reply) -> bool:
        found = list(numbers_at(got.observations, key))
        return len(found) == len(values) and all(abs(g - v) <= tol * (1 + abs(v))
                                                 for g, v in zip(found, values))
    return test


def lost_a_contribution(key: str, index: int | None, amount: float) -> Suspect:
    """The value at `key` (item `index` of it) is `amount` short of the reference's in every
    case: one consumer's contribution was assigned over instead of added to."""
    def test(expected: object, got: Reply) -> bool:
        wanted, found = cases_of(expected), cases_of(got.observations)
        if len(found) != len(wanted) or not all(isinstance(c, dict) and key in c for c in found):
            return False
        pick = (lambda c: c[key]) if index is None else (lambda c: c[key][index])
        return all(abs(pick(g) - (pick(e) - amount)) <= 1e-9 * (1 + abs(pick(e)))
                   for e, g in zip(wanted, found))
    return test


def shape_is(key: str, shape: Callable[[list[int]], list[int]]) -> Suspect:
    """Every array under `key` has the shape `shape(expected shape)`."""
    def test(expected: object, got: Reply) -> bool:
        pairs = list(zip(arrays_at(expected, key), arrays_at(got.observations, key)))
        mismatched = [(e, g) for e, g in pairs if e["shape"] != g["shape"]]
        return bool(mismatched) and all(g["shape"] == list(shape(e["shape"])) for e, g in mismatched)
    return test


# The kit's reverse pass (inside/scenarios/value.py, Tape) raises these: MergedNodes when a rule
# writes into a value its node's parents hold only as an equal one, WrongParents when a rule writes
# outside its node's parents otherwise, or an operation gives an operand a rule of its own.
ALWAYS: dict[str, Suspect] = {"equal-data-merged": raised("MergedNodes"),
                              "rule-on-the-wrong-node": raised("WrongParents")}
