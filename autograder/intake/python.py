"""What a module of Python defines, read from its tree without running it."""

from __future__ import annotations

import ast
import re

from . import bounded

# The names a module must define to be taken for an engine file.
DEFINES = {"Value": "value", "unbroadcast": "tensor", "Tensor": "tensor", "cross_entropy": "tensor",
           "Dual": "dual"}
# What ast.parse raises for source it cannot turn into a tree; only the first is a real syntax error.
UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


def parsed(source: str) -> ast.Module | None:
    """The module's tree, or None when Python's parser cannot make one (a syntax error, a null
    byte, or an expression nested too deep for it, such as a sum of 5000 terms)."""
    try:
        return ast.parse(source)
    except UNPARSABLE:
        return None


def engines_defined(source: str) -> set[str]:
    """The engines whose names a module defines at its top level, parsed in the parsing process
    (bounded.py); by its `class` and `def` lines where it cannot be parsed there."""
    found = bounded.defines(source)
    return found if found is not None else by_lines(source)


def defined_here(source: str) -> set[str]:
    """engines_defined, parsed in this process: the parsing process's own."""
    tree = parsed(source)
    if tree is None:
        return by_lines(source)
    return {DEFINES[n] for n in top_level_names(tree) if n in DEFINES}


def by_lines(source: str) -> set[str]:
    """The engines a module's `class` and `def` lines name: how a module with a syntax error is
    still routed, so the student sees the error where it belongs."""
    names = re.findall(r"^(?:class|def)\s+(\w+)", source, re.MULTILINE)
    return {DEFINES[n] for n in names if n in DEFINES}


def top_level_names(tree: ast.Module) -> set[str]:
    """The names a module's top level defines: classes, functions, assigned names."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def cell_engines(source: str) -> set[str] | None:
    """The engines a notebook cell belongs to; empty for every module; None when it cannot be
    placed. Parsed in this process: the parsing process's own."""
    defined = defined_here(source)
    if defined:
        return defined
    tree = parsed(source)
    if tree is None:
        return None
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return {DEFINES[name] for name in used if name in DEFINES}
