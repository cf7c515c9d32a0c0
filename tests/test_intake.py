"""Intake finds the engine files in every shape a class arrives in, and says why when it cannot."""

import hashlib
import io
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.staff import intake

KIT = Path(__file__).resolve().parent.parent
VALUE = (KIT / "solutions" / "value.py").read_text(encoding="utf-8")
TENSOR = (KIT / "solutions" / "tensor.py").read_text(encoding="utf-8")
DUAL = (KIT / "solutions" / "dual.py").read_text(encoding="utf-8")


def one(folder: Path) -> intake.Submission:
    (submission,) = intake.collect(folder)
    return submission


def zipped(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def notebook(*cells: tuple[str, str]) -> str:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text)
                  for kind, text in cells]
    return nbformat.writes(book)


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


# -- the formats -----------------------------------------------------------------------------------

def test_a_folder_of_student_folders(tmp_path):
    for student, files in {"ana": {"value.py": VALUE, "dual.py": DUAL}, "ben": {"tensor.py": TENSOR}}.items():
        (tmp_path / student).mkdir()
        for name, text in files.items():
            (tmp_path / student / name).write_text(text)
    ana, ben = intake.collect(tmp_path)
    assert (ana.student, ana.format, sorted(ana.files)) == ("ana", "folder", ["dual", "value"])
    assert ana.files["value"] == VALUE
    assert sorted(ben.files) == ["tensor"]
    assert any("value.py: not found" in note for note in ben.notes)


def test_a_zip_with_a_nested_folder_and_mac_debris(tmp_path):
    (tmp_path / "cleo.zip").write_bytes(zipped({"hw3/value.py": VALUE, "hw3/dual.py": DUAL,
                                                "__MACOSX/hw3/._value.py": b"\0\5\26\7"}))
    cleo = one(tmp_path)
    assert (cleo.student, cleo.format, sorted(cleo.files)) == ("cleo", "zip", ["dual", "value"])
    assert cleo.files["value"] == VALUE
    assert "value.py: taken from hw3/value.py" in cleo.notes


def test_a_single_py_file_is_taken_for_the_engines_it_defines(tmp_path):
    (tmp_path / "dev.py").write_text(VALUE)
    dev = one(tmp_path)
    assert (dev.student, dev.format, dict(dev.files)) == ("dev", "file", {"value": VALUE})


def test_a_notebook_is_split_by_the_names_its_cells_define(tmp_path):
    (tmp_path / "eve.ipynb").write_text(notebook(
        ("markdown", "# Homework"),
        ("code", "%matplotlib inline\nimport math\nimport numpy as np"),
        ("code", "class Value:\n    def __init__(self, data):\n        self.data = math.tanh(data)"),
        ("code", "v = Value(2.0)\nprint(v.data)"),
        ("code", "def unbroadcast(grad, shape):\n    return np.zeros(shape)"),
        ("code", "class Dual:\n    pass"),
        ("code", "print(Dual(), unbroadcast(None, ()))")))
    eve = one(tmp_path)
    assert (eve.student, eve.format, sorted(eve.files)) == ("eve", "notebook", ["dual", "tensor", "value"])
    value, tensor = eve.files["value"], eve.files["tensor"]
    assert "class Value" in value and "print(v.data)" in value and "def unbroadcast" not in value
    assert "def unbroadcast" in tensor and "import numpy as np" in tensor and "class Value" not in tensor
    assert "# %matplotlib inline" in value  # a magic is kept as a comment, not as broken Python
    for module in eve.files.values():
        compile(module, "<notebook module>", "exec")


def test_an_nbgrader_grading_cell_is_not_part_of_the_module(tmp_path):
    book = nbformat.v4.new_notebook()
    check = nbformat.v4.new_code_cell("raise SystemExit('grading')")
    check.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "part-dual", "points": 10}
    book.cells = [nbformat.v4.new_code_cell(DUAL), check]
    (tmp_path / "nia.ipynb").write_text(nbformat.writes(book))
    assert "SystemExit" not in one(tmp_path).files["dual"]


def test_a_future_import_in_a_later_cell_moves_to_the_top_of_its_module(tmp_path):
    (tmp_path / "fox.ipynb").write_text(notebook(
        ("code", "import math"),
        ("code", "from __future__ import annotations\n\nclass Value:\n"
                 "    def __add__(self, other: Value) -> Value:\n        return self")))
    namespace = {}
    exec(compile(one(tmp_path).files["value"], "value.py", "exec"), namespace)
    assert namespace["Value"].__add__.__annotations__ == {"other": "Value", "return": "Value"}


def test_an_lms_download_is_grouped_by_student_and_keeps_the_last_resubmission(tmp_path):
    (tmp_path / "smithjane_12345_67890_Value.py").write_text("class Value:\n    first = True\n")
    (tmp_path / "smithjane_12345_67891_value-1.py").write_text(VALUE)
    (tmp_path / "smithjane_12345_67890_dual.py").write_text(DUAL)
    (tmp_path / "doejohn_late_23456_78901_tensor.py").write_text(TENSOR)
    doe, smith = intake.collect(tmp_path)
    assert (doe.student, doe.format, sorted(doe.files)) == ("doejohn", "lms", ["tensor"])
    assert (smith.student, sorted(smith.files)) == ("smithjane", ["dual", "value"])
    assert smith.files["value"] == VALUE


def test_an_nbgrader_tree_grades_submitted_only(tmp_path):
    for student in ("fay", "gus"):
        folder = tmp_path / "submitted" / student / "autograd"
        folder.mkdir(parents=True)
        (folder / "value.py").write_text(VALUE)
        (folder / "timestamp.txt").write_text("2026-11-30 10:00:00")
    (tmp_path / "source" / "autograd").mkdir(parents=True)
    (tmp_path / "source" / "autograd" / "value.py").write_text(VALUE)
    found = intake.collect(tmp_path)
    assert [(s.source, s.student, s.format) for s in found] == [
        ("submitted/fay", "fay", "nbgrader"), ("submitted/gus", "gus", "nbgrader")]
    assert all(s.files == {"value": VALUE} for s in found)


def test_wrong_case_a_bom_and_windows_line_endings_are_normalised(tmp_path):
    (tmp_path / "hal").mkdir()
    (tmp_path / "hal" / "Value.py").write_bytes(b"\xef\xbb\xbf" + VALUE.replace("\n", "\r\n").encode())
    hal = one(tmp_path)
    assert hal.files == {"value": VALUE}


def test_intake_and_staging_never_touch_the_input(tmp_path):
    klass, staged = tmp_path / "class", tmp_path / "staged"
    (klass / "ivy").mkdir(parents=True)
    (klass / "ivy" / "Value.py").write_bytes(VALUE.replace("\n", "\r\n").encode())
    (klass / "ivy" / "notes.txt").write_text("read me")
    (klass / "jon.zip").write_bytes(zipped({"dual.py": DUAL}))
    before = tree_digest(klass)
    for submission in intake.collect(klass):
        intake.stage(submission, staged / submission.student)
    assert tree_digest(klass) == before
    assert sorted(p.name for p in (staged / "ivy").iterdir()) == ["value.py"]
    assert (staged / "ivy" / "value.py").read_bytes() == VALUE.encode()


def test_the_content_hash_follows_the_files(tmp_path):
    (tmp_path / "kim").mkdir()
    (tmp_path / "kim" / "value.py").write_text(VALUE)
    first = one(tmp_path).content_hash
    assert one(tmp_path).content_hash == first
    (tmp_path / "kim" / "value.py").write_text(VALUE + "\n# changed\n")
    assert one(tmp_path).content_hash != first


# -- bad inputs ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "make", "reason"), [
    ("corrupt.zip", lambda p: p.write_bytes(zipped({"value.py": VALUE})[:300]), "not a readable zip"),
    ("empty", lambda p: p.mkdir(), "the folder is empty"),
    ("notes", lambda p: (p.mkdir(), (p / "README.txt").write_text("sorry")), "no value.py"),
    ("binary", lambda p: (p.mkdir(), (p / "value.py").write_bytes(b"\x7fELF\0\0\1")), "binary data"),
    ("nocode.ipynb", lambda p: p.write_text(notebook(("markdown", "# Answers"), ("code", "  "))),
     "has no code"),
    ("broken.ipynb", lambda p: p.write_text("{not json"), "not a readable notebook"),
    ("essay.pdf", lambda p: p.write_bytes(b"%PDF-1.4"), "not a folder, zip, notebook or .py file"),
])
def test_a_submission_with_nothing_gradable_says_why(tmp_path, name, make, reason):
    make(tmp_path / name)
    submission = one(tmp_path)
    assert submission.files == {}
    assert reason in submission.reason


def test_a_binary_file_costs_only_its_own_engine(tmp_path):
    (tmp_path / "lea").mkdir()
    (tmp_path / "lea" / "value.py").write_bytes(b"\0\1\2")
    (tmp_path / "lea" / "dual.py").write_text(DUAL)
    lea = one(tmp_path)
    assert lea.files == {"dual": DUAL}
    assert any("value.py: not a text file" in note for note in lea.notes)


def test_cells_that_are_not_python_are_left_out_with_a_note(tmp_path):
    (tmp_path / "max.ipynb").write_text(notebook(("code", "%%bash\nls -l"), ("code", "print 'hi'"),
                                                 ("code", DUAL)))
    found = one(tmp_path)
    assert sorted(found.files) == ["dual"]
    assert "ls -l" not in found.files["dual"] and "print 'hi'" not in found.files["dual"]
    assert any("cell 1 is a cell magic" in note for note in found.notes)
    assert any("cell 2 is not valid Python" in note for note in found.notes)


def test_a_missing_class_folder_is_an_error_naming_it(tmp_path):
    with pytest.raises(intake.IntakeError, match="nowhere: not a folder"):
        intake.collect(tmp_path / "nowhere")
