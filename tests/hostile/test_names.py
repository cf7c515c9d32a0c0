"""Hostile names: what a student controls (the names of their files, folders and zip members, the
name Canvas writes for them, the size a zip claims) reaches intake and the outputs as text alone.

No name makes a link, an image or a heading in a feedback file, whichever renderer a TA or a
student opens it with; no Canvas name takes another student's id; every zip member passed over
is named, with the reason; and a zip whose listing alone would take the grader's memory is
refused from its end record, before it is listed.
"""

from __future__ import annotations

import struct
import time
import tracemalloc
import unicodedata
import zipfile
from pathlib import Path

import cmarkgfm
import pytest
from markdown_it import MarkdownIt
from staff.test_intake import zipped
from support import KIT
from support.shape import reference

from autograder import intake
from autograder.config import load
from autograder.escape import markdown
from autograder.intake.lms import CANVAS_FILE
from autograder.staff import reports, summary
from autograder.staff.cli import main
from autograder.staff.gradebook import Entry, Score
from autograder.staff.roster import join, read_roster

VALUE = (KIT / "solutions" / "value.py").read_text(encoding="utf-8")
DUAL = reference("dual")
GRADING = load()
LINKIFY = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table", "strikethrough"])
# Headings the kit writes itself: the title, then a section per subject.
KIT_HEADINGS = ("# Feedback for ", "## ")


def made_by_the_submission(text: str) -> list[str]:
    """Every link, image, tag or heading that a linkifying CommonMark renderer (markdown-it with
    linkify, as editors' previews use) or GitHub's (cmark-gfm with its autolinks) makes of the
    Markdown `text` and the kit did not write: each as the source line it came from."""
    lines = text.splitlines()
    found = []
    tokens = LINKIFY.parse(text)
    headings = 0
    for token in tokens:
        where = lines[token.map[0]] if token.map else "?"
        if token.type == "heading_open":
            headings += 1
            if not where.startswith(KIT_HEADINGS) or token.markup not in ("#", "##"):
                found.append(f"heading: {where}")
        if token.type == "html_block":
            found.append(f"html: {where}")
        for child in token.children or []:
            if child.type in ("link_open", "image", "html_inline"):
                found.append(f"{child.type}: {where}")
    github = cmarkgfm.github_flavored_markdown_to_html(text)
    for tag in ("<a ", "<img", "<script", "<iframe"):
        if tag in github:
            found.append(f"GitHub {tag.strip()}: {github[github.index(tag):][:120]}")
    if sum(github.count(f"<h{level}") for level in range(1, 7)) != headings:
        found.append("GitHub's headings are not markdown-it's")
    return found


def hostile_class(folder: Path) -> Path:
    """A class whose every name, zip member and Canvas name holds an address, a mail address or
    Markdown: links, images, headings, code, tables."""
    (folder / "www.evil.com.zip").write_bytes(zipped({"www.evil.com/Value.py": VALUE,
                                                       "https://evil.com/x/dual.py": DUAL,
                                                       "# Total 102.txt": "102",
                                                       "[click](https://evil.com).md": "x"}))
    for name in ("me@evil.com", "[click](evil.com)", "![img](evil.com)", "`www.evil.com`", "a|www.evil.com|b",
                 "- www.evil.com", "=== ", "<https:evil.com>", "mailto:me@evil.com", "evil.com",
                 "## Total 102", "**bold** _it_ ~~x~~"):
        (folder / name).mkdir()
        (folder / name / "value.py").write_text(VALUE, encoding="utf-8")
    (folder / "me@evil.com" / "www.evil.com.py").write_text(DUAL, encoding="utf-8")
    (folder / "evil_5555_200_www.evil.com.py").write_text(VALUE, encoding="utf-8")
    (folder / "good_5556_201_value.py").write_text(VALUE, encoding="utf-8")
    return folder


def entry_of(submission: intake.Submission, failed: bool = False) -> Entry:
    """The gradebook's entry for a submission, with a lost point whose message quotes its names."""
    message = f"Came out: {submission.source} from www.evil.com/x and me@evil.com\n[x](https://evil.com)"
    return Entry(source=submission.source, student=submission.student, format=submission.format,
                 content_hash="0", grader_version="0", graded_at="2026-12-01T09:00:00+00:00", seconds=1.0,
                 status="failed" if failed else "graded",
                 reason=f"could not be graded: {submission.source} at https://evil.com" if failed else "",
                 notes=submission.notes, lms=submission.lms, lms_id=submission.lms_id,
                 lms_name=submission.lms_name,
                 scores=[Score("value.mul", 5, 10, message, ["overwrites-gradient"])])


@pytest.mark.engine("dual")  # its names are those of dual.py files
def test_no_name_in_a_feedback_file_becomes_a_link_an_image_or_a_heading(tmp_path):
    submissions = intake.collect(hostile_class(tmp_path))
    assert len(submissions) == 15
    notes = " ".join(note for s in submissions for note in s.notes)
    assert "taken from www.evil.com/Value.py" in notes and "taken from www.evil.com.py" in notes
    for submission in submissions:
        for failed in (False, True):
            text = reports.feedback_markdown(entry_of(submission, failed), GRADING)
            assert made_by_the_submission(text) == [], submission.source
            # Every name is still there, to be read: the rendered text holds it as it is.
            shown = cmarkgfm.github_flavored_markdown_to_html(text)
            assert all(ch in shown for ch in submission.source if ch.isalnum())


@pytest.mark.engine("dual")  # its names are those of dual.py files
@pytest.mark.slow  # grades a class of three
def test_the_feedback_files_of_a_graded_class_render_with_no_link_of_a_names_making(tmp_path):
    """`autograder bulk` end to end: every feedback/*.md of a class whose names hold addresses."""
    klass = tmp_path / "class"
    klass.mkdir()
    members = {"www.evil.com/Value.py": VALUE, "# Total 102.txt": "102"}
    (klass / "www.evil.com.zip").write_bytes(zipped(members))
    (klass / "me@evil.com").mkdir()
    (klass / "me@evil.com" / "https:evil.com.py").write_text(DUAL, encoding="utf-8")
    (klass / "evil_5555_200_www.evil.com.py").write_text(VALUE, encoding="utf-8")
    (klass / "victim_4242_100_dual.py").write_text(DUAL, encoding="utf-8")
    (klass / "yx_4242_1_5556_201_dual.py").write_text(DUAL, encoding="utf-8")
    assert main(["bulk", str(klass), "-o", str(tmp_path / "out")]) == 0
    feedback = sorted((tmp_path / "out" / "feedback").glob("*.md"))
    assert len(feedback) == 5
    for path in feedback:
        text = path.read_text(encoding="utf-8")
        assert made_by_the_submission(text) == [], path.name
    # Canvas's re-upload takes a name's first two numbers for the user and the file: none is the name's.
    with zipfile.ZipFile(tmp_path / "out" / "feedback-canvas.zip") as archive:
        assert sorted(archive.namelist()) == ["evil_5555_200_feedback.html", "victim_4242_100_feedback.html",
                                              "yx_5556_201_feedback.html"]
    page = (tmp_path / "out" / "summary.html").read_text(encoding="utf-8")
    assert "Files not read from zips" in page and "# Total 102.txt (not a .py file" in page


@pytest.mark.parametrize("text", [
    "www.evil.com", "https://evil.com/a_b_c", "me@evil.com", "mailto:me@evil.com", "evil.com", "//evil.com",
    "x`www.evil.com`y", "``https://evil.com``", "a|https://evil.com|b", "[a](https://evil.com)",
    "![a](https://evil.com/a.png)", "<https://evil.com>", "<a href='https://evil.com'>x</a>",
    "# heading", "- www.evil.com", "=== www.evil.com", "1. evil.com", "javascript:alert(1)", "ftp:/x",
    "value.py: taken from www.evil.com/Value.py",
])
def test_each_text_a_submission_controls_renders_as_text(text):
    """One line, alone, at the start of a line, in a list item and in a table's cell."""
    for document in (markdown(text, starts_line=True), f"- {markdown(text, starts_line=True)}",
                     f"## Part\n\n| a | b |\n| --- | --- |\n| {markdown(text)} | x |"):
        assert made_by_the_submission(document) == [], document
    cell = LINKIFY.render(f"| a | b |\n| --- | --- |\n| {markdown(text)} | x |")
    assert cell.count("<td>") == 2  # a `|` of the text ends no cell


def test_a_score_table_and_sentences_stay_plain_text():
    """Words that hold no address keep their look: numbers, sentences, the kit's own punctuation."""
    assert markdown("94.73") == "94.73"
    assert markdown("ask for a new copy, then run it again.") == "ask for a new copy, then run it again."
    assert markdown("value.py: not found") == "`value.py:` not found"
    assert markdown("graded 2026-12-01T09:00:00+00:00, 8 / 10") == "graded 2026-12-01T09:00:00+00:00, 8 / 10"


# -- Canvas names --------------------------------------------------------------------------------

def canvas_class(folder: Path, names: dict[str, str], zip_name: str = "") -> Path:
    """Files named as Canvas names them: loose in the class folder, in a folder of it (a name
    ending in `/`), or in Canvas's zip (rubyzip's UTF-8 names, with no UTF-8 flag)."""
    if not zip_name.endswith(".zip"):
        (folder / zip_name).mkdir(exist_ok=True)
        for name, text in names.items():
            (folder / zip_name / name).write_text(text, encoding="utf-8")
        return folder

    class Unflagged(zipfile.ZipInfo):
        def _encodeFilenameFlags(self):  # noqa: N802 - zipfile's own name
            return self.filename.encode("utf-8"), self.flag_bits & ~0x800

    with zipfile.ZipFile(folder / zip_name, "w") as archive:
        for name, text in names.items():
            archive.writestr(Unflagged(name, (2026, 12, 1, 9, 0, 0)), text)
    return folder


def students(folder: Path) -> dict[str, tuple[str, str, list[str]]]:
    return {s.source: (s.lms_id, s.lms_name, sorted(s.files)) for s in intake.collect(folder)}


@pytest.mark.engine("dual")  # its names are those of dual.py files
@pytest.mark.parametrize("zip_name", ["", "download/", "CS101-hw3 submissions.zip", "download.zip"])
def test_a_name_that_holds_another_students_id_takes_nothing_of_theirs(tmp_path, zip_name):
    """Canvas keeps the `_` and digits of a sortable name: `yx_4242_1` writes
    `yx_4242_1_5555_200_value.py`, read from the right as user 5555. A class of the two alone is
    a Canvas class of two, zipped or not, whatever the zip's name."""
    canvas_class(tmp_path, {"victim_4242_100_value.py": VALUE, "yx_4242_1_5555_200_dual.py": DUAL}, zip_name)
    assert students(tmp_path) == {"victim_4242_*": ("4242", "victim", ["value"]),
                                  "yx_4242_1_5555_*": ("5555", "yx_4242_1", ["dual"])}


@pytest.mark.parametrize("zip_name", ["", "download/", "download.zip"])
def test_two_names_that_hold_each_others_ids_are_a_class_of_two(tmp_path, zip_name):
    names = {"ann_5555_4242_100_value.py": VALUE, "bob_4242_5555_200_value.py": VALUE}
    canvas_class(tmp_path, names, zip_name)
    assert students(tmp_path) == {"ann_5555_4242_*": ("4242", "ann_5555", ["value"]),
                                  "bob_4242_5555_*": ("5555", "bob_4242", ["value"])}


@pytest.mark.engine("dual")  # its names are those of dual.py files
def test_a_name_shaped_like_an_anonymous_one_is_read_as_a_name(tmp_path):
    """`anon_4242` is a name a student may have: only Canvas writes an anonymous id of letters,
    or its own `LATE_` before one."""
    canvas_class(tmp_path, {"victim_4242_100_value.py": VALUE, "anon_4242_5555_200_value.py": VALUE,
                            "anon_Xy7Qz_300_dual.py": DUAL, "LATE_anon_48213_301_dual.py": DUAL})
    assert students(tmp_path) == {"victim_4242_*": ("4242", "victim", ["value"]),
                                  "anon_4242_5555_*": ("5555", "anon_4242", ["value"]),
                                  "anon_Xy7Qz_*": ("Xy7Qz", "anon", ["dual"]),
                                  "anon_48213_*": ("48213", "anon", ["dual"])}


@pytest.mark.engine("dual")  # its names are those of dual.py files
def test_with_a_roster_each_of_the_two_is_joined_to_themself(tmp_path):
    """Canvas's Grades export names both by their user ids: the victim is joined to the victim's
    entry, the student whose name holds the victim's id to their own, and neither is held back."""
    canvas_class(tmp_path, {"victim_4242_100_value.py": VALUE, "yx_4242_1_5555_200_dual.py": DUAL}, "class/")
    export = tmp_path / "export.csv"
    export.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Autograd engines (77)\n"
                      "    Points Possible,,,,,100\n"
                      "\"Victim, Vera\",4242,,,,\n\"Yx_4242, 1\",5555,,,,\n", encoding="utf-8")
    roster = read_roster(export)
    found = join(roster, [entry_of(s) for s in intake.collect(tmp_path / "class")])
    assert {roster.people[i].name: entry.source for i, entry in found.matched.items()} == {
        "Victim, Vera": "victim_4242_*", "Yx_4242, 1": "yx_4242_1_5555_*"}
    assert (found.several, found.unmatched, found.missing) == ({}, [], [])


@pytest.mark.parametrize("zip_name", ["", "download/", "download.zip"])
def test_a_class_of_two_whose_names_read_as_one_id_is_a_canvas_class_of_two(tmp_path, zip_name):
    """The folder or zip is a Canvas download by its files' shape, not by its ids being distinct."""
    names = {"victim_4242_100_value.py": VALUE, "yx_5555_200_4242_1_value.py": VALUE}
    canvas_class(tmp_path, names, zip_name)
    assert students(tmp_path) == {"victim_4242_*": ("4242", "victim", ["value"]),
                                  "yx_5555_200_4242_*": ("4242", "yx_5555_200", ["value"])}


@pytest.mark.engine("dual")  # its names are those of dual.py files
def test_one_id_read_from_two_names_is_named_in_both_feedbacks(tmp_path):
    """A file the student named `4242_1_value.py` makes `yx_5555_200_4242_1_value.py`, which
    reads, from the right, as user 4242: both students are told, with both files and the ids."""
    canvas_class(tmp_path, {"victim_4242_100_value.py": VALUE, "yx_5555_200_4242_1_value.py": VALUE,
                            "yx_5555_201_dual.py": DUAL})
    found = {s.source: s for s in intake.collect(tmp_path)}
    assert sorted(found) == ["victim_4242_*", "yx_5555_*", "yx_5555_200_4242_*"]
    victim, misread = found["victim_4242_*"], found["yx_5555_200_4242_*"]
    for submission, other in ((victim, "yx_5555_200_4242_1_value.py"), (misread, "victim_4242_100_value.py")):
        (note,) = [n for n in submission.notes if "read as Canvas user 4242" in n]
        assert other in note and submission.lms_files[0] in note, note
    assert not any("read as Canvas user" in n for n in found["yx_5555_*"].notes)


def test_the_files_of_a_canvas_download_read_from_the_right():
    assert CANVAS_FILE.match("yx_4242_1_5555_200_value_1_2.py") == {
        "name": "yx_4242_1", "late": None, "id": "5555", "file_id": "200", "file": "value_1_2.py"}
    assert CANVAS_FILE.match("x_4242_LATE_5555_200_value.py")["late"] == "LATE_"
    assert CANVAS_FILE.match("smith_5_6_my notes_7_8_x.py")["id"] == "5"  # the name is [[:word:]]
    assert CANVAS_FILE.match("no ids_value.py") is None


# Sortable names in many scripts as Canvas writes them: lower-cased, every [[:word:]] character
# kept, combining marks included (Devanagari's vowel signs and virama, Bengali's nukta, Thai's
# vowels and tone marks, Vietnamese's and Greek's accents, Hebrew's points).
SCRIPT_NAMES = ["sharmaप्रिया", "রায়অর্পিতা", "สมชายใจดี", "nguyễnthịhằng", "παπαδοπούλουελένη",
                "ivanovaмария", "王小明", "الفارسيليلى", "कुमार_राहुल", "שָׁלוֹם", "o‿connor"]


@pytest.mark.engine("dual")  # its names are those of dual.py files
@pytest.mark.parametrize("zip_name", ["", "download/", "CS101-hw3 submissions.zip"])
@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_canvas_names_of_every_script_are_one_student_each(tmp_path, zip_name, form):
    """Zipped by Canvas or unzipped (a Mac writes names decomposed): one student per name, known
    by the name Canvas wrote and its user id, with their files."""
    names = {}
    for number, name in enumerate(SCRIPT_NAMES):
        names[unicodedata.normalize(form, f"{name}_{40100 + number}_{9005000 + 2 * number}_value.py")] = VALUE
        names[unicodedata.normalize(form, f"{name}_{40100 + number}_{9005001 + 2 * number}_dual.py")] = DUAL
    canvas_class(tmp_path, names, zip_name)
    found = intake.collect(tmp_path)
    assert [(s.lms_name, s.lms_id, sorted(s.files)) for s in sorted(found, key=lambda s: s.lms_id)] == [
        (name, str(40100 + number), ["dual", "value"]) for number, name in enumerate(SCRIPT_NAMES)]
    assert len({s.student for s in found}) == len(SCRIPT_NAMES)
    assert {s.student for s in found} >= {"sharmaप्रिया_40100", "রায়অর্পিতা_40101", "สมชายใจดี_40102"}


# -- zip members passed over ---------------------------------------------------------------------

@pytest.mark.engine("dual")  # its names are those of dual.py files
def test_every_zip_member_passed_over_is_named_with_the_reason(tmp_path):
    (tmp_path / "ana.zip").write_bytes(zipped({
        "value.py": VALUE, "x/../../etc/passwd.py": DUAL, "# Total 102.txt": "102", "README.md": "hi",
        ".hidden.py": "x", "__MACOSX/._value.py": "x", "old.zip": zipped({"dual.py": DUAL})}))
    (ana,) = intake.collect(tmp_path)
    (note,) = [n for n in ana.notes if "not read from the zip" in n]
    assert note == ("ana.zip: not read from the zip: # Total 102.txt, README.md (not a .py file or notebook, "
                    "all the kit grades); .hidden.py, __MACOSX/._value.py (hidden, or left by macOS, Python "
                    "or Jupyter); old.zip (a zip inside the zip, which is not opened)")
    assert "dual.py: taken from x/../../etc/passwd.py" in ana.notes  # a name is never a path: it is read


@pytest.mark.engine("dual")  # its names are those of dual.py files
def test_a_member_passed_over_in_an_lms_download_is_named_in_the_students_notes(tmp_path):
    with zipfile.ZipFile(tmp_path / "CS101-Autograd engines-42.zip", "w") as archive:
        archive.writestr("Grace Hopper_300021_assignsubmission_file/value.py", VALUE)
        archive.writestr("Grace Hopper_300021_assignsubmission_file/# Total 102.txt", "102")
        archive.writestr("Ann Lee_300022_assignsubmission_file/dual.py", DUAL)
    ann, grace = intake.collect(tmp_path)
    assert ("Grace Hopper_300021_assignsubmission_file: not read from the zip: # Total 102.txt (not a .py "
            "file or notebook, all the kit grades)") in grace.notes
    assert not any("not read" in note for note in ann.notes)


def test_the_summary_lists_the_zip_members_passed_over(tmp_path):
    (tmp_path / "ana.zip").write_bytes(zipped({"value.py": VALUE, "# Total 102.txt": "102"}))
    (tmp_path / "ben").mkdir()
    (tmp_path / "ben" / "value.py").write_text(VALUE)
    entries = [entry_of(s) for s in intake.collect(tmp_path)]
    section = "\n".join(summary.summary_not_read(entries, {e.source: e.student for e in entries}))
    assert "Files not read from zips" in section and "# Total 102.txt (not a .py file" in section
    assert ">ben<" not in section


# -- a zip's size from its end record ------------------------------------------------------------

def claimed(path: Path, members: int, directory: int, zip64: bool = False) -> Path:
    """A zip of `directory` bytes of central directory for `members` members, as its end record
    (zip64's, if asked, with the ordinary record's fields saying "see zip64") says: a sparse file,
    a few KB on disk, however large the directory it claims."""
    count = min(members, 0xFFFF)
    fields = (0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF) if zip64 else (count, count, directory, 0)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, *fields, 0)
    tail = end
    if zip64:
        record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, members, members, directory, 0)
        tail = record + struct.pack("<4sLQL", b"PK\x06\x07", 0, directory, 1) + end
    with path.open("wb") as file:
        file.truncate(directory)
        file.seek(directory)
        file.write(tail)
    return path


def real_directory(path: Path, members: int) -> Path:
    """A zip whose central directory truly lists `members` empty members (47 bytes each), and nothing else."""
    entries = b"".join(struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                   0, 0, 0, 0, 0, 0) + bytes([97 + n % 26]) for n in range(members))
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, min(members, 0xFFFF), min(members, 0xFFFF),
                      len(entries), 0, 0)
    path.write_bytes(entries + end)
    return path


def refused_quickly(folder: Path) -> intake.Submission:
    """The class's one submission, read within a time and a memory that are the file's own reading
    (its bytes, read in chunks and joined: twice its size at the peak), never its listing."""
    (zip_path,) = folder.iterdir()
    tracemalloc.start()
    started = time.perf_counter()
    try:
        (submission,) = intake.collect(folder)
        took = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert took < 10.0, took  # listing a million members took 36 s; reading the file is all it takes
    assert peak < 2 * zip_path.stat().st_size + 4 * 2**20, peak
    return submission


@pytest.mark.parametrize("zip64", [False, True])
def test_a_zip_of_a_million_members_is_refused_before_it_is_listed(tmp_path, zip64):
    """49 MB of central directory for a million members (within a submission's 50 MB): listing it
    took 0.7 GB; its end record alone says it is too large."""
    path = claimed(tmp_path / "ana.zip", 1_000_000, 49 * 10**6, zip64)
    assert path.stat().st_blocks * 512 < 2**20  # sparse: nothing on disk
    submission = refused_quickly(tmp_path)
    assert submission.files == {}
    members = 1_000_000 if zip64 else 0xFFFF  # all the ordinary record's 16 bits can say
    assert submission.reason.startswith(f"ana.zip: the zip says it holds {members} members in a directory "
                                        "of 46.7 MB, more than intake lists (10000 members, 8 MB: [intake] "
                                        "in grading.toml)")


def test_a_zip64_record_that_claims_more_than_the_ordinary_one_is_the_one_believed(tmp_path):
    path = claimed(tmp_path / "ana.zip", 1_000_000, 49 * 10**6, zip64=True)
    data = bytearray(path.read_bytes())
    end = data.rindex(b"PK\x05\x06")
    data[end + 8:end + 16] = struct.pack("<2HL", 1, 1, 46)  # the ordinary record says one member
    path.write_bytes(bytes(data))
    assert "holds 1000000 members" in refused_quickly(tmp_path).reason


def test_a_directory_larger_than_its_count_says_is_refused_by_its_size(tmp_path):
    """The member count may lie (zipfile reads the directory's bytes, not the count): 200,000
    real members behind a count of one are refused for the directory's 9 MB."""
    path = real_directory(tmp_path / "ana.zip", 200_000)
    data = bytearray(path.read_bytes())
    data[-14:-10] = struct.pack("<2H", 1, 1)
    path.write_bytes(bytes(data))
    assert "holds 1 members in a directory of 9.0 MB" in refused_quickly(tmp_path).reason


def test_an_lms_download_past_its_limit_is_refused_with_the_fix(tmp_path):
    claimed(tmp_path / "CS101-hw3 submissions.zip", 60_000, 3_000_000)
    (submission,) = intake.collect(tmp_path)
    assert "holds 60000 members" in submission.reason
    assert "unzip it into the class folder" in submission.reason
