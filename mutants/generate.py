"""The mutants: every one-edit copy of the reference's stub bodies, written back as source.

`generate()` makes every mutant of the functions that hold solutions/'s marked regions (their
closures included), each rewritten into the reference's text so that its diff is a line or a
few, and named by its file, line, function and change.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from autograder.config import KIT_ROOT as KIT
from autograder.stubs import Region, engine_files, functions, regions

from .edits import DELETE, Edit, Sites, name_kinds


@dataclass(frozen=True)
class Mutant:
    """One edit of one engine file of the reference."""

    id: str  # "value.py:55 Value.__mul__._backward: <the line> -> <the line as edited>"
    engine: str
    part: str
    source: str  # the whole edited file
    diff: str  # against solutions/<engine>.py
    stub: str = ""  # the stub function it edits, as Class.method

    def write(self, folder: Path, solutions: Path = KIT / "solutions") -> Path:
        """A submission folder: the reference's engine files with this one edited."""
        folder.mkdir(parents=True, exist_ok=True)
        for path in engine_files(solutions):
            text = self.source if path.stem == self.engine else path.read_text("utf-8")
            (folder / path.name).write_text(text, encoding="utf-8")
        return folder


class MutantError(Exception):
    """An edit could not be written back as source that parses to the edited tree."""


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


def _rewrite(source: _Source, sites: Sites, edit: Edit, tree: ast.Module, stub: str,
             edited: ast.FunctionDef) -> str:
    """The mutated file's text: `tree`, with `edit` applied, written back into the source by
    rewriting as little as parses back to the edited tree (so a mutant's diff is a line or a few):
    the expression, in parentheses, or its whole statement. Only the stub function `stub` (its
    node in `tree`, `edited`), which holds the edit, is compared: the rewrite changes no line
    outside it, and one whose text reached past it would change the stub's tree too. Raises
    MutantError."""
    wanted = ast.dump(edited)
    if edit.new is DELETE:
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
            parsed = ast.parse(mutated)
        except SyntaxError:
            continue
        rewritten = dict(functions(parsed)).get(stub) if len(parsed.body) == len(tree.body) else None
        if rewritten is not None and ast.dump(rewritten) == wanted:
            return mutated
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


def _uncommented(line: str) -> str:
    """One line without its comment, stripped; a line that opens a bracket it does not close is
    read as far as it goes."""
    with contextlib.suppress(tokenize.TokenError, IndentationError, SyntaxError):
        for token in tokenize.generate_tokens(io.StringIO(line.strip()).readline):
            if token.type == tokenize.COMMENT:
                return line.strip()[:token.start[1]].strip()
    return line.strip()


def _describe(reference: str, old: list[str], mutated: str) -> tuple[int, str]:
    """The first changed line, and `old line -> new line` (or `delete old line`); `old` is the
    reference's `_code`."""
    new = mutated.splitlines()
    matcher = difflib.SequenceMatcher(a=reference.splitlines(), b=new, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    first = changes[0][1]
    removed = [line for op in changes for line in old[op[1]:op[2]]]
    added = " ".join(_uncommented(line) for op in changes for line in new[op[3]:op[4]])
    if added:
        return first + 1, f"{' '.join(removed)} -> {added}"
    return first + 1, f"delete {removed[0]}" + (" ..." if len(removed) > 1 else "")


def stub_regions(kit: Path = KIT) -> dict[str, list[Region]]:
    """engine -> the marked regions of solutions/<engine>.py, in file order."""
    return {path.stem: regions(path.read_text(encoding="utf-8"), path)
            for path in engine_files(kit / "solutions")}


def stubs(kit: Path = KIT) -> dict[str, dict[str, str]]:
    """engine -> {qualified name of a stub function -> its part}, from solutions/*.py's markers."""
    return {engine: {region.function: region.part for region in found}
            for engine, found in stub_regions(kit).items() if found}


def _inside(regions_of: list[Region], node: ast.AST) -> Region | None:
    """The region whose lines hold all of `node`, between its markers; None when none does."""
    return next((region for region in regions_of if region.first < node.lineno
                 and node.end_lineno < region.last), None)


def edits_per_part(kit: Path = KIT) -> dict[str, int]:
    """Part -> the edits of its stub regions: about as many as its mutants (two edits that make one
    file are one mutant), counted without writing any, for an estimate of a mutation run."""
    counts: dict[str, int] = {}
    for engine, every in stub_regions(kit).items():
        tree = ast.parse((kit / "solutions" / f"{engine}.py").read_text(encoding="utf-8"))
        defined = dict(functions(tree))
        kinds_of = name_kinds([defined[name] for name in {region.function for region in every}])
        for qualname in dict.fromkeys(region.function for region in every):
            own = [region for region in every if region.function == qualname]
            for edit in Sites(defined[qualname], qualname, kinds_of).edits:
                if region := _inside(own, edit.span):
                    counts[region.part] = counts.get(region.part, 0) + 1
    return counts


def generate(kit: Path = KIT, parts: list[str] | None = None, per_stub: int | None = None) -> list[Mutant]:
    """Every one-edit mutant of the stub regions of solutions/*.py (of `parts` only, when given;
    at most `per_stub` of each stub function, when given), in file order, none twice; an edit
    changes lines inside a region only, never the given code around it (in the same function
    too). Its id names the file, line, function and change. Raises MutantError."""
    mutants: list[Mutant] = []
    for engine, every in stub_regions(kit).items():
        chosen = [region for region in every if parts is None or region.part in parts]
        if not chosen:
            continue
        path = kit / "solutions" / f"{engine}.py"
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        source = _Source(text)
        defined = dict(functions(tree))
        code = _code(text)
        seen = {text}
        kinds_of = name_kinds([defined[name] for name in {region.function for region in every}])
        for qualname, function in defined.items():
            own = [region for region in chosen if region.function == qualname]
            if not own:
                continue
            sites = Sites(function, qualname, kinds_of)
            made = 0
            for edit in sites.edits:
                region = _inside(own, edit.span)
                if region is None or (per_stub is not None and made >= per_stub):
                    continue
                edit.apply()
                try:
                    mutated = _rewrite(source, sites, edit, tree, qualname, function)
                finally:
                    edit.undo()
                if mutated in seen:
                    continue  # the same file by another edit, or no change at all
                seen.add(mutated)
                made += 1
                line, change = _describe(text, code, mutated)
                diff = "".join(difflib.unified_diff(
                    text.splitlines(keepends=True), mutated.splitlines(keepends=True),
                    f"solutions/{engine}.py", f"mutant of solutions/{engine}.py", n=2))
                mutants.append(Mutant(f"{engine}.py:{line} {edit.function}: {change}", engine,
                                      region.part, mutated, diff, qualname))
    ids = [m.id for m in mutants]
    for position, mutant in enumerate(mutants):
        if ids.count(mutant.id) > 1:  # two edits of one line that read alike: number them
            number = ids[:position].count(mutant.id) + 1
            mutants[position] = Mutant(f"{mutant.id} #{number}", mutant.engine, mutant.part,
                                       mutant.source, mutant.diff, mutant.stub)
    return mutants
