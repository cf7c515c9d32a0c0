"""Scenarios: small deterministic programs over the public API of one implementation.

Each module here runs inside a worker process, so it imports only the standard library,
numpy and its sibling modules (relatively). A scenario is a function declared with
`@scenario(engine, reverse=...)` (common.py): its first argument is that submission file's
module (`value`, `tensor` or `dual`), its other parameters are plain data, and it returns plain
data: numbers, lists, dicts, strings, arrays. Its docstring is a snippet a student can paste
to reproduce it, with `{name}` placeholders filled from its arguments (and from the `inputs`
of the case that failed, if it has cases).

The trusted side never imports these modules (nor numpy with them): what it knows of a
scenario (its declaration, its snippet, the given operations the snippet uses) is read from
the modules' source.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Scenario:
    """What the trusted side knows of one scenario without running it."""

    id: str
    engine: str  # the submission file it needs, as declared
    reverse: str  # who runs its reverse pass, as declared: "kit", "backward" or "none"
    snippet: str  # its docstring
    given: frozenset[str]  # the given operations its snippet uses (value scenarios only)

    @property
    def kit_reverse(self) -> bool:
        """Its reverse pass is the kit's own, not the submission's backward()."""
        return self.reverse == "kit"


@cache
def sources() -> dict[str, str]:
    """Every scenario module's source, by module name, to send to a worker."""
    return {path.stem: path.read_text(encoding="utf-8")
            for path in sorted(HERE.glob("*.py")) if path.stem != "__init__"}


def _constant(module_name: str, name: str) -> object:
    """A module-level constant of a scenario module, read from its source."""
    for node in ast.parse(sources()[module_name]).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError(f"scenarios/{module_name}.py defines no {name}")


@cache
def _module(name: str) -> dict[str, ast.FunctionDef]:
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
    """The scenario behind an id such as `value:products`."""
    module_name, _, function_name = scenario_id.partition(":")
    functions = _module(module_name)
    declared = declaration(functions[function_name]) if function_name in functions else None
    if declared is None:
        raise LookupError(f"scenarios/{module_name}.py has no scenario {function_name!r} (a function "
                          "declared with @scenario)")
    snippet = ast.get_docstring(functions[function_name], clean=False) or ""
    return Scenario(id=scenario_id, engine=declared["engine"], reverse=declared["reverse"], snippet=snippet,
                    given=given_operations_in(snippet) if declared["engine"] == "value" else frozenset())


def every_scenario() -> list[Scenario]:
    """Every scenario of every module."""
    return [scenario(f"{module}:{name}") for module in sources() for name, function in _module(module).items()
            if declaration(function) is not None]


# How a snippet's code uses each given operation of value.py (the keys of scenarios/value.py's GIVEN).
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Pow: "**"}


def given_operations_in(snippet: str) -> frozenset[str]:
    """The given operations a snippet's code uses: every `+`, `-`, `**`, unary `-` of a
    non-constant, `.exp()`, `.log()` and `Value(...)` in it."""
    try:
        tree = ast.parse(_dedent(snippet))
    except SyntaxError:
        return frozenset()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
            found.add(OPERATORS[type(node.op)])
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and not isinstance(node.operand, ast.Constant):
            found.add("unary -")
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("exp", "log"):
                found.add(node.func.attr)
            elif isinstance(node.func, ast.Name) and node.func.id == "Value":
                found.add("Value")
    return frozenset(found)


def _dedent(snippet: str) -> str:
    return textwrap.dedent(snippet).strip("\n").replace("{", "").replace("}", "")


# The given operations of value.py, each with the expressions its check tries.
GIVEN: dict[str, str] = _constant("value", "GIVEN")
