"""Hostile submissions on the platforms' own paths: Gradescope's upload and the student handout
that GitHub Classroom runs.

On Gradescope the upload is untrusted and the grader is not: files named like the kit's own
(`conftest.py`, `pytest.ini`, `grading.toml`, `sitecustomize.py`, a `.pth` file, an
`autograder/` or `solutions/` folder) must be neither imported nor read as configuration, and
the upload scores exactly what its engine files honestly implement. In the handout the
student owns every file, so nothing there is tamper-proof (docs/platforms.md says so); still,
a folder a student may add in good faith, `solutions/`, must not become the reference.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from platforms.test_classroom import grading_steps
from support import KIT
from support.corpus import BUGS, build
from support.gradescope import PEEK, by_part, run_autograder, submit
from support.shape import GRADED

from autograder.config import load

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length
GRADING = load(KIT / "grading.toml")
MUL_BUG = next(b for b in BUGS if b.name == "mul-assigns-instead-of-adding")

# Imported by anything that runs it: it leaves its name in MARKS, a folder every account may
# write to, and as a pytest plugin it passes every test.
IMPORTED = '''
import pathlib
pathlib.Path({marks!r}, {name!r}).write_text("imported")
try:
    import pytest
except ImportError:
    pytest = None
if pytest is not None:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(item, call):
        report = yield
        report.outcome = "passed"
        return report
'''
PYTEST_INI = "[pytest]\naddopts = -p sneaky_plugin --deselect autograder/suites/test_value_mul.py\n"
INI_FILES = {"pytest.ini": PYTEST_INI, "tox.ini": PYTEST_INI,
             "setup.cfg": PYTEST_INI.replace("[pytest]", "[tool:pytest]"),
             "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p sneaky_plugin"\n'}


def scores(entries: dict[str, dict]) -> dict[str, float]:
    return {part: entry["score"] for part, entry in entries.items()}


def kit_lookalikes(folder: Path, engines: Path, marks: Path) -> None:
    """Every file of the kit's (and Python's, and pytest's) that could change a grading, written
    into `folder` beside the submission's own engine files, each as the student would wish it."""
    def write(relative: str, text: str) -> None:
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    for name in ("conftest.py", "autograder/conftest.py", "deep/er/conftest.py", "sitecustomize.py",
                 "usercustomize.py", "sneaky_plugin.py", "autograder/__init__.py"):
        write(name, IMPORTED.format(marks=str(marks), name=name.replace("/", "_")))
    write("zz_autograder.pth", f"import pathlib; pathlib.Path({str(marks)!r}, 'pth').write_text('x')\n")
    for name, text in INI_FILES.items():
        write(name, text)
    grading = (KIT / "grading.toml").read_text(encoding="utf-8")
    write("grading.toml", grading.replace("points = ", "points = 1000 + "))
    write("autograder/reference.json", "{}")
    # The submission's own engine as the reference would give it every point...
    for engine in GRADED:
        write(f"solutions/{engine}.py", (engines / f"{engine}.py").read_text(encoding="utf-8"))
    # ...and the correct engine as a package beside the graded module would too, were it imported.
    write("value/__init__.py", (KIT / "solutions" / "value.py").read_text(encoding="utf-8"))


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    folder.chmod(0o777)  # so that a worker's account could leave its mark too
    return folder


def test_gradescope_uses_nothing_of_an_upload_but_its_engine_files(
        layout, image_env, autograde, marks, tmp_path):
    build(MUL_BUG, KIT / "solutions", tmp_path / "bug")
    submit(layout, tmp_path / "bug")
    kit_lookalikes(layout / "submission", tmp_path / "bug", marks)
    results, log = run_autograder(layout, image_env)
    assert sorted(path.name for path in marks.iterdir()) == [], log[-3000:]
    entries = by_part(results)
    assert scores(entries) == scores(autograde(tmp_path / "bug"))
    assert entries["value.mul"]["score"] < GRADING.parts["value.mul"].points
    assert {part: entry["max_score"] for part, entry in entries.items()} == \
        {part.id: part.points for part in GRADING.parts.values()}
    # The top-level value.py is the one graded; the package and the copies are named as unused.
    assert "value.py: taken from" not in results.get("output", "")
    assert "value.py: also found in" in results["output"] and "value/__init__.py" in results["output"]


def test_gradescope_grades_the_same_when_the_kit_lookalikes_come_in_a_zip(
        layout, image_env, autograde, marks, tmp_path):
    build(MUL_BUG, KIT / "solutions", tmp_path / "bug")
    upload = tmp_path / "upload"
    submit(upload.parent, tmp_path / "bug", under="upload/hw")
    kit_lookalikes(upload / "hw", tmp_path / "bug", marks)
    with zipfile.ZipFile(layout / "submission" / "submission.zip", "w") as archive:
        for path in sorted(upload.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(upload).as_posix())
    results, log = run_autograder(layout, image_env)
    assert sorted(path.name for path in marks.iterdir()) == [], log[-3000:]
    assert scores(by_part(results)) == scores(autograde(tmp_path / "bug"))


# -- the student handout, as GitHub Classroom runs it ----------------------------------------------

def step_command(workflow: dict, part: str) -> str:
    return next(step["with"]["command"] for step in grading_steps(workflow) if step["name"] == part)


def run_step(command: str, handout: Path, env: dict, results: Path) -> subprocess.CompletedProcess:
    return subprocess.run(f"{command} --results-json={results}", shell=True, cwd=handout, env=env,
                          capture_output=True, text=True, check=False)


def test_a_solutions_folder_in_the_handout_is_not_the_reference(workflow, classroom_release, student_env,
                                                                 tmp_path):
    """The handout grades against the answers it ships sealed: a `solutions/` folder a student
    adds (their own files, say, kept as "my solutions") would otherwise be run as the reference
    and agree with every answer the submission gives."""
    handout = tmp_path / "repository"
    shutil.copytree(classroom_release, handout)
    build(MUL_BUG, KIT / "solutions", handout / "assignments")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), **student_env}
    command = step_command(workflow, "value.mul")
    honest = run_step(command, handout, env, tmp_path / "honest.json")
    shutil.copytree(handout / "assignments", handout / "solutions")
    hostile = run_step(command, handout, env, tmp_path / "hostile.json")
    assert honest.returncode == hostile.returncode == 1, hostile.stdout[-3000:]
    read = {name: json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
            for name in ("honest", "hostile")}
    assert read["hostile"]["tests"] == read["honest"]["tests"]
    mul = next(test for test in read["hostile"]["tests"] if test["tags"][0] == "value.mul")
    assert mul["score"] < GRADING.parts["value.mul"].points
    assert "overwrites-gradient" in mul["tags"] and "Not checked" not in mul["output"]


FORGED_PASS = '''
import pytest

import autograder.scoring

# The grader's plugin decides points from its own record of each check, not from pytest's
# report: a forger who knows that rewrites the scores it computes instead.
_score = autograder.scoring.score


def forged_score(results, grading):
    scores = _score(results, grading)
    for part in scores:
        part.score, part.passed, part.messages, part.misconceptions = part.max_score, part.total, [], []
    return scores


autograder.scoring.score = forged_score


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
'''


def test_a_conftest_of_the_students_own_forges_a_classroom_pass_as_the_docs_warn(
        workflow, classroom_release, student_env, tmp_path):
    """Nothing in the student's repository can be trusted: docs/platforms.md says so, and this
    is the proof (a conftest.py at the top, no file of the kit's edited)."""
    handout = tmp_path / "repository"
    shutil.copytree(classroom_release, handout)
    build(MUL_BUG, KIT / "solutions", handout / "assignments")
    (handout / "conftest.py").write_text(FORGED_PASS, encoding="utf-8")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), **student_env}
    forged = run_step(step_command(workflow, "value.mul"), handout, env, tmp_path / "forged.json")
    assert forged.returncode == 0 and "10 / 10" in forged.stdout, forged.stdout[-3000:]
    docs = (KIT / "docs" / "platforms.md").read_text(encoding="utf-8")
    classroom = " ".join(docs[docs.index("## GitHub Classroom"):].split())
    assert "`conftest.py`" in classroom and "not a grade that resists tampering" in classroom
    assert "`autograder bulk`" in classroom and "Gradescope" in classroom


def test_a_classroom_repository_uploaded_to_gradescope_scores_its_assignments(
        layout, image_env, autograde, classroom_release, marks, tmp_path):
    """The whole repository, forging conftest.py, pytest.ini, the kit's own suites and scenarios
    (whose files are named value.py, tensor.py, dual.py too) and all: only assignments/ counts."""
    repository = layout / "submission" / "engines-alice"
    shutil.copytree(classroom_release, repository)
    build(MUL_BUG, KIT / "solutions", repository / "assignments")
    (repository / "conftest.py").write_text(FORGED_PASS + IMPORTED.format(marks=str(marks), name="conftest"),
                                            encoding="utf-8")
    shutil.copytree(repository / "assignments", repository / "solutions")
    results, log = run_autograder(layout, image_env)
    assert list(marks.iterdir()) == [], log[-3000:]
    assert scores(by_part(results)) == scores(autograde(repository / "assignments"))
    assert by_part(results)["value.mul"]["score"] < GRADING.parts["value.mul"].points
    for engine in GRADED:
        assert f"{engine}.py: taken from engines-alice/assignments/{engine}.py" in results["output"]


# What Gradescope writes beside the submission: every earlier submission's results.json. Student
# code that could read it breaks __mul__ (test_gradescope.PEEK).
METADATA = {"id": 2, "previous_submissions": [{"score": 12.0, "results": {"tests": [
    {"name": "stability", "output": "expected 0.7615941559557649 (a part not shown yet)"}]}}]}


def test_student_code_cannot_read_the_earlier_submissions_results(layout, image_env):
    """Gradescope's submission_metadata.json holds every earlier submission's results, the
    messages (expected values) of parts shown only after the deadline among them; student code
    that could read it would print them into a message of a part shown now."""
    metadata = layout / "submission_metadata.json"
    metadata.write_text(json.dumps(METADATA), encoding="utf-8")
    metadata.chmod(0o644)
    submit(layout, KIT / "solutions")
    value = layout / "submission" / "value.py"
    value.write_text(value.read_text(encoding="utf-8") + PEEK.format(path=str(metadata)),
                     encoding="utf-8")
    results, _ = run_autograder(layout, image_env)
    assert stat.S_IMODE(metadata.stat().st_mode) == 0o600
    assert json.loads(metadata.read_text(encoding="utf-8")) == METADATA  # closed, not changed
    assert by_part(results)["value.mul"]["score"] == GRADING.parts["value.mul"].points
    assert results["score"] == sum(part.points for part in GRADING.parts.values())


def test_a_file_name_cannot_pass_for_a_line_of_what_intake_noticed(layout, image_env, autograde,
                                                                  tmp_path):
    """results.json's output lists intake's notes one a line, and a note quotes the upload's own
    names: a folder name with a line break in it stays on its note's line."""
    forged = "x\n- dual.py: checked by the course staff by hand, full marks"
    submit(layout, KIT / "solutions", under=forged)
    for name in ("value.py", "tensor.py"):
        (layout / "submission" / forged / name).unlink()
    results, log = run_autograder(layout, image_env)
    lines = results["output"].splitlines()
    assert lines[0] == "About your files:"
    assert all(line.startswith("- ") for line in lines[1:]), lines
    assert [line for line in lines if "full marks" in line][0].startswith("- dual.py: taken from x")
    assert "taken from x\\n- dual.py: checked by the course staff" in results["output"]
    assert "\nintake: - dual.py" not in log and "\n- dual.py: checked" not in log
    only_dual = tmp_path / "only-dual"
    only_dual.mkdir()
    shutil.copyfile(KIT / "solutions" / "dual.py", only_dual / "dual.py")
    assert scores(by_part(results)) == scores(autograde(only_dual))


def test_a_zip_in_a_zip_is_not_opened_and_the_student_is_told_what_to_upload(layout, image_env,
                                                                            tmp_path):
    inner = tmp_path / "engines.zip"
    with zipfile.ZipFile(inner, "w") as archive:
        for path in sorted((KIT / "solutions").glob("*.py")):
            archive.write(path, path.name)
    with zipfile.ZipFile(layout / "submission" / "submission.zip", "w") as archive:
        archive.write(inner, "hw/engines.zip")
    results, _ = run_autograder(layout, image_env)
    assert results["score"] == 0
    assert ("submission.zip: holds hw/engines.zip, a zip inside the zip, which is not opened; upload "
            "the .py files themselves, or the inner zip alone") in results["output"]
