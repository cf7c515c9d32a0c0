"""The assignment as Jupyter notebooks for nbgrader: `autograder release nbgrader`'s source folder.

`write_notebooks` makes one notebook per student file from assignments/ and solutions/: given
code in read-only cells, each stub an answer cell with the reference's body between nbgrader's
solution markers (a method attached by `@method_of(Value)`), one grading cell per part calling
`check_part`; no test enters a notebook. Writing them needs nbformat only, not nbgrader, whose
import alone costs a second: `autograder check` writes them in its dry run.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import nbformat

from .. import stubs
from ..config import Grading, load
from ..notebook import NotebookError, engine_of, grade_id
from ..parts import engines

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
METHOD_OF = '''\
def method_of(cls):
    """Attach the function below it to `cls` as a method: a class written across cells."""
    def attach(function):
        setattr(cls, function.__name__, function)
        return function
    return attach
'''


def new_cell(kind: str, source: str, cell_id: str, *, solution: bool = False, grade: bool = False,
             points: float | None = None) -> nbformat.NotebookNode:
    """A cell with nbgrader's metadata, whose id is its grade id, so a rebuild changes nothing."""
    meta = {"grade": grade, "solution": solution, "locked": not solution, "grade_id": cell_id,
            "schema_version": 3}
    if points is not None:
        meta["points"] = points
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    return make(source, id=cell_id, metadata={"nbgrader": meta})


def first_line(node: ast.FunctionDef | ast.ClassDef) -> int:
    """The first line of a definition, its decorators included."""
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def answer_source(function: ast.FunctionDef, last: int, reference_lines: list[str], owner: str | None) -> str:
    """The reference's function, to its line `last` (its last region's END marker, where that
    comes after its code), as an answer cell: each marked region between nbgrader's markers,
    after its TODO line, and the given code around it as it is; `@method_of(owner)` first for
    a method."""
    text = []
    for line in reference_lines[first_line(function) - 1:max(function.end_lineno, last)]:
        if begin := stubs.BEGIN.match(line):  # nbgrader's markers wrap the body (it refuses them nested)
            indent = begin["indent"]
            text += [f"{indent}# TODO({begin['part']}): {begin['todo']}", f"{indent}{BEGIN}"]
        elif stubs.END.match(line):
            text.append(line[:len(line) - len(line.lstrip())] + END)
        else:
            text.append(line)
    return (f"@method_of({owner})\n" if owner else "") + textwrap.dedent("\n".join(text))


def refuse_what_no_cell_can_hold(node: ast.FunctionDef, name: str, where: Path) -> None:
    """Raise NotebookError, with how to restructure it, for a stub that an answer cell cannot
    hold: one that only works inside its class's own body."""
    def refuse(why: str, fix: str) -> None:
        raise NotebookError(f"{where}, line {node.lineno}: the stub {name} {why}, so no answer cell of a "
                            f"notebook can hold it (`autograder release nbgrader` writes each stub as a "
                            f"function of its own, attached to its class); {fix}")
    if node.decorator_list:
        refuse(f"has a decorator (@{ast.unparse(node.decorator_list[0])})",
               "put the marked region in a plain method, and have the decorated one call it")
    short = name.rpartition(".")[2]
    if "." in name and short.startswith("__") and not short.endswith("__"):
        refuse("has a name that Python mangles inside a class", f"rename it _{short.lstrip('_')}")
    if any(isinstance(call, ast.Call) and getattr(call.func, "id", None) == "super" and not call.args
           for call in ast.walk(node)):
        refuse("calls super() without arguments, which works only inside the class body",
               "write super(ClassName, self) instead")


def notebook_cells(stub_path: Path, reference_path: Path) -> list[nbformat.NotebookNode]:
    """The cells of one student file, in its order: given code, then each stub after its class.
    A stub is a function that holds a marked region of the reference (a method's closure's region
    too: the whole method is the answer cell). Raises NotebookError when the file has no module
    docstring, or a stub no answer cell can hold."""
    source = stub_path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(stub_path))
    reference_source = reference_path.read_text(encoding="utf-8")
    reference_lines = reference_source.splitlines()
    references = dict(stubs.functions(ast.parse(reference_source, filename=str(reference_path))))
    ends: dict[str, int] = {}
    for region in stubs.regions(reference_source, reference_path):
        ends[region.function] = max(ends.get(region.function, 0), region.last)
    marked = set(ends)
    docstring = ast.get_docstring(tree, clean=True)
    if docstring is None:
        raise NotebookError(f"{stub_path}: add a module docstring; it becomes the notebook's introduction")
    for name in sorted(marked):
        refuse_what_no_cell_can_hold(references[name], name, reference_path)
        if name.count(".") > 1:
            raise NotebookError(f"{reference_path}, line {references[name].lineno}: the stub {name} is a "
                                "method of a class inside a class, which no answer cell can be attached to; "
                                "move the class to the top level of the file")
    title = stub_path.stem
    cells = [new_cell("markdown", f"# `{stub_path.name}`\n\n{docstring}", f"{title}-introduction")]
    given: list[str] = []
    attach_helper = True

    def flush() -> None:
        text = "\n".join(given).strip("\n")
        if text:
            cells.append(new_cell("code", text, f"{title}-given-{len(cells)}"))
        given.clear()

    def answer(qualified: str, owner: str | None) -> None:
        nonlocal attach_helper
        if owner and attach_helper:
            cells.append(new_cell("code", METHOD_OF.rstrip("\n"), f"{title}-method-of"))
            attach_helper = False
        text = answer_source(references[qualified], ends[qualified], reference_lines, owner)
        cells.append(new_cell("code", text, f"{title}-{qualified.replace('.', '-')}", solution=True))

    start = tree.body[0].end_lineno + 1  # after the module docstring
    for node in tree.body[1:]:
        span = lines[start - 1:node.end_lineno]
        methods = [child for child in node.body if isinstance(child, ast.FunctionDef)
                   and f"{node.name}.{child.name}" in marked] if isinstance(node, ast.ClassDef) else []
        if isinstance(node, ast.FunctionDef) and node.name in marked:
            given += lines[start - 1:first_line(node) - 1]
            flush()
            answer(node.name, None)
        elif methods:
            cut = set()
            for method in methods:
                cut.update(range(first_line(method), method.end_lineno + 1))
                if method.end_lineno + 1 < node.end_lineno and not lines[method.end_lineno].strip():
                    cut.add(method.end_lineno + 1)  # the blank line after it, so no gap is left twice
            given += [line for number, line in enumerate(span, start=start) if number not in cut]
            flush()
            for method in methods:
                answer(f"{node.name}.{method.name}", node.name)
        else:
            given += span
        start = node.end_lineno + 1
    flush()
    return cells


def grading_cells(engine: str, grading: Grading) -> list[nbformat.NotebookNode]:
    """The grading section of an engine's notebook: a heading, and a cell per part calling
    `check_part`, worth the part's points (0 for a bonus)."""
    parts = [part for part in grading.parts.values() if engine_of(part.id) == engine]
    cells = [new_cell("markdown", "## Grading\n\nSave the notebook first: each cell below runs the kit's "
                      "tests of one part on the saved file and prints its score, or the reasons it lost "
                      "points.", f"{engine}-grading")]
    for part in parts:
        bonus = " (bonus: counted as extra credit)" if part.bonus else ""
        source = (f"# {part.id}, {part.points:g} points{bonus}: {part.title}\n"
                  "if __name__ == \"__main__\":  # in Jupyter; not when the notebook is imported\n"
                  "    from autograder.notebook import check_part\n\n"
                  f"    check_part({part.id!r})")
        cells.append(new_cell("code", source, grade_id(part.id), grade=True,
                              points=0 if part.bonus else part.points))
    return cells


def build_notebook(kit: Path, engine: str, grading: Grading) -> nbformat.NotebookNode:
    """The validated notebook of one engine, with solutions."""
    cells = notebook_cells(kit / "assignments" / f"{engine}.py", kit / "solutions" / f"{engine}.py")
    notebook = nbformat.v4.new_notebook(cells=cells + grading_cells(engine, grading))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.validate(notebook)
    return notebook


def write_notebooks(kit: Path, out: Path) -> None:
    """value.ipynb, tensor.ipynb and dual.ipynb, with solutions: nbgrader's source/<assignment>/."""
    grading = load(kit / "grading.toml")
    for engine in engines(kit / "grading.toml"):
        nbformat.write(build_notebook(kit, engine, grading), out / f"{engine}.ipynb")
