"""Scenarios: small deterministic programs over the public API of one implementation.

A scenario is a function declared with `@scenario(engine, reverse=...)` (common.py): it takes
the submission's module (`value`, `tensor` or `dual`) and plain data, and returns plain data.
Its docstring is a snippet a student can paste, its `{name}`s filled from its arguments and
the failing case's `inputs`. The modules run in the worker (standard library, numpy and
relative imports only); the trusted side never imports them and reads what it needs from
their source.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent / "inside" / "scenarios"


@dataclass(frozen=True)
class Scenario:
    """What the trusted side knows of one scenario without running it."""

    id: str
    engine: str  # the submission file it needs, as declared
    reverse: str  # who runs its reverse pass, as declared: "kit", "backward" or "none"
    snippet: str  # its docstring
    operations: frozenset[str]  # what its snippet may use of value.py (value scenarios only)

    @property
    def kit_reverse(self) -> bool:
        """Its reverse pass is the kit's own, not the submission's backward()."""
        return self.reverse == "kit"


@cache
def sources() -> dict[str, str]:
    """Every scenario module's source, by module name, to send to a worker."""
    return {path.stem: path.read_text(encoding="utf-8")
            for path in sorted(HERE.glob("*.py")) if path.stem != "__init__"}


@cache
def _module(name: str) -> dict[str, ast.FunctionDef]:
    """The top-level functions of the scenario module `name`, by name; raises LookupError."""
    try:
        source = sources()[name]
    except KeyError:
        raise LookupError(f"no scenario module {name!r} in {HERE}") from None
    return {node.name: node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


def declaration(function: ast.FunctionDef) -> dict | None:
    """The arguments of a function's `@scenario(...)` decorator, or None when it has none."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "scenario":
            arguments = dict(zip(("engine", "reverse"), (ast.literal_eval(a) for a in decorator.args)))
            arguments.update({k.arg: ast.literal_eval(k.value) for k in decorator.keywords})
            return {"reverse": "none", **arguments}
    return None


@cache
def scenario(scenario_id: str) -> Scenario:
    """The scenario behind an id such as `value:products`; raises LookupError when there is none."""
    module_name, _, function_name = scenario_id.partition(":")
    functions = _module(module_name)
    declared = declaration(functions[function_name]) if function_name in functions else None
    if declared is None:
        raise LookupError(f"scenarios/{module_name}.py has no scenario {function_name!r} (a function "
                          "declared with @scenario)")
    snippet = ast.get_docstring(functions[function_name], clean=False) or ""
    return Scenario(id=scenario_id, engine=declared["engine"], reverse=declared["reverse"], snippet=snippet,
                    operations=operations_in(snippet) if declared["engine"] == "value" else frozenset())


def every_scenario() -> list[Scenario]:
    """Every scenario of every module."""
    return [scenario(f"{module}:{name}") for module in sources() for name, function in _module(module).items()
            if declaration(function) is not None]


# The operators a snippet can apply to a Value, by the names the kit gives operations (stubs.py).
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
FLOATS = ("data", "grad")  # a Value's plain numbers: arithmetic on them is no operation of the engine


def operations_in(snippet: str) -> frozenset[str]:
    """The operations of value.py a snippet's code may use: every operator it applies to
    anything but plain numbers (two constants, or a Value's `.data` or `.grad`), `Value(...)`,
    and the name of every method it calls."""
    try:
        tree = ast.parse(_dedent(snippet))
    except SyntaxError:
        return frozenset()

    def number(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in FLOATS

    def constant(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant)

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS and not (
                number(node.left) or number(node.right) or constant(node.left) and constant(node.right)):
            found.add(OPERATORS[type(node.op)])
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and not (number(node.operand) or constant(node.operand)):
            found.add("unary -")
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                found.add(node.func.attr)
            elif isinstance(node.func, ast.Name) and node.func.id == "Value":
                found.add("Value")
    return frozenset(found)


def _dedent(snippet: str) -> str:
    """The snippet's code, dedented, its `{name}` placeholders' braces dropped so that it parses."""
    return textwrap.dedent(snippet).strip("\n").replace("{", "").replace("}", "")


KIT_REVERSE_HEAD = """\
import sys
sys.path.append("..")                          # the kit's folder, which holds autograder/
import value
from autograder.inside.scenarios.value import Tape    # the reverse pass this check ran"""
BACKWARD_CALL = re.compile(r"^(?P<indent>\s*)(?P<root>\w+)\.backward\(\)")


def kit_reverse_snippet(snippet: str) -> str | None:
    """A snippet that calls backward() rewritten to run the rules as the kit's Tape does (for a
    student whose backward() does not pass yet): the lines that build the graph, up to the one
    that makes the root, inside `with Tape(value) as tape:`, and `tape.reverse(root)` for the
    call. None when the snippet calls no backward() or builds its root nowhere it can tell."""
    lines = textwrap.dedent(snippet).strip("\n").splitlines()
    calls = [(number, found) for number, line in enumerate(lines) if (found := BACKWARD_CALL.match(line))]
    if not calls:
        return None
    root = calls[0][1]["root"]
    assigns = re.compile(rf"^\s*{root}\s*=[^=]")
    made = next((n for n in range(calls[0][0] - 1, -1, -1) if assigns.match(lines[n])), None)
    if made is None:
        return None
    indent = len(lines[made]) - len(lines[made].lstrip())
    start = made
    while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(("from ", "import ")) \
            and len(lines[start - 1]) - len(lines[start - 1].lstrip()) >= indent:
        start -= 1
    pad = " " * indent
    wrapped = [f"{pad}with Tape(value) as tape:          # records every Value made in the block"]
    wrapped += ["    " + line for line in lines[start:made + 1]]
    rest = [_tape_reverse(line) for line in lines[made + 1:]]
    return "\n".join([KIT_REVERSE_HEAD, *lines[:start], *wrapped, *rest])


def _tape_reverse(line: str) -> str:
    """A snippet's line with its `root.backward()` call, if any, made `tape.reverse(root)`."""
    if not BACKWARD_CALL.match(line):
        return line
    reverse = BACKWARD_CALL.sub(lambda m: f"{m['indent']}tape.reverse({m['root']})", line)
    return reverse.split("#")[0].rstrip() + "      # each node's rule once, newest first"


BINARY = ("+", "-", "*", "/")


def given_checks(operations: list[str]) -> dict[str, list[str]]:
    """The expressions that the check of the given operations tries for each of `operations`,
    by name in sorted order (as the request carries them): in two Value leaves `a` and `b`,
    both above 0, and a new leaf where a case needs a number below 0."""
    checks = {}
    for name in sorted(operations):
        if name == "Value":
            checks[name] = ["Value(3)", "Value(a.data)"]
        elif name == "unary -":
            checks[name] = ["-a"]
        elif name == "**":
            checks[name] = ["a ** 3", "b ** -1", "a ** 0.5", "Value(-a.data) ** 2"]  # a base below 0 too
        elif name in BINARY:
            checks[name] = [f"a {name} b {name} b", f"a {name} 2", f"2 {name} a"]
        else:
            checks[name] = [f"a.{name}()", f"b.{name}()"]
    return checks
