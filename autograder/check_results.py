"""What happened to one check, and the one place that says it to the student.

The judge decides a `Check` (judge.py); the plugin adds what only the whole grading knows (a
given operation that changed, an answer that changed between two runs, the parts a failure
may come from); `message` is then the student's text of it, and `line` its one-line form.
"""

from __future__ import annotations

import enum
import textwrap
from dataclasses import dataclass, field

from .answers import is_array, is_raised
from .misconceptions import CATALOGUE

WIDTH = 88
GRADER_FAULT = "Not checked, a fault of the grader"
# A snippet's first line, where it is to run wherever Python starts: the student's own run,
# whose files may lie anywhere (an official grading's student runs it in the folder of their files).
REPRODUCE = "To reproduce, in Python started in the folder of your files:"
REPRODUCE_ANYWHERE = "To reproduce, in a new Python (its first line finds your files):"


class Status(enum.Enum):
    """How a check ended."""

    PASSED = "passed"
    WRONG = "wrong"  # an answer, with a number, a shape or a length that differs
    RAISED = "raised"  # the submission's code raised an exception
    MALFORMED = "malformed"  # an answer that is not one (its structure, or the worker's reply)
    TIMED_OUT = "timed out"
    CRASHED = "crashed"  # the worker died before it answered
    UNLOADED = "unloaded"  # the engine file it needs is missing or did not import: the one cause
    NOT_RUN = "not run"  # its part's scenarios kept timing out
    GRADER_FAULT = "not checked"  # the reference, or the check itself, failed: never the student's


@dataclass
class Check:
    """One check: its test and part, how it ended, and what the student is told of it."""

    test: str
    part: str
    status: Status
    situation: str = ""  # what was tried: the test's docstring, filled in
    snippet: str = ""  # how to see it: code filled in with the case's numbers
    came_out: str = ""
    expected: str = ""
    hints: list[str] = field(default_factory=list)  # said right after what was expected
    graph: str = ""  # the graph table, where the check built a graph of Values
    notes: list[str] = field(default_factory=list)  # said last: an unsteady answer, the parts it needs
    preface: list[str] = field(default_factory=list)  # said before everything: a changed given operation
    misconception: str | None = None
    waiting_for: str | None = None  # the stub whose NotImplementedError was the whole answer
    stub: str = ""  # the sentence that names that stub (or says a stub was hit)
    output: str = ""  # what the submission printed
    files: str = ""  # the folder a snippet imports the files from ("": where Python starts)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    @classmethod
    def fault(cls, test: str, part: str, why: str) -> Check:
        """A check the grader could not make: said in one line, never scored as the student's."""
        return cls(test, part, Status.GRADER_FAULT, came_out=f"{GRADER_FAULT}: {why}. Tell the course staff.")


def message(check: Check) -> str:
    """The student's text of a check that did not pass (empty for one that did)."""
    if check.passed:
        return ""
    if check.status in (Status.GRADER_FAULT, Status.UNLOADED):
        return "\n\n".join([*check.preface, check.came_out, *check.notes])
    blocks = [*check.preface, check.situation]
    if check.snippet:
        header, code = (REPRODUCE_ANYWHERE, finding(check.files) + check.snippet) if check.files \
            else (REPRODUCE, check.snippet)
        blocks.append(f"{header}\n" + textwrap.indent(code, "    "))
    blocks.append("\n".join([f"Came out: {check.came_out}", f"Expected: {check.expected}", *check.hints]))
    blocks.append(check.graph)
    if check.misconception:
        entry = CATALOGUE[check.misconception]
        idea = textwrap.fill(entry.idea, WIDTH)
        blocks.append(f"Likely cause [{check.misconception}]: {entry.title}.\n{idea}")
    if check.stub:
        blocks.append(check.stub)
    if check.output.strip():
        blocks.append("Your code printed:\n" + textwrap.indent(check.output.strip()[:2000], "    "))
    blocks += check.notes
    return "\n\n".join(block for block in blocks if block)


def finding(folder: str) -> str:
    """The line that puts `folder` first on Python's path (a Windows folder as well as any)."""
    return f"import sys; sys.path.insert(0, {folder!r})  # the folder of your files\n"


def line(check: Check) -> str:
    """The check in one line: its part, its test, and the first difference."""
    if check.status in (Status.GRADER_FAULT, Status.UNLOADED):
        said = check.came_out.splitlines()[0] if check.came_out else check.status.value
    elif check.status is Status.WRONG:
        came_out, expected = check.came_out.splitlines()[0], check.expected.splitlines()[0]
        name = came_out.split(" = ", 1)[0] + " = "
        shown = expected.removeprefix(name) if came_out.startswith(name) else expected
        said = f"{came_out}, expected {shown}"
    else:
        said = check.came_out.splitlines()[0]
    cause = f" [{check.misconception}]" if check.misconception else ""
    return f"{check.part}  {check.test}: {said}{cause}"


# -- showing what was observed ---------------------------------------------------------------------

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
                         if key != "inputs" and not key.endswith("_fd"))
    return repr(x)


def listed(names: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def quoted(text: str) -> str:
    """A submission's text (an exception, a type or file name) for a message, every line after the
    first indented, so none passes for the kit's own (an `Expected:`, a graph table)."""
    return "\n    ".join(text.splitlines())


def show_exception(raised: dict) -> str:
    """`raised Type: message` and where, from an exception record, quoted."""
    text = f"raised {quoted(raised['type'][:200])}: {quoted(raised['message'][:500])}"
    return text + (f"\n    at {quoted(raised['where'][:300])}" if raised["where"] else "")


def fill(snippet: str, values: dict) -> str:
    """`snippet`, dedented, with each `{name}` replaced by the repr of `values[name]`."""
    text = textwrap.dedent(snippet).strip("\n")
    for name, value in values.items():
        text = text.replace("{" + name + "}", repr(value))
    return text
