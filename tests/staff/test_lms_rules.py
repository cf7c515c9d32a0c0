"""The rules the LMS files are held to, without grading: the roster's join, the bonus and late
policies, each rule of the pre-flight check, and names a spreadsheet would run as formulas."""

import csv
import io
import re
import time
from datetime import datetime
from pathlib import Path

import pytest
from support import KIT
from support.lms import (
    MOODLE_STRINGS,
    canvas_import,
    moodle_gradebook_import,
    moodle_worksheet_import,
    moodle_worksheet_upload,
)

from autograder.config import load
from autograder.staff import preflight, reports
from autograder.staff.gradebook import Entry, Score
from autograder.staff.lmsfiles import CANVAS_COLUMNS, CANVAS_POINTS, LmsFiles, Sheet
from autograder.staff.policies import Late, Policy, PolicyError, make_policy
from autograder.staff.roster import Person, Roster, RosterError, assignment_column, join, read_roster

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
    room = make_policy(False, [], 10.2, None, None, None, ["moodle=10"]).scale("moodle", 100, 102, 10.2, "ws")
    assert (room.post(102.0), room.post(90.0), room.ceiling) == (10.2, 9.0, 10.2)
    assert "posted out of 40 points (the roster's Points Possible), each × 0.4" in canvas.sentence()
    assert "a grade above 10 is capped at 10" in moodle.sentence()
    both = make_policy(False, [], None, None, None, None, ["canvas=40", "moodle=10"])
    assert (both.scale("canvas", 100.0, 102.0).post(90.0), both.scale("canvas", 100.0, 102.0).said) == \
        (36.0, "--lms-points")
    assert both.scale("moodle", 100.0, 102.0).post(90.0) == 9.0
    assert make_policy(False, [], None, None, None, None, ["40"]).scale("moodle", 100, 102).post(102) == 40.0
    with pytest.raises(PolicyError, match="--lms-points 'blackboard=4'"):
        make_policy(False, [], None, None, None, None, ["blackboard=4"])
    with pytest.raises(PolicyError, match="--lms-points 50: the roster's Points Possible says 40"):
        make_policy(False, [], None, None, None, None, ["50"]).scale("canvas", 100.0, 102.0, 40.0,
                                                                   "the roster's Points Possible")
    with pytest.raises(PolicyError, match="above the Moodle item's maximum grade 10"):
        make_policy(False, [], None, None, None, None, ["20"]).scale("moodle", 100.0, 102.0, 10.0, "ws")


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


@pytest.mark.engine("dual")  # its entries score the dual part, 10 of the kit's 102 points
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


# -- a class posted on the LMS item's scale, to the right person, as each importer reads it ----------

def totalled(source: str, student: str, total: float, **changes) -> Entry:
    """An entry whose parts add up to `total` (of the kit's 100, the bonus above)."""
    scores, short = [], sum(part.points for part in GRADING.parts.values()) - total
    for part in sorted(GRADING.parts.values(), key=lambda p: -p.points):
        lost = min(short, part.points)
        short -= lost
        scores.append(Score(part.id, part.points - lost, part.points, "lost" if lost else ""))
    return entry(source, student, scores=scores, **changes)


def summary_rows(out: Path) -> dict[str, int]:
    """What summary.html says of each LMS file: its rows."""
    text = (out / "summary.html").read_text(encoding="utf-8")
    return {name: int(count) for name, count in re.findall(r"<p>(grades-[\w-]+\.csv): (\d+) rows?,", text)}


def data_rows(path: Path, skip: int = 1) -> int:
    return len(list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))) - skip


@pytest.mark.engine("dual")  # its entries score the dual part, 10 of the kit's 102 points
def test_a_canvas_assignment_of_40_points_gets_each_total_scaled_and_the_bonus_kept(tmp_path):
    """Canvas's export in a comma-decimal locale (`;`, `40,00`), three assignments, a test student,
    a student with no submission, and two students of one name: each grade goes to its own id."""
    export = DATA / "canvas" / "grades-export-semicolon.csv"
    roster = read_roster(export)
    column = assignment_column(roster, "Homework 3: autograd engines")
    assert column == "Homework 3: autograd engines (4821)"
    with pytest.raises(RosterError, match=r"'Autograd engines': no assignment column .*'Quiz 1 \(4822\)'; "
                                          r"'Homework 3: autograd engines \(4821\)'; 'Homework 4"):
        assignment_column(roster, reports.LMS_COLUMN)
    entries = [totalled(f"kim{n}_{uid}_*", f"kim{n}_{uid}", total, lms="canvas", lms_id=uid,
                        lms_files=[f"kimsam_{uid}_7{n}_dual.py"])
               for n, (uid, total) in enumerate((("40102", 90.0), ("40103", 82.0)))]
    entries.append(totalled("lovelaceada_40101_*", "lovelaceada_40101", 102.0, lms="canvas", lms_id="40101",
                            lms_files=["lovelaceada_40101_79_dual.py"]))
    outcome = reports.write_all(tmp_path, entries, GRADING, column, policy=Policy(), roster=roster)
    assert canvas_import(tmp_path / "grades-canvas.csv", export) == {"40102": 36.0, "40103": 32.8,
                                                                     "40101": 40.8}
    assert outcome.files.tables["grades-canvas.csv"].rows[0][-1] == "40"  # the Points Possible row
    said = "Canvas: totals out of 100 are posted out of 40 points (the roster's Points Possible of " \
           "'Homework 3: autograd engines (4821)'), each × 0.4; the bonus is kept above 40"
    assert said in outcome.scale[0]
    assert said.replace("'", "&#x27;") in (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert summary_rows(tmp_path) == {"grades-canvas.csv": data_rows(tmp_path / "grades-canvas.csv", 2)} \
        == {"grades-canvas.csv": 3}


def test_two_students_of_one_name_and_no_id_would_meet_one_row_so_the_kit_writes_none(tmp_path):
    """GradebookImporter finds a row with no id by the name, as the first student of that name."""
    export = DATA / "canvas" / "grades-export-semicolon.csv"
    (tmp_path / "named.csv").write_text(f"{','.join(CANVAS_COLUMNS)},HW (4821)\n{CANVAS_POINTS},,,,,40\n"
                                        '"Kim, Sam",,,,,30\n', encoding="utf-8")
    assert canvas_import(tmp_path / "named.csv", export) == {"40102": 30.0}  # the first Sam Kim, always
    problems = preflight.canvas(Sheet([*CANVAS_COLUMNS, "HW (4821)"], [[CANVAS_POINTS, "", "", "", "", "40"],
                                                                       ["Kim, Sam", "", "", "", "", "30"]],
                                      ["", "kim"]))
    assert problems == ["line 3 (kim): no ID or SIS id, so Canvas would post the grade to the first "
                        "student of the row's name"]


@pytest.mark.engine("dual")  # its entries score the dual part, 10 of the kit's 102 points
def test_a_french_moodle_worksheet_of_10_points_is_written_in_french_and_capped(tmp_path):
    """The worksheet in the roster's language (its header and its participant prefix, which
    Moodle strips by the length of its own string): read by French strings, each grade on the
    item's 10 points, the bonus capped; the English file would be refused under French."""
    worksheet = DATA / "moodle" / "grading-worksheet-fr.csv"
    roster = read_roster(worksheet)
    assert (roster.maximum, roster.worksheet.prefix) == (10.0, "Participant")
    entries = [totalled("Marie Curie_300031_*", "Marie_Curie_300031", 92.0, lms="moodle", lms_id="300031",
                        lms_name="Marie Curie"),
               totalled("Henri Poincaré_300032_*", "Henri_Poincare_300032", 102.0, lms="moodle",
                        lms_id="300032", lms_name="Henri Poincaré")]
    outcome = reports.write_all(tmp_path, entries, GRADING, policy=Policy(), roster=roster)
    written = tmp_path / "grades-moodle-worksheet.csv"
    header = next(csv.reader(io.StringIO(written.read_text(encoding="utf-8"))))
    assert header[:5] == ["Identifiant", "Nom complet", "Note", "Note maximale",
                          "Dernière modification (note)"]
    participants = {person.lms_id for person in roster.people}
    after = moodle_worksheet_upload(written, MOODLE_STRINGS["fr"], participants, 10.0, {}, 0.0)
    assert {p: grade for p, (grade, _) in after.items()} == {"300031": 9.2, "300032": 10.0}
    rows = list(csv.reader(io.StringIO(written.read_text(encoding="utf-8"))))
    assert "Autograder: 92 / 100 (9.2 / 10 in this assignment)." in rows[1][header.index("Feedback comments")]
    assert "a grade above 10 is capped at 10 (the default" in outcome.scale[0]
    assert summary_rows(tmp_path)["grades-moodle-worksheet.csv"] == data_rows(written) == 2
    (tmp_path / "en").mkdir()
    reports.write_all(tmp_path / "en", entries, GRADING)  # no roster: English
    with pytest.raises(AssertionError, match="invalidgradeimport"):
        moodle_worksheet_upload(tmp_path / "en" / "grades-moodle-worksheet.csv", MOODLE_STRINGS["fr"],
                                participants, 10.0, {}, 0.0)


@pytest.mark.engine("dual")  # its entries score the dual part, 10 of the kit's 102 points
def test_a_worksheet_uploaded_then_regraded_and_uploaded_again_changes_the_grades(tmp_path):
    """Moodle skips a row whose grade it changed more than a minute after the row's Last modified
    (grade): the time is when the file is written, never when the submission was graded."""
    roster = read_roster(DATA / "moodle" / "grading-worksheet.csv")
    graded = [totalled("Grace Hopper_300021_*", "Grace_Hopper_300021", 90.0, lms="moodle", lms_id="300021",
                       lms_name="Grace Hopper", late=True)]
    participants = {person.lms_id for person in roster.people}
    first = tmp_path / "first"
    first.mkdir()
    reports.write_all(first, graded, GRADING, policy=Policy(), roster=roster)
    uploaded = time.time() + 1  # the TA uploads the file after it is written
    moodle = moodle_worksheet_upload(first / "grades-moodle-worksheet.csv", MOODLE_STRINGS["en"],
                                     participants, 100.0, {}, uploaded)
    assert moodle == {"300021": (90.0, uploaded)}
    again = tmp_path / "again"
    again.mkdir()
    late = make_policy(False, [], None, 5.0, None, None)  # a late policy, after the first upload
    reports.write_all(again, graded, GRADING, policy=late, roster=roster)
    later = moodle_worksheet_upload(again / "grades-moodle-worksheet.csv", MOODLE_STRINGS["en"], participants,
                                    100.0, moodle, uploaded + 1)
    assert later == {"300021": (85.0, uploaded + 1)}


def test_every_moodle_gradebook_row_names_its_own_student_where_an_id_number_is_missing(tmp_path):
    """Moodle's grade export with a student who has no ID number (and a comma-decimal grade of
    another item): mapped by ID number, the kit's file would post that row to the student above,
    so it is written without the ID number column; every row is found by its email address."""
    export = DATA / "moodle" / "gradebook-export-gap.csv"
    roster = read_roster(export)
    users = [{"useremail": p.email, "useridnumber": p.id_number} for p in roster.people]
    entries = [totalled("s2024001", "s2024001", 90.0), totalled("edijkstra", "edijkstra", 82.0),
               totalled("s2024003", "s2024003", 70.0)]
    reports.write_all(tmp_path, entries, GRADING, "Autograd engines", policy=Policy(), roster=roster)
    written = tmp_path / "grades-moodle.csv"
    assert next(csv.reader(io.StringIO(written.read_text(encoding="utf-8"))))[:2] == ["Email address",
                                                                                      "Autograd engines"]
    assert moodle_gradebook_import(written, users, "Email address", "useremail", "Autograd engines") == {
        "alovelace@example.edu": 90.0, "edijkstra@example.edu": 82.0, "ghopper@example.edu": 70.0}
    assert summary_rows(tmp_path)["grades-moodle.csv"] == data_rows(written) == 3
    gap = Sheet(["Email address", "ID number", "Autograd engines", "late"],
                [["alovelace@example.edu", "s2024001", "90", ""], ["edijkstra@example.edu", "", "82", ""]],
                ["s2024001", "edijkstra"])
    (tmp_path / "gap.csv").write_text(reports.rows_csv(gap.header, gap.rows), encoding="utf-8")
    assert moodle_gradebook_import(tmp_path / "gap.csv", users, "ID number", "useridnumber",
                                   "Autograd engines") == {"s2024001": 82.0}  # Dijkstra's grade, on Lovelace
    assert preflight.gradebook(gap, 100.0) == [
        "line 3 (edijkstra): no ID number; mapped by it, Moodle posts this row's grade to the user of line 2"]
