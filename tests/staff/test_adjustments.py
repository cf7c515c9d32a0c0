"""`--adjustments` and `--extensions`: every bad row refused with its file, line and fix, before
anything is written; each row applied once, on every run, to every report."""

import csv
import dataclasses
import io
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console
from support.shape import reference

from autograder.config import load
from autograder.staff import adjustments, bulk, reports
from autograder.staff.adjustments import ByHandError
from autograder.staff.cli import main
from autograder.staff.gradebook import Entry, Gradebook, Score
from autograder.staff.policies import Policy, make_policy
from autograder.staff.roster import read_roster

GRADING = load()
LATE = make_policy(False, [], None, 10.0, None, "2026-12-01T23:59+00:00")
HEADER = "student,part,points,reason\n"
STUDENTS = {"ann", "bob", "cyd", "-2-3"}


def entry(student: str, mul: float = 5.0, status: str = "graded", source: str = "", **changes) -> Entry:
    """A graded submission: value.mul at `mul` of 10, every other part at full points."""
    scores = [Score(part.id, float(part.points), float(part.points)) for part in GRADING.parts.values()]
    scores = [Score(s.part, mul, s.max, "" if mul == s.max else "lost") if s.part == "value.mul" else s
              for s in scores]
    fields = dict(source=source or f"{student}.zip", student=student, format="zip",
                  content_hash=f"hash-{student}", grader_version="0", graded_at="2026-12-01T09:00:00+00:00",
                  seconds=1.0, status=status,
                  scores=scores if status == "graded" else [])
    fields.update(changes)
    return Entry(**fields)


FULL = sum(part.points for part in GRADING.parts.values() if not part.bonus)
BEST = sum(part.points for part in GRADING.parts.values())


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def read(tmp_path: Path, adjusted: str | bytes | None = None, extended: str | bytes | None = None,
         policy: Policy = LATE, **options):
    made = [write(tmp_path / name, text) if text is not None else None
            for name, text in (("adjustments.csv", adjusted), ("extensions.csv", extended))]
    return adjustments.read(*made, STUDENTS, GRADING, policy, **options)


def refused(tmp_path: Path, *args, **options) -> list[str]:
    with pytest.raises(ByHandError) as raised:
        read(tmp_path, *args, **options)
    return raised.value.problems


# -- the pre-flight ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "said"), [
    (HEADER + "bbo,value.mul,+2,unclear\n",
     "line 2: no student 'bbo' in the class folder (did you mean 'bob'?)"),
    (HEADER + "bob,value.mull,+2,unclear\n",
     "line 2: no part 'value.mull' in grading.toml (did you mean 'value.mul'?)"),
    (HEADER + "bob,value.mul,2,unclear\n",
     "line 2: points '2': write a change as +2 or -10, a set value as =0"),
    (HEADER + "bob,value.mul,+2.5.1,unclear\n", "line 2: points '+2.5.1'"),
    (HEADER + "bob,value.mul,\"+2,5\",unclear\n", "line 2: points '+2,5'"),
    (HEADER + "bob,value.mul,+2,\n", "line 2: no reason; every adjustment says why"),
    (HEADER + "bob,value.mul,=12,over\n",
     "line 2: =12 is above value.mul's 10 points; write =12! if that is meant"),
    (HEADER + "\nbob,value.mul,+2,a\nann,total,=0,b\nbob,value.mul,-1,c\n",
     "lines 3 and 5: two adjustments of bob's value.mul (+2, -1); keep one row per student and part"),
    ("student,part,change,reason\nbob,value.mul,+2,a\n",
     "line 1: the header is 'student,part,change,reason'; write student,part,points,reason"),
    ("", "the file is empty; its first line is the header student,part,points,reason"),
    (HEADER + "bob,value.mul,+2,too,many\n", "line 2: 5 fields where the header has 4"),
    ((HEADER + "bob,value.mul,+2,r\u00e9vision\n").encode("latin-1"), "line 2: not UTF-8; save the file as "
                                                                   "'CSV UTF-8'"),
])
def test_a_bad_adjustment_file_is_refused_with_its_line_and_fix(tmp_path, text, said):
    problems = refused(tmp_path, text)
    assert [p for p in problems if said in p and str(tmp_path / "adjustments.csv") in p], problems


@pytest.mark.parametrize(("text", "said"), [
    ("student,due\nbob,2026-12-03T23:59\n",
     "line 2: due '2026-12-03T23:59': write a date and time with its zone"),
    ("student,due\nbob,2026-12-03\n", "line 2: due '2026-12-03'"),
    ("student,due\nbob,next friday\n", "line 2: due 'next friday'"),
    ("student,due\nbob,2026-12-03T23:59Z\nann,2026-12-03T23:59Z\nbob,2026-12-04T23:59Z\n",
     "lines 2 and 4: two due times for bob; keep one"),
    ("student,when\nbob,2026-12-03T23:59Z\n", "line 1: the header is 'student,when'; write student,due"),
    ("student,due\nzed,2026-12-03T23:59Z\n", "line 2: no student 'zed' in the class folder"),
])
def test_a_bad_extension_file_is_refused_with_its_line_and_fix(tmp_path, text, said):
    problems = refused(tmp_path, None, text)
    assert [p for p in problems if said in p and str(tmp_path / "extensions.csv") in p], problems


def test_an_extension_needs_a_late_policy_to_move(tmp_path):
    problems = refused(tmp_path, None, "student,due\nbob,2026-12-03T23:59Z\n", policy=Policy())
    assert any("give --late-per-day POINTS" in p for p in problems), problems


def test_every_problem_of_both_files_is_said_at_once(tmp_path):
    problems = refused(tmp_path, HEADER + "bbo,value.mul,+2,a\nann,value.tanh,x,b\n",
                       "student,due\nann,soon\n")
    assert len(problems) == 3, problems


def test_a_good_file_reads_as_written_with_its_lines(tmp_path):
    found = read(tmp_path, HEADER + "bob, value.mul ,+2,\"unclear, as granted\"\n\n"
                 "'-2-3,total,=0!,integrity\nann,value.mul,-10,copied\n",
                 "student,due\nann,2026-12-03T23:59+01:00\n")
    assert [(a.student, a.part, a.change, a.sets, a.beyond, a.line) for a in found.adjustments] == [
        ("bob", "value.mul", 2.0, False, False, 2), ("-2-3", "total", 0.0, True, True, 4),
        ("ann", "value.mul", -10.0, False, False, 5)]
    assert [(e.student, e.due.isoformat(), e.line) for e in found.extensions] == [
        ("ann", "2026-12-03T23:59:00+01:00", 2)]


def test_a_file_inside_the_class_folder_is_refused(tmp_path):
    problems = refused(tmp_path, HEADER, submissions_folder=tmp_path)
    assert any("inside the class folder" in p for p in problems), problems


# -- a student of the roster who is not in this run's class ---------------------------------------

def classroom_roster(tmp_path: Path) -> Path:
    return write(tmp_path / "roster.csv", "identifier,github_username,github_id,name\n"
                 "s1,bob,1,Bob Kay\ns2,dee-gh,2,Dee Lane\n")


def test_a_student_of_the_roster_with_no_entry_is_listed_not_refused(tmp_path):
    roster = read_roster(classroom_roster(tmp_path))
    found = read(tmp_path, HEADER + "dee-gh,value.mul,+2,unclear\n", roster=roster)
    assert "Dee Lane" in found.absent["dee-gh"]
    found.apply([entry("bob")], GRADING)
    assert [(a.adjustment.student, a.source) for a in found.applied] == [("dee-gh", "")]
    assert any("dee-gh value.mul +2: not applied: Dee Lane" in line for line in found.lines())


def test_a_roster_identifier_of_a_student_with_an_entry_is_refused_with_the_kits_id(tmp_path):
    roster = read_roster(classroom_roster(tmp_path))
    submissions = [entry("bob", source="hw3-bob", lms="classroom", lms_id="bob")]
    problems = refused(tmp_path, HEADER + "s1,value.mul,+2,unclear\n", roster=roster, entries=submissions)
    said = "'s1' is Bob Kay of the roster, whose id in this class is 'bob'"
    assert any(said in p for p in problems), problems


# -- applying -------------------------------------------------------------------------------------

def by_hand(tmp_path: Path, adjusted: str, extended: str | None = None) -> adjustments.ByHand:
    return read(tmp_path, HEADER + adjusted, extended)


def applied(tmp_path: Path, adjusted: str, entries: list[Entry]) -> dict[str, Entry]:
    return {e.student: e for e in by_hand(tmp_path, adjusted).apply(entries, GRADING)}


def mul(e: Entry) -> float:
    return next(s.points for s in e.scores if s.part == "value.mul")


def test_a_change_to_a_part_stays_within_0_and_its_maximum_unless_it_ends_in_a_bang(tmp_path):
    got = applied(tmp_path, "ann,value.mul,+2,a\nbob,value.mul,+7,b\ncyd,value.mul,+7!,c\n"
                  "-2-3,value.mul,-9,d\n", [entry("ann"), entry("bob"), entry("cyd"), entry("-2-3")])
    assert {student: mul(e) for student, e in got.items()} == {"ann": 7, "bob": 10, "cyd": 12, "-2-3": 0}


def test_a_clamped_or_bonus_row_is_said(tmp_path):
    found = by_hand(tmp_path, "bob,value.mul,+7,b\ncyd,value.mul,+7!,c\n")
    found.apply([entry("bob"), entry("cyd")], GRADING)
    notes = {a.adjustment.student: a.note for a in found.applied}
    assert "12 would leave 0 .. 10 (the part's maximum): kept at 10; end the points with ! (+7!)" \
        in notes["bob"]
    assert "12, outside 0 .. 10 (the part's maximum), as its `!` asks" in notes["cyd"]


def test_a_total_row_comes_after_the_part_rows_of_the_student(tmp_path):
    got = applied(tmp_path, "ann,total,+3,t\nann,value.mul,+2,p\nbob,total,=0,integrity\n",
                  [entry("ann"), entry("bob")])
    assert mul(got["ann"]) == 7 and got["ann"].total_change == 3
    assert got["bob"].total_change == -(BEST - 5)  # every point, the bonus too, but value.mul's 5 lost
    assert got["ann"].by_hand == ["value.mul +2: p (5 → 7)", f"total +3: t ({BEST - 3:g} → {BEST:g})"]


def test_the_gradebooks_entries_are_never_changed(tmp_path):
    original = entry("ann")
    applied(tmp_path, "ann,value.mul,+2,a\n", [original])
    assert mul(original) == 5 and not original.by_hand


def test_a_student_with_several_entries_or_none_graded_keeps_the_grade_and_the_row_is_listed(tmp_path):
    found = by_hand(tmp_path, "ann,value.mul,+2,a\nbob,value.mul,+2,b\n")
    got = found.apply([entry("ann", source="ann.zip"), entry("ann", source="ann/"),
                       entry("bob", status="failed")], GRADING)
    assert all(not e.by_hand for e in got)
    notes = {a.adjustment.student: a.note for a in found.applied}
    assert notes["ann"].startswith("2 entries are this student's (ann.zip, ann/)")
    assert notes["bob"] == "held back: bob.zip could not be graded"
    lone = by_hand(tmp_path, "cyd,value.mul,+2,c\n")
    lone.apply([], GRADING)  # a student with no entry at all: listed too, never dropped
    assert [a.note for a in lone.applied] == [adjustments.NO_ENTRY]


# -- every report ---------------------------------------------------------------------------------

def rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return {row.get("student") or row.get("Student"): row for row in csv.DictReader(file)}


def reports_of(tmp_path: Path, found, entries: list[Entry], policy: Policy = LATE) -> Path:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    reports.write_all(out, entries, GRADING, policy=policy, by_hand=found)
    return out


# From a Canvas download, so that grades-canvas.csv has a row for each (a row needs a Canvas id).
CLASS = [entry("ann", submitted_at="2026-12-03T10:00:00+00:00", lms="canvas", lms_id="101"),
         entry("bob", lms="canvas", lms_id="102"), entry("cyd", lms="canvas", lms_id="103"),
         entry("dee", submitted_at="2026-12-03T10:00:00+00:00", lms="canvas", lms_id="104")]


def test_every_report_carries_the_adjustments_and_the_extension(tmp_path):
    found = by_hand(tmp_path, "bob,value.mul,+2,the message was unclear\ncyd,total,=0,integrity case 17\n",
                    "student,due\nann,2026-12-04T23:59+00:00\n")
    out = reports_of(tmp_path, found, CLASS)
    grades = rows(out / "grades.csv")
    got = {s: (r["value.mul"], r["adjustment"], r["late penalty"], r["total"]) for s, r in grades.items()}
    assert got == {
        "ann": ("5", "", "0", f"{FULL - 5 + 2:g}"), "bob": ("7", "2", "0", f"{FULL - 3 + 2:g}"),
        "cyd": ("5", f"{-(FULL - 5 + 2):g}", "0", "0"), "dee": ("5", "", "20", f"{FULL - 5 + 2 - 20:g}")}
    assert grades["bob"]["adjustment reason"] == "value.mul +2: the message was unclear"
    assert "extended due time 2026-12-04T23:59+00:00" in grades["ann"]["late"]
    canvas = rows(out / "grades-canvas.csv")
    assert [canvas[s]["Autograd engines"] for s in ("ann", "bob", "cyd", "dee")] == [
        grades[s]["total"] for s in ("ann", "bob", "cyd", "dee")]
    (tmp_path / "plain").mkdir()  # grades-moodle.csv, without a roster, holds the entries of no LMS download
    plain = reports_of(tmp_path / "plain", found, [dataclasses.replace(e, lms="", lms_id="") for e in CLASS])
    assert rows(plain / "grades-moodle.csv")["cyd"]["Autograd engines"] == "0"
    feedback = (out / "feedback" / "bob.md").read_text(encoding="utf-8").splitlines()
    said = feedback.index("Adjusted by the course staff: `value.mul` +2: the message was unclear (5 → 7)")
    assert feedback[said + 1] == "" and feedback[said + 2].startswith("| part |")
    ann = (out / "feedback" / "ann.html").read_text(encoding="utf-8")
    assert "Your due time, by an extension: 2026-12-04T23:59+00:00" in ann
    assert "| adjustment | by the course staff |" in (out / "feedback" / "cyd.md").read_text()
    summary = (out / "summary.html").read_text(encoding="utf-8")
    for text in ("the message was unclear", "integrity case 17", "adjustments.csv:2", "adjustments.csv:3",
                 "2026-12-04T23:59+00:00", "extensions.csv:2"):
        assert text in summary


def test_moodles_feedback_comments_say_the_adjustment(tmp_path):
    found = by_hand(tmp_path, "bob,value.mul,+2,the message was unclear\n")
    out = reports_of(tmp_path, found, [entry("bob", lms="moodle", lms_id="7", lms_name="Bob Kay")])
    row = rows(out / "grades-moodle-worksheet.csv")[None]
    assert (row["Grade"], row["Identifier"]) == (f"{BEST - 3:g}", "Participant 7")  # 5 + 2 of value.mul
    assert "Adjusted by the course staff: value.mul +2: the message was unclear" in row["Feedback comments"]


def test_each_row_is_applied_once_however_often_the_reports_are_written(tmp_path):
    found = by_hand(tmp_path, "bob,value.mul,+2,unclear\ncyd,total,-4,late work\n")
    first = rows(reports_of(tmp_path, found, CLASS) / "grades.csv")
    again = rows(reports_of(tmp_path, found, CLASS) / "grades.csv")
    assert first == again and first["bob"]["value.mul"] == "7"
    assert first["cyd"]["total"] == f"{FULL - 5 + 2 - 4:g}"


def test_a_changed_file_changes_the_reports_with_no_submission_changed(tmp_path):
    reports_of(tmp_path, by_hand(tmp_path, "bob,value.mul,+2,unclear\n"), CLASS)
    grades = rows(reports_of(tmp_path, by_hand(tmp_path, "bob,value.mul,+1,unclear\n"), CLASS) / "grades.csv")
    assert grades["bob"]["value.mul"] == "6"


def test_without_the_files_the_reports_have_no_adjustment_column(tmp_path):
    out = reports_of(tmp_path, None, CLASS, Policy())
    assert "adjustment" not in next(iter(rows(out / "grades.csv").values()))


def test_an_extension_counts_the_lms_late_mark_on_time_and_says_so(tmp_path):
    found = by_hand(tmp_path, "", "student,due\nann,2026-12-04T23:59+00:00\n")
    out = reports_of(tmp_path, found, [entry("ann", late=True), entry("bob", late=True)])
    grades = rows(out / "grades.csv")
    assert (grades["ann"]["late penalty"], grades["bob"]["late penalty"]) == ("0", "10")
    assert "on time by the extended due time" in grades["ann"]["late"]
    assert grades["ann"]["adjustment"] == ""  # a file with no row still gives the column, empty


# -- the gradebook --------------------------------------------------------------------------------

def test_the_gradebook_keeps_each_row_with_when_it_was_first_applied(tmp_path):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    found = by_hand(tmp_path, "bob,value.mul,+2,unclear\nann,total,=0,integrity\n")
    found.apply([entry("ann"), entry("bob")], GRADING)
    book.record_by_hand(found.records(), "first")
    changed = by_hand(tmp_path, "bob,value.mul,+2,unclear\nann,total,=1,integrity\n")
    changed.apply([entry("ann"), entry("bob")], GRADING)
    book.record_by_hand(changed.records(), "second")
    got = book.db.execute("SELECT student, points, reason, file, line, before, after, applied_at "
                          "FROM adjustments ORDER BY line").fetchall()
    book.close()
    file = str(tmp_path / "adjustments.csv")
    assert got == [("bob", "+2", "unclear", file, 2, 5.0, 7.0, "first"),
                   ("ann", "=1", "integrity", file, 3, BEST - 5, 1.0, "second")]


def test_a_run_without_a_file_keeps_and_says_the_rows_an_earlier_run_applied(tmp_path):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    found = by_hand(tmp_path, "bob,value.mul,+2,unclear\nann,value.mul,+2,held back\n",
                    "student,due\nbob,2026-12-08T23:59Z\n")
    found.apply([entry("bob")], GRADING)
    book.record_by_hand(found.records(), "first")
    book.close()

    def kept(by_hand) -> tuple[str, int, int]:
        console = Console(file=io.StringIO(), width=500)
        bulk.kept_by_hand(tmp_path, by_hand, console)
        db = sqlite3.connect(tmp_path / "gradebook.sqlite")
        counts = [db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                  for table in ("adjustments", "extensions")]
        return console.file.getvalue(), *counts

    only = read(tmp_path, HEADER + "bob,value.mul,+1,unclear\n")  # only --adjustments
    only.apply([entry("bob")], GRADING)
    said, adjusted, extended = kept(only)
    assert (adjusted, extended) == (1, 1)
    file = tmp_path / "extensions.csv"
    assert f"the gradebook holds 1 extensions an earlier run applied (from {file})" in said
    assert "give --extensions" in said and "adjustments an earlier" not in said
    said, adjusted, extended = kept(None)
    assert (adjusted, extended) == (1, 1) and "give --extensions" in said and "give --adjustments" in said


# -- the command -----------------------------------------------------------------------------------

def test_the_command_refuses_a_bad_file_before_anything_is_written(tmp_path, capsys):
    klass = tmp_path / "class"
    (klass / "bob").mkdir(parents=True)
    (klass / "bob" / "dual.py").write_text("x = 1\n")
    bad = write(tmp_path / "adjustments.csv", HEADER + "bbo,dual,+2,unclear\n")
    out = tmp_path / "out"
    assert main(["bulk", str(klass), "-o", str(out), "--adjustments", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"pre-flight: {bad}, line 2: no student 'bbo' in the class folder (did you mean 'bob'?)" in err
    assert "so nothing was graded or written" in err
    assert not out.exists()


def test_the_command_refuses_adjustments_in_an_nbgrader_course(tmp_path, capsys):
    adjusted = write(tmp_path / "adjustments.csv", HEADER)
    assert main(["bulk", str(tmp_path), "-o", str(tmp_path / "out"), "--adjustments", str(adjusted),
                 "--nbgrader-db", "sqlite:///x.db", "--assignment", "hw"]) == 2
    assert "nbgrader's gradebook is the grade of record" in capsys.readouterr().err


def test_the_tables_are_in_a_fresh_gradebook(tmp_path):
    Gradebook(tmp_path / "g.sqlite").close()
    db = sqlite3.connect(tmp_path / "g.sqlite")
    assert {row[0] for row in db.execute("SELECT name FROM sqlite_master")} >= {"adjustments", "extensions"}


# -- the class, graded, adjusted, regraded --------------------------------------------------------

DUAL = reference("dual")
DUAL_BUG = DUAL.replace("der: float = 0.0", "der: float = 1.0")  # dual-constant-derivative: 2.73 of 10


def outputs(out: Path) -> dict:
    """What each output says of the four students: grades.csv, Canvas, Moodle, the feedback, the
    summary and the gradebook's two tables."""
    grades = rows(out / "grades.csv")
    canvas = rows(out / "grades-canvas.csv")
    db = sqlite3.connect(out / "gradebook.sqlite")
    said = {student: (out / "feedback" / f"{student}.md").read_text(encoding="utf-8")
            for student in ("annlee_101", "bobkay_102", "cydmo_103", "deeno_104")}
    return {"grades": {s: (r["dual"], r["adjustment"], r["late penalty"], r["total"])
                       for s, r in grades.items()},
            "late": {s: r["late"] for s, r in grades.items()},
            "canvas": {s: r["Autograd engines"] for s, r in canvas.items() if s != "    Points Possible"},
            "feedback": {s: [line for line in text.splitlines() if line.startswith(("Adjusted", "Your due"))]
                         for s, text in said.items()},
            "summary": (out / "summary.html").read_text(encoding="utf-8"),
            "adjustments": db.execute("SELECT student, part, points, source, before, after FROM adjustments "
                                      "ORDER BY line").fetchall(),
            "applied_at": db.execute("SELECT applied_at FROM adjustments ORDER BY line").fetchall(),
            "extensions": db.execute("SELECT student, due, source FROM extensions").fetchall()}


@pytest.mark.engine("dual")  # its class hands in dual.py (2.73 of 10 for its bug)
@pytest.mark.slow
def test_a_class_graded_adjusted_regraded_after_a_resubmission_and_under_a_new_late_policy(tmp_path, capsys):
    klass = tmp_path / "class"
    klass.mkdir()
    for name, text in (("annlee_LATE_101_1001_dual.py", DUAL), ("bobkay_102_1002_dual.py", DUAL_BUG),
                       ("cydmo_103_1003_dual.py", DUAL), ("deeno_LATE_104_1004_dual.py", DUAL)):
        (klass / name).write_text(text, encoding="utf-8")
    adjusted = write(tmp_path / "adjustments.csv", HEADER + "bobkay_102,dual,+2,the message was unclear\n"
                     "cydmo_103,total,=0,academic integrity case 17\n")
    extended = write(tmp_path / "extensions.csv", "student,due\nannlee_101,2026-12-08T23:59+00:00\n")
    out = tmp_path / "out"

    def bulk(*late: str) -> dict:
        assert main(["bulk", str(klass), "-o", str(out), "--adjustments", str(adjusted), "--extensions",
                     str(extended), "--jobs", "2", *late]) == 0
        return outputs(out)

    first = bulk("--late-per-day", "10")
    assert first["grades"] == {"annlee_101": ("10", "", "0", "10"), "bobkay_102": ("4.73", "2", "0", "4.73"),
                               "cydmo_103": ("10", "-10", "0", "0"), "deeno_104": ("10", "", "10", "0")}
    assert first["canvas"] == {"annlee_101": "10", "bobkay_102": "4.73", "cydmo_103": "0", "deeno_104": "0"}
    assert "on time by the extended due time 2026-12-08T23:59+00:00" in first["late"]["annlee_101"]
    assert first["feedback"] == {
        "annlee_101": ["Your due time, by an extension: 2026-12-08T23:59+00:00"],
        "bobkay_102": ["Adjusted by the course staff: dual +2: the message was unclear (2.73 → 4.73)"],
        "cydmo_103": ["Adjusted by the course staff: total set to 0: academic integrity case 17 (10 → 0)"],
        "deeno_104": []}
    for text in ("the message was unclear", "academic integrity case 17", "2026-12-08T23:59+00:00"):
        assert text in first["summary"]
    assert first["adjustments"] == [("bobkay_102", "dual", "+2", "bobkay_102_*", 2.73, 4.73),
                                    ("cydmo_103", "total", "=0", "cydmo_103_*", 10.0, 0.0)]
    assert first["extensions"] == [("annlee_101", "2026-12-08T23:59+00:00", "annlee_101_*")]

    # bob hands in again (the same bug, a comment more): graded again, and his +2 stays, once
    (klass / "bobkay_102_1005_dual-1.py").write_text("# again\n" + DUAL_BUG, encoding="utf-8")
    capsys.readouterr()
    second = bulk("--late-per-day", "10")
    assert "1 graded now, 3 unchanged" in capsys.readouterr().err
    kept = ("grades", "canvas", "feedback", "adjustments", "applied_at", "extensions")
    assert {key: second[key] for key in kept} == {key: first[key] for key in kept}

    # a new late policy: nothing is graded again, and every adjustment and the extension still hold
    third = bulk("--late-per-day", "5")
    assert third["grades"] == {**first["grades"], "deeno_104": ("10", "", "5", "5")}
    assert third["canvas"] == {**first["canvas"], "deeno_104": "5"}
    assert third["feedback"] == first["feedback"] and third["adjustments"] == first["adjustments"]
