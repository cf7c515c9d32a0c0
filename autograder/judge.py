"""The one judge: compare a submission's observations with the reference's, and diagnose.

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
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .misconceptions import CATALOGUE
from .worker import Outcome

if TYPE_CHECKING:
    from .worker import Answer

FD_SUFFIX = "_fd"
PRINTED_A_LOT = 1_000_000  # bytes a scenario printed that may alone explain a timeout
MAX_TEXT = 10_000
UNSTEADY = textwrap.fill(
    "Run again in a fresh process, this scenario gave a different answer. Your engine's result "
    "depends on an order that memory addresses decide, such as the order of a set of parents: "
    "a correct engine gives the same answer in any order, so look for a rule that assigns "
    "instead of adding, or a traversal that visits a node before its consumers.", 88)
# The message of a stub's NotImplementedError: "<part>: implement <function>".
STUB_MESSAGE = re.compile(r"^([\w.]+): implement (\S+)$")
# The case a difference was found in: the path of a mismatch in a list of cases starts "[i]".
CASE_PATH = re.compile(r"^\[(\d+)\]")


class StaffError(Exception):
    """The reference itself failed a scenario: a fault of the kit, never of the student."""


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


@dataclass
class Verdict:
    """The judge's word on one scenario: passed, or the message, misconception and stub it names."""

    passed: bool
    message: str = ""
    misconception: str | None = None
    waiting_for: str | None = None  # the stub whose NotImplementedError was the whole answer
    # The snippet as shown, and as it runs the rules the way the kit did (for a backward() that
    # does not pass yet): a message swaps the one for the other.
    kit_snippet: tuple[str, str] | None = None
    kit_reverse: bool = False  # the scenario ran the kit's own reverse pass, not backward()
    unloaded: bool = False  # the engine file it needs is missing or did not import: that is the cause


Suspect = Callable[[object, "Answer"], bool]


def is_number(x: object) -> bool:
    """A plain float, or an int a float can hold (JSON has ints of any size)."""
    return type(x) is float or (type(x) is int and abs(x) <= sys.float_info.max)


def is_array(x: object) -> bool:
    """Is `x` an array as observations carry one, `{"ndarray": ..., "shape": ...}`?"""
    return isinstance(x, dict) and "ndarray" in x and "shape" in x


def is_raised(x: object) -> bool:
    """A case that raised instead of answering."""
    return isinstance(x, dict) and "raised" in x and isinstance(x["raised"], dict)


# -- the structure of an answer ------------------------------------------------------------------

def malformed(expected: object, got: object, path: str = "") -> str | None:
    """Why `got` cannot be an answer to the scenario whose reference answer is `expected`, or
    None when it has its structure. A wrong shape or length is an answer (a wrong one), and so
    is None, a text, a bool, nan or inf for a number; an array whose numbers do not fill its
    shape, a missing or unknown key, or a value of a type the reference never gives is not."""
    here = path or "the answer"
    if is_array(expected):
        if not is_array(got) or set(got) != {"ndarray", "shape"}:
            return f"{here} should be an array"
        shape, numbers = got["shape"], got["ndarray"]
        if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
            return f"{here} has no valid shape"
        if not isinstance(numbers, list) or len(numbers) != math.prod(shape):
            return f"{here} holds {len(numbers) if isinstance(numbers, list) else 'no'} numbers for " \
                   f"its shape {tuple(shape)}"
        return next((f"{here} holds {x!r}, not a number" for x in numbers if not is_number(x)), None)
    if isinstance(expected, dict):
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
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{here} should be a list"
        if len(got) != len(expected):
            return None  # a wrong length is a wrong answer, judged as such
        for index, (e, g) in enumerate(zip(expected, got)):
            if problem := malformed(e, g, f"{path}[{index}]"):
                return problem
        return None
    if is_number(expected):
        if not is_number(got):
            return None if got is None or isinstance(got, (str, bool)) else f"{here} is not a number"
        return None  # inf or nan where the reference is finite is a wrong answer (it never passes)
    if isinstance(expected, str) and isinstance(got, str) and len(got) > MAX_TEXT:
        return f"{here} is a text of {len(got)} characters"
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
        for g, e in zip(got["ndarray"], expected["ndarray"]):
            if not tol.close(g, e):
                return Mismatch(here, got, expected, inputs)
        return None
    if isinstance(expected, dict):
        inputs = expected.get("inputs", inputs)
        if is_raised(got):
            return Mismatch(here, got, expected, inputs)
        for key, value in expected.items():
            if key == "inputs" or key.endswith(FD_SUFFIX):
                continue
            found = first_mismatch(value, got[key], tol, f"{path}.{key}" if path else key, inputs)
            if found:
                return found
        return None
    if isinstance(expected, list):
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
    """The numbers of `x` (a number, an array or a list of them), in order."""
    if is_array(x):
        yield from x["ndarray"]
    elif isinstance(x, list):
        for item in x:
            yield from flat_numbers(item)
    elif is_number(x):
        yield x


def paired(expected: object, got: Answer, key: str) -> list[tuple[float, float]] | None:
    """The numbers under `key` on both sides, paired; None when they do not line up (a case
    raised, or a list came back shorter), so that no suspect reads a misaligned pair."""
    wanted, found = list(numbers_at(expected, key)), list(numbers_at(got.observations, key))
    return list(zip(wanted, found)) if len(wanted) == len(found) and wanted else None


def raised(*names: str) -> Suspect:
    """The submission raised one of these exceptions (in the scenario, or in any case of it)."""
    def test(expected: object, got: Answer) -> bool:
        return got.raised in names or any(case["raised"]["type"] in names for case in raised_cases(got))
    return test


def raised_saying(name: str, *texts: str) -> Suspect:
    """The submission raised `name` with one of `texts` in its message (here or in a case)."""
    def test(expected: object, got: Answer) -> bool:
        found = [(got.raised, got.message)] + [(c["raised"]["type"], c["raised"]["message"])
                                               for c in raised_cases(got)]
        return any(kind == name and any(text in message for text in texts) for kind, message in found)
    return test


def unwrapped(attribute: str) -> Suspect:
    """A plain number was used where the engine's class was expected: it has no `.data` (or
    `.val`), or an operator refused the pair."""
    no_attribute = raised_saying("AttributeError", f"has no attribute '{attribute}'")
    refused = raised_saying("TypeError", "unsupported operand type")
    return lambda expected, got: no_attribute(expected, got) or refused(expected, got)


def raised_cases(got: Answer) -> list[dict]:
    """The cases of the answer that raised instead of answering."""
    cases = got.observations if isinstance(got.observations, list) else []
    return [case for case in cases if is_raised(case)]


def answered(answer: Answer) -> bool:
    """The scenario ran to its end: no failure, no exception, in no case either."""
    return not (answer.failure or answer.raised or raised_cases(answer))


def ratio(key: str, factor: float, tol: float = 1e-6) -> Suspect:
    """Every number under `key` is `factor` times the reference's (and at least one is not 0)."""
    def test(expected: object, got: Answer) -> bool:
        pairs = paired(expected, got, key)
        return bool(pairs) and any(e != 0 for e, _ in pairs) and all(
            abs(g - factor * e) <= tol * (1 + abs(e)) for e, g in pairs)
    return test


def sequence(key: str, values: list[float], tol: float = 1e-6) -> Suspect:
    """The numbers under `key` are exactly `values`."""
    def test(expected: object, got: Answer) -> bool:
        found = list(numbers_at(got.observations, key))
        return len(found) == len(values) and all(abs(g - v) <= tol * (1 + abs(v))
                                                 for g, v in zip(found, values))
    return test


def lost_a_contribution(key: str, index: int | None, amount: float) -> Suspect:
    """The value at `key` (item `index` of it) is `amount` short of the reference's in every
    case: one consumer's contribution was assigned over instead of added to."""
    def test(expected: object, got: Answer) -> bool:
        wanted = expected if isinstance(expected, list) else [expected]
        found = got.observations if isinstance(got.observations, list) else [got.observations]
        if len(found) != len(wanted) or not all(isinstance(c, dict) and key in c for c in found):
            return False
        pick = (lambda c: c[key]) if index is None else (lambda c: c[key][index])
        return all(abs(pick(g) - (pick(e) - amount)) <= 1e-9 * (1 + abs(pick(e)))
                   for e, g in zip(wanted, found))
    return test


def shape_is(key: str, shape: Callable[[list[int]], list[int]]) -> Suspect:
    """Every array under `key` has the shape `shape(expected shape)`."""
    def test(expected: object, got: Answer) -> bool:
        pairs = list(zip(arrays_at(expected, key), arrays_at(got.observations, key)))
        mismatched = [(e, g) for e, g in pairs if e["shape"] != g["shape"]]
        return bool(mismatched) and all(g["shape"] == list(shape(e["shape"])) for e, g in mismatched)
    return test


# The kit's reverse pass (scenarios/value.py, Tape) raises this when a rule writes outside its node's parents.
ALWAYS: dict[str, Suspect] = {"rule-on-the-wrong-node": raised("WrongParents")}


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


# -- showing answers --------------------------------------------------------------------------------

def show(x: object) -> str:
    """A short human form of an observation."""
    if is_array(x):
        values = ", ".join(show(v) for v in x["ndarray"][:6])
        more = ", ..." if len(x["ndarray"]) > 6 else ""
        return f"array of shape {tuple(x['shape'])}: [{values}{more}]"
    if is_raised(x):
        return show_exception(x["raised"])
    if isinstance(x, dict) and set(x) == {"object"}:
        return f"an object of type {quoted(x['object'])}"
    if type(x) is float:
        text = f"{x:.10g}"
        return text if any(c in text for c in ".ein") else text + ".0"
    if isinstance(x, list):
        return "[" + ", ".join(show(v) for v in x[:8]) + (", ..." if len(x) > 8 else "") + "]"
    if isinstance(x, dict):
        return ", ".join(f"{key} = {show(value)}" for key, value in x.items()
                         if key != "inputs" and not key.endswith(FD_SUFFIX))
    return repr(x)


def listed(names: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def quoted(text: str) -> str:
    """A submission's text (an exception, a type or file name) for a message, every line after the
    first indented, so none passes for the kit's own (an `Expected:`, a graph table)."""
    return "\n    ".join(text.splitlines())


def show_exception(raised_: dict) -> str:
    """`raised Type: message` and where, from an exception record, quoted."""
    text = f"raised {quoted(raised_['type'])}: {quoted(raised_['message'][:500])}"
    return text + (f"\n    at {quoted(raised_['where'][:300])}" if raised_["where"] else "")


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


def fill(snippet: str, values: dict) -> str:
    """`snippet`, dedented, with each `{name}` replaced by the repr of `values[name]`."""
    text = textwrap.dedent(snippet).strip("\n")
    for name, value in values.items():
        text = text.replace("{" + name + "}", repr(value))
    return text


def first_case(observations: object) -> object:
    """The observations of the first case, or all of them when there are no cases."""
    if isinstance(observations, list) and observations and isinstance(observations[0], dict):
        return observations[0]
    return observations


def _stub_raised(type_name: str | None, message: str) -> re.Match | None:
    """The stub's own NotImplementedError ("part: implement Name"), matched, or None."""
    return STUB_MESSAGE.match(message.strip()) if type_name == "NotImplementedError" else None


def stub_named(type_name: str | None, message: str) -> str | None:
    """The sentence naming the stub behind a NotImplementedError, or None."""
    if type_name != "NotImplementedError":
        return None
    found = _stub_raised(type_name, message)
    if not found:
        return "Something this check calls is still a stub (it raised NotImplementedError)."
    return f"{found[2]} is still a stub (part {found[1]}): this check needs it."


def waiting_for(type_name: str | None, message: str) -> str | None:
    """The stub ("Value.__mul__") whose NotImplementedError this is, or None."""
    found = _stub_raised(type_name, message)
    return found[2] if found else None


def diagnose(expected: object, got: Answer, suspects: dict[str, Suspect]) -> str | None:
    """The first misconception whose suspect fits: the kit's own checks first, then the test's."""
    for misconception_id, suspect in {**ALWAYS, **suspects}.items():
        try:
            if suspect(expected, got):
                return misconception_id
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
    return None


def graph_report(expected: Answer, got: Answer, mismatch: Mismatch | None, tolerance: Tolerance,
                 drawings: Callable[[], tuple[list | None, list | None]], given_rules: bool) -> str | None:
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

    return graphs.report(theirs[index], mine[index], tolerance, given_rules)


# -- the verdict ---------------------------------------------------------------------------------

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


def judge(*, situation: str, snippet: str, kwargs: dict, expected: Answer, got: Answer,
          tolerance: Tolerance, fd_tolerance: Tolerance, suspects: dict[str, Suspect],
          timeout: float, preface: str = "",
          drawings: Callable[[], tuple[list | None, list | None]] | None = None,
          given_rules: bool = False, kit_snippet: str | None = None, series: Series | None = None) -> Verdict:
    """The Verdict on one scenario's answers; raises StaffError when the reference did not answer.
    `preface` opens the message; `drawings()`, called only on a failure, gives both sides' graphs
    (`given_rules`: they hold given rules alone); `kit_snippet` is the snippet as the kit's own
    reverse pass runs it, for a student whose backward() does not pass yet."""
    if not answered(expected):
        why = expected.failure or expected.raised or raised_cases(expected)[0]["raised"]["type"]
        raise StaffError(f"the reference failed this scenario ({why} {expected.message})".strip())
    mismatch = fd_hint = None
    stub_error: tuple[str | None, str] = (None, "")  # the type and message of what raised, if anything
    if got.failure:
        came_out = quoted(got.failure)
        if got.outcome is Outcome.TIMED_OUT:
            came_out += f"; the reference takes {expected.seconds:.3f} s (limit {timeout:.1f} s)"
            if got.printed >= PRINTED_A_LOT:
                came_out += (f". It printed {got.printed / 1e6:.1f} MB meanwhile, and printing that much "
                             "takes time of its own: print less (or nothing) there, and run it again")
    elif got.raised:
        came_out = f"raised {quoted(got.raised)}: {quoted(got.message)}" + (
            f"\n    at {quoted(got.where)}" if got.where else "")
        stub_error = (got.raised, got.message)
    elif problem := malformed(expected.observations, got.observations):
        came_out = f"a malformed answer: {problem}"
    else:
        mismatch = first_mismatch(expected.observations, got.observations, tolerance)
        if mismatch is None:
            mismatch = fd_mismatch(got.observations, fd_tolerance)
            if mismatch is None:
                return Verdict(True)
            fd_hint = ("That is the central difference of your own forward pass: the forward"
                       " values are right, the backward rule is not.")
        came_out = f"{mismatch.path} = {show(mismatch.got)}"
        if is_raised(mismatch.got):
            came_out = f"{mismatch.path} {show(mismatch.got)}"
            stub_error = (mismatch.got["raised"]["type"], mismatch.got["raised"]["message"])
    case = first_case(expected.observations)
    wanted = f"{mismatch.path} = {show(mismatch.expected)}" if mismatch is not None else show(case)
    # The inputs of the case that differs fill the snippet; where no case does (a list of cases
    # of the wrong length), the first case's.
    inputs = mismatch.inputs if mismatch and mismatch.inputs is not None else \
        case.get("inputs") if isinstance(case, dict) else None
    values = {**kwargs, **(inputs or {})}
    misconception = diagnose(expected.observations, got, suspects)
    shown = textwrap.indent(fill(snippet, values), "    ")
    lines = ([preface, ""] if preface else []) + [
        fill(situation.strip(), kwargs), "", "To reproduce, in Python started in the folder of your files:",
        shown, "",
        f"Came out: {came_out}", f"Expected: {wanted}"]
    if fd_hint:
        lines.append(fd_hint)
    if series is not None and mismatch is not None and (said := series.departure(mismatch.path)):
        lines.append(textwrap.fill(said, 88))
    if drawings is not None and not got.failure \
            and (block := graph_report(expected, got, mismatch, tolerance, drawings, given_rules)):
        lines += ["", block]
    if misconception:
        entry = CATALOGUE[misconception]
        lines += ["", f"Likely cause [{misconception}]: {entry.title}.", textwrap.fill(entry.idea, 88)]
    if stub := stub_named(*stub_error):
        lines += ["", stub]
    if got.output.strip():
        lines += ["", "Your code printed:", textwrap.indent(got.output.strip()[:2000], "    ")]
    swap = (shown, textwrap.indent(fill(kit_snippet, values), "    ")) if kit_snippet else None
    return Verdict(False, "\n".join(lines), misconception, waiting_for=waiting_for(*stub_error),
                   kit_snippet=swap)
