"""What a bulk run hands out shows a submission's names as text, never as formulas, links or tags."""

import csv
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.config import load
from autograder.escape import csv_cell, markdown, printable
from autograder.staff import reports, summary
from autograder.staff.gradebook import Entry, Score
from autograder.staff.policies import Policy

GRADING = load()
# Names a submission controls: its entry in the class folder, the files in its zip, what it raised.
HOSTILE_SOURCE = "<img src=x onerror=alert(1)>[click](http://evil.example)`rm`\x1b[2J"
HOSTILE_NOTE = "value.py: taken from **hw**/<script>alert(1)</script>/[x](javascript:alert(1))/value.py"


def entry(status: str = "graded", **changes) -> Entry:
    fields = dict(source=HOSTILE_SOURCE, student="-2-3", format="zip", content_hash="0", grader_version="0",
                  graded_at="2026-12-01T09:00:00+00:00", seconds=1.0, status=status,
                  notes=[HOSTILE_NOTE, "# not a heading", "1. not a list"],
                  scores=[Score("value.mul", 5, 10, "test_x\nA value used twice: `x * x`.\n\nTo reproduce:\n"
                                "    x = Value(3.0)\n    y = x * x\n\nCame out: <b>3</b> `=` \x1b[31m",
                                ["overwrites-gradient"])])
    fields.update(changes)
    return Entry(**fields)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(text: str) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(text)
    return parser.tags


def test_printable_escapes_what_a_terminal_would_act_on():
    assert printable("ana\x1b[2J\r\nall 40 graded\x9b1m\u202eevil\udcff") == \
        "ana\\x1b[2J\\r\\nall 40 graded\\x9b1m\\u202eevil\\xff"
    assert printable("José [bold]x[/bold]") == "José [bold]x[/bold]"  # markup is the console's to ignore


@pytest.mark.parametrize(("cell", "shown"), [
    ("-2-3", "'-2-3"), ("=1+2", "'=1+2"), ("+1", "'+1"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"), ("ana", "ana"), ("a-2", "a-2"), ("José", "José")])
def test_a_csv_cell_a_spreadsheet_would_evaluate_is_quoted(cell, shown):
    assert csv_cell(cell) == shown


def test_grades_csv_quotes_a_formula_looking_id_and_the_gradebook_keeps_it(tmp_path):
    grades = {student: reports.grade_of(entry(student=student), GRADING) for student in ("-2-3", "ana")}
    reports.write_csv(tmp_path / "grades.csv", grades, {}, GRADING)
    with (tmp_path / "grades.csv").open(newline="") as file:
        students = [row["student"] for row in csv.DictReader(file)]
    assert students == ["'-2-3", "ana"]
    assert not list(tmp_path.glob("*.partial"))


def test_markdown_feedback_renders_names_as_text():
    mistune = pytest.importorskip("mistune")
    text = reports.feedback_markdown(entry(), GRADING)
    rendered = mistune.html(text)
    tags = {tag for tag, _ in tags_of(rendered)}
    assert tags <= {"h1", "h2", "p", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "pre", "code"}
    assert [tag for tag, _ in tags_of(rendered)].count("h2") == 2  # "Your files" and the part, no other
    assert "<img" not in rendered and "<script" not in rendered and "href" not in rendered
    assert "\x1b" not in text
    assert "A value used twice: `x * x`." in text  # the messages themselves are shown verbatim
    # Shown as it is, as text: its address in a code span, where no renderer makes a link.
    assert ("&lt;img src=x <code>onerror=alert(1)&gt;[click](http://evil.example)`rm`\\x1b[2J</code>"
            in rendered)


def test_html_feedback_renders_names_as_text_and_messages_with_code():
    text = reports.feedback_html(entry(), GRADING)
    assert {tag for tag, _ in tags_of(text)} <= {"html", "head", "meta", "title", "style", "body", "h1", "h2",
                                                  "p", "ul", "li", "table", "tr", "th", "td", "pre", "code",
                                                  "div", "br", "b"}
    assert "\x1b" not in text and "<img" not in text and "<script" not in text
    assert "A value used twice: <code>x * x</code>." in text
    assert "<pre><code>x = Value(3.0)\ny = x * x</code></pre>" in text
    assert "Came out: &lt;b&gt;3&lt;/b&gt; <code>=</code> \\x1b[31m" in text


def test_feedback_of_a_submission_that_could_not_be_graded_says_why_once():
    failed = entry("failed", reason="value.py: <b>not</b> a readable zip", scores=[
        Score(part, 0.0, part_info.points, "value.py: <b>not</b> a readable zip")
        for part, part_info in GRADING.parts.items()])
    md = reports.feedback_markdown(failed, GRADING)
    page = reports.feedback_html(failed, GRADING)
    assert md.count("could not be graded") == 1 and "```" not in md
    assert "`value.py:` \\<b\\>not\\</b\\> a readable zip" in md
    assert "value.py: &lt;b&gt;not&lt;/b&gt; a readable zip" in page
    # No score table: a held-back submission has no score, not a row of zeros.
    assert "| part |" not in md and "total" not in md and " / " not in md
    assert "<table" not in page and "total" not in page
    assert "hand in `value.py,` `tensor.py` and `dual.py` again" in md  # names as code spans
    faulted = reports.feedback_markdown(entry("failed", reason="the machine was too busy", fault=True,
                                              scores=failed.scores), GRADING)
    assert "the course grades it again" in faulted and "hand in" not in faulted


def test_html_feedback_wraps_where_the_browser_does_and_keeps_lines_that_end():
    import textwrap

    sentence = ("The run follows the reference's for 1 step, and departs in step 2. The losses before it "
                "agree, so the forward values are right, and the update after the last of them differs.")
    docstring = "The scalar engine trains a 2-8-8-1 ReLU network on 30 moons: 5 full-batch\nsteps, lr 1.0."
    messages = (f"test_a_network_on_moons\n{docstring}\n\nTo reproduce:\n    import sys\n\n"
                f"Came out: x.grad = 9.0\nExpected: x.grad = 18.0\n{textwrap.fill(sentence, 88)}")
    text = reports.message_html(messages)
    assert "test_a_network_on_moons<br>" in text  # a line of its own
    assert "30 moons: 5 full-batch steps, lr 1.0." in text  # a docstring's wrap, joined
    assert "Came out: x.grad = 9.0<br>\nExpected: x.grad = 18.0<br>" in text
    assert sentence.replace("'", "&#x27;") in text  # a filled sentence is one line for the browser
    assert "<pre><code>import sys</code></pre>" in text


def test_markdown_escapes_lists_and_headings_only_where_a_line_starts():
    assert markdown("1. a", starts_line=True) == "1\\. a"
    assert markdown("- a", starts_line=True) == "\\- a"
    assert markdown("7.78 / 10") == "7.78 / 10"
    assert markdown("__init__ [x](y)") == "\\_\\_init\\_\\_ \\[x\\](y)"


def test_the_summary_links_each_student_and_escapes_what_they_named(tmp_path):
    entries = [entry(), entry(source="x\n<b>", student="José", status="failed", reason="<i>gone</i>")]
    reports.write_all(tmp_path, entries, GRADING)
    summary = (tmp_path / "summary.html").read_text()
    links = [attrs["href"] for tag, attrs in tags_of(summary) if tag == "a"]
    assert "feedback/-2-3.html" in links and "feedback/Jos%C3%A9.html" in links
    assert (tmp_path / "feedback" / "José.html").is_file()
    assert "<b>" not in summary and "<i>" not in summary and "&lt;i&gt;gone&lt;/i&gt;" in summary
    assert sorted(p.name for p in tmp_path.iterdir()) == [  # no feedback zip: no LMS student
        "failures.jsonl", "feedback", "grades-canvas.csv", "grades-moodle-worksheet.csv", "grades-moodle.csv",
        "grades.csv", "summary.html"]
    assert "assigned with <code>=</code> instead of accumulated with <code>+=</code>" in summary


def test_plots_that_count_students_have_whole_number_ticks():
    pytest.importorskip("matplotlib")
    plots = summary.figures([40.0, 72.5, 102.0], 100.0, {"value.mul": 2 / 3, "dual": 1.0},
                            [("overwrites-gradient", 2), ("tanh-overflow", 1)])
    histogram, misconceptions = plots["totals"].axes[0], plots["misconceptions"].axes[0]
    assert histogram.get_ylabel() == misconceptions.get_xlabel() == "students"
    for axis in (histogram.yaxis, misconceptions.xaxis):
        ticks = axis.get_ticklocs()
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
    for figure in plots.values():
        assert summary.png(figure).startswith(b"\x89PNG")


def test_an_old_outdir_loses_its_separate_plot_files(tmp_path):
    for name in summary.OLD_PLOTS:
        (tmp_path / name).write_bytes(b"\x89PNG old")
    (tmp_path / "feedback").mkdir()
    (tmp_path / "feedback" / "gone.md").write_text("a student no longer in the class")
    reports.write_all(tmp_path, [entry(student="ana")], GRADING)
    assert not list(tmp_path.glob("*.png"))
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == ["ana.html", "ana.md"]
    assert Path(tmp_path / "summary.html").read_text().count("data:image/png;base64,") == 3


# -- the summary and the feedback, as a reader sees them ---------------------------------------------

def test_histogram_bars_stay_apart_where_full_bins_meet():
    """Three neighbouring bins of two students each are three bars, with a gap between them."""
    pytest.importorskip("matplotlib")
    plots = summary.figures([55.0, 56.0, 70.0, 71.0, 90.0, 91.0], 100.0, {"dual": 1.0}, [])
    bars = sorted((p for p in plots["totals"].axes[0].patches if p.get_height() > 0), key=lambda p: p.get_x())
    assert [bar.get_height() for bar in bars] == [2, 2, 2]
    for left, right in zip(bars, bars[1:]):
        assert left.get_x() + left.get_width() < right.get_x()


def test_a_part_whose_file_never_imported_is_not_passed_whatever_it_is_worth(tmp_path):
    """value.given is worth 0 points, so every submission has its full points; only one whose
    checks all passed counts as passing it. One that could not be graded is held back, with no
    grade in grades.csv, so the rates count the other two; with --zeros it counts as 0."""
    given = GRADING.parts["value.given"]
    assert given.points == 0
    ok = entry(student="ana", source="ana", scores=[Score("value.given", 0.0, 0.0, "")])
    missing = entry(student="ben", source="ben", scores=[
        Score("value.given", 0.0, 0.0, "value.py is missing from the submission")])
    unreadable = entry("failed", student="cy", source="cy.zip", reason="cy.zip: not a readable zip file")
    reports.write_all(tmp_path, [ok, missing, unreadable], GRADING)
    summary = (tmp_path / "summary.html").read_text()
    assert f"<td>value.given</td><td>{given.title}</td><td class='n'>50%</td>" in summary
    reports.write_all(tmp_path, [ok, missing, unreadable], GRADING, policy=Policy(zeros=True))
    summary = (tmp_path / "summary.html").read_text()
    assert f"<td>value.given</td><td>{given.title}</td><td class='n'>33%</td>" in summary
    assert "The given operations of Value, unchanged (0 / 0)" in (tmp_path / "feedback" / "ben.md").read_text(
        encoding="utf-8")


def test_html_feedback_keeps_a_snippet_with_a_blank_line_as_one_block():
    messages = ("A loop of three steps.\n\nTo reproduce:\n    w = Value(1.0)\n    for step in range(3):\n"
                "        loss = w * w\n\n    print(w.data, w.grad)\n\nCame out: w = 0.5")
    text = reports.message_html(messages)
    assert text.count("<pre>") == 1
    assert ("<pre><code>w = Value(1.0)\nfor step in range(3):\n    loss = w * w\n\nprint(w.data, w.grad)"
            "</code></pre>") in text
    assert "<p>Came out: w = 0.5</p>" in text


def test_a_grade_of_record_replaces_the_kits_only_where_it_holds_the_submission(tmp_path):
    """nbgrader's grades (by source) go into grades.csv with the late penalty; a submission it
    holds no grade for keeps the kit's."""
    ana = entry(student="ana", source="submitted/ana", scores=[Score("value.mul", 5.0, 10.0, "lost")])
    ben = entry(student="ben", source="submitted/ben", scores=[Score("value.mul", 6.0, 10.0, "lost")])
    other = next(part for part, settings in GRADING.parts.items()  # another part worth 10
                 if settings.points == 10 and part != "value.mul")
    record = {"submitted/ana": ({"value.mul": 9.5, other: 10.0}, 3.0)}
    reports.write_all(tmp_path, [ana, ben], GRADING, record=record)
    with (tmp_path / "grades.csv").open(newline="") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    columns = ("value.mul", other, "late penalty", "total")
    assert [rows["ana"][column] for column in columns] == ["9.5", "10", "3", "16.5"]
    assert [rows["ben"][column] for column in columns] == ["6", "0", "0", "6"]


def test_the_summary_says_how_much_of_the_grading_time_went_to_timeouts(tmp_path):
    timed_out = Score("value.backward", 0, 16, "Came out: timed out after 0.10 s of CPU time; the reference "
                      "takes 0.000 s (limit 0.10 s)\nCame out: not run: this part's scenarios that timed out "
                      "took 0.10 s", [])
    training = Score("value.training", 0, 10, "Came out: timed out after 0.80 s of CPU time", [])
    entries = [entry(source="a", student="a", seconds=1.5, scores=[timed_out, training]),
               entry(source="b", student="b", seconds=0.5), entry(source="c", student="c", seconds=0.5)]
    reports.write_all(tmp_path, entries, GRADING)
    summary = (tmp_path / "summary.html").read_text()
    assert ("Grading took 2.5 s, each submission's time added up; 1.5 s of it (60%) went to the 1 submission "
            "with a check that timed out (a hang, or code far slower than the reference), whose checks that "
            "timed out had 0.9 s of CPU time.") in summary
    reports.write_all(tmp_path, entries[1:], GRADING)
    assert "timed out" not in (tmp_path / "summary.html").read_text()
