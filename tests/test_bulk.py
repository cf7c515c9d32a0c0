"""`autograder bulk`: the example class end to end, resuming, interruption, and what feedback shows."""

import base64
import csv
import dataclasses
import fcntl
import html
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from corpus import CORPUS, build

from autograder.config import load
from autograder.staff import bulk, graders, reports
from autograder.staff.cli import main
from autograder.staff.gradebook import Entry, Gradebook, Score

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from make_class import make_class  # noqa: E402 - examples/ is a folder of scripts, not a package

KIT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "autograder.staff.cli"]
DUAL = (KIT / "solutions" / "dual.py").read_text(encoding="utf-8")
UNSTEADY_WORDS = "this scenario gave a different answer"
# A hung bulk run fails the test instead of hanging it; a normal one takes a small fraction.
RUN_SECONDS = 600


@pytest.fixture(scope="module")
def reference_cache(tmp_path_factory) -> Path:
    """The reference sealed once for these tests, as the `reference/` folder of an OUTDIR."""
    out = tmp_path_factory.mktemp("sealed")
    bulk.sealed_reference(out, bulk.grader_version())
    return out / "reference"


def outdir(path: Path, reference_cache: Path) -> Path:
    """A fresh OUTDIR that already holds the sealed reference, as a second run would."""
    shutil.copytree(reference_cache, path / "reference")
    return path


def bulk_run(klass: Path, out: Path, *options: str) -> int:
    return main(["bulk", str(klass), "-o", str(out), *options])


def rows(out: Path) -> dict[str, tuple]:
    """Every submission's row and scores, without the time it was graded at or took."""
    book = Gradebook(out / "gradebook.sqlite")
    try:
        return {e.source: (e.student, e.format, e.content_hash, e.grader_version, e.status, e.reason,
                           tuple(e.notes), tuple(score_row(s) for s in e.scores))
                for e in book.entries()}
    finally:
        book.close()


def score_row(score: Score) -> tuple:
    return score.part, score.points, score.max, score.messages, tuple(score.misconceptions)


def submission_ids(out: Path) -> dict[str, int]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return dict(db.execute("SELECT source, id FROM submissions"))


def dual_only_class(folder: Path, students: dict[str, str]) -> Path:
    """A class whose submissions hold only dual.py: quick to grade, the other parts fail at once."""
    for student, text in students.items():
        (folder / student).mkdir(parents=True)
        (folder / student / "dual.py").write_text(text)
    return folder


# -- the example class -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def example_class(tmp_path_factory) -> Path:
    """The example class, as examples/make_class.py writes it."""
    return make_class(tmp_path_factory.mktemp("examples") / "class")


@pytest.fixture(scope="module")
def example_run(tmp_path_factory, reference_cache, example_class) -> Path:
    out = outdir(tmp_path_factory.mktemp("example"), reference_cache)
    assert bulk_run(example_class, out, "--jobs", "2") == 0
    return out


def test_every_submission_of_the_example_class_gets_one_row(example_run):
    found = rows(example_run)
    assert sorted(found) == ["alice", "bob.zip", "carol.ipynb", "dave.py", "doejohn_*", "erin.zip", "frank",
                             "smithjane_*"]
    failed = {source: row[5] for source, row in found.items() if row[4] == "failed"}
    assert failed.keys() == {"erin.zip", "frank"}
    assert "not a readable zip" in failed["erin.zip"]
    failures = [json.loads(line) for line in (example_run / "failures.jsonl").read_text().splitlines()]
    assert [(f["source"], f["reason"]) for f in failures] == sorted(failed.items())


def test_grades_csv_has_a_column_per_part_and_the_expected_scores(example_run):
    parts = load().parts
    with (example_run / "grades.csv").open(newline="") as file:
        table = list(csv.DictReader(file))
    assert list(table[0]) == ["student", *parts, "total"]
    grades = {row["student"]: row for row in table}
    assert sorted(grades) == ["alice", "bob", "carol", "dave", "doejohn", "erin", "frank", "smithjane"]
    assert float(grades["alice"]["total"]) == sum(part.points for part in parts.values())
    assert float(grades["erin"]["total"]) == float(grades["frank"]["total"]) == 0
    lost = {student: {p for p in parts if float(row[p]) < parts[p].points} for student, row in grades.items()}
    assert "value.mul" in lost["bob"]
    assert lost["carol"] == {"value.tanh", "value.stability"}  # her tensor code runs in a notebook
    assert "value.relu" in lost["doejohn"] and "tensor.unbroadcast" in lost["doejohn"]
    assert "value.zero_grad" in lost["smithjane"]
    assert lost["dave"] >= {"tensor.unbroadcast", "dual"} and "value.mul" not in lost["dave"]


def test_feedback_exists_for_every_student_and_quotes_no_suite_code(example_run):
    code = [line.strip() for path in (KIT / "autograder" / "suites").glob("*.py")
            for line in path.read_text().splitlines()
            if line.strip().startswith(("grade(", "def test_", "@pytest.mark", "suspects="))]
    assert code
    for student in ("alice", "bob", "carol", "dave", "doejohn", "erin", "frank", "smithjane"):
        for suffix in (".md", ".html"):
            text = (example_run / "feedback" / f"{student}{suffix}").read_text()
            assert f"Feedback for {student}" in text
            assert not [line for line in code if line in text], student
    bob = (example_run / "feedback" / "bob.md").read_text()
    assert "Came out:" in bob and "To reproduce, in Python" in bob
    assert "not a readable zip" in (example_run / "feedback" / "erin.html").read_text()


def test_feedback_snippets_are_whole(example_run):
    """A snippet in the feedback keeps every line, the training run's imports among them."""
    trained = [path for path in (example_run / "feedback").glob("*.md") if "train_moons(" in path.read_text()]
    assert trained, "no example student lost a training part"
    for path in trained:
        text = path.read_text()
        assert "from autograder.datasets import grading_data" in text, path.name
        assert "from autograder.scenarios.training import train_moons" in text, path.name


def test_the_summary_is_one_file_with_its_plots_inside_and_who_met_which_misconception(example_run):
    summary = (example_run / "summary.html").read_text()
    assert "src='data:image/png;base64," in summary
    images = re.findall(r"src='([^']*)'", summary)
    assert len(images) == 3 and all(src.startswith("data:image/png;base64,") for src in images)
    assert all(base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG") for src in images)
    assert not list(example_run.glob("*.png"))
    assert "tanh-derivative-of-input" in summary and "feedback/carol.html" in summary


def test_the_mean_and_the_pass_rates_count_the_students_of_grades_csv(example_run):
    parts = load().parts
    with (example_run / "grades.csv").open(newline="") as file:
        table = list(csv.DictReader(file))
    summary = (example_run / "summary.html").read_text()
    mean = statistics.mean(float(row["total"]) for row in table)
    assert f"mean {mean:.1f}," in summary
    for part, details in parts.items():
        rate = sum(float(row[part]) >= details.points for row in table) / len(table)
        assert f"<td>{part}</td><td>{html.escape(details.title)}</td><td class='n'>{rate:.0%}</td>" in summary
    assert ("Over the 8 students of grades.csv; the 2 whose submission could not be graded count as 0."
            in summary)


def test_a_submission_that_could_not_be_graded_scores_zero_on_every_part_with_the_reason(example_run):
    found = rows(example_run)
    for source in ("erin.zip", "frank"):
        reason, scores = found[source][5], found[source][7]
        assert [s[0] for s in scores] == list(load().parts)
        assert all(points == 0 and messages == reason for _, points, _, messages, _ in scores)
    erin = (example_run / "feedback" / "erin.md").read_text()
    assert "This submission could not be graded:** erin.zip: not a readable zip" in erin
    assert "```" not in erin  # the reason is said once, not once more for every part


def test_outdir_holds_only_what_the_readme_lists(example_run):
    assert sorted(p.name for p in example_run.iterdir()) == [
        "failures.jsonl", "feedback", "gradebook.sqlite", "grades.csv", "reference", "summary.html"]


def test_feedback_headings_name_the_part_once_and_html_shows_code_as_code(example_run):
    bob_md = (example_run / "feedback" / "bob.md").read_text()
    headings = [line for line in bob_md.splitlines() if line.startswith("## ")]
    mul = r"## Value\.\\_\\_mul\\_\\_: the product rule \([\d.]+ / 10\)"
    assert any(re.fullmatch(mul, heading) for heading in headings)
    assert not [h for h in headings if "value.mul" in h or "value.training" in h]
    bob = (example_run / "feedback" / "bob.html").read_text()
    assert re.search(r"<h2>Value\.__mul__: the product rule \([\d.]+ / 10\)</h2>", bob)
    assert "<pre><code>" in bob and "x = Value(1.5)\ny = x * 2 + 2 * x" in bob  # the snippet, as a code block
    for page in (example_run / "feedback").glob("*.html"):
        assert "`" not in re.sub(r"<style>.*?</style>", "", page.read_text(), flags=re.S), page.name
    carol = (example_run / "feedback" / "carol.html").read_text()
    assert re.search(r"<div class='messages'>(?:(?!</div>).)*[^>]<code>", carol, re.S)  # `code` in a message


def test_a_second_run_grades_nothing_again(example_run, example_class):
    before = submission_ids(example_run)
    make_class(example_class)  # written afresh: the same bytes
    assert bulk_run(example_class, example_run) == 0
    assert submission_ids(example_run) == before


# -- resuming --------------------------------------------------------------------------------------

def test_only_a_changed_submission_is_graded_again_and_force_grades_all(tmp_path, reference_cache):
    klass = dual_only_class(tmp_path / "class", {"una": DUAL, "val": DUAL})
    out = outdir(klass / "graded", reference_cache)  # inside the class folder, and not a submission
    assert bulk_run(klass, out) == 0
    first = submission_ids(out)
    assert sorted(first) == ["una", "val"]
    (klass / "val" / "dual.py").write_text(DUAL.replace("math.cos(self.val)", "-math.cos(self.val)"))
    assert bulk_run(klass, out) == 0
    second = submission_ids(out)
    assert second["una"] == first["una"] and second["val"] != first["val"]
    assert rows(out)["val"][7] != rows(out)["una"][7]
    assert bulk_run(klass, out, "--force") == 0
    assert set(submission_ids(out).values()).isdisjoint(second.values())


def test_a_second_run_into_the_same_outdir_waits_its_turn(tmp_path, capsys):
    klass = dual_only_class(tmp_path / "class", {"una": DUAL})
    (tmp_path / "out").mkdir()
    lock = os.open(tmp_path / "out", os.O_RDONLY | os.O_DIRECTORY)  # the run locks OUTDIR itself
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert bulk_run(klass, tmp_path / "out") == 2
    finally:
        os.close(lock)
    assert f"another run is writing to {tmp_path / 'out'}" in capsys.readouterr().err
    assert not (tmp_path / "out" / "gradebook.sqlite").exists()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def bulk_processes(out: Path) -> list[int]:
    """Processes whose command line names this OUTDIR: the bulk run and the pytest runs it started."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(out).encode() in cmdline.read_bytes() and alive(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_mid_run_then_a_rerun_gives_the_gradebook_of_an_uninterrupted_run(tmp_path, reference_cache):
    students = {name: DUAL for name in ("ada", "bea", "cy")}
    students["eli"] = DUAL.replace("self.der * other.val + self.val * other.der", "self.der * other.der")
    klass = dual_only_class(tmp_path / "class", students)
    (klass / "fin").mkdir()  # nothing gradable: recorded before any grading starts
    whole = outdir(tmp_path / "whole", reference_cache)
    assert bulk_run(klass, whole, "--jobs", "1") == 0

    killed = outdir(tmp_path / "killed", reference_cache)
    command = CLI + ["bulk", str(klass), "-o", str(killed), "--jobs", "1"]
    process = subprocess.Popen(command, cwd=KIT, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + RUN_SECONDS
    recorded = 0
    while recorded < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            with sqlite3.connect(killed / "gradebook.sqlite") as db:
                recorded = db.execute("SELECT count(*) FROM submissions").fetchone()[0]
        except sqlite3.OperationalError:
            continue
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert 2 <= len(rows(killed)) < len(students) + 1, "the kill came before or after the grading"
    while bulk_processes(killed) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bulk_processes(killed) == [], "a grading process outlived the killed run"

    assert bulk_run(klass, killed, "--jobs", "1") == 0
    assert rows(killed) == rows(whole)
    with sqlite3.connect(killed / "gradebook.sqlite") as db:
        assert db.execute("SELECT count(*), count(DISTINCT source) FROM submissions").fetchone() == (5, 5)


# -- the wall-clock cap and what feedback may show -------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_cap_stops_the_whole_grading_process_and_the_next_gets_a_new_one(tmp_path):
    """A grading that hangs past the cap is stopped with all it started; the pool goes on."""
    (tmp_path / "test_hangs.py").write_text(textwrap.dedent("""
        import subprocess, time

        def test_hangs():
            child = subprocess.Popen(["sleep", "300"])
            print(child.pid, flush=True)
            time.sleep(300)
        """), encoding="utf-8")
    (tmp_path / "test_passes.py").write_text("def test_passes():\n    pass\n", encoding="utf-8")
    pool = graders.Graders(bulk.pytest_env(), tmp_path)
    try:
        log = tmp_path / "hang.log"
        hangs = [str(tmp_path / "test_hangs.py"), "-q", "-s", "-p", "no:cacheprovider"]
        outcome = pool.grade(hangs, log, cap=2.0)
        assert "wall-clock cap" in outcome
        assert not alive(int(log.read_text().split()[0]))
        again = pool.grade([str(tmp_path / "test_passes.py"), "-q", "-p", "no:cacheprovider"],
                           tmp_path / "pass.log", cap=60.0)
        assert again == 0, (tmp_path / "pass.log").read_text()
    finally:
        pool.close()


def test_bulk_grades_what_pytest_autograder_grades(autograde, tmp_path, reference_cache):
    """The grading processes that stay give every submission of the corpus exactly the scores
    and messages that `pytest autograder` gives it, one process per submission."""
    klass = tmp_path / "class"
    for entry in CORPUS:
        build(entry, KIT / "solutions", klass / entry.name)
    out = outdir(tmp_path / "out", reference_cache)
    assert bulk_run(klass, out, "--jobs", "2") == 0
    book = Gradebook(out / "gradebook.sqlite")
    try:
        graded = {e.source: {s.part: (s.points, s.messages) for s in e.scores} for e in book.entries()}
    finally:
        book.close()
    for entry in CORPUS:
        alone = autograde(klass / entry.name)
        expected = {part: (e["score"], "" if e["score"] >= e["max_score"] else e["output"])
                    for part, e in alone.items()}
        assert graded[entry.name].keys() == expected.keys(), entry.name
        for part, (points, message) in expected.items():
            got_points, got_message = graded[entry.name][part]
            assert got_points == points, (entry.name, part)
            # A message that says its answer changes from one process to the next (an order of
            # a set of parents) may quote other numbers each time; every other is the same.
            if UNSTEADY_WORDS not in message:
                assert got_message == message, (entry.name, part)


def test_feedback_hides_the_checks_of_a_hidden_part_and_quotes_no_suite_code():
    grading = load()
    mul, tanh = "value.mul", "value.tanh"
    grading = dataclasses.replace(grading, parts={
        **grading.parts, tanh: dataclasses.replace(grading.parts[tanh], visibility="hidden")})
    suite_line = next(line for line in (KIT / "autograder" / "suites" / "test_value_mul.py").read_text()
                      .splitlines() if line.strip().startswith("grade("))
    entry = Entry(source="zoe", student="zoe", format="folder", content_hash="0", grader_version="0",
                  graded_at="2026-01-01T00:00:00+00:00", seconds=1.0, status="graded", scores=[
                      Score(mul, 5, 10, f"a traceback\n>   {suite_line.strip()}\nCame out: 3",
                            ["overwrites-gradient"]),
                      Score(tanh, 0, 8, "the secret input is 41.5", ["tanh-overflow"])])
    for text in (reports.feedback_markdown(entry, grading), reports.feedback_html(entry, grading)):
        assert "Came out: 3" in text and "overwrites-gradient" in text
        assert suite_line.strip() not in text
        assert "The checks of this part are hidden." in text
        assert "41.5" not in text and "tanh-overflow" not in text
