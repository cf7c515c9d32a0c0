"""The one judge: a submission's reply beside the reference's, decided as a `Check`.

`judge` compares a scenario's two replies with the tolerances of grading.toml (answers.py),
checks the gradients against the central differences of the submission's own forward pass,
names the misconception whose shape the wrong answer has (suspects.py), and fills in what the
student is shown: the snippet with the numbers of the case that differs, the values named as
the snippet names them (labels.py), and the graph it built (graphs.py).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import labels
from .answers import (
    Mismatch,
    Series,
    Tolerance,
    answered,
    fd_mismatch,
    first_mismatch,
    is_raised,
    malformed,
    raised_cases,
)
from .check_results import WIDTH, Check, Status, fill, quoted, show, show_exception
from .scenario_sources import recorded_snippet
from .suspects import ALWAYS, Suspect
from .worker import Ending

if TYPE_CHECKING:
    from .worker import Reply

PRINTED_A_LOT = 1_000_000  # bytes a scenario printed that may alone explain a timeout
UNSTEADY = textwrap.fill(
    "Run again with its objects at other memory addresses, this scenario gave a different answer. "
    "Your engine's result depends on an order that memory addresses decide, such as the order of "
    "a set of parents, so the snippet may print other numbers in your own Python, which places "
    "objects anew on every run. A correct engine gives the same answer in any order: look for a "
    "rule that assigns instead of adding, or a traversal that visits a node before its consumers.",
    WIDTH)
FD_HINT = ("That is the central difference of your own forward pass: the forward values are right, the "
           "backward rule is not.")
# The message of a stub's NotImplementedError: "<part>: implement <function>".
STUB_MESSAGE = re.compile(r"^([\w.]+): implement (\S+)$")
# The case a difference was found in: the path of a mismatch in a list of cases starts "[i]".
CASE_PATH = re.compile(r"^\[(\d+)\]")
ENDINGS = {Ending.TIMED_OUT: Status.TIMED_OUT, Ending.CRASHED: Status.CRASHED,
           Ending.MALFORMED: Status.MALFORMED,
           Ending.NOT_RUN: Status.NOT_RUN, Ending.UNLOADED: Status.UNLOADED}


class StaffError(Exception):
    """The reference itself failed a scenario: a fault of the kit, never of the student."""


def judge(*, test: str, part: str, situation: str, snippet: str, kwargs: dict, expected: Reply, got: Reply,
          tolerance: Tolerance, fd_tolerance: Tolerance, suspects: dict[str, Suspect], timeout: float,
          drawings: Callable[[], tuple[list | None, list | None]] | None = None,
          given_rules: bool = False, series: Series | None = None, slow: str = "") -> Check:
    """The Check of one scenario's replies; raises StaffError when the reference did not answer.
    `drawings()`, called only on a failure, gives both sides' graphs (`given_rules`: they hold
    given rules alone); `slow` says what most often makes a correct engine too slow for it."""
    if not answered(expected):
        raise StaffError(reference_failure(expected, kwargs))
    status, mismatch, came_out, raised = _what_came_out(expected, got, tolerance, fd_tolerance, timeout)
    if status is Status.PASSED:
        return Check(test, part, status)
    check = Check(test, part, status, situation=fill(situation.strip(), kwargs), output=got.output)
    case = first_case(expected.observations)
    # The inputs of the case that differs fill the snippet; where no case does (a list of cases
    # of the wrong length), the first case's.
    inputs = mismatch.inputs if mismatch and mismatch.inputs is not None else \
        case.get("inputs") if isinstance(case, dict) else None
    if composite(expected.observations, got.observations, mismatch):
        snippet = recorded_snippet(snippet) or snippet
    check.snippet = fill(snippet, {**kwargs, **(inputs or {})})
    if mismatch is not None:
        name = labels.label(mismatch.path, expected.observations, check.snippet) or mismatch.path
        shown_got = show(mismatch.got)
        check.came_out = f"{name} {shown_got}" if is_raised(mismatch.got) else f"{name} = {shown_got}"
        check.expected = f"{name} = {show(mismatch.expected)}"
        if came_out == "fd":
            check.hints.append(textwrap.fill(FD_HINT, WIDTH))
        if series is not None and (said := series.departure(mismatch.path)):
            check.hints.append(textwrap.fill(said, WIDTH))
    else:
        check.came_out, check.expected = came_out, show(case)
    if status is Status.TIMED_OUT and slow:
        check.hints.append(textwrap.fill(slow, WIDTH))
    check.misconception = diagnose(expected.observations, got, suspects)
    if raised is not None:
        check.stub = stub_named(*raised) or ""
        check.waiting_for = waiting_for(*raised)
    if drawings is not None and not got.failure:
        check.graph = graph_report(expected, got, mismatch, tolerance, drawings, given_rules, part) or ""
    return check


def _what_came_out(expected: Reply, got: Reply, tolerance: Tolerance, fd_tolerance: Tolerance,
                   timeout: float) -> tuple[Status, Mismatch | None, str, tuple[str, str] | None]:
    """How the check ended, the first difference if the submission answered, what came out
    otherwise ("fd" where only the central differences differ), and the type and message of
    what the submission raised, if anything."""
    if got.failure:
        came_out = quoted(got.failure)
        if got.ending is Ending.TIMED_OUT:
            came_out += f"; the reference takes {expected.seconds:.3f} s (limit {timeout:.2f} s)"
            if got.printed >= PRINTED_A_LOT:
                came_out += (f". It printed {got.printed / 1e6:.1f} MB meanwhile, and printing that much "
                             "takes time of its own: print less (or nothing) there, and run it again")
        return ENDINGS.get(got.ending, Status.CRASHED), None, came_out, None
    if got.raised:
        came_out = f"raised {quoted(got.raised.type)}: {quoted(got.raised.message)}" + (
            f"\n    at {quoted(got.raised.where)}" if got.raised.where else "")
        return Status.RAISED, None, came_out, (got.raised.type, got.raised.message)
    if problem := malformed(expected.observations, got.observations):
        return Status.MALFORMED, None, f"a malformed answer: {problem}", None
    mismatch = first_mismatch(expected.observations, got.observations, tolerance)
    if mismatch is None:
        mismatch = fd_mismatch(got.observations, fd_tolerance)
        if mismatch is None:
            return Status.PASSED, None, "", None
        return Status.WRONG, mismatch, "fd", None
    if is_raised(mismatch.got):
        raised = mismatch.got["raised"]
        return Status.RAISED, mismatch, "", (raised["type"], raised["message"])
    return Status.WRONG, mismatch, "", None


def composite(expected: object, got: object, mismatch: Mismatch | None) -> bool:
    """Did the submission's operation make more nodes than the reference's, in the case shown
    (an operation built from others, whose rules its snippet must then all run)?"""
    found = CASE_PATH.match(mismatch.path) if mismatch is not None else None
    index = int(found[1]) if found else 0

    def made(observations: object) -> object:
        case = observations[index] if isinstance(observations, list) and index < len(observations) \
            else observations
        return case.get("inputs", {}).get("made") if isinstance(case, dict) else None

    theirs, mine = made(expected), made(got)
    return type(theirs) is int and type(mine) is int and mine > theirs


def reference_failure(expected: Reply, kwargs: dict) -> str:
    """Why the reference gave no answer, for the course staff: what it raised, in which case, and
    the range that case's inputs were drawn from (a generated suite's LOW and HIGH)."""
    if expected.failure or expected.raised:
        said = f"the reference failed this scenario ({expected.said()})"
    else:
        case = raised_cases(expected.observations)[0]
        raised, inputs = case["raised"], case.get("inputs") or {}
        asked = ", ".join(f"{name} = {show(value)}" for name, value in inputs.items() if name != "made")
        said = (f"the reference failed this scenario (raised {raised['type']}: "
                f"{raised['message'] or 'no message'}) in its case {asked or 'one of its cases'}")
    if "low" in kwargs and "high" in kwargs:
        return (f"{said}, drawn from low = {kwargs['low']!r} to high = {kwargs['high']!r}: keep the range "
                "where the reference is defined (LOW and HIGH at the top of a suite that `autograder part "
                "new` wrote)")
    if not (expected.failure or expected.raised):
        return f"{said}: narrow the range the test asks its numbers from, with ask.number(public, low, high)"
    return said


def first_case(observations: object) -> object:
    """The observations of the first case, or all of them when there are no cases."""
    if isinstance(observations, list) and observations and isinstance(observations[0], dict):
        return observations[0]
    return observations


def stub_named(type_name: str | None, message: str) -> str | None:
    """The sentence naming the stub behind a NotImplementedError, or None."""
    if type_name != "NotImplementedError":
        return None
    found = STUB_MESSAGE.match(message.strip())
    if not found:
        return "Something this check calls is still a stub (it raised NotImplementedError)."
    return f"{found[2]} is still a stub (part {found[1]}): this check needs it."


def waiting_for(type_name: str | None, message: str) -> str | None:
    """The stub ("Value.__mul__") whose NotImplementedError this is, or None."""
    found = STUB_MESSAGE.match(message.strip()) if type_name == "NotImplementedError" else None
    return found[2] if found else None


def diagnose(expected: object, got: Reply, suspects: dict[str, Suspect]) -> str | None:
    """The first misconception whose suspect fits: the kit's own checks first, then the test's."""
    for misconception_id, suspect in {**ALWAYS, **suspects}.items():
        try:
            if suspect(expected, got):
                return misconception_id
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
    return None


def graph_report(expected: Reply, got: Reply, mismatch: Mismatch | None, tolerance: Tolerance,
                 drawings: Callable[[], tuple[list | None, list | None]], given_rules: bool,
                 part: str = "") -> str | None:
    """The graph block for the case a message shows, when `drawings()` gives the graphs both
    sides drew: the case of the first mismatch in a list of cases, or the scenario's one graph."""
    if isinstance(expected.observations, list):
        found = CASE_PATH.match(mismatch.path) if mismatch is not None else None
        cases = len(expected.observations)
        if found is None or not isinstance(got.observations, list) or len(got.observations) != cases:
            return None
        index = int(found[1])
    elif mismatch is not None or got.raised:
        index, cases = 0, 1
    else:
        return None
    theirs, mine = drawings()
    if not all(isinstance(drawn, list) and len(drawn) == cases for drawn in (theirs, mine)):
        return None
    from . import graphs  # imported here: only a failed scenario's message pays for it

    return graphs.report(theirs[index], mine[index], tolerance, given_rules, part)


def changed_given(name: str, expressions: list[str], leaves: dict, expected: dict, got: dict) -> str:
    """The sentence that says a given operation no longer behaves as the handout's: the first
    of its check's expressions that differs, what it gave and what the handout's gives."""
    where = f"with a = Value({show(leaves['a'])}) and b = Value({show(leaves['b'])})"
    if is_raised(got):
        tried = ", ".join(f"`{expression}`" for expression in expressions)
        return (f"Your `{name}` is not the given one: {where}, trying {tried} "
                f"{show_exception(got['raised'])}. Restore it from the handout.")
    wrong = [i for i, (e, g) in enumerate(zip(expected["data"], got["data"])) if e != g]
    if wrong:
        first = wrong[0]
        return (f"Your `{name}` is not the given one: {where}, `{expressions[first]}` gives "
                f"{show(got['data'][first])} where the handout's gives {show(expected['data'][first])}. "
                "Restore it from the handout.")
    tried = ", ".join(f"`{expression}`" for expression in expressions)
    return (f"Your `{name}` is not the given one: {where}, after {tried} (each run back through "
            f"its rules), a.grad and b.grad are {show(got['grads'])} where the handout's give "
            f"{show(expected['grads'])}. Restore it from the handout.")
