"""The student files, made from the reference: each marked region of solutions/ becomes a stub.

In solutions/<engine>.py a stub's body sits between `# BEGIN SOLUTION <part>: <what to do>`
and `# END SOLUTION`, as nbgrader and Otter mark solutions. assignments/<engine>.py is the same
file with each region replaced by `# TODO(<part>): <what to do>` and `raise
NotImplementedError("<part>: implement <function>")`, so a diff of the two is exactly a
student's work. The function holding a region is the stub; the rest of the file is given code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from .parts import engines

BEGIN = re.compile(r"^(?P<indent>\s*)# BEGIN SOLUTION (?P<part>[\w.]+): (?P<todo>\S.*)$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
MARKER = re.compile(r"^\s*# (BEGIN|END) SOLUTION")


class StubError(Exception):
    """A solutions/ file whose markers cannot be read; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Region:
    """One marked region: the lines `first`..`last` (1-based, the markers included)."""

    part: str
    todo: str
    function: str  # the function that holds it, as Class.method or function
    indent: str
    first: int
    last: int

    def stub(self) -> list[str]:
        """The two lines that stand in the student's file where the region stands here."""
        return [f"{self.indent}# TODO({self.part}): {self.todo}",
                f'{self.indent}raise NotImplementedError("{self.part}: implement {self.function}")']


def functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef]]:
    """(qualified name, node) of a module's functions and its classes' methods (`f`,
    `Class.method`, nested classes' too), in source order."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef):
                found.append((f"{prefix}{child.name}", child))

    visit(tree, "")
    return found


def regions(source: str, where: Path) -> list[Region]:
    """The marked regions of a reference file, in order. Raises StubError."""
    lines = source.splitlines()
    try:
        defined = functions(ast.parse(source, filename=str(where)))
    except SyntaxError as error:
        raise StubError(f"{where}, line {error.lineno}: not valid Python ({error.msg})") from None
    found, open_at = [], None
    for number, line in enumerate(lines, start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_at is not None:
                raise StubError(f"{where}, line {number}: a BEGIN SOLUTION inside the region that line "
                                f"{open_at[0]} begins; close that one with # END SOLUTION first")
            open_at = (number, begin)
        elif end:
            if open_at is None:
                raise StubError(f"{where}, line {number}: # END SOLUTION with no BEGIN SOLUTION before it")
            start, begin = open_at
            holders = [name for name, node in defined if node.lineno < start <= node.end_lineno]
            if not holders:
                raise StubError(f"{where}, line {start}: a region outside any function; put it in the body "
                                "of the function the student writes")
            found.append(Region(begin["part"], begin["todo"].strip(), holders[-1], begin["indent"],
                                start, number))
            open_at = None
        elif MARKER.match(line):
            raise StubError(f"{where}, line {number}: write the marker as `# BEGIN SOLUTION <part>: <what "
                            "to do>` or `# END SOLUTION`")
    if open_at is not None:
        raise StubError(f"{where}, line {open_at[0]}: BEGIN SOLUTION with no # END SOLUTION after it")
    return found


def student_source(source: str, where: Path) -> str:
    """The student's file: the reference file with every marked region replaced by its stub."""
    lines = source.splitlines()
    for region in reversed(regions(source, where)):
        lines[region.first - 1:region.last] = region.stub()
    return "\n".join(lines) + "\n"


def engine_files(folder: Path) -> list[Path]:
    """The engine files of a kit's folder (solutions/ or assignments/): every .py file in it but
    pytest's conftest.py (the students' folder has one that says where the checks are), in the
    order of the engines of the grading.toml beside the folder, then any other by name."""
    order = engines(folder.parent / "grading.toml")
    found = [path for path in folder.glob("*.py") if path.is_file() and path.name != "conftest.py"]
    return sorted(found, key=lambda path: (order.index(path.stem) if path.stem in order else len(order),
                                           path.name))


def stubs_by_part(solutions: Path) -> dict[str, list[tuple[str, str]]]:
    """Part id -> the stubs of it: (engine, Class.method), in file order. Raises StubError."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in engine_files(solutions):
        for region in regions(path.read_text(encoding="utf-8"), path):
            stub = (path.stem, region.function)
            if stub not in found.setdefault(region.part, []):
                found[region.part].append(stub)
    return found


def _outdated(kit: Path) -> list[tuple[Path, Path, str]]:
    """(reference file, student file, what the reference makes of it) for each student file that
    is missing or differs from what solutions/ makes of it."""
    found = []
    for path in engine_files(kit / "solutions"):
        target = kit / "assignments" / path.name
        made = student_source(path.read_text(encoding="utf-8"), path)
        if not target.is_file() or target.read_text(encoding="utf-8") != made:
            found.append((path, target, made))
    return found


def stale_student_files(kit: Path) -> list[str]:
    """A line for each student file that is not what solutions/ makes of it."""
    return [f"{target}: not what {path} makes of it; write it again with `autograder stubs`"
            for path, target, _ in _outdated(kit)]


def write_student_files(kit: Path) -> list[Path]:
    """Write assignments/ from solutions/; the files that changed."""
    outdated = _outdated(kit)
    for _, target, made in outdated:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(made, encoding="utf-8")
    return [target for _, target, _ in outdated]


# -- the operations of value.py, and which of them are given ------------------------------------------

# The methods behind each operator a snippet can write; every other method that returns a
# Value is an operation under its own name (`exp`, `tanh`), and the constructor is "Value".
OPERATORS = {"__add__": "+", "__radd__": "+", "__sub__": "-", "__rsub__": "-", "__mul__": "*",
             "__rmul__": "*", "__truediv__": "/", "__rtruediv__": "/", "__pow__": "**",
             "__neg__": "unary -", "__init__": "Value"}


def value_operations(source: str, where: Path) -> dict[str, bool]:
    """Every operation of the Value class in a reference file, and whether it is given: an
    operation is given when none of the methods behind it holds a marked region. Raises StubError."""
    tree = ast.parse(source, filename=str(where))
    stubbed = {region.function for region in regions(source, where)}
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Value"]
    if not classes:
        raise StubError(f"{where}: defines no class Value")
    found: dict[str, bool] = {}
    for method in (node for node in classes[0].body if isinstance(node, ast.FunctionDef)):
        returns = ast.unparse(method.returns) if method.returns is not None else ""
        public = returns == "Value" and not method.name.startswith("_")
        name = OPERATORS.get(method.name) or (method.name if public else None)
        if name is not None:
            found[name] = found.get(name, True) and f"Value.{method.name}" not in stubbed
    return found


@dataclass(frozen=True)
class Handout:
    """What the reference's markers say of the student's files: the stubs of each part (as
    "engine.py Class.method"), and every operation of value.py with whether it is given."""

    stubs: dict[str, list[str]]
    operations: dict[str, bool]

    @property
    def given(self) -> list[str]:
        """The operations of value.py that are given code."""
        return [name for name, given in self.operations.items() if given]

    def part_of(self, stub: str) -> str | None:
        """The part whose stub `stub` ("value.py Value.backward") is, or None when it is given code."""
        return next((part for part, stubs in self.stubs.items() if stub in stubs), None)


def handout(solutions: Path) -> Handout:
    """The stubs and the given operations of a reference folder's marked files. Raises StubError."""
    stubs = {part: [f"{engine}.py {function}" for engine, function in found]
             for part, found in stubs_by_part(solutions).items()}
    value = solutions / "value.py"
    operations = value_operations(value.read_text(encoding="utf-8"), value) if value.is_file() else {}
    return Handout(stubs, operations)
