"""The assignment as Jupyter notebooks for nbgrader, and nbgrader's gradebook fed from the kit.

One notebook per student file, made from `assignments/<file>.py` and `solutions/<file>.py`
(never kept by hand): the module docstring as markdown, the given code as read-only cells,
each stub as an answer cell whose body is the reference's between nbgrader's
`### BEGIN SOLUTION` / `### END SOLUTION` (so `nbgrader generate_assignment` hands students
the stub), and one grading cell per part of grading.toml that calls `check_part`. The tests
themselves never enter a notebook: `check_part` runs the kit's suites on the saved notebook.

A method of a class is an answer cell of its own: `@method_of(Value)` above it attaches it
to the class defined in the read-only cell before.

`record_in_gradebook` writes the kit's per-part scores into nbgrader's gradebook, where
`nbgrader export` and formgrader read them; a score a grader typed in by hand is kept.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping
from pathlib import Path

import nbformat

from ..config import GRADING_TOML, Grading, load
from ..notebook import ENGINES, NotebookError, engine_of, grade_id

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
METHOD_OF = '''\
def method_of(cls):
    """Attach the function below it to `cls` as a method: a class written across cells."""
    def attach(function):
        setattr(cls, function.__name__, function)
        return function
    return attach
'''


# -- notebooks from the .py files ------------------------------------------------------------------

def new_cell(kind: str, source: str, cell_id: str, *, solution: bool = False, grade: bool = False,
             points: float | None = None) -> nbformat.NotebookNode:
    """A cell with nbgrader's metadata, whose id is its grade id, so a rebuild changes nothing."""
    meta = {"grade": grade, "solution": solution, "locked": not solution, "grade_id": cell_id,
            "schema_version": 3}
    if points is not None:
        meta["points"] = points
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    return make(source, id=cell_id, metadata={"nbgrader": meta})


def is_stub(node: ast.AST) -> bool:
    """A function whose last statement raises NotImplementedError."""
    if not isinstance(node, ast.FunctionDef):
        return False
    last = node.body[-1]
    return (isinstance(last, ast.Raise) and isinstance(last.exc, ast.Call)
            and getattr(last.exc.func, "id", None) == "NotImplementedError")


def first_line(node: ast.FunctionDef | ast.ClassDef) -> int:
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def body_start(node: ast.FunctionDef) -> int:
    """The first line after the docstring (the first body line where there is none)."""
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        return first.end_lineno + 1
    return first.lineno


def functions_by_name(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            found.update({f"{node.name}.{child.name}": child for child in node.body
                          if isinstance(child, ast.FunctionDef)})
    return found


def answer_source(stub: ast.FunctionDef, stub_lines: list[str], reference: ast.FunctionDef,
                  reference_lines: list[str], owner: str | None) -> str:
    """The stub's signature, docstring and TODO, then the reference's body between the markers."""
    head = stub_lines[first_line(stub) - 1:stub.body[-1].lineno - 1]
    body = reference_lines[body_start(reference) - 1:reference.end_lineno]
    indent = " " * (stub.col_offset + 4)
    text = textwrap.dedent("\n".join([*head, indent + BEGIN, *body, indent + END]))
    return (f"@method_of({owner})\n" if owner else "") + text


def notebook_cells(stub_path: Path, reference_path: Path) -> list[nbformat.NotebookNode]:
    """The cells of one student file, in its order: given code, then each stub after its class."""
    source = stub_path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, filename=str(stub_path))
    reference_source = reference_path.read_text(encoding="utf-8")
    reference_lines = reference_source.splitlines()
    references = functions_by_name(ast.parse(reference_source, filename=str(reference_path)))
    docstring = ast.get_docstring(tree, clean=True)
    if docstring is None:
        raise NotebookError(f"{stub_path}: add a module docstring; it becomes the notebook's introduction")
    title = stub_path.stem
    cells = [new_cell("markdown", f"# `{stub_path.name}`\n\n{docstring}", f"{title}-introduction")]
    given: list[str] = []
    attach_helper = True

    def reference_of(name: str) -> ast.FunctionDef:
        if name not in references:
            raise NotebookError(f"{reference_path}: {name} is missing; the reference must define every stub")
        return references[name]

    def flush() -> None:
        text = "\n".join(given).strip("\n")
        if text:
            cells.append(new_cell("code", text, f"{title}-given-{len(cells)}"))
        given.clear()

    def answer(node: ast.FunctionDef, qualified: str, owner: str | None) -> None:
        nonlocal attach_helper
        if owner and attach_helper:
            cells.append(new_cell("code", METHOD_OF.rstrip("\n"), f"{title}-method-of"))
            attach_helper = False
        text = answer_source(node, lines, reference_of(qualified), reference_lines, owner)
        cells.append(new_cell("code", text, f"{title}-{qualified.replace('.', '-')}", solution=True))

    start = tree.body[0].end_lineno + 1  # after the module docstring
    for node in tree.body[1:]:
        span = lines[start - 1:node.end_lineno]
        if is_stub(node):
            given += lines[start - 1:first_line(node) - 1]
            flush()
            answer(node, node.name, None)
        elif isinstance(node, ast.ClassDef) and any(is_stub(child) for child in node.body):
            stubs = [child for child in node.body if is_stub(child)]
            cut = set()
            for stub in stubs:
                cut.update(range(first_line(stub), stub.end_lineno + 1))
                if stub.end_lineno + 1 < node.end_lineno and not lines[stub.end_lineno].strip():
                    cut.add(stub.end_lineno + 1)  # the blank line after it, so no gap is left twice
            given += [line for number, line in enumerate(span, start=start) if number not in cut]
            flush()
            for stub in stubs:
                answer(stub, f"{node.name}.{stub.name}", node.name)
        else:
            given += span
        start = node.end_lineno + 1
    flush()
    return cells


def grading_cells(engine: str, grading: Grading) -> list[nbformat.NotebookNode]:
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
    cells = notebook_cells(kit / "assignments" / f"{engine}.py", kit / "solutions" / f"{engine}.py")
    notebook = nbformat.v4.new_notebook(cells=cells + grading_cells(engine, grading))
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.validate(notebook)
    return notebook


def write_notebooks(kit: Path, out: Path) -> None:
    """value.ipynb, tensor.ipynb and dual.ipynb, with solutions: nbgrader's source/<assignment>/."""
    grading = load(kit / "grading.toml")
    for engine in ENGINES:
        nbformat.write(build_notebook(kit, engine, grading), out / f"{engine}.ipynb")


# -- nbgrader's gradebook --------------------------------------------------------------------------

def record_in_gradebook(db_url: str, assignment: str, student: str, part_scores: Mapping[str, float],
                        grading: Grading | None = None) -> None:
    """Write per-part scores (part id -> points) for one student's submission of `assignment`
    into nbgrader's gradebook at `db_url` (e.g. sqlite:////course/gradebook.db).

    Each score becomes the autograder score of the part's grading cell (a bonus part's becomes
    extra credit, its cell being worth 0 points); a manual score is never touched, and nbgrader
    keeps preferring it. The submission (and the student) is created when nbgrader has none yet.
    """
    from nbgrader.api import Gradebook, MissingEntry  # nbgrader is a staff extra: load it only here

    grading = grading or load(GRADING_TOML)
    unknown = sorted(set(part_scores) - set(grading.parts))
    if unknown:
        raise NotebookError(f"{grading.source}: no part {unknown}; score only the parts it lists")
    with Gradebook(db_url) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            raise NotebookError(f"{db_url}: no assignment {assignment!r}; run `nbgrader generate_assignment "
                                f"{assignment}` on the notebooks of `autograder release nbgrader`") from None
        gradebook.update_or_create_student(student)
        try:
            gradebook.find_submission(assignment, student)
        except MissingEntry:
            gradebook.add_submission(assignment, student)
        for part_id, score in part_scores.items():
            try:
                grade = gradebook.find_grade(grade_id(part_id), engine_of(part_id), assignment, student)
            except MissingEntry:
                raise NotebookError(
                    f"{assignment}/{engine_of(part_id)}.ipynb has no grading cell {grade_id(part_id)}; "
                    "rebuild the notebooks with `autograder release nbgrader` and generate the "
                    "assignment again") from None
            if grading.parts[part_id].bonus:
                grade.auto_score, grade.extra_credit = 0.0, float(score)
            else:
                grade.auto_score = float(score)
            if grade.manual_score is None:
                grade.needs_manual_grade = False
        gradebook.db.commit()
