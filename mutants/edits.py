"""The edits of a stub's body: every one-edit change the mutants are made of.

`Sites(stub, qualname, kinds)` walks one stub function in source order and lists its `Edit`s:
`+=` to `=`, an arithmetic operator or a comparison swapped, a constant changed, a statement
deleted, `reversed(x)` to `x`, a name swapped for another of its kind in scope, a tuple's
element dropped, duplicated or moved. Each edit is applied to the tree and undone in place.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

DELETE = object()  # the `new` of an edit that removes a statement from its body

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
class Edit:
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
        elif self.new is DELETE:
            self.old = value.pop(self.index)
        else:
            self.old, value[self.index] = value[self.index], self.new

    def undo(self) -> None:
        """Put back what `apply` replaced."""
        value = getattr(self.holder, self.field)
        if self.index is None:
            setattr(self.holder, self.field, self.old)
        elif self.new is DELETE:
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


def name_kinds(functions: list[ast.FunctionDef]) -> dict[str, str]:
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


class Sites:
    """Every edit of one stub's body, walked in source order: `+=` to `=`, an arithmetic operator
    or comparison swapped, a constant changed, a statement deleted, `reversed(x)` to `x`, a name
    swapped for another of its kind in scope, a tuple's element dropped, duplicated or moved."""

    def __init__(self, stub: ast.FunctionDef, qualname: str, kinds: dict[str, str]) -> None:
        self.edits: list[Edit] = []
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
        """What `name` holds (see `name_kinds`); only names of one kind are swapped for each other."""
        return self.kinds.get(name, "plain")  # a number, a flag, a shape: never an attribute's base

    def _statement(self, holder: ast.AST, name: str, index: int, statement: ast.stmt, function: str,
                   visible: frozenset[str]) -> None:
        """Add the edits of `statement`, item `index` of `holder.name`: deleting it (and `+=` to
        `=`), then those of what it holds; `visible` are the names in scope."""
        siblings = getattr(holder, name)
        empty = len(siblings) == 1 and name != "orelse"  # an `elif` or `else` may go altogether
        self._add(function, holder, name, index, ast.Pass() if empty else DELETE, statement)
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
        self._constant(holder, name, index, node, function)
        self._swaps(holder, name, index, node, function, visible)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reversed"
                and len(node.args) == 1):
            self._add(function, holder, name, index, node.args[0], node)
        if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load):
            self._tuple(holder, name, index, node, function)
        for child_name, position, child in _children(node):
            self._expression(node, child_name, position, child, function, visible)

    def _constant(self, holder: ast.AST, name: str, index: int | None, node: ast.AST, function: str) -> None:
        """Add the edits of a constant, or of a negated one as a whole (`-c`)."""
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

    def _swaps(self, holder: ast.AST, name: str, index: int | None, node: ast.AST, function: str,
               visible: frozenset[str]) -> None:
        """Add the edits that put another name of its kind in scope for a name, and a plain local
        for an engine value's number (`t` for `self.data`)."""
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
        self.edits.append(Edit(function, holder, name, index, new, span))

    def enclosing(self, node: ast.AST) -> ast.AST:
        """The smallest statement holding `node`, or the whole header expression of a compound one."""
        while not isinstance(node, ast.stmt):
            parent = self.parents[node]
            if any(getattr(parent, header, None) is node for header in _HEADERS.get(type(parent), ())):
                return node
            node = parent
        return node
