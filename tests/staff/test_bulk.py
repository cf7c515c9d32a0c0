"""`autograder bulk`: the example class end to end, resuming, interruption, and what feedback shows."""

import base64
import csv
import dataclasses
import fcntl
import html
import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.autograding import autograde_folder
from support.corpus import CORPUS, SET_PARENTS, Submission, build

from autograder.config import load
from autograder.escape import markdown
from autograder.questions import make_secret
from autograder.staff import bulk, graders, reports
from autograder.staff.gradebook import Entry, Gradebook, Score

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from make_class import make_class  # noqa: E402 - examples/ is a folder of scripts, not a package
from support import EXHAUSTIVE, KIT
from support.bulk_runs import (
    BROKEN,
    CLI,
    RUN_SECONDS,
    SOURCE,
    alive,
    bulk_processes,
    bulk_run,
    entries_of,
    one_engine_class,
    outdir,
    rows,
    submission_ids,
)
from support.shape import SAMPLE, points_of, scored

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

UNSTEADY_WORDS = "this scenario gave a different answer"
NUMBER = r"-?\d+(\.\d+)?(e[-+]?\d+)?"


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


@dataclasses.dataclass
class ExampleRow:
    """One row of the table in examples/README.md."""

    entry: str
    student: str
    loses: set[str]
    named: set[str]
    total: float | None  # None: held back, with no grade in grades.csv or the LMS files


def example_readme() -> list[ExampleRow]:
    """The table of examples/README.md: what each example student should score."""
    parts = load().parts
    lines = [line for line in (KIT / "examples" / "README.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    found = []
    for line in lines[2:]:
        row = dict(zip(header, (cell.strip() for cell in line.strip("|").split("|"))))
        quoted = set(re.findall(r"`([^`]+)`", row["it loses"]))
        every = {p for p, part in parts.items() if part.points > 0}
        loses = every if row["it loses"].startswith("every part") else quoted & set(parts)
        assert row["it loses"] == "nothing" or loses, f"examples/README.md: {row['entry']} names no part"
        total = None if row["total"] == "held back" else float(row["total"])
        found.append(ExampleRow(row["entry"].strip("`"), row["student"].strip("`"), loses,
                                set(re.findall(r"\*([a-z-]+)\*", row["it loses"])), total))
    return found


def test_every_example_student_scores_what_the_examples_readme_says(example_run):
    """A row per student of examples/README.md: its id in grades.csv, the parts that lose points
    (and no other), the misconceptions it names, and the total."""
    parts = load().parts
    with (example_run / "grades.csv").open(newline="") as file:
        grades = {row["student"]: row for row in csv.DictReader(file)}
    expected = example_readme()
    assert sorted(grades) == sorted(row.student for row in expected)
    named = {entry.student: {m for score in entry.scores for m in score.misconceptions}
             for entry in entries_of(example_run)}
    for row in expected:
        got = grades[row.student]
        if row.total is None:  # held back: the reason, and no points
            assert got["total"] == "" and got["held back"].startswith("could not be graded"), row.student
            continue
        assert {p for p in parts if float(got[p]) < parts[p].points} == row.loses, row.student
        assert named[row.student] >= row.named, row.student
        assert float(got["total"]) == row.total and got["held back"] == "", row.student


def test_every_submission_of_the_example_class_gets_one_row(example_run):
    found = rows(example_run)
    assert sorted(found) == ["Grace Hopper_300021_*", "alice", "bob.zip", "carol.ipynb", "dave.py",
                             "doejohn_23456_*", "erin.zip", "frank", "smithjane_12345_*"]
    failed = {source: row[5] for source, row in found.items() if row[4] == "failed"}
    assert failed.keys() == {"erin.zip", "frank"}
    assert "not a readable zip" in failed["erin.zip"]
    failures = [json.loads(line) for line in (example_run / "failures.jsonl").read_text().splitlines()]
    assert [(f["source"], f["reason"]) for f in failures] == sorted(failed.items())


def test_grades_csv_has_a_column_per_part(example_run):
    with (example_run / "grades.csv").open(newline="") as file:
        assert next(csv.reader(file)) == ["student", *load().parts, "total", "late", "submitted",
                                          "held back"]


def test_feedback_exists_for_every_student_and_quotes_no_suite_code(example_run):
    code = [line.strip() for path in (KIT / "autograder" / "suites").glob("*.py")
            for line in path.read_text().splitlines()
            if line.strip().startswith(("grade(", "def test_", "@pytest.mark", "suspects="))]
    assert code
    for student in (row.student for row in example_readme()):
        for suffix, escaped in ((".md", markdown(student)), (".html", html.escape(student))):
            text = (example_run / "feedback" / f"{student}{suffix}").read_text()
            assert f"Feedback for {escaped}" in text
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
        assert "from autograder.inside.scenarios.training import train_moons" in text, path.name


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
        table = [row for row in csv.DictReader(file) if row["total"]]  # held back: no grade, not counted
    summary = (example_run / "summary.html").read_text()
    mean = statistics.mean(float(row["total"]) for row in table)
    assert f"mean {mean:.1f}," in summary
    entries = entries_of(example_run)
    for part, details in parts.items():
        # Passed: every check of the part, by the students with a grade (erin and frank are held back).
        rate = sum(any(s.part == part and s.points >= s.max and not s.messages for s in e.scores)
                   for e in entries if e.status == "graded") / len(table)
        assert f"<td>{part}</td><td>{html.escape(details.title)}</td><td class='n'>{rate:.0%}</td>" in summary
    assert "<td>value.given</td><td>The given operations of Value, unchanged</td><td class='n'>100%</td>" \
        in summary
    assert "Over the 7 students with a grade in grades.csv." in summary


def test_a_submission_that_could_not_be_graded_scores_zero_on_every_part_with_the_reason(example_run):
    found = rows(example_run)
    for source in ("erin.zip", "frank"):
        reason, scores = found[source][5], found[source][7]
        assert [s[0] for s in scores] == list(load().parts)
        assert all(points == 0 and messages == reason for _, points, _, messages, _ in scores)
    erin = (example_run / "feedback" / "erin.md").read_text()
    assert "This submission could not be graded:** `erin.zip:` not a readable zip" in erin
    assert "```" not in erin  # the reason is said once, not once more for every part


def test_outdir_holds_only_what_the_readme_lists(example_run):
    assert sorted(p.name for p in example_run.iterdir()) == [
        "failures.jsonl", "feedback", "feedback-canvas.zip", "feedback-moodle.zip", "gradebook.sqlite",
        "grades-canvas.csv", "grades-moodle-worksheet.csv", "grades-moodle.csv", "grades.csv", "reference",
        "summary.html"]


def test_feedback_headings_name_the_part_once_and_html_shows_code_as_code(example_run):
    bob_md = (example_run / "feedback" / "bob.md").read_text()
    headings = [line for line in bob_md.splitlines() if line.startswith("## ")]
    mul = r"## `Value\.__mul__:` the product rule \([\d.]+ / 10\)"  # a name with a dot: a code span
    assert any(re.fullmatch(mul, heading) for heading in headings)
    assert not [h for h in headings if "value.mul" in h or "value.training" in h]
    bob = (example_run / "feedback" / "bob.html").read_text()
    assert re.search(r"<h2>Value\.__mul__: the product rule \([\d.]+ / 10\)</h2>", bob)
    # the snippet, as a code block (its numbers are the ones this grading asked)
    assert "<pre><code>" in bob and re.search(r"x = Value\([-\d.]+\)\np, q = x \* \d+, \d+ \* x", bob)
    for page in (example_run / "feedback").glob("*.html"):
        assert "`" not in re.sub(r"<style>.*?</style>", "", page.read_text(), flags=re.S), page.name
    carol = (example_run / "feedback" / "carol.html").read_text()
    assert re.search(r"<div class='messages'>(?:(?!</div>).)*[^>]<code>", carol, re.S)  # `code` in a message


def test_a_second_run_grades_nothing_again(example_run, example_class):
    before = submission_ids(example_run)
    make_class(example_class)  # written afresh: the same bytes
    assert bulk_run(example_class, example_run) == 0
    assert submission_ids(example_run) == before


# -- two entries for one student --------------------------------------------------------------------

def test_two_entries_for_one_student_are_both_graded_and_neither_counts_until_the_ta_chooses(
        tmp_path, capsys, reference_cache):
    """jsmith/ and jsmith.zip, Ann Lee/ and Ann_Lee/: each entry is graded and has its feedback; the
    console, failures.jsonl and the summary name the collision; grades.csv gives the student empty
    cells and the import files leave them out. A Canvas resubmission is one entry: the newest
    upload counts, and a line says so. Removing one entry makes the other count, grading nothing."""
    klass = one_engine_class(tmp_path / "class", {"jsmith": SOURCE, "Ann Lee": SOURCE, "Ann_Lee": BROKEN,
                                                  "una": SOURCE})
    with zipfile.ZipFile(klass / "jsmith.zip", "w") as archive:
        archive.writestr(f"{SAMPLE}.py", BROKEN)
    (klass / f"kim_11111_501_{SAMPLE}.py").write_text(BROKEN)
    (klass / f"kim_11111_502_{SAMPLE}-1.py").write_text(SOURCE)
    out = outdir(tmp_path / "out", reference_cache)
    assert bulk_run(klass, out) == 0
    err = capsys.readouterr().err
    found = rows(out)
    assert sorted(found) == ["Ann Lee", "Ann_Lee", "jsmith", "jsmith.zip", "kim_11111_*", "una"]
    assert all(row[4] == "graded" for row in found.values())
    full, broken = (sum(s[1] for s in found[source][7]) for source in ("jsmith", "jsmith.zip"))
    assert full > broken
    for student, entries in {"jsmith": ("jsmith", "jsmith.zip"), "Ann_Lee": ("Ann Lee", "Ann_Lee")}.items():
        said = f"2 entries for the student {student}:"
        line = next(line for line in err.splitlines() if line.startswith(said))
        assert all(entry in line for entry in entries) and "none counts" in line
    assert (f"kim_11111_*: {SAMPLE}.py: {SAMPLE}-1.py counts, the newest upload; the earlier {SAMPLE}.py is "
            "not graded") in err
    assert "2 students with several entries have no grade" in err.splitlines()[-1]

    with (out / "grades.csv").open(newline="") as file:
        grades = {row["student"]: row for row in csv.DictReader(file)}
    assert grades["jsmith"]["total"] == grades["Ann_Lee"]["total"] == "" and grades["una"]["total"] != ""
    assert scored(grades["kim_11111"]) == points_of(SAMPLE)  # the newest upload's
    for name in ("grades-canvas.csv", "grades-moodle.csv"):
        listed = [row[0] for row in csv.reader((out / name).open(newline=""))]
        # una has a row where the import finds her (Canvas finds a row by an id, which she has not)
        assert ("una" in listed) == (name == "grades-moodle.csv"), name
        assert "jsmith" not in listed and "Ann_Lee" not in listed, name
    failures = [json.loads(line) for line in (out / "failures.jsonl").read_text().splitlines()]
    assert sorted(f["source"] for f in failures) == ["Ann Lee", "Ann_Lee", "jsmith", "jsmith.zip"]
    assert all("none counts" in f["reason"] for f in failures)
    feedback = sorted(p.name for p in (out / "feedback").glob("*.md"))
    assert feedback == ["Ann_Lee (1).md", "Ann_Lee (2).md", "jsmith (1).md", "jsmith (2).md", "kim_11111.md",
                        "una.md"]
    summary = (out / "summary.html").read_text()
    assert "Students with several entries" in summary and "feedback/jsmith%20%282%29.html" in summary

    before = submission_ids(out)
    (klass / "jsmith.zip").unlink()
    assert bulk_run(klass, out) == 0
    assert submission_ids(out) == {s: i for s, i in before.items() if s != "jsmith.zip"}  # nothing regraded
    with (out / "grades.csv").open(newline="") as file:
        assert float(next(r for r in csv.DictReader(file) if r["student"] == "jsmith")["total"]) == full


# -- resuming --------------------------------------------------------------------------------------

def test_only_a_changed_submission_is_graded_again_and_force_grades_all(tmp_path, reference_cache):
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE, "val": SOURCE})
    out = outdir(klass / "graded", reference_cache)  # inside the class folder, and not a submission
    assert bulk_run(klass, out) == 0
    first = submission_ids(out)
    assert sorted(first) == ["una", "val"]
    (klass / "val" / f"{SAMPLE}.py").write_text(BROKEN)
    assert bulk_run(klass, out) == 0
    second = submission_ids(out)
    assert second["una"] == first["una"] and second["val"] != first["val"]
    assert rows(out)["val"][7] != rows(out)["una"][7]
    assert bulk_run(klass, out, "--force") == 0
    assert set(submission_ids(out).values()).isdisjoint(second.values())


def test_a_second_run_into_the_same_outdir_waits_its_turn(tmp_path, capsys):
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE})
    (tmp_path / "out").mkdir()
    lock = os.open(tmp_path / "out", os.O_RDONLY | os.O_DIRECTORY)  # the run locks OUTDIR itself
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert bulk_run(klass, tmp_path / "out") == 2
    finally:
        os.close(lock)
    assert f"another run is writing to {tmp_path / 'out'}" in capsys.readouterr().err
    assert not (tmp_path / "out" / "gradebook.sqlite").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_mid_run_then_a_rerun_gives_the_gradebook_of_an_uninterrupted_run(tmp_path, reference_cache):
    students = {name: SOURCE for name in ("ada", "bea", "cy")}
    students["eli"] = BROKEN
    klass = one_engine_class(tmp_path / "class", students)
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
    pool = graders.Graders(graders.pytest_env(), tmp_path)
    try:
        log = tmp_path / "hang.log"
        hangs = [str(tmp_path / "test_hangs.py"), "-q", "-s", "-p", "no:cacheprovider"]
        ending = pool.grade(hangs, log, cap=2.0)
        assert ending.code is None and "wall-clock cap" in ending.reason
        assert not alive(int(log.read_text().split()[0]))
        again = pool.grade([str(tmp_path / "test_passes.py"), "-q", "-p", "no:cacheprovider"],
                           tmp_path / "pass.log", cap=60.0)
        assert again == graders.GraderExit(0), (tmp_path / "pass.log").read_text()
    finally:
        pool.close()


def test_a_grading_process_outlives_the_thread_that_started_it(tmp_path):
    """The kernel's parent-death signal follows the thread that started a process, not the
    process: a grading process that a pool thread started, once that thread has ended, still
    grades for another thread (as the pool of the kit's tests and of mutation testing lends it)."""
    (tmp_path / "test_passes.py").write_text("def test_passes():\n    pass\n", encoding="utf-8")
    args = [str(tmp_path / "test_passes.py"), "-q", "-p", "no:cacheprovider"]

    def first_grading() -> graders.Grader:
        grader = graders.Grader(graders.pytest_env(), tmp_path)
        assert grader.grade(args, tmp_path / "first.log", 60.0) == 0
        return grader

    with ThreadPoolExecutor(max_workers=1) as pool:  # its thread ends with the block
        grader = pool.submit(first_grading).result()
    try:
        for attempt in range(3):
            code = grader.grade(args, tmp_path / f"pass-{attempt}.log", 60.0)
            assert code == 0, (attempt, grader.process.poll())
    finally:
        grader.close()
        grader.process.wait()


def test_a_pool_of_grading_processes_leaves_no_folder_once_closed(tmp_path):
    """The pool that mutation testing and the kit's tests lend out keeps its graders' scratch in a
    temporary folder of its own; closing the pool removes it, after the graders are gone."""
    pool = graders.Pool()
    try:
        code = pool.grade(["--collect-only", "-q", "-p", "no:cacheprovider"], tmp_path / "collect.log", 60.0)
        assert code == 0 and pool.scratch.is_dir(), (tmp_path / "collect.log").read_text()
    finally:
        pool.close()
    assert not pool.scratch.exists()


def one_of_each_kind(corpus: tuple[Submission, ...]) -> tuple[Submission, ...]:
    """A correct engine, and one bug for each set of parts a bug of the corpus costs (one that
    keeps its parents in a set where there is one): every kind of score and message."""
    kinds: dict[frozenset, Submission] = {}
    for entry in sorted((e for e in corpus if not e.correct), key=lambda e: SET_PARENTS not in e.edits):
        kinds.setdefault(entry.loses, entry)
    return (*[e for e in corpus if e.correct][:1], *kinds.values())


def test_bulk_grades_what_pytest_autograder_grades(tmp_path, reference_cache):
    """The grading processes that stay give every submission exactly the scores and messages that
    `pytest autograder` gives it, one process per submission, given the same secret: the same
    questions. One entry of each kind of the corpus; --exhaustive grades every entry."""
    corpus = CORPUS if EXHAUSTIVE else one_of_each_kind(CORPUS)
    klass = tmp_path / "class"
    for entry in corpus:
        build(entry, KIT / "solutions", klass / entry.name)
    out = outdir(tmp_path / "out", reference_cache)
    secret = tmp_path / "grading.secret"
    assert bulk_run(klass, out, "--jobs", "2", "--secret", str(secret)) == 0
    book = Gradebook(out / "gradebook.sqlite")
    try:
        graded = {e.source: {s.part: (s.points, s.messages) for s in e.scores} for e in book.entries()}
    finally:
        book.close()
    official = [f"--grading-secret={secret}", "--grading-context", bulk.grader_version(),
                "--reference=" + str(KIT / "solutions")]
    def alone(entry) -> dict:  # a pytest process of its own
        return autograde_folder(klass / entry.name, tmp_path / f"{entry.name}.json", *official, env={})

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        by_itself = dict(zip((entry.name for entry in corpus), pool.map(alone, corpus)))
    for entry in corpus:
        expected = {part: (e["score"], "" if e["score"] >= e["max_score"] else e["output"])
                    for part, e in by_itself[entry.name].items()}
        assert graded[entry.name].keys() == expected.keys(), entry.name
        for part, (points, message) in expected.items():
            got_points, got_message = graded[entry.name][part]
            assert got_points == points, (entry.name, part)
            # An engine that keeps its parents in a set visits them in an order that memory
            # addresses decide, which differ from one process to the next: where its answer is
            # wrong, the numbers quoted may differ (and one of two runs may catch the change and
            # say so), never the words. Every other message is the same, to the character.
            if UNSTEADY_WORDS in message + got_message:
                continue
            if SET_PARENTS in entry.edits:
                assert re.sub(NUMBER, "#", got_message) == re.sub(NUMBER, "#", message), (entry.name, part)
            else:
                assert got_message == message, (entry.name, part)


def test_feedback_hides_the_checks_of_a_hidden_part_and_keeps_every_line_of_a_shown_one():
    """A shown part's messages are carried whole, a snippet's lines that a suite also holds
    (`import sys`, a loop's header) among them; the pipeline never puts a suite's code in a
    message (--tb=line, conftest.crashed), which the example run's feedback shows."""
    grading = load()
    mul, tanh = "value.mul", "value.tanh"
    grading = dataclasses.replace(grading, parts={
        **grading.parts, tanh: dataclasses.replace(grading.parts[tanh], visibility="hidden")})
    suite_line = next(line for line in (KIT / "autograder" / "suites" / "test_value_mul.py").read_text()
                      .splitlines() if line.strip().startswith("grade("))
    snippet = f"    import sys\n    for _ in range(3):\n        {suite_line.strip()}"
    entry = Entry(source="zoe", student="zoe", format="folder", content_hash="0", grader_version="0",
                  graded_at="2026-01-01T00:00:00+00:00", seconds=1.0, status="graded", scores=[
                      Score(mul, 5, 10, f"To reproduce:\n{snippet}\n\nCame out: 3",
                            ["overwrites-gradient"]),
                      Score(tanh, 0, 8, "the secret input is 41.5", ["tanh-overflow"])])
    markdown_text = reports.feedback_markdown(entry, grading)
    assert f"To reproduce:\n{snippet}\n\nCame out: 3" in markdown_text
    assert html.escape(f"import sys\nfor _ in range(3):\n    {suite_line.strip()}") in \
        reports.feedback_html(entry, grading)
    for text in (markdown_text, reports.feedback_html(entry, grading)):
        assert "Came out: 3" in text and "overwrites-gradient" in text
        assert "The checks of this part are hidden." in text
        assert "41.5" not in text and "tanh-overflow" not in text


def test_a_grading_process_keeps_nothing_from_one_submission_to_the_next(tmp_path):
    """Submissions graded one after another in one grading process, in either order, get what
    each gets in a process of its own: no module state outlives a grading. They differ in what
    a grading holds: official or public questions, graphs drawn, stubs that are all waiting."""
    secret = tmp_path / "grading.secret"
    make_secret(secret)
    official = (f"--grading-secret={secret}", "--grading-context", "v1",
                "--reference=" + str(KIT / "solutions"))
    bugs = {entry.name: entry for entry in CORPUS}
    jobs = [("stubs", KIT / "assignments", official), ("forward-order", None, ()), ("tanh", None, official)]
    for name, entry in (("forward-order", "backward-in-forward-order"), ("tanh", "tanh-derivative-of-input")):
        build(bugs[entry], KIT / "solutions", tmp_path / name)
    folders = {name: folder or tmp_path / name for name, folder, _ in jobs}

    def seen(results: dict[str, dict]) -> dict[str, tuple]:
        return {part: (e["score"], e.get("output", "")) for part, e in results.items()}

    alone = {name: seen(autograde_folder(folders[name], tmp_path / f"{name}.json", *options, env={}))
             for name, _, options in jobs}
    for order in (jobs, jobs[::-1]):
        grader = graders.Grader({**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, tmp_path)
        try:
            for name, _, options in order:
                results = tmp_path / f"{name}-{order[0][0]}-first.json"
                args = graders.pytest_args(f"--submission={folders[name]}", f"--results-json={results}",
                                           *options)
                code = grader.grade(args, results.with_suffix(".log"), 600)
                assert code in (0, 1), results.with_suffix(".log").read_text()
                got = {t["tags"][0]: t for t in json.loads(results.read_text(encoding="utf-8"))["tests"]}
                assert seen(got) == alone[name], (name, [n for n, _, _ in order])
        finally:
            grader.close()
            grader.process.wait()
    assert alone["stubs"] != alone["tanh"] != alone["forward-order"]
