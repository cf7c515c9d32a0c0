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
    draws: bool  # whether its module can reach common.drawn: else it never draws a graph


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
    """The scenario behind an id such as `arithmetic:products`; raises LookupError when there is none."""
    module_name, _, function_name = scenario_id.partition(":")
    functions = _module(module_name)
    declared = declaration(functions[function_name]) if function_name in functions else None
    if declared is None:
        raise LookupError(f"scenarios/{module_name}.py has no scenario {function_name!r} (a function "
                          "declared with @scenario)")
    snippet = ast.get_docstring(functions[function_name], clean=False) or ""
    return Scenario(id=scenario_id, engine=declared["engine"], reverse=declared["reverse"], snippet=snippet,
                    operations=operations_in(snippet) if declared["engine"] == "value" else frozenset(),
                    draws=module_name in _drawing())


def imported(source: str) -> dict[str, frozenset[str]]:
    """What a scenario module's source imports from the modules beside it (`from .name import
    x`), by module: the names it takes, or "*" for all of them (`import *`, `from . import name`)."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:
                for alias in node.names:
                    found.setdefault(alias.name, set()).add("*")
            else:
                found.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return {module: frozenset(names) for module, names in found.items()}


@cache
def needs(name: str) -> list[str]:
    """The scenario modules that the scenario module `name` imports from."""
    return [module for module in imported(sources()[name]) if module in sources()]


DRAWN = "drawn"  # common.py's function that keeps a graph: the one way a drawing reaches a reply


def drawing_modules(modules: dict[str, str]) -> frozenset[str]:
    """The modules of `modules` (source by name) that can reach common.drawn: those that import it
    (or the whole of common), and those that import one of them, however indirectly."""
    imports = {name: imported(source) for name, source in modules.items()}
    found = {name for name, used in imports.items() if used.get("common", frozenset()) & {DRAWN, "*"}}
    while more := {name for name, used in imports.items() if name not in found and found & used.keys()}:
        found |= more
    return frozenset(found)


@cache
def _drawing() -> frozenset[str]:
    return drawing_modules(sources())


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


RULE_BY_HAND = re.compile(r"^(?P<indent>\s*)\w+\._backward\(\)")
SEEDED = re.compile(r"^\w+\.grad = [\d.]+")  # at the top level: an operation's check
RECORDING = """\
made = []                      # every Value your operation makes, in order
make = Value.__init__

def recording(node, *args, **kwargs):
    make(node, *args, **kwargs)
    made.append(node)

Value.__init__ = recording"""


def recorded_snippet(snippet: str) -> str | None:
    """The snippet of a check that runs an operation's rule by hand, for an operation built from
    others (several nodes): it records every Value the operation makes and runs each one's rule,
    newest first, as the check did. None for a snippet of another shape."""
    lines = textwrap.dedent(snippet).strip("\n").splitlines()
    seeded = next((n for n, line in enumerate(lines) if SEEDED.match(line)), None)
    if seeded is None:
        return None
    first = max((n for n, line in enumerate(lines[:seeded]) if "Value(" in line), default=None)
    rules = [n for n, line in enumerate(lines) if n > seeded and (RULE_BY_HAND.match(line)
                                                                 or line.startswith("for each in ("))]
    if first is None or not rules or first + 1 >= seeded:
        return None
    end = rules[-1] + 1
    while end < len(lines) and lines[end].startswith((" ", "\t")):
        end += 1  # the body of a loop over the nodes
    rest = [line for line in lines[end:] if line.strip()]
    return "\n".join([*lines[:first + 1], RECORDING, *lines[first + 1:seeded], "Value.__init__ = make",
                      lines[seeded], "for each in reversed(made):     # each rule, the newest node first",
                      "    each._backward()", "", *rest])


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
