"""Mutation testing of the suites (`autograder mutate [PART ...] [--jobs N]`).

`generate()` makes every one-edit mutant of the reference's stub bodies (the functions holding
solutions/'s marked regions, closures included); a `Probe` tells, without the suites, which of
them change behaviour; `grade()` grades a folder as a TA does, test by test. `mutation_run()`
does all three, and `MutationRun.report()` prints the score.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import importlib.util
import io
import math
import os
import random
import signal
import sys
import tempfile
import time
import tokenize
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from ..config import KIT_ROOT as KIT
from ..parts import ENGINES, declared
from ..stubs import functions, regions
from .graders import grade_folder


def may_also_cost(part: str) -> frozenset[str]:
    """The parts besides its own that a bug in `part`'s stub may cost by their nature, as the
    part declares them (`also_costs` of its suite's PART)."""
    return frozenset(declared()[part].also_costs)


# -- the mutants -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One edit of one engine file of the reference."""

    id: str  # "value.py:55 Value.__mul__._backward: <the line> -> <the line as edited>"
    engine: str
    part: str
    source: str  # the whole edited file
    diff: str  # against solutions/<engine>.py

    def write(self, folder: Path, solutions: Path = KIT / "solutions") -> Path:
        """A submission folder: the reference's three files with this one edited."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in ENGINES:
            text = self.source if name == self.engine else (solutions / f"{name}.py").read_text("utf-8")
            (folder / f"{name}.py").write_text(text, encoding="utf-8")
        return folder


class MutantError(Exception):
    """An edit could not be written back as source that parses to the edited tree."""


_DELETE = object()  # the `new` of an edit that removes a statement from its body

_ARITHMETIC = {ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div,), ast.Div: (ast.Mult,),
               ast.Pow: (ast.Mult,)}
_COMPARISON = {ast.Gt: (ast.Lt, ast.GtE, ast.LtE), ast.Lt: (ast.Gt, ast.LtE, ast.GtE),
               ast.GtE: (ast.LtE, ast.Gt, ast.Lt), ast.LtE: (ast.GtE, ast.Lt, ast.Gt),
               ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
               ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,)}
# Attributes that hold a number: a local such as `t` may be swapped with `self.data` and back.
_NUMBER_ATTRIBUTES = {"data", "val", "der"}
_ENGINE_ATTRIBUTES = {"data", "grad", "_prev", "_backward", "val", "der"}
_CONTAINER_ATTRIBUTES = {"append", "add", "pop", "extend"}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_HEADERS = {ast.If: ("test",), ast.While: ("test",), ast.For: ("target", "iter")}


@dataclass
class _Edit:
    """Set holder.field (or holder.field[index]) to `new`; `span` is the node whose source changes."""

    function: str
    holder: ast.AST
    field: str
    index: int | None
    new: object
    span: ast.AST
    old: object = None

    def apply(self) -> None:
        """Make the edit in the tree, keeping what it replaced for `undo`."""
        value = getattr(self.holder, self.field)
        if self.index is None:
            self.old = value
            setattr(self.holder, self.field, self.new)
        elif self.new is _DELETE:
            self.old = value.pop(self.index)
        else:
            self.old, value[self.index] = value[self.index], self.new

    def undo(self) -> None:
        """Put back what `apply` replaced."""
        value = getattr(self.holder, self.field)
        if self.index is None:
            setattr(self.holder, self.field, self.old)
        elif self.new is _DELETE:
            value.insert(self.index, self.old)
        else:
            value[self.index] = self.old


def _number(value: int | float) -> ast.expr:
    """A constant as the parser writes it: a negative number is a minus applied to a constant."""
    if value < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value))
    return ast.Constant(value)


def _changed_constants(value: object) -> list[object]:
    """0 -> 1; 1 -> 0, 2 and -1; c -> c + 1 and -c; a flag flipped. Strings only name an
    operation for repr, so they are left alone, as is None."""
    if isinstance(value, bool):
        return [not value]
    if not isinstance(value, (int, float)):
        return []
    kind = type(value)
    if value == 0:
        return [kind(1)]
    if value == 1:
        return [kind(0), kind(2), kind(-1)]
    return [value + 1, -value]


def _kinds(functions: list[ast.FunctionDef]) -> dict[str, str]:
    """What each name of a file's stubs holds, judged by how the stubs use it: an engine value
    (`self`, `other`, `out`, `node`), a container (`stack`, `visited`), or something plain (a
    number, a flag, a shape). Only names of one kind are swapped for each other."""
    used: dict[str, set[str]] = {}
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                used.setdefault(node.value.id, set()).add(node.attr)
    kinds = {name: "engine" if attributes & _ENGINE_ATTRIBUTES else
             "container" if attributes & _CONTAINER_ATTRIBUTES else f"its own: {name}"
             for name, attributes in used.items()}
    return {**kinds, "self": "engine"}


def _children(node: ast.AST) -> Iterator[tuple[str, int | None, ast.AST]]:
    """Each node `node` holds: the field it is in, and its place in that field if a list."""
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            yield name, None, value
        elif isinstance(value, list):
            yield from ((name, position, child) for position, child in enumerate(value)
                        if isinstance(child, ast.AST))


def _bound(function: ast.FunctionDef) -> set[str]:
    """The names a function binds in its own scope: parameters, and what it assigns outside
    nested functions and comprehensions (whose names are their own)."""
    names = {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)}
    pending = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if not isinstance(node, (ast.FunctionDef, ast.Lambda, *_COMPREHENSIONS)):
            pending.extend(ast.iter_child_nodes(node))
    return names


class _Sites:
    """Every edit of one stub's body, walked in source order: `+=` to `=`, an arithmetic operator
    or comparison swapped, a constant changed, a statement deleted, `reversed(x)` to `x`, a name
    swapped for another of its kind in scope, a tuple's element dropped, duplicated or moved."""

    def __init__(self, stub: ast.FunctionDef, qualname: str, kinds: dict[str, str]) -> None:
        self.edits: list[_Edit] = []
        self.parents: dict[ast.AST, ast.AST] = {}
        self.kinds = kinds
        self.numbers_of: dict[str, set[str]] = {}
        self.first_bound: dict[str, int] = {}
        for node in ast.walk(stub):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.attr in _NUMBER_ATTRIBUTES and isinstance(node.ctx, ast.Load)):
                self.numbers_of.setdefault(node.value.id, set()).add(node.attr)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.first_bound[node.id] = min(node.lineno, self.first_bound.get(node.id, node.lineno))
        body = stub.body[1:] if ast.get_docstring(stub) is not None else stub.body
        visible = frozenset(_bound(stub))
        for index, statement in enumerate(body, start=len(stub.body) - len(body)):
            self._statement(stub, "body", index, statement, qualname, visible)

    def kind(self, name: str) -> str:
        """What `name` holds (see `_kinds`); only names of one kind are swapped for each other."""
        return self.kinds.get(name, "plain")  # a number, a flag, a shape: never an attribute's base

    def _statement(self, holder: ast.AST, name: str, index: int, statement: ast.stmt, function: str,
                   visible: frozenset[str]) -> None:
        """Add the edits of `statement`, item `index` of `holder.name`: deleting it (and `+=` to
        `=`), then those of what it holds; `visible` are the names in scope."""
        siblings = getattr(holder, name)
        empty = len(siblings) == 1 and name != "orelse"  # an `elif` or `else` may go altogether
        self._add(function, holder, name, index, ast.Pass() if empty else _DELETE, statement)
        if isinstance(statement, ast.AugAssign):
            assign = ast.Assign(targets=[statement.target], value=statement.value)
            self._add(function, holder, name, index, assign, statement)
        if isinstance(statement, ast.FunctionDef):
            function = f"{function}.{statement.name}"
            visible = visible | _bound(statement)
        for child_name, position, child in _children(statement):
            if child_name in ("annotation", "returns", "decorator_list", "args"):
                continue  # annotations are never evaluated here (`from __future__ import annotations`)
            if isinstance(child, ast.stmt):
                self._statement(statement, child_name, position, child, function, visible)
            else:
                self._expression(statement, child_name, position, child, function, visible)

    def _expression(self, holder: ast.AST, name: str, index: int | None, node: ast.AST,
                    function: str, visible: frozenset[str]) -> None:
        """Add the edits of the expression `node`, held at `holder.name` (item `index`), and of
        every expression inside it."""
        if isinstance(node, _COMPREHENSIONS):
            visible = visible | {target.id for generator in node.generators
                                 for target in ast.walk(generator.target) if isinstance(target, ast.Name)}
        for change in _ARITHMETIC.get(type(getattr(node, "op", None)), ()):
            if isinstance(node, (ast.BinOp, ast.AugAssign)):
                self._add(function, node, "op", None, change(), node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
            self._add(function, holder, name, index, node.operand, node)
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                for change in _COMPARISON.get(type(op), ()):
                    self._add(function, node, "ops", position, change(), node)
        negated = isinstance(self.parents.get(node), ast.UnaryOp) and isinstance(
            self.parents[node].op, ast.USub)
        if isinstance(node, ast.Constant) and not negated:  # -c is changed as a whole, below
            for value in _changed_constants(node.value):
                self._add(function, holder, name, index,
                          ast.Constant(value) if isinstance(value, bool) else _number(value), node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(
                node.operand, ast.Constant) and isinstance(node.operand.value, (int, float)):
            for value in _changed_constants(-node.operand.value):
                self._add(function, holder, name, index, _number(value), node)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in visible:
            kind = self.kind(node.id)
            swaps = [other for other in sorted(visible) if other != node.id and self.kind(other) == kind]
            if kind == "plain":
                swaps += self._numbers(visible)
            for other in swaps:
                self._add(function, holder, name, index, ast.parse(other, mode="eval").body, node)
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                and ast.unparse(node) in self._numbers(visible)):
            for other in sorted(visible):
                if self.kind(other) == "plain" and self.first_bound.get(other, 0) < node.lineno:
                    self._add(function, holder, name, index, ast.Name(id=other, ctx=ast.Load()), node)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reversed"
                and len(node.args) == 1):
            self._add(function, holder, name, index, node.args[0], node)
        if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load):
            self._tuple(holder, name, index, node, function)
        for child_name, position, child in _children(node):
            self._expression(node, child_name, position, child, function, visible)

    def _numbers(self, visible: frozenset[str]) -> list[str]:
        """`self.data` and the like: an engine value's number, for a plain local to stand in for."""
        return [f"{name}.{attribute}" for name in sorted(visible) if self.kind(name) == "engine"
                for attribute in sorted(self.numbers_of.get(name, ()))]

    def _tuple(self, holder: ast.AST, name: str, index: int | None, node: ast.Tuple, function: str) -> None:
        """Add the edits of a tuple: one element dropped, one in place of another, two exchanged."""
        elements = node.elts
        variants = [elements[:i] + elements[i + 1:] for i in range(len(elements))]  # one dropped
        variants += [elements[:i] + [elements[j]] + elements[i + 1:]  # one in place of another
                     for i in range(len(elements)) for j in range(len(elements)) if i != j]
        variants += [elements[:i] + [elements[j]] + elements[i + 1:j] + [elements[i]] + elements[j + 1:]
                     for i in range(len(elements)) for j in range(i + 1, len(elements))]  # two exchanged
        for elts in variants:
            self._add(function, holder, name, index, ast.Tuple(elts=elts, ctx=ast.Load()), node)

    def _add(self, function: str, holder: ast.AST, name: str, index: int | None, new: object,
             span: ast.AST) -> None:
        """Add the edit that sets `holder.name` (item `index`) to `new`; `span` is what it rewrites."""
        if isinstance(new, ast.AST) and not hasattr(new, "lineno"):
            ast.copy_location(new, span)  # unparse reads a statement's line for type comments
        self.edits.append(_Edit(function, holder, name, index, new, span))

    def enclosing(self, node: ast.AST) -> ast.AST:
        """The smallest statement holding `node`, or the whole header expression of a compound one."""
        while not isinstance(node, ast.stmt):
            parent = self.parents[node]
            if any(getattr(parent, header, None) is node for header in _HEADERS.get(type(parent), ())):
                return node
            node = parent
        return node


class _Source:
    """The reference's text, to rewrite one node's span at a time (columns are UTF-8 offsets)."""

    def __init__(self, text: str) -> None:
        self.lines = [line.encode("utf-8") for line in text.splitlines(keepends=True)]

    def replace(self, node: ast.AST, text: str | None) -> str:
        """The file with `node`'s span replaced by `text`, or its whole lines removed (None)."""
        first, last = node.lineno - 1, node.end_lineno - 1
        before = self.lines[first][:node.col_offset]
        after = self.lines[last][node.end_col_offset:]
        if text is None:
            if before.strip():
                raise MutantError(f"line {node.lineno}: a statement shares its line with another")
            middle: list[bytes] = []
        else:
            indent = b"\n" + b" " * node.col_offset
            middle = [before + text.encode("utf-8").replace(b"\n", indent) + after]
        return b"".join(self.lines[:first] + middle + self.lines[last + 1:]).decode("utf-8")


def _rewrite(source: _Source, sites: _Sites, edit: _Edit, tree: ast.Module) -> str:
    """The mutated file's text: `tree`, with `edit` applied, written back into the source by
    rewriting as little as parses back to the edited tree (so a mutant's diff is a line or a few):
    the expression, in parentheses, or its whole statement. Raises MutantError."""
    wanted = ast.dump(tree)
    if edit.new is _DELETE:
        attempts: list[tuple[ast.AST, str | None]] = [(edit.span, None)]
    else:
        # A node replaced shows its replacement; a node changed in place (an operator) shows itself.
        text = ast.unparse(edit.new if edit.old is edit.span else edit.span)
        attempts = [(edit.span, text), (edit.span, f"({text})")]
        outer = sites.enclosing(edit.span)
        if outer is not edit.span:
            attempts.append((outer, ast.unparse(outer)))
    for span, text in attempts:
        mutated = source.replace(span, text)
        try:
            if ast.dump(ast.parse(mutated)) == wanted:
                return mutated
        except SyntaxError:
            continue
    raise MutantError(f"line {edit.span.lineno} of {edit.function}: no rewrite of the edit parses "
                      "back to the edited tree")


def _code(text: str) -> list[str]:
    """The lines of a file without their comments, stripped: what an id shows of them."""
    lines = text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column]
    return [line.strip() for line in lines]


def _describe(reference: str, mutated: str) -> tuple[int, str]:
    """The first changed line, and `old line -> new line` (or `delete old line`)."""
    old, new = _code(reference), _code(mutated)
    matcher = difflib.SequenceMatcher(a=reference.splitlines(), b=mutated.splitlines(), autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    first = changes[0][1]
    removed = [line for op in changes for line in old[op[1]:op[2]]]
    added = " ".join(line for op in changes for line in new[op[3]:op[4]])
    if added:
        return first + 1, f"{' '.join(removed)} -> {added}"
    return first + 1, f"delete {removed[0]}" + (" ..." if len(removed) > 1 else "")


def stubs(kit: Path = KIT) -> dict[str, dict[str, str]]:
    """engine -> {qualified name of a stub function -> its part}, from solutions/*.py's markers."""
    found: dict[str, dict[str, str]] = {}
    for engine in ENGINES:
        path = kit / "solutions" / f"{engine}.py"
        if path.is_file():
            for region in regions(path.read_text(encoding="utf-8"), path):
                found.setdefault(engine, {})[region.function] = region.part
    return found


def generate(kit: Path = KIT, parts: list[str] | None = None) -> list[Mutant]:
    """Every one-edit mutant of the stub bodies of solutions/*.py (of `parts` only, when given),
    in file order, none twice; its id names the file, line, function and change. Raises MutantError."""
    mutants: list[Mutant] = []
    for engine, every in stubs(kit).items():
        owners = {name: part for name, part in every.items() if parts is None or part in parts}
        if not owners:
            continue
        path = kit / "solutions" / f"{engine}.py"
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        source = _Source(text)
        defined = dict(functions(tree))
        missing = sorted(owners.keys() - defined.keys())
        if missing:
            raise MutantError(f"solutions/{engine}.py has no function {', '.join(missing)}, which "
                              f"assignments/{engine}.py marks as a stub; the two files must match")
        seen = {text}
        kinds = _kinds([function for name, function in defined.items() if name in every])
        for qualname, function in defined.items():
            if qualname not in owners:
                continue
            sites = _Sites(function, qualname, kinds)
            for edit in sites.edits:
                edit.apply()
                try:
                    mutated = _rewrite(source, sites, edit, tree)
                finally:
                    edit.undo()
                if mutated in seen:
                    continue  # the same file by another edit, or no change at all
                seen.add(mutated)
                line, change = _describe(text, mutated)
                diff = "".join(difflib.unified_diff(
                    text.splitlines(keepends=True), mutated.splitlines(keepends=True),
                    f"solutions/{engine}.py", f"mutant of solutions/{engine}.py", n=2))
                mutants.append(Mutant(f"{engine}.py:{line} {edit.function}: {change}", engine,
                                      owners[qualname], mutated, diff))
    ids = [m.id for m in mutants]
    for position, mutant in enumerate(mutants):
        if ids.count(mutant.id) > 1:  # two edits of one line that read alike: number them
            number = ids[:position].count(mutant.id) + 1
            mutants[position] = Mutant(f"{mutant.id} #{number}", mutant.engine, mutant.part,
                                       mutant.source, mutant.diff)
    return mutants


# -- the probe ---------------------------------------------------------------------------------------

# A mutant's number is the reference's if |got - expected| <= ABSOLUTE + RELATIVE * |expected|:
# far tighter than the grader's tolerances, and loose enough for the last bit of a sum.
RELATIVE, ABSOLUTE = 1e-9, 1e-12
# CPU seconds one program may take; the reference takes a few milliseconds.
PROGRAM_SECONDS = 1.0
# Seeded programs per engine (tensor: half call unbroadcast directly, half go through Tensor).
PROGRAMS = {"value": 160, "tensor": 120, "dual": 80}


class ProbeTimeout(Exception):
    """A program ran longer than PROGRAM_SECONDS of CPU time."""


def load(engine: str, source: str, name: str) -> ModuleType:
    """Import `source` as a module of its own named `name`, outside sys.modules."""
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, f"<{name}: {engine}.py>", "exec"), module.__dict__)  # our own reference, edited
    return module


Observations = list[tuple[str, object]]


def _plain(value: object) -> object:
    """A number as a float; anything else by its type's name."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    return f"a {type(value).__name__}"


def _array(value: object) -> object:
    """An array, a NumPy scalar or a number as (shape, entries), as the grader reads them."""
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return (tuple(array.shape), array.astype(np.float64).ravel().tolist())
    return f"a {type(value).__name__}"


class _Recorder:
    """What one program shows: labelled values, and the exception that stopped it, if any."""

    def __init__(self) -> None:
        self.seen: Observations = []

    def __call__(self, label: str, value: object) -> None:
        self.seen.append((label, _plain(value)))

    def array(self, label: str, value: object) -> None:
        """Record an array (or number) as its shape and entries."""
        self.seen.append((label, _array(value)))


def _choose(rng: random.Random, count: int) -> int:
    """An operand's index: often one of the newest nodes, so that the graph grows deep and reuses."""
    return rng.randrange(max(0, count - 3), count) if rng.random() < 0.5 else rng.randrange(count)


def _operands(name: str, i: int, j: int, c: object) -> str:
    """`a * c with a = node 3, c = 2.0`: an operation and the operands it used."""
    used = [f"a = node {i}"] + [f"b = node {j}"] * ("b" in name.split("(")[0]) + [
        f"c = {c!r}" if not isinstance(c, np.ndarray) else f"c = an array of shape {c.shape}"] * (
        "c" in name.replace("exp", "").replace("sum", ""))
    return f"{name} with {', '.join(used)}"


def _sigmoid(x: float) -> float:
    """The logistic function, without overflow on either side."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


# Each operation of the scalar engine: how many operands, its value on plain numbers (None
# outside its domain, or near a point where the derivative is a convention), and the call.
_NUMBERS = (2.0, -1.5, 0.5, 3.0)
_VALUE_OPERATIONS: list[tuple[str, int, Callable, Callable]] = [
    ("a + b", 2, lambda a, b, c: a + b, lambda a, b, c: a + b),
    ("a - b", 2, lambda a, b, c: a - b, lambda a, b, c: a - b),
    ("a * b", 2, lambda a, b, c: a * b, lambda a, b, c: a * b),
    ("a / b", 2, lambda a, b, c: a / b if abs(b) > 0.25 else None, lambda a, b, c: a / b),
    ("a + c", 1, lambda a, b, c: a + c, lambda a, b, c: a + c),
    ("c + a", 1, lambda a, b, c: c + a, lambda a, b, c: c + a),
    ("a - c", 1, lambda a, b, c: a - c, lambda a, b, c: a - c),
    ("c - a", 1, lambda a, b, c: c - a, lambda a, b, c: c - a),
    ("a * c", 1, lambda a, b, c: a * c, lambda a, b, c: a * c),
    ("c * a", 1, lambda a, b, c: c * a, lambda a, b, c: c * a),
    ("a / c", 1, lambda a, b, c: a / c, lambda a, b, c: a / c),
    ("c / a", 1, lambda a, b, c: c / a if abs(a) > 0.25 else None, lambda a, b, c: c / a),
    ("a ** 2", 1, lambda a, b, c: a**2, lambda a, b, c: a**2),
    ("a ** 3", 1, lambda a, b, c: a**3, lambda a, b, c: a**3),
    ("a ** -1", 1, lambda a, b, c: a**-1 if abs(a) > 0.25 else None, lambda a, b, c: a**-1),
    ("a ** 0.5", 1, lambda a, b, c: a**0.5 if a > 0.05 else None, lambda a, b, c: a**0.5),
    ("-a", 1, lambda a, b, c: -a, lambda a, b, c: -a),
    ("a.tanh()", 1, lambda a, b, c: math.tanh(a), lambda a, b, c: a.tanh()),
    ("a.sigmoid()", 1, lambda a, b, c: _sigmoid(a), lambda a, b, c: a.sigmoid()),
    ("a.relu()", 1, lambda a, b, c: max(a, 0.0) if abs(a) > 1e-3 else None, lambda a, b, c: a.relu()),
    ("a.exp()", 1, lambda a, b, c: math.exp(a) if a < 5 else None, lambda a, b, c: a.exp()),
    ("a.log()", 1, lambda a, b, c: math.log(a) if a > 0.05 else None, lambda a, b, c: a.log()),
]
LARGEST = 1e4  # an operation whose value would be larger than this is drawn again


def value_program(value: ModuleType, seed: int, record: _Recorder) -> None:
    """A random expression DAG over every operation of Value, with reused and computed operands
    and numbers on either side; then backward() and zero_grad() on the root and on intermediates,
    in a random order, each followed by every node's value and gradient."""
    rng = random.Random(seed)
    nodes, numbers, quotients = [], [], []  # quotients[i]: node i's graph holds a quotient
    for _ in range(rng.randint(1, 4)):
        x = rng.uniform(-3, 3) if rng.random() < 0.85 else rng.choice((-1, 1)) * rng.uniform(20, 1000)
        nodes.append(value.Value(x))
        numbers.append(x)
        quotients.append(False)
    for _ in range(rng.randint(3, 16)):
        for _attempt in range(50):
            name, arity, plain, call = rng.choice(_VALUE_OPERATIONS)
            i, j, c = _choose(rng, len(nodes)), _choose(rng, len(nodes)), rng.choice(_NUMBERS)
            result = plain(numbers[i], numbers[j], c)
            if result is not None and abs(result) <= LARGEST:
                break
        else:
            continue
        nodes.append(call(nodes[i], nodes[j] if arity == 2 else None, c))
        numbers.append(result)
        quotients.append(name in ("a / b", "a / c", "c / a") or quotients[i] or (arity == 2 and quotients[j]))
        record(f"node {len(nodes) - 1} = {_operands(name, i, j, c)}: data", nodes[-1].data)
    root = len(nodes) - 1
    drawn = [("backward", root)] + [(rng.choice(("backward", "zero_grad")), rng.choice(
        (root, root, rng.randrange(len(nodes))))) for _ in range(rng.randint(1, 4))]
    # A quotient may be a product with a power, whose node a second backward() pushes its leftover
    # gradient through: so every later backward() of such a graph follows a zero_grad() of its node.
    actions = drawn[:1]
    for action, index in drawn[1:]:
        if action == "backward" and quotients[index]:
            actions.append(("zero_grad", index))
        actions.append((action, index))
    for step, (action, index) in enumerate(actions):
        getattr(nodes[index], action)()
        for position, node in enumerate(nodes):
            record(f"after step {step} ({action} of node {index}): node {position} data", node.data)
            record(f"after step {step} ({action} of node {index}): node {position} grad", node.grad)


def _operand_shape(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: some leading axes dropped, some axes of size 1."""
    kept = shape[rng.randint(0, len(shape)):] if rng.random() < 0.6 else shape
    return tuple(1 if rng.random() < 0.4 else size for size in kept)


def _result_shape(rng: random.Random) -> tuple[int, ...]:
    """A random shape of 0 to 4 axes, each of 1 to 4."""
    return tuple(rng.choice((1, 2, 3, 4)) for _ in range(rng.randint(0, 4)))


def _entries(rng: random.Random, shape: tuple[int, ...]) -> np.ndarray:
    """Seeded entries in [-2, 2] of the given shape."""
    return np.array([rng.uniform(-2, 2) for _ in range(math.prod(shape))], dtype=np.float64).reshape(shape)


def unbroadcast_program(tensor: ModuleType, seed: int, record: _Recorder) -> None:
    """unbroadcast called directly on random shapes: added axes, size-1 axes, both, neither, ()."""
    rng = random.Random(seed)
    for case in range(6):
        shape = _result_shape(rng)
        target = shape if case == 0 else () if case == 1 else _operand_shape(rng, shape)
        record.array(f"unbroadcast(grad of shape {shape}, {target})",
                     tensor.unbroadcast(_entries(rng, shape), target))


# The Tensor engine's operations: the call on Tensors, and the same on plain arrays (None where
# the call is not drawn: an array on the left would broadcast over the Tensor object itself).
_TENSOR_OPERATIONS: list[tuple[str, Callable, Callable]] = [
    ("a + b", lambda a, b, c: a + b, lambda a, b, c: a + b),
    ("a - b", lambda a, b, c: a - b, lambda a, b, c: a - b),
    ("a * b", lambda a, b, c: a * b, lambda a, b, c: a * b),
    ("a + c", lambda a, b, c: a + c, lambda a, b, c: a + c),
    ("a - c", lambda a, b, c: a - c, lambda a, b, c: a - c),
    ("a * c", lambda a, b, c: a * c, lambda a, b, c: a * c),
    ("c + a", lambda a, b, c: c + a, lambda a, b, c: None if isinstance(c, np.ndarray) else c + a),
    ("c - a", lambda a, b, c: c - a, lambda a, b, c: None if isinstance(c, np.ndarray) else c - a),
    ("c * a", lambda a, b, c: c * a, lambda a, b, c: None if isinstance(c, np.ndarray) else c * a),
    ("a.relu()", lambda a, b, c: a.relu(),
     lambda a, b, c: np.maximum(a, 0.0) if np.abs(a).min(initial=1.0) > 1e-3 else None),
    ("a.exp()", lambda a, b, c: a.exp(), lambda a, b, c: np.exp(a) if a.max(initial=0.0) < 2 else None),
    ("a.sum(axis=0, keepdims=True)", lambda a, b, c: a.sum(axis=0, keepdims=True),
     lambda a, b, c: a.sum(axis=0, keepdims=True) if a.ndim else None),
]


def tensor_program(tensor: ModuleType, seed: int, record: _Recorder) -> None:
    """Tensors of random shapes that broadcast together, combined by +, - and * (with each other,
    with numbers and arrays on either side), relu, exp and sums; backward, and again on the
    graph built anew, with the leaves' gradients kept or zeroed in between, as training steps
    do; every node's gradient is read after each backward."""
    rng = random.Random(seed)
    shape = _result_shape(rng) or (3,)
    arrays = [_entries(rng, _operand_shape(rng, shape)) for _ in range(rng.randint(2, 4))]
    leaves = [tensor.Tensor(array) for array in arrays]
    steps = []
    for _ in range(rng.randint(2, 8)):
        name, call, plain = rng.choice(_TENSOR_OPERATIONS)
        i, j = _choose(rng, len(arrays)), _choose(rng, len(arrays))
        c = rng.choice((2.0, -0.5, _entries(rng, _operand_shape(rng, shape))))
        result = plain(arrays[i], arrays[j], c)
        if result is None or np.abs(result).max(initial=0.0) > LARGEST:
            continue
        steps.append((name, call, i, j, c))
        arrays.append(result)
    mean = rng.random() < 0.5

    def build() -> list:
        nodes = list(leaves)
        for _, call, i, j, c in steps:
            nodes.append(call(nodes[i], nodes[j], c))
        nodes.append(nodes[-1].mean() if mean else nodes[-1].sum())
        return nodes

    for round_ in range(rng.randint(1, 3)):
        nodes = build()
        for position, (name, _, i, j, c) in enumerate(steps, start=len(leaves)):
            label = f"round {round_}: node {position} = {_operands(name, i, j, c)}: data"
            record.array(label, nodes[position].data)
        nodes[-1].backward()
        for position, node in enumerate(nodes):
            record.array(f"after backward {round_}: node {position} grad", node.grad)
        if rng.random() < 0.5:
            for leaf in leaves:
                leaf.grad = np.zeros_like(leaf.data)


# Forward mode's operations: the call on Duals, and the value on plain numbers (None outside
# the range the programs keep to).
_DUAL_OPERATIONS: list[tuple[str, Callable, Callable]] = [
    ("a + b", lambda a, b, c: a + b, lambda a, b, c: a + b),
    ("a * b", lambda a, b, c: a * b, lambda a, b, c: a * b),
    ("a + c", lambda a, b, c: a + c, lambda a, b, c: a + c),
    ("c + a", lambda a, b, c: c + a, lambda a, b, c: c + a),
    ("a * c", lambda a, b, c: a * c, lambda a, b, c: a * c),
    ("c * a", lambda a, b, c: c * a, lambda a, b, c: c * a),
    ("a.sin()", lambda a, b, c: a.sin(), lambda a, b, c: math.sin(a)),
    ("a.exp()", lambda a, b, c: a.exp(), lambda a, b, c: math.exp(a) if a < 5 else None),
]


def dual_program(dual: ModuleType, seed: int, record: _Recorder) -> None:
    """Random functions of Duals: the constructor with and without der, + and * with Duals and
    with numbers on either side, sin and exp; every node's val and der."""
    rng = random.Random(seed)
    Dual = dual.Dual
    nodes, values = [], []
    for _ in range(rng.randint(1, 3)):
        x, d = round(rng.uniform(-2, 2), 3), rng.choice((0.0, 1.0, rng.uniform(-2, 2)))
        form = rng.randrange(4)
        if form == 3:
            x = rng.randint(-3, 3)  # an int, which Dual stores as a float
        if form in (0, 3):
            nodes.append(Dual(x))
        else:
            nodes.append(Dual(x, d) if form == 1 else Dual(x, der=d))
        label = f"Dual({x!r})" if form in (0, 3) else f"Dual({x!r}, {'' if form == 1 else 'der='}{d!r})"
        values.append(x)
        _show(record, nodes, label)
    for _ in range(rng.randint(2, 10)):
        name, call, plain = rng.choice(_DUAL_OPERATIONS)
        i, j, c = _choose(rng, len(nodes)), _choose(rng, len(nodes)), rng.choice((2, 3, -1, 0.5, -1.5, 2.5))
        result = plain(values[i], values[j], c)
        if result is None or abs(result) > LARGEST:
            continue
        nodes.append(call(nodes[i], nodes[j], c))
        values.append(result)
        _show(record, nodes, _operands(name, i, j, c))


def _show(record: _Recorder, nodes: list, made: str) -> None:
    """Record the newest Dual's val and der, labelled with how it was `made`."""
    record(f"node {len(nodes) - 1} = {made}: val", nodes[-1].val)
    record(f"node {len(nodes) - 1} = {made}: der", nodes[-1].der)


def _programs(engine: str) -> list[tuple[str, Callable[[ModuleType, _Recorder], None]]]:
    """(label, program) of every seeded program of the probe for `engine`."""
    def bind(program: Callable, seed: int) -> Callable[[ModuleType, _Recorder], None]:
        return lambda module, record: program(module, seed, record)

    count = PROGRAMS[engine]
    if engine == "value":
        return [(f"value program {seed}", bind(value_program, seed)) for seed in range(count)]
    if engine == "tensor":
        half = range(count // 2)
        return [(f"unbroadcast program {seed}", bind(unbroadcast_program, seed)) for seed in half] + [
            (f"Tensor program {seed}", bind(tensor_program, seed)) for seed in half]
    return [(f"Dual program {seed}", bind(dual_program, seed)) for seed in range(count)]


@contextlib.contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Raise ProbeTimeout in this (the main) thread once it has used `seconds` of CPU time."""
    def expire(signum, frame):
        raise ProbeTimeout(f"ran longer than {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _run(program: Callable[[ModuleType, _Recorder], None], module: ModuleType) -> Observations:
    """What `program` shows on `module`, ending with how it stopped if it did not finish."""
    record = _Recorder()
    try:
        with _cpu_limit(PROGRAM_SECONDS):
            program(module, record)
    except ProbeTimeout:
        record.seen.append(("the program", "did not finish"))
    except RecursionError:
        record.seen.append(("the program", "raised RecursionError"))
    except Exception as error:  # a mutant may raise anything; which one is an observation
        record.seen.append(("the program", f"raised {type(error).__name__}"))
    return record.seen


def _close(expected: object, got: object) -> bool:
    """Is `got` the reference's `expected`, within RELATIVE and ABSOLUTE (nan matches nan)?"""
    if isinstance(expected, float) and isinstance(got, float):
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        return expected == got or abs(got - expected) <= ABSOLUTE + RELATIVE * abs(expected)
    if isinstance(expected, tuple) and isinstance(got, tuple):
        return expected[0] == got[0] and len(expected[1]) == len(got[1]) and all(
            _close(e, g) for e, g in zip(expected[1], got[1]))
    return expected == got


def _first_difference(expected: Observations, got: Observations) -> str | None:
    """Where the mutant's observations first differ from the reference's, in words, or None."""
    for (label, want), (seen, have) in zip(expected, got):
        if seen != label:
            return f"{label}: the reference gives {want!r}; the mutant, there: {seen} {have}"
        if not _close(want, have):
            return f"{label}: the reference gives {want!r}, the mutant {have!r}"
    if len(expected) != len(got):
        shorter, longer = (got, expected) if len(got) < len(expected) else (expected, got)
        label, extra = longer[len(shorter)]
        who = "reference" if longer is expected else "mutant"
        return f"only the {who} shows {label}: {extra!r}"
    return None


@dataclass(frozen=True)
class Verdict:
    """The probe's answer for one mutant: does it change behaviour, and where it first showed."""

    changes: bool
    evidence: str  # "value program 3: after step 1 (...): node 2 grad: the reference gives ..."


class Probe:
    """Differential testing of mutants against the reference, in this process (main thread only):
    seeded programs over each engine's public API compare every value, gradient and exception
    (every correct implementation agrees: tests/test_mutation.py); a mutant none tells apart is
    equivalent."""

    def __init__(self, kit: Path = KIT) -> None:
        self.reference = {engine: load(engine, (kit / "solutions" / f"{engine}.py").read_text("utf-8"),
                                       f"probe_reference_{engine}") for engine in ENGINES}
        self.programs: dict[str, list] = {}
        self.expected: dict[str, list[Observations]] = {}
        for engine in ENGINES:
            # The shortest programs first, so that a mutant's evidence is as small as it can be.
            runs = sorted(((program, _run(program[1], self.reference[engine]))
                           for program in _programs(engine)), key=lambda pair: len(pair[1]))
            self.programs[engine] = [program for program, _ in runs]
            self.expected[engine] = [seen for _, seen in runs]
        self.loaded = 0
        for engine, expected in self.expected.items():
            stopped = [label for (label, _), seen in zip(self.programs[engine], expected)
                       if seen and seen[-1][0] == "the program"]
            if stopped:
                raise MutantError(f"the probe's own programs fail on solutions/{engine}.py: "
                                  f"{', '.join(stopped[:5])} end with {expected[0][-1]}")

    def __call__(self, mutant: Mutant) -> Verdict:
        """The probe's Verdict on `mutant`: the first program whose observations differ, if any."""
        self.loaded += 1
        try:
            module = load(mutant.engine, mutant.source, f"probe_mutant_{self.loaded}_{mutant.engine}")
        except Exception as error:  # an edit may break the file at import time
            return Verdict(True, f"importing it raised {type(error).__name__}: {error}")
        for (label, program), expected in zip(self.programs[mutant.engine], self.expected[mutant.engine]):
            difference = _first_difference(expected, _run(program, module))
            if difference:
                return Verdict(True, f"{label}: {difference}")
        return Verdict(False, f"no difference in {len(self.programs[mutant.engine])} programs")


# -- grading, test by test -------------------------------------------------------------------------


@dataclass(frozen=True)
class Grade:
    """One folder graded: every part's (score, max_score), and every test's outcome."""

    scores: dict[str, tuple[float, float]]
    outcomes: dict[str, str]  # test id -> "passed", "failed" or "skipped"
    messages: dict[str, str]  # part -> what the grader told the student, for a part that lost points
    seconds: float

    @property
    def lost(self) -> set[str]:
        """The parts that lost points."""
        return {part for part, (score, most) in self.scores.items() if score < most}

    @property
    def failed(self) -> set[str]:
        """The tests that failed."""
        return {test for test, outcome in self.outcomes.items() if outcome == "failed"}


def _outcomes(junit: Path) -> dict[str, str]:
    """Test id (as `pytest --collect-only` writes it) -> outcome, from pytest's --junitxml file."""
    outcomes = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"
        tags = {child.tag for child in case}
        outcomes[test] = ("failed" if tags & {"failure", "error"} else
                          "skipped" if "skipped" in tags else "passed")
    return outcomes


def grade(folder: Path, sealed: Path, scratch: Path, seed: str = "public",
          modules: tuple[str, ...] = ()) -> Grade:
    """Grade `folder` as a TA does (in the grading processes of graders.py), at `seed`, against the
    reference sealed at it, with every test's outcome from --junitxml; with `modules`, only the
    tests of those suite modules (test_value_mul, ...)."""
    scratch.mkdir(parents=True, exist_ok=True)
    junit = scratch / "junit.xml"
    start = time.perf_counter()
    chosen = ("-k", " or ".join(modules)) if modules else ()
    parts = grade_folder(folder, scratch / "results.json", "--reference", str(sealed),
                         "--junitxml", str(junit), "--grading-seed", seed, *chosen)
    return Grade({part: (entry["score"], entry["max_score"]) for part, entry in parts.items()},
                 _outcomes(junit), {part: entry["output"] for part, entry in parts.items()
                                    if entry["score"] < entry["max_score"]},
                 time.perf_counter() - start)


def grade_all(folders: dict[str, Path], sealed: Path, scratch: Path, workers: int, seed: str = "public",
              modules: dict[str, tuple[str, ...]] | None = None) -> dict[str, Grade]:
    """Every folder graded at `seed`, `workers` at a time (one grading keeps about one core
    busy); `modules` limits a folder's grading to the suite modules it names for it."""
    from concurrent.futures import ThreadPoolExecutor

    def one(numbered: tuple[int, str]) -> Grade:
        number, name = numbered
        try:
            chosen = (modules or {}).get(name, ())
            return grade(folders[name], sealed, scratch / f"grade-{number}", seed, chosen)
        except RuntimeError as error:
            raise RuntimeError(f"grading {name} ({folders[name]}) failed: {error}") from error

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(folders, pool.map(one, enumerate(folders))))


def collected_tests(kit: Path = KIT) -> set[str]:
    """Every test id that `pytest autograder` collects; raises RuntimeError when collecting fails."""
    import subprocess

    run = subprocess.run([sys.executable, "-m", "pytest", "autograder", "--collect-only", "-q",
                          "-p", "no:cacheprovider"], cwd=kit, capture_output=True, text=True, timeout=300)
    tests = {line.strip() for line in run.stdout.splitlines() if "::" in line}
    if run.returncode != 0 or not tests:
        raise RuntimeError(f"collecting the suites failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return tests


# -- a whole run, and its score --------------------------------------------------------------------


@dataclass
class MutationRun:
    """Every mutant generated, the probe's verdict on each, and the behaviour-changing ones graded."""

    mutants: list[Mutant]
    verdicts: dict[str, Verdict]
    grades: dict[str, Grade]
    generate_seconds: float
    probe_seconds: float
    grading_seconds: float
    parts: list[str] = field(default_factory=list)

    @property
    def changing(self) -> list[Mutant]:
        """The mutants the probe found to change behaviour."""
        return [m for m in self.mutants if self.verdicts[m.id].changes]

    @property
    def equivalent(self) -> list[Mutant]:
        """The mutants the probe could not tell from the reference."""
        return [m for m in self.mutants if not self.verdicts[m.id].changes]

    @property
    def survivors(self) -> list[Mutant]:
        """Behaviour-changing mutants that kept full marks on their own part."""
        return [m for m in self.changing if m.part not in self.grades[m.id].lost]

    def costs_others(self) -> dict[str, list[str]]:
        """Mutant id -> the parts it cost besides its own (and those it may cost by nature)."""
        costs = {m.id: sorted(self.grades[m.id].lost - {m.part} - may_also_cost(m.part))
                 for m in self.changing}
        return {mutant: parts for mutant, parts in costs.items() if parts}

    def other_costs(self) -> list[str]:
        """Each mutant that cost another part, the parts, and what came out in the first of them."""
        lines = []
        for mutant, parts in self.costs_others().items():
            own = next(m.part for m in self.mutants if m.id == mutant)
            lines.append(f"  {mutant} (part {own}): also {', '.join(parts)}")
            lines.append(f"    {parts[0]}: {_came_out(self.grades[mutant].messages[parts[0]])}")
        return lines

    def report(self) -> str:
        """The mutation score per part, the survivors with their diffs, and what else was found."""
        changing, survivors = self.changing, {m.id for m in self.survivors}
        killed = len(changing) - len(survivors)
        lines = [f"mutation score: {killed} of {len(changing)} behaviour-changing mutants killed "
                 f"({100 * killed / max(1, len(changing)):.1f} %); {len(self.mutants)} generated, "
                 f"{len(self.equivalent)} equivalent",
                 f"generating {self.generate_seconds:.1f} s, probing {self.probe_seconds:.1f} s, "
                 f"grading {self.grading_seconds:.1f} s ({len(self.grades)} gradings)", "",
                 f"{'part':20} {'mutants':>8} {'equivalent':>11} {'changing':>9} {'killed':>7} "
                 f"{'survived':>9}"]
        for part in self.parts or sorted({m.part for m in self.mutants}):
            own = [m for m in self.mutants if m.part == part]
            moving = [m for m in own if self.verdicts[m.id].changes]
            lost = sum(m.id in survivors for m in moving)
            lines.append(f"{part:20} {len(own):8} {len(own) - len(moving):11} {len(moving):9} "
                         f"{len(moving) - lost:7} {lost:9}")
        lines += ["", f"survivors ({len(survivors)}): full marks on their own part"]
        lines += [f"  {m.id}\n    probe: {self.verdicts[m.id].evidence}\n" + _indent(m.diff, 4)
                  for m in self.survivors]
        lines += ["", f"mutants that cost a part other than their own ({len(self.costs_others())}):"]
        lines += self.other_costs()
        lines += ["", f"equivalent mutants, left out ({len(self.equivalent)}):"]
        lines += [f"  {m.id}" for m in self.equivalent]
        return "\n".join(lines)


def _came_out(message: str) -> str:
    """What a grader's message says came out (or, failing that, how it begins)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("Came out")][:1] or lines[:3]
    return " / ".join(said)[:300]


def _indent(text: str, spaces: int) -> str:
    """`text` with every line indented by `spaces`."""
    return "".join(" " * spaces + line for line in text.splitlines(keepends=True))


def mutation_run(sealed: Path, scratch: Path, workers: int, kit: Path = KIT,
                 parts: list[str] | None = None) -> MutationRun:
    """Generate, probe (in this process, main thread), then grade every behaviour-changing
    mutant; with `parts`, of those parts' stubs only."""
    start = time.perf_counter()
    mutants = generate(kit, parts)
    generated = time.perf_counter()
    probe = Probe(kit)
    verdicts = {m.id: probe(m) for m in mutants}
    probed = time.perf_counter()
    changing = [m for m in mutants if verdicts[m.id].changes]
    folders = {m.id: m.write(scratch / f"mutant-{n}") for n, m in enumerate(changing)}
    grades = grade_all(folders, sealed, scratch, workers)
    return MutationRun(mutants, verdicts, grades, generated - start, probed - generated,
                       time.perf_counter() - probed, parts or [])


def suite_modules(kit: Path = KIT) -> dict[str, tuple[str, ...]]:
    """Part -> the suite modules that hold its tests (test_value_mul, ...)."""
    from autograder.staff.release import collect

    found: dict[str, set[str]] = {}
    for test in collect(kit):
        found.setdefault(test.part, set()).add(test.file.stem)
    return {part: tuple(sorted(modules)) for part, modules in found.items()}


def killed_at(run: MutationRun, sealed: Path, seed: str, scratch: Path, workers: int,
              kit: Path = KIT) -> dict[str, Grade]:
    """Every behaviour-changing mutant of `run` graded at `seed` by the suites of its own part
    only (what killing it takes): mutant id -> grade."""
    modules = suite_modules(kit)
    changing = run.changing
    folders = {m.id: m.write(scratch / f"mutant-{n}") for n, m in enumerate(changing)}
    return grade_all(folders, sealed, scratch, workers, seed, {m.id: modules[m.part] for m in changing})


def unfailed(tests: set[str], grades: list[Grade]) -> list[str]:
    """The tests that no grading failed: each checks nothing the mutants and bugs could show."""
    failed = set().union(*(g.failed for g in grades))
    return sorted(tests - failed)


# -- the command ---------------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder mutate`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("parts", nargs="*", metavar="PART",
                        help="the parts whose stubs to mutate (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, metavar="N",
                        help="gradings at a time (default: the number of cores)")


def run(args: argparse.Namespace) -> int:
    """The mutation score of the parts asked for: every behaviour-changing mutant must lose points
    in its own part and in no part but those it may also cost. Exit status 1 when one does not."""
    known = list(declared())
    if unknown := [part for part in args.parts if part not in known]:
        print(f"autograder mutate: no part {unknown[0]!r}; name one of {', '.join(known)}")
        return 2
    with tempfile.TemporaryDirectory(prefix="autograder-mutate-") as folder:
        scratch = Path(folder)
        sealed = scratch / "reference.json"
        grade_folder(KIT / "solutions", scratch / "sealing.json", "--reference", str(KIT / "solutions"),
                     "--seal-reference", str(sealed))
        result = mutation_run(sealed, scratch / "mutants", args.jobs, parts=args.parts or known)
    print(result.report())
    return 1 if result.survivors or result.costs_others() else 0
