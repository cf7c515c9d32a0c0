"""The rules the LMS files are held to, without grading: the roster's join, the bonus and late
policies, each rule of the pre-flight check, and names a spreadsheet would run as formulas."""

import csv
import io
from datetime import datetime
from pathlib import Path

import pytest
from support import KIT
from support.lms import canvas_import, moodle_worksheet_import

from autograder.config import load
from autograder.staff import preflight, reports
from autograder.staff.gradebook import Entry, Score
from autograder.staff.lmsfiles import CANVAS_COLUMNS, CANVAS_POINTS, LmsFiles, Sheet
from autograder.staff.policies import Late, Policy, PolicyError, make_policy
from autograder.staff.roster import Person, Roster, join, read_roster

GRADING = load()
DATA = KIT / "tests" / "data"
FORMULA = ("=", "+", "-", "@", "\t", "\r")
WHEN = "2026-12-01T09:00:00+00:00"
SCALES = {lms: Policy().scale(lms, 100.0, 102.0) for lms in ("canvas", "moodle")}  # the kit's own points


def entry(source: str, student: str, points: float = 10.0, **changes) -> Entry:
    fields = dict(source=source, student=student, format="folder", content_hash="0", grader_version="0",
                  graded_at="2026-12-01T09:00:00+00:00", seconds=1.0, status="graded",
                  scores=[Score("dual", points, 10.0, "" if points == 10.0 else "lost")])
    fields.update(changes)
    return Entry(**fields)


# -- the roster --------------------------------------------------------------------------------------

def test_each_export_is_read_as_a_roster():
    canvas = read_roster(DATA / "canvas" / "grades-export.csv")
    assert (canvas.lms, len(canvas.people)) == ("canvas", 7)
    assert canvas.maximum_for("Homework 3: autograd engines (4821)") == 100.0
    assert canvas.people[3].name == "Müller, Jürgen" and canvas.people[3].login == "jmuller"
    worksheet = read_roster(DATA / "moodle" / "grading-worksheet.csv")
    assert (worksheet.lms, worksheet.maximum, worksheet.people[1].lms_id) == ("moodle", 100.0, "300022")
    assert worksheet.people[1].submitted_at == "2026-12-01T15:00"
    grades = read_roster(DATA / "moodle-gradebook-export.csv")
    assert [(p.name, p.id_number) for p in grades.people] == [("Ada Lovelace", "s2024001"),
                                                               ("Edsger Dijkstra", "s2024002")]


def test_a_file_that_is_no_roster_is_refused_naming_it(tmp_path):
    (tmp_path / "list.csv").write_text("name,points\nana,3\n")
    with pytest.raises(Exception, match="list.csv: not a roster this kit reads"):
        read_roster(tmp_path / "list.csv")


def test_entries_join_by_id_login_email_or_a_normalised_name_and_say_why_when_not():
    roster = Roster(Path("r.csv"), "canvas", "canvas export", [
        Person("canvas", "Lee, Ann", 3, lms_id="45678", login="alee", email="ann.lee@example.edu"),
        Person("canvas", "Müller, Jürgen", 4, lms_id="34567"),
        Person("canvas", "Kim, Sam", 5, lms_id="1"), Person("canvas", "Kim, Sam", 6, lms_id="2"),
        Person("canvas", "Nobody, Here", 7, lms_id="3")])
    entries = [entry("alee", "alee"), entry("Juergen", "Jürgen_Müller"),
               entry("müllerjürgen_34567_*", "müllerjürgen_34567", lms="canvas", lms_id="34567"),
               entry("sam_kim", "sam_kim"), entry("zed", "zed")]
    joined = join(roster, entries)
    assert joined.matched == {0: entries[0]}
    assert joined.several == {1: [entries[1], entries[2]]}  # by name and by id: one student twice
    reasons = {e.source: why for e, why in joined.unmatched}
    assert reasons == {"sam_kim": "its name fits 2 students of the roster (Kim, Sam, Kim, Sam)",
                       "zed": "no student of the roster has its id or its name"}
    assert joined.missing == [2, 3, 4]


# -- the policies ------------------------------------------------------------------------------------

def test_the_bonus_is_capped_scaled_or_kept_per_lms():
    policy = make_policy(False, ["canvas=scale", "moodle=keep"], None, None, None, None)
    assert policy.scale("canvas", 100.0, 102.0).post(102.0) == 100.0
    assert policy.scale("canvas", 100.0, 102.0).post(51.0) == 50.0
    assert policy.scale("moodle", 100.0, 102.0).post(102.0) == 102.0
    assert Policy().scale("moodle", 100.0, 102.0).post(102.0) == 100.0  # Moodle's default: cap
    assert Policy().scale("canvas", 100.0, 102.0).post(102.0) == 102.0  # Canvas's: keep
    with pytest.raises(PolicyError, match="give LMS=POLICY"):
        make_policy(False, ["blackboard=cap"], None, None, None, None)


def test_a_total_is_posted_as_the_same_fraction_of_the_items_points():
    """Canvas's assignment of 40 points (its export's Points Possible row) and Moodle's of 10 (the
    worksheet's Maximum Grade): 90 of 100 is 36 and 9; the bonus stays above in Canvas and is
    capped in Moodle unless its maximum grade leaves room (--moodle-max above --lms-points)."""
    canvas = Policy().scale("canvas", 100.0, 102.0, 40.0, "the roster's Points Possible")
    moodle = Policy().scale("moodle", 100.0, 102.0, 10.0, "the worksheet's Maximum Grade")
    assert [canvas.post(t) for t in (90.0, 92.0, 82.0, 94.73, 102.0)] == [36.0, 36.8, 32.8, 37.89, 40.8]
    assert [moodle.post(t) for t in (90.0, 92.0, 82.0, 94.73, 102.0)] == [9.0, 9.2, 8.2, 9.473, 10.0]
    room = make_policy(False, [], 10.2, None, None, None, 10.0).scale("moodle", 100.0, 102.0, 10.2, "ws")
    assert (room.post(102.0), room.post(90.0), room.ceiling) == (10.2, 9.0, 10.2)
    assert "posted out of 40 points (the roster's Points Possible), each × 0.4" in canvas.sentence()
    assert "a grade above 10 is capped at 10" in moodle.sentence()
    alone = make_policy(False, [], None, None, None, None, 40.0).scale("canvas", 100.0, 102.0)
    assert (alone.post(90.0), alone.said) == (36.0, "--lms-points")
    with pytest.raises(PolicyError, match="--lms-points 50: the roster's Points Possible says 40"):
        make_policy(False, [], None, None, None, None, 50.0).scale("canvas", 100.0, 102.0, 40.0,
                                                                   "the roster's Points Possible")
    with pytest.raises(PolicyError, match="above the Moodle item's maximum grade 10"):
        make_policy(False, [], None, None, None, None, 20.0).scale("moodle", 100.0, 102.0, 10.0, "ws")


def test_late_days_count_a_day_begun_are_capped_and_an_unknown_time_is_one_day():
    late = Late(2.0, 3.0, datetime.fromisoformat("2026-11-30T12:00"))
    assert late.penalty(False, "2026-11-30T11:59") == (0.0, "handed in 2026-11-30T11:59, by the due time")
    assert late.penalty(False, "2026-11-30T12:01")[0] == 2.0
    assert late.penalty(False, "2026-12-02T12:01")[0] == 3.0  # 3 days: 6, capped at 3
    assert late.penalty(True, "")[1].endswith("counted as 1 day")
    with pytest.raises(PolicyError, match="--due"):
        make_policy(False, [], None, 1.0, None, "tomorrow")


# -- the pre-flight check ----------------------------------------------------------------------------

def canvas_files(rows: list[list[str]], header: list[str] | None = None) -> LmsFiles:
    table = Sheet(header or [*CANVAS_COLUMNS, "HW (1)"], [[CANVAS_POINTS, "", "", "", "", "100"], *rows],
                  ["", *[f"s{i}" for i in range(len(rows))]])
    return LmsFiles(tables={"grades-canvas.csv": table}, scales={"canvas": SCALES["canvas"]})


@pytest.mark.parametrize(("rows", "header", "said"), [
    ([["Ann", "12a", "", "", "", "5"]], None, "is not a Canvas user id"),
    ([["Ann", "1", "", "", "", "5"], ["Ann", "1", "", "", "", "6"]], None, "one student twice"),
    ([["Ann", "1", "", "", "", "five"]], None, "is not a number of 0 or more"),
    ([["'=Ann", "", "", "", "", "5"]], None, "no ID or SIS id"),
    ([["Ann", "", "", "", "", "5"]], None, "post the grade to the first student of the row's name"),
    ([["Points Possible Jr", "1", "", "", "", "5"]], None, "is read as that row"),
    ([["Ann", "1", "", "", "", "5"]], ["Name", "ID", "SIS User ID", "SIS Login ID", "Section", "HW"],
     "the header is not Student"),
])
def test_each_canvas_rule_refuses_a_file_that_breaks_it(rows, header, said):
    assert any(said in problem for problem in preflight.check(canvas_files(rows, header)))


def test_a_canvas_file_the_kit_writes_passes_and_a_points_row_is_required():
    assert preflight.check(canvas_files([["Ann", "1", "", "", "", "102"]])) == []  # extra credit: taken
    files = canvas_files([["Ann", "1", "", "", "", "5"]])
    files.tables["grades-canvas.csv"].rows.pop(0)
    assert any("Points Possible" in p for p in preflight.check(files))


def worksheet_files(rows: list[list[str]], header: list[str] | None = None) -> LmsFiles:
    header = header or ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)",
                        "Feedback comments", "late"]
    table = Sheet(header, rows, [f"s{i}" for i in range(len(rows))])
    return LmsFiles(tables={"grades-moodle-worksheet.csv": table}, scales={"moodle": SCALES["moodle"]})


@pytest.mark.parametrize(("row", "said"), [
    (["Participant 7", "Ann", "101", "100", WHEN, "", ""], "above the grade item's maximum"),
    (["Participant 7", "Ann", "-1", "100", WHEN, "", ""], "above the grade item's maximum"),
    (["7", "Ann", "5", "100", WHEN, "", ""], "is not 'Participant <id>'"),
    (["Participant 7", "Ann", "5", "100", "yesterday", "", ""], "not a time Moodle reads"),
    (["Participant 7", 'Ann \\"x', "5", "100", WHEN, "", ""], "escaped quote"),
])
def test_each_moodle_worksheet_rule_refuses_a_file_that_breaks_it(row, said):
    assert any(said in problem for problem in preflight.check(worksheet_files([row])))


def test_a_worksheet_without_moodles_own_column_names_is_refused():
    files = worksheet_files([["Participant 7", "5"]], header=["Identifier", "Points"])
    problems = preflight.check(files)
    assert any("no column 'Grade'" in p for p in problems)


def test_feedback_files_named_so_their_lms_cannot_find_the_student_are_refused():
    files = canvas_files([["Ann", "12345", "", "", "", "5"]])
    files.zips["feedback-canvas.zip"] = {"ann_12345_99999_feedback.html": "x"}
    files.canvas_files["12345"] = ["ann_12345_67890_dual.py"]
    assert any("Canvas would not find" in p for p in preflight.check(files))
    files = worksheet_files([["Participant 7", "Ann", "5", "100", "2026-12-01T09:00:00+00:00", "", ""]])
    files.zips["feedback-moodle.zip"] = {"Ann_7_assignfeedback_comments/feedback.html": "x",
                                         "Ann_8_assignsubmission_file/feedback.html": "x"}
    problems = preflight.check(files)
    assert any("is not named <full name>_<participant id>_assignsubmission_file" in p for p in problems)
    assert any("participant 8 has no row" in p for p in problems)


# -- formula injection -------------------------------------------------------------------------------

def cells_of(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as file:
        return [cell for row in csv.reader(file) for cell in row]


def test_names_a_spreadsheet_would_run_are_escaped_and_every_importer_still_finds_its_row(tmp_path):
    """OWASP's CSV injection advice: a cell starting with = + - @ tab or CR is written after a
    `'`. Names are only shown by the importers, which find a row by its id (Canvas's user id,
    Moodle's Identifier), so those rows still import; a row an importer would find by the name
    alone (Canvas, with no id) is left out with the reason, never written where it cannot match."""
    hostile = '=HYPERLINK("http://evil.example","x")'
    entries = [entry("=cmd|' /C calc'!A0", "cmd_C_calc_A0"),
               entry("-2-3", "-2-3"),
               entry(f"{hostile}_300021_*", "HYPERLINK_300021", lms="moodle", lms_id="300021",
                     lms_name=hostile),
               entry("@SUM(A1)_12345_*", "SUM_A1_12345", lms="canvas", lms_id="12345", lms_name="@sum",
                     lms_files=["sum_12345_67890_dual.py"])]
    reports.write_all(tmp_path, entries, GRADING)
    for name in ("grades.csv", "grades-canvas.csv", "grades-moodle.csv", "grades-moodle-worksheet.csv"):
        assert not [c for c in cells_of(tmp_path / name) if c.startswith(FORMULA)], name
    assert "'=HYPERLINK" in (tmp_path / "grades-moodle-worksheet.csv").read_text(encoding="utf-8")
    canvas = list(csv.reader(io.StringIO((tmp_path / "grades-canvas.csv").read_text(encoding="utf-8"))))
    assert [row[:2] for row in canvas[2:]] == [["SUM_A1_12345", "12345"]]
    summary = (tmp_path / "summary.html").read_text(encoding="utf-8")
    left = "<td>-2-3</td><td>not in grades-canvas.csv</td><td>no Canvas id"
    assert left in summary
    (tmp_path / "worksheet.csv").write_text(
        'Identifier,"Full name",Grade,"Maximum Grade"\n"Participant 300021",x,,100.00\n', encoding="utf-8")
    assert moodle_worksheet_import(tmp_path / "grades-moodle-worksheet.csv", tmp_path / "worksheet.csv") == \
        {"300021": 10.0}
    (tmp_path / "export.csv").write_text(
        'Student,ID,SIS User ID,SIS Login ID,Section,HW (1)\n    Points Possible,,,,,100\n'
        '"=""@sum""",12345,,,S1,\ncmd_C_calc_A0,777,,,S1,\nHYPERLINK_300021,778,,,S1,\n', encoding="utf-8")
    imported = canvas_import(tmp_path / "grades-canvas.csv", tmp_path / "export.csv")
    assert imported == {"12345": 10.0}
