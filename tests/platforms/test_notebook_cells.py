"""The nbgrader notebooks' answer cells: any function holding a marked region is one, a region
inside a method's closure included, and a stub no answer cell can hold is refused with how to
restructure it. Built from edited copies of the reference, without nbgrader's course."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
from nbgrader.preprocessors import ClearSolutions
from staff.test_check import MATMUL_STUB, with_matmul_stub
from support import KIT
from support.shape import GRADED

from autograder.config import load
from autograder.notebook import NotebookError
from autograder.staff.nbgrader_release import BEGIN, END, build_notebook
from autograder.stubs import write_student_files


def answer_cells(notebook: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {cell.metadata["nbgrader"]["grade_id"]: cell for cell in notebook.cells
            if cell.metadata["nbgrader"]["solution"]}


def test_a_region_inside_a_methods_closure_makes_the_method_an_answer_cell(tmp_path):
    kit = with_matmul_stub(tmp_path / "kit")
    write_student_files(kit)
    notebook = build_notebook(kit, "tensor", load())
    cell = answer_cells(notebook)["tensor-Tensor-__matmul__"]
    assert cell.source.startswith("@method_of(Tensor)\ndef __matmul__(self, other")
    assert cell.source.count(BEGIN) == 1 and cell.source.count(END) == 1
    assert "        # TODO(tensor.matmul): the gradient of each operand of a matrix product\n" \
           f"        {BEGIN}\n        self.grad += out.grad @ other.data.T" in cell.source
    assert "out = Tensor(self.data @ other.data, (self, other), \"@\")" in cell.source  # given, in the cell
    given = "\n".join(c.source for c in notebook.cells if not c.metadata["nbgrader"]["solution"])
    assert "def __matmul__" not in given and "def __add__" in given
    # What nbgrader hands out: the region, and nothing around it, replaced by its stub.
    student, _ = ClearSolutions().preprocess(nbformat.v4.new_notebook(cells=[cell]), {})
    handed = student.cells[0].source
    assert "self.grad += out.grad @ other.data.T" not in handed
    assert "        # YOUR CODE HERE\n        raise NotImplementedError()" in handed
    assert "out._backward = _backward\n    return out" in handed
    compile(handed, "cell", "exec")


def test_the_kits_own_answer_cells_are_one_per_stub():
    cells = {"value": 7, "tensor": 1, "dual": 7}  # the kit's stubs, by engine
    for engine in GRADED:
        assert len(answer_cells(build_notebook(KIT, engine, load()))) == cells[engine]


@pytest.mark.parametrize(("change", "said"), [
    ("    @staticmethod\n    def __matmul__(self", "has a decorator (@staticmethod), so no answer cell of a "
     "notebook can hold it (`autograder release nbgrader` writes each stub as a function of its own, "
     "attached to its class); put the marked region in a plain method, and have the decorated one call it"),
    ("    def __matmul__(self", "calls super() without arguments, which works only inside the class body"),
])
def test_a_stub_no_answer_cell_can_hold_is_refused_with_how_to_restructure_it(tmp_path, change, said):
    kit = with_matmul_stub(tmp_path / "kit")
    path = kit / "solutions" / "tensor.py"
    text = path.read_text(encoding="utf-8")
    old = "    def __matmul__(self"
    text = text.replace(old, change, 1)
    if "super" in said:
        text = text.replace(MATMUL_STUB.splitlines()[-1], "            super().__init__\n" +
                            MATMUL_STUB.splitlines()[-1], 1)
    path.write_text(text, encoding="utf-8")
    write_student_files(kit)
    with pytest.raises(NotebookError) as refused:
        build_notebook(kit, "tensor", load())
    assert str(refused.value).startswith(f"{path}, line ") and said in str(refused.value)


def test_a_process_that_reads_notebooks_leaves_out_jsonschemas_iri_parsers():
    """nbformat's jsonschema would build rfc3987_syntax's parsers on import, for a format no notebook
    uses: seconds of CPU in every check, release and notebook grading. The grader keeps them out."""
    for entry in ("autograder.notebook", "autograder.staff.cli, autograder.staff.nbgrader_course"):
        probe = f"import sys, {entry}; print(sys.modules.get('rfc3987_syntax'))"  # a grading cell; the staff
        done = subprocess.run([sys.executable, "-c", probe], cwd=KIT, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0 and done.stdout.strip() == "None", (entry, done.stdout + done.stderr)
