"""Intake finds the engine files in every shape a class arrives in, and says why when it cannot."""

import hashlib
import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import nbformat
import pytest
from support import KIT
from support.shape import reference

from autograder import intake

VALUE = (KIT / "solutions" / "value.py").read_text(encoding="utf-8")
TENSOR = (KIT / "solutions" / "tensor.py").read_text(encoding="utf-8")
DUAL = reference("dual")


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

@pytest.mark.engine("dual")  # its submissions hold dual.py
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


@pytest.mark.engine("dual")  # its submissions hold dual.py
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


@pytest.mark.engine("dual")  # a file defines Dual
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


@pytest.mark.engine("dual")  # its submissions hold dual.py
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


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_an_lms_download_is_grouped_by_student_and_keeps_the_last_resubmission(tmp_path):
    (tmp_path / "smithjane_12345_67890_Value.py").write_text("class Value:\n    first = True\n")
    (tmp_path / "smithjane_12345_67891_value-1.py").write_text(VALUE)
    (tmp_path / "smithjane_12345_67890_dual.py").write_text(DUAL)
    (tmp_path / "doejohn_late_23456_78901_tensor.py").write_text(TENSOR)
    doe, smith = intake.collect(tmp_path)
    assert (doe.student, doe.format, sorted(doe.files)) == ("doejohn_23456", "canvas", ["tensor"])
    assert (smith.student, sorted(smith.files)) == ("smithjane_12345", ["dual", "value"])
    assert smith.files["value"] == VALUE
    # Not two entries for one student: one entry, the newest upload counting, with a line that says so.
    line = "value.py: value-1.py counts, the newest upload; the earlier Value.py is not graded"
    assert smith.resubmissions == [line] and line in smith.notes
    assert doe.resubmissions == []


def canvas_download(folder: Path) -> Path:
    """Files named as Canvas's "Download Submissions" names them (get_filename in canvas-lms's
    lib/content_zipper.rb): the sortable name lower-cased with every non-word character removed
    (letters of any script and digits stay), LATE when late, the user id, the file's id, then the
    file's own name; under anonymous grading, anon_<id> in place of the name and the user id."""
    nfd = unicodedata.normalize("NFD", "müllerjan")  # as a Mac's unzip writes it
    files = {"müllerjan_67890_22222_value.py": VALUE, f"{nfd}_67890_22223_dual.py": DUAL,
             "obrienpat2_55555_31000_tensor.py": TENSOR, "obrienpat2_LATE_55555_31001_value.py": VALUE,
             "lee_77777_40000_value.py": VALUE, "lee_88888_40001_value.py": VALUE,
             "anon_Xy7Qz_50000_dual.py": DUAL, "LATE_anon_Pq2Rs_50001_dual.py": DUAL}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_canvas_download_is_read_by_canvas_own_naming_rules_and_keeps_its_ids(tmp_path):
    found = {s.source: s for s in intake.collect(canvas_download(tmp_path))}
    assert {source: (s.student, s.format, s.lms, s.lms_id, s.lms_name, sorted(s.files))
            for source, s in found.items()} == {
        "müllerjan_67890_*": ("müllerjan_67890", "canvas", "canvas", "67890", "müllerjan", ["dual", "value"]),
        "obrienpat2_55555_*": ("obrienpat2_55555", "canvas", "canvas", "55555", "obrienpat2",
                               ["tensor", "value"]),
        "lee_77777_*": ("lee_77777", "canvas", "canvas", "77777", "lee", ["value"]),  # two students
        "lee_88888_*": ("lee_88888", "canvas", "canvas", "88888", "lee", ["value"]),  # named alike
        "anon_Xy7Qz_*": ("anon_Xy7Qz", "canvas", "canvas", "Xy7Qz", "anon", ["dual"]),
        "anon_Pq2Rs_*": ("anon_Pq2Rs", "canvas", "canvas", "Pq2Rs", "anon", ["dual"])}


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_moodle_download_is_read_by_moodle_own_naming_rules_and_keeps_the_participant_id(tmp_path):
    """Moodle's "Download all submissions" (download_submissions in mod/assign/locallib.php): a
    folder `<full name>_<participant id>_assignsubmission_file_` per student (Moodle 3.1 on; a
    tool that unzips may turn its spaces into `_` and drop the last `_`), or the same prefix on
    each file; `Participant` for the name under blind marking."""
    for folder, files in {"Jane Smith_123456_assignsubmission_file_": {"value.py": VALUE, "dual.py": DUAL},
                          "Jane_Smith_654321_assignsubmission_file": {"hw/Value.py": VALUE},
                          "Jane Smith_123456_assignsubmission_onlinetext_": {"onlinetext.html": "<p>hi</p>"},
                          "Participant_777001_assignsubmission_file_": {"tensor.py": TENSOR}}.items():
        for name, text in files.items():
            (tmp_path / folder / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / name).write_text(text, encoding="utf-8")
    (tmp_path / "Ann Lee_222333_assignsubmission_file_dual.py").write_text(DUAL, encoding="utf-8")
    found = {s.source: s for s in intake.collect(tmp_path)}
    assert {source: (s.student, s.lms, s.lms_id, s.lms_name, sorted(s.files))
            for source, s in found.items()} == {
        "Jane Smith_123456_*": ("Jane_Smith_123456", "moodle", "123456", "Jane Smith", ["dual", "value"]),
        "Jane Smith_654321_*": ("Jane_Smith_654321", "moodle", "654321", "Jane Smith", ["value"]),
        "Participant_777001_*": ("Participant_777001", "moodle", "777001", "Participant", ["tensor"]),
        "Ann Lee_222333_*": ("Ann_Lee_222333", "moodle", "222333", "Ann Lee", ["dual"])}
    assert "value.py: taken from hw/Value.py" in found["Jane Smith_654321_*"].notes


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


@pytest.mark.engine("dual")  # a file defines Dual
def test_an_nbgrader_course_with_several_assignments_reads_the_one_named(tmp_path):
    fay = tmp_path / "submitted" / "fay"
    (fay / "autograd").mkdir(parents=True)
    (fay / "autograd" / "value.py").write_text(VALUE)
    (fay / "warmup").mkdir()
    (fay / "warmup" / "dual.py").write_text("class Dual:\n    pass\n")
    (tmp_path / "submitted" / "gus" / "warmup").mkdir(parents=True)
    fay_found, gus_found = intake.collect(tmp_path, assignment="autograd")
    assert fay_found.files == {"value": VALUE} and fay_found.source == "submitted/fay"
    assert gus_found.files == {} and "no submission of autograd" in gus_found.reason
    assert set(intake.collect(tmp_path)[0].files) == {"value", "dual"}  # no assignment named: all of it


def test_wrong_case_a_bom_and_windows_line_endings_are_normalised(tmp_path):
    (tmp_path / "hal").mkdir()
    (tmp_path / "hal" / "Value.py").write_bytes(b"\xef\xbb\xbf" + VALUE.replace("\n", "\r\n").encode())
    hal = one(tmp_path)
    assert hal.files == {"value": VALUE}


@pytest.mark.engine("dual")  # its submissions hold dual.py
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


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_binary_file_costs_only_its_own_engine(tmp_path):
    (tmp_path / "lea").mkdir()
    (tmp_path / "lea" / "value.py").write_bytes(b"\0\1\2")
    (tmp_path / "lea" / "dual.py").write_text(DUAL)
    lea = one(tmp_path)
    assert lea.files == {"dual": DUAL}
    assert any("value.py: not a text file" in note for note in lea.notes)


@pytest.mark.engine("dual")  # its submissions hold dual.py
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


# -- one entry never stops the class ---------------------------------------------------------------
# Each case is an entry that once made intake or staging raise, or that could: it becomes notes
# on its own submission, costs only the parts that need the file, and the entries beside it are
# read as if it were not there.

LONG_SUM = "x = " + "+".join(["1"] * 5000) + "\n"  # ast.parse: RecursionError


def raw_notebook(*cells: object, nbformat_version: object = 4) -> str:
    """A notebook's JSON written by hand, so that a cell can be anything at all."""
    return json.dumps({"nbformat": nbformat_version, "nbformat_minor": 5, "metadata": {},
                       "cells": list(cells)})


def code(source: object, **extra: object) -> dict:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None,
            **extra}


def beside_a_good_one(tmp_path: Path) -> Path:
    """A class folder holding a correct submission `zed/`, which every case below must leave alone."""
    (tmp_path / "zed").mkdir()
    (tmp_path / "zed" / "value.py").write_text(VALUE)
    return tmp_path


def read_with_zed(klass: Path) -> dict[str, intake.Submission]:
    found = {s.source: s for s in intake.collect(klass)}
    assert found.pop("zed").files == {"value": VALUE}
    staged = klass.parent / (klass.name + "-staged")
    for submission in found.values():  # every submission can be staged, whatever its names held
        intake.stage(submission, staged / submission.student)
    return found


@pytest.mark.engine("dual")  # a file defines Dual
def test_a_helper_file_too_deep_for_the_parser_is_passed_over(tmp_path):
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "value.py").write_text(VALUE)
    (tmp_path / "ann" / "helper.py").write_text(LONG_SUM)
    (tmp_path / "ann" / "dual_helper.py").write_text("class Dual:\n    pass\n" + LONG_SUM)
    ann = one(tmp_path)
    assert ann.files["value"] == VALUE
    assert ann.files["dual"].startswith("class Dual")  # routed by its definitions, as a syntax error is


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_cells_of_every_odd_shape_cost_only_themselves(tmp_path):
    klass = beside_a_good_one(tmp_path)
    (klass / "bo.ipynb").write_text(raw_notebook(
        code(5),                                                # a source that is a number
        code(["import math\n", 7]),                             # a list that is not all text
        code(LONG_SUM),                                         # too deep for the parser
        code("x = 1", metadata={"nbgrader": "grade me"}),       # nbgrader metadata that is a string
        code("y = 2", metadata=["not", "a", "dict"]),
        7, None, {"cell_type": "code"}, {"source": "z = 3"},   # cells that are not cells
        code(DUAL.splitlines(keepends=True)),
        code("label = 'caf\udce9'")))                           # a lone surrogate, as JSON allows
    bo = read_with_zed(klass)["bo.ipynb"]
    assert sorted(bo.files) == ["dual"]
    dual = bo.files["dual"]
    assert "class Dual" in dual and "x = 1" in dual and "y = 2" in dual and "label = 'caf\ufffd'" in dual
    assert "bo.ipynb: cell 1 has a source that is not text; left out" in bo.notes
    assert "bo.ipynb: cell 2 has a source that is not text; left out" in bo.notes
    assert any(n.startswith("bo.ipynb: cell 3 is not valid Python (or is nested too deep") for n in bo.notes)
    assert any("cell 11 holds characters that are not valid Unicode" in note for note in bo.notes)


@pytest.mark.parametrize(("text", "reason"), [
    ("[" * 100000 + "]" * 100000, "not JSON"),                 # json: RecursionError
    ('{"nbformat": 4, "cells": [' + "1" * 5000 + "]}", "not JSON"),  # an int too long to read
    ('{"nbformat": 4, "cells": {"a": 1}}', "no list of cells"),
    ('["a", "list"]', "no list of cells"),
    (raw_notebook(code("class Value: pass"), nbformat_version=3), "no list of cells"),  # a v3 that is not one
])
def test_a_notebook_that_is_not_one_is_a_note(tmp_path, text, reason):
    klass = beside_a_good_one(tmp_path)
    (klass / "cy.ipynb").write_text(text)
    cy = read_with_zed(klass)["cy.ipynb"]
    assert cy.files == {}
    assert f"cy.ipynb: not a readable notebook ({reason})" in cy.reason


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_notebook_of_format_3_is_converted(tmp_path):
    cell = {"cell_type": "code", "input": DUAL, "language": "python", "outputs": [], "metadata": {}}
    (tmp_path / "old.ipynb").write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                                                    "worksheets": [{"cells": [cell], "metadata": {}}]}))
    assert "class Dual" in one(tmp_path).files["dual"]


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_large_notebook_is_read_and_one_too_large_is_a_note(tmp_path):
    picture = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "A" * (3 * 2**20)}}
    (tmp_path / "big.ipynb").write_text(raw_notebook(code(DUAL, outputs=[picture])))
    assert one(tmp_path).files["dual"].count("class Dual") == 1  # plots and all: 3 MB
    (tmp_path / "big.ipynb").write_bytes(b" " * (intake.MAX_NOTEBOOK_BYTES + 1))
    assert "big.ipynb: larger than" in one(tmp_path).reason


def test_names_that_are_not_utf8_or_hold_control_characters_are_read_and_staged(tmp_path):
    klass = beside_a_good_one(tmp_path)
    odd = [os.fsencode(klass) + b"/caf\xe9", os.fsencode(klass) + b"/esc\x1b[2J\nall 40 graded [bold]x"]
    for name in odd:
        os.mkdir(name)
        (Path(os.fsdecode(name)) / "value.py").write_text(VALUE)
    (klass / "zips").mkdir()
    (klass / "zips" / "w\xe9ird.zip").write_bytes(zipped({"hw/\x1b]8;;http://x\x07value.py": VALUE}))
    found = read_with_zed(klass)
    assert sorted(found) == ["caf\\xe9", "esc\x1b[2J\nall 40 graded [bold]x", "zips"]
    assert found["caf\\xe9"].student == "caf_xe9" and found["caf\\xe9"].files == {"value": VALUE}
    assert found["esc\x1b[2J\nall 40 graded [bold]x"].student == "esc_2J_all_40_graded_bold_x"
    assert found["zips"].files == {"value": VALUE}


def test_student_ids_are_safe_bounded_and_do_not_collide():
    assert intake.student_id("José María") == "José_María"
    long = intake.student_id("a" * 300)
    assert len(long) <= intake.MAX_ID and long.startswith("a" * 60)
    assert intake.student_id("???") != intake.student_id("!!!")
    assert intake.student_id("???").startswith("unnamed-")
    assert intake.student_id("..") != intake.student_id(".")
    assert intake.student_id("-2-3") == "-2-3"  # the true id; grades.csv makes it harmless


def test_a_name_of_255_bytes_is_staged(tmp_path):
    klass = beside_a_good_one(tmp_path)
    (klass / ("n" * 252 + ".py")).write_text(VALUE)
    (found,) = read_with_zed(klass).values()
    assert found.files == {"value": VALUE}


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_two_entries_that_read_alike_keep_a_row_each(tmp_path):
    (tmp_path / "ann_*").mkdir()
    (tmp_path / "ann_*" / "dual.py").write_text(DUAL)
    (tmp_path / "ann_12_34_value.py").write_text(VALUE)
    sources = [s.source for s in intake.collect(tmp_path)]
    assert len(set(sources)) == 2 and "ann_*" in sources


def bomb(total: int) -> bytes:
    """A zip of a few KB that claims, truthfully, to unpack to `total` bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("value.py", b"#" * total)
    return buffer.getvalue()


def lying(data: bytes, declared: int) -> bytes:
    """A zip whose central directory declares a smaller size for its one member than it unpacks to."""
    at = data.index(b"PK\x01\x02")
    return data[:at + 24] + struct.pack("<I", declared) + data[at + 28:]


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_zip_bombs_and_broken_zips_are_notes(tmp_path):
    klass = beside_a_good_one(tmp_path)
    (klass / "big.zip").write_bytes(bomb(intake.MAX_SUBMISSION_BYTES + 1))
    (klass / "liar.zip").write_bytes(lying(bomb(10 * 2**20), 100))
    (klass / "many.zip").write_bytes(zipped({f"f{n}.py": "" for n in range(intake.MAX_FILES + 1)}))
    (klass / "odd.zip").write_bytes(zipped({"/abs/value.py": VALUE, "../../up/dual.py": DUAL,
                                            "data.csv": "1,2"}))
    unknown = bytearray(zipped({"value.py": VALUE}))
    for signature in (b"PK\x03\x04", b"PK\x01\x02"):  # compression method 99 (AES) in both headers
        at = unknown.index(signature) + (8 if signature == b"PK\x03\x04" else 10)
        unknown[at:at + 2] = struct.pack("<H", 99)
    (klass / "method.zip").write_bytes(bytes(unknown))
    (klass / "nested.zip").write_bytes(zipped({"inner.zip": zipped({"value.py": VALUE})}))
    found = read_with_zed(klass)
    assert "big.zip: its .py files and notebooks unpack to more than 50 MB" in found["big.zip"].reason
    assert "liar.zip: value.py cannot be unpacked (BadZipFile" in found["liar.zip"].reason
    assert "or 2000 files; not opened" in found["many.zip"].reason
    assert found["odd.zip"].files == {"value": VALUE, "dual": DUAL}
    assert "method.zip: value.py cannot be unpacked (NotImplementedError" in found["method.zip"].reason
    assert "holds inner.zip, a zip inside the zip, which is not opened" in found["nested.zip"].reason


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_folder_nested_too_deep_or_too_full_is_read_in_part(tmp_path):
    klass = beside_a_good_one(tmp_path)
    deep = klass / "deb" / "/".join(["d"] * (intake.MAX_DEPTH + 2))
    deep.mkdir(parents=True)
    (deep / "dual.py").write_text(DUAL)
    (klass / "deb" / "d" / "value.py").write_text(VALUE)
    (klass / "full").mkdir()
    for n in range(intake.MAX_FILES + 5):
        (klass / "full" / f"h{n:04}.py").write_text("")
    (klass / "full" / "value.py").write_text(VALUE)
    found = read_with_zed(klass)
    assert found["deb"].files == {"value": VALUE}
    assert any(f"folders nested more than {intake.MAX_DEPTH} deep; not read" in n for n in found["deb"].notes)
    assert "this file and the rest were not read" in " ".join(found["full"].notes)
    assert len(found["full"].notes) <= intake.MAX_NOTES + 1


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_links_fifos_and_devices_are_notes_naming_the_file(tmp_path):
    klass = beside_a_good_one(tmp_path)
    (klass / "eve").mkdir()
    (klass / "eve" / "value.py").symlink_to(KIT / "solutions" / "value.py")
    (klass / "eve" / "hw").symlink_to(KIT / "solutions", target_is_directory=True)
    os.mkfifo(klass / "eve" / "tensor.py")
    (klass / "eve" / "dual.py").write_text(DUAL)
    (klass / "top").symlink_to(klass / "eve", target_is_directory=True)
    os.mkfifo(klass / "pipe.py")
    if os.geteuid() == 0:
        os.mknod(klass / "dev.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    found = read_with_zed(klass)
    eve = found["eve"]
    assert eve.files == {"dual": DUAL}
    assert "value.py: a symbolic link; links are not followed, so submit the file itself" in eve.notes
    assert "hw: a symbolic link; links are not followed, so submit the file itself" in eve.notes
    assert "tensor.py: a named pipe (FIFO), not a regular file; submit the file itself" in eve.notes
    assert "top: a symbolic link; links are not followed" in found["top"].reason
    assert "a named pipe (FIFO)" in found["pipe.py"].reason
    if os.geteuid() == 0:
        assert "dev.py: a character device, not a regular file" in found["dev.py"].reason


@pytest.mark.engine("dual")  # its submissions hold dual.py
@pytest.mark.skipif(not shutil.which("setpriv") and os.geteuid() == 0, reason="needs setpriv to read as root")
def test_a_file_or_folder_that_may_not_be_read_is_a_note(tmp_path):
    klass = beside_a_good_one(tmp_path)
    (klass / "fay" / "hw").mkdir(parents=True)
    (klass / "fay" / "value.py").write_text(VALUE)
    (klass / "fay" / "dual.py").write_text(DUAL)
    (klass / "fay" / "value.py").chmod(0)
    (klass / "fay" / "hw").chmod(0)
    (klass / "shut").mkdir()
    (klass / "shut").chmod(0)
    # Root reads everything; without the two capabilities that let it, it is refused as anyone is.
    lessened = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    script = ("import json, sys; from pathlib import Path; from autograder import intake\n"
              "found = intake.collect(Path(sys.argv[1]))\n"
              "print(json.dumps({s.source: [sorted(s.files), s.notes] for s in found}))")
    done = subprocess.run([*lessened, sys.executable, "-c", script, str(klass)], cwd=KIT, capture_output=True,
                          text=True, check=True)
    found = json.loads(done.stdout)
    assert found["zed"][0] == ["value"]
    assert found["fay"] == [["dual"], ["fay/hw: the folder cannot be read (Permission denied); nothing in it "
                                       "was graded", "value.py: cannot be read (Permission denied)",
                                       "value.py: not found in the submission; its parts score zero",
                                       "tensor.py: not found in the submission; its parts score zero"]]
    assert found["shut"][1] == ["shut: the folder cannot be read (Permission denied); nothing in it was "
                                "graded"]


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_entries_that_vanish_while_they_are_read_are_notes(tmp_path, monkeypatch):
    klass = beside_a_good_one(tmp_path)
    (klass / "gus").mkdir()
    (klass / "gus" / "value.py").write_text(VALUE)
    (klass / "gus" / "dual.py").write_text(DUAL)
    (klass / "gone").mkdir()
    (klass / "gone.py").write_text(VALUE)
    real = intake.reader.read_regular

    def vanishing(path: Path, limit: int) -> bytes:  # the file is removed between listing and reading
        if path.name in ("value.py", "gone.py") and path.parent.name != "zed":
            path.unlink()
        return real(path, limit)

    real_scandir = os.scandir

    def scandir(path):  # so is a folder, between the class's listing and its own
        if Path(path) == klass / "gone":
            Path(path).rmdir()
        return real_scandir(path)

    monkeypatch.setattr(intake.reader, "read_regular", vanishing)
    monkeypatch.setattr(intake.reader.os, "scandir", scandir)
    found = read_with_zed(klass)
    assert found["gus"].files == {"dual": DUAL}
    assert "value.py: cannot be read (No such file or directory)" in found["gus"].notes
    assert "gone.py: cannot be read (No such file or directory)" in found["gone.py"].reason
    assert "gone: the folder cannot be read (No such file or directory)" in found["gone"].reason


def test_an_entry_gone_between_the_listing_and_its_reading_is_a_note(tmp_path, monkeypatch):
    klass = beside_a_good_one(tmp_path)
    real = intake.class_folder.listing
    monkeypatch.setattr(intake.class_folder, "listing", lambda folder: [*real(folder), folder / "ivan"])
    ivan = read_with_zed(klass)["ivan"]
    assert ivan.reason == "ivan: gone while the class folder was read; run the command again"


def test_whatever_else_goes_wrong_in_one_entry_is_that_entrys_reason(tmp_path, monkeypatch):
    klass = beside_a_good_one(tmp_path)
    (klass / "hal").mkdir()
    (klass / "hal" / "value.py").write_text("class Value:\n    broken = True\n")
    real = intake.engines.decode

    def failing(item, submission):
        if b"broken" in item.data:
            raise MemoryError
        return real(item, submission)

    monkeypatch.setattr(intake.engines, "decode", failing)
    hal = read_with_zed(klass)["hal"]
    assert hal.files == {}
    assert hal.reason.startswith("hal: could not be read (MemoryError); look at it by hand")


def test_a_class_folder_that_may_not_be_listed_is_an_error_naming_it(tmp_path, monkeypatch):
    def refused(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(intake.class_folder.os, "listdir", refused)
    with pytest.raises(intake.IntakeError, match="cannot be read \\(Permission denied\\); give the user"):
        intake.collect(tmp_path)


# -- LMS downloads and the names zip tools write -----------------------------------------------------

DATA = KIT / "tests" / "data"


@pytest.mark.engine("dual")  # the zips of tests/data/zips hold dual.py
@pytest.mark.parametrize(("tool", "folder"), [
    ("windows-explorer", "Jürgen Müller"),        # cp437, no flag
    ("macos-archive-utility", "Jürgen Müller"),   # UTF-8 in NFD, no flag (and __MACOSX/ debris)
    ("infozip-windows", "Michał Kowalski"),       # cp437 with '?', and the 0x7075 field in UTF-8
    ("infozip-linux", "Jürgen Müller"),           # UTF-8, no flag, no field (made by zip 3.0)
])
def test_zip_names_are_read_as_the_tool_that_made_them_wrote_them(tmp_path, tool, folder):
    shutil.copy(DATA / "zips" / f"{tool}.zip", tmp_path / "ana.zip")
    ana = one(tmp_path)
    assert sorted(ana.files) == ["dual"]
    assert f"dual.py: taken from {folder}/dual.py" in ana.notes


def unflagged_zip(path: Path, members: dict[str, bytes]) -> None:
    """A zip whose UTF-8 names have no UTF-8 flag, as canvas-lms's rubyzip writes them."""
    class Unflagged(zipfile.ZipInfo):
        def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own name
            return self.filename.encode("utf-8"), self.flag_bits & ~0x800

    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(Unflagged(name, (2026, 12, 1, 9, 0, 0)), data)


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_canvas_download_zip_anywhere_in_the_class_is_one_entry_per_student(tmp_path):
    """Canvas's zip, not unzipped, beside an ordinary folder: its students are entries of their
    own (never one student `submissions`), LATE_ is kept, the text entry is named and not graded
    (never a student of its own), and the non-ASCII name is read as Canvas wrote it."""
    (tmp_path / "ivy").mkdir()
    (tmp_path / "ivy" / "dual.py").write_text(DUAL)
    unflagged_zip(tmp_path / "CS101-hw3_submissions.zip", {
        "smithjane_12345_67890_dual.py": DUAL.encode(), "doejohn_LATE_23456_78901_value.py": VALUE.encode(),
        "müllerjürgen_34567_80000_dual.py": DUAL.encode(), "smithjane_12345_text.html": b"<p>hi</p>",
        "leeann_LATE_45678_text.html": b"<p>my answer</p>"})
    found = {s.source: s for s in intake.collect(tmp_path)}
    assert sorted(found) == ["doejohn_23456_*", "ivy", "leeann_45678_*", "müllerjürgen_34567_*",
                             "smithjane_12345_*"]
    assert found["doejohn_23456_*"].late and not found["smithjane_12345_*"].late
    assert found["smithjane_12345_*"].files == {"dual": DUAL}
    assert "smithjane_12345_text.html: an online text entry" in " ".join(found["smithjane_12345_*"].notes)
    lee = found["leeann_45678_*"]
    assert lee.files == {} and lee.late and "an online text entry" in lee.reason
    assert found["müllerjürgen_34567_*"].lms_name == "müllerjürgen"
    assert found["smithjane_12345_*"].lms_files == ["smithjane_12345_67890_dual.py"]


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_a_moodle_download_zip_is_read_as_its_folders_with_the_online_text_named(tmp_path):
    with zipfile.ZipFile(tmp_path / "CS101-Autograd engines-42.zip", "w") as archive:
        archive.writestr("Grace Hopper_300021_assignsubmission_file/hw/Dual.py", DUAL)
        archive.writestr("Grace Hopper_300021_assignsubmission_onlinetext/onlinetext.html", "<p>hi</p>")
        archive.writestr("Zoë Ångström_300023_assignsubmission_onlinetext/onlinetext.html", "<p>hi</p>")
    grace, zoe = intake.collect(tmp_path)
    assert (grace.student, grace.lms, grace.lms_id) == ("Grace_Hopper_300021", "moodle", "300021")
    assert grace.files == {"dual": DUAL}
    assert "dual.py: taken from hw/Dual.py" in grace.notes
    assert zoe.lms_name == "Zoë Ångström" and zoe.files == {} and "online text entry" in zoe.reason


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_one_students_zip_of_files_named_like_canvas_is_no_download(tmp_path):
    (tmp_path / "ana.zip").write_bytes(zipped({"lab_3_1_dual.py": DUAL}))
    assert [s.source for s in intake.collect(tmp_path)] == ["ana.zip"]


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_github_classroom_repositories_are_known_by_login(tmp_path):
    for login in ("octocat", "hubot"):
        repository = tmp_path / f"hw3-engines-{login}"
        (repository / ".git").mkdir(parents=True)
        (repository / "assignments").mkdir()
        (repository / "assignments" / "dual.py").write_text(DUAL)
    found = intake.collect(tmp_path)
    assert [(s.student, s.lms, s.lms_id) for s in found] == [("hubot", "classroom", "hubot"),
                                                             ("octocat", "classroom", "octocat")]


@pytest.mark.engine("dual")  # its submissions hold dual.py
def test_nbgrader_timestamps_are_the_submission_time(tmp_path):
    folder = tmp_path / "submitted" / "fay" / "engines"
    folder.mkdir(parents=True)
    (folder / "dual.py").write_text(DUAL)
    (folder / "timestamp.txt").write_text("2026-11-30 10:00:00.123456 UTC")
    (fay,) = intake.collect(tmp_path, assignment="engines")
    assert fay.submitted_at == "2026-11-30T10:00:00+00:00"
