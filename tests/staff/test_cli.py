"""The TA's screen: paths from where the TA stands, one line for every mistake and for Ctrl-C,
names printed as text, and no heavy import that the run does not need."""

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import KIT
from support.bulk_runs import (
    CLI,
    RUN_SECONDS,
    SOURCE,
    bulk_processes,
    bulk_run,
    one_engine_class,
    outdir,
    rows,
)
from support.shape import GRADED, SAMPLE

from autograder import intake
from autograder.config import parse
from autograder.questions import make_secret
from autograder.staff import bulk, reports
from autograder.staff.gradebook import Gradebook

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length


def error_lines(text: str) -> list[str]:
    """What was said, without argparse's usage and the progress bar."""
    return [line for line in text.splitlines()
            if line.strip() and not line.startswith(("usage:", " ", "grading "))]


# -- one line for each mistake ---------------------------------------------------------------------

def test_pytest_with_a_missing_submission_says_so_once():
    command = [sys.executable, "-m", "pytest", "autograder", "--submission", "/nonexistent", "-q"]
    done = subprocess.run(command, cwd=KIT, capture_output=True, text=True, timeout=RUN_SECONDS)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    files = [f"{engine}.py" for engine in GRADED]  # the kit's own: value.py, tensor.py and dual.py
    assert lines == ["ERROR: --submission /nonexistent: not a folder; point it at the folder holding "
                     + ", ".join(files[:-1]) + " and " + files[-1]]
    assert done.returncode == 4


@pytest.mark.parametrize(("make", "options", "message"), [
    (lambda t: (t / "out").write_text("not a folder"), [],
     "autograder bulk: -o {t}/out: a file, not a folder; give -o a folder (it is made if it does not exist)"),
    (lambda t: None, ["--jobs", "0"],
     "autograder bulk: error: argument --jobs: '0': give a whole number of at least 1, such as --jobs"),
    (lambda t: None, ["--jobs", "two"], "autograder bulk: error: argument --jobs: 'two': give a whole"),
    (lambda t: None, ["--nbgrader-db", "sqlite:///x.db"],
     "autograder bulk: --nbgrader-db and --assignment go together; give both or neither"),
])
def test_a_mistake_on_the_command_line_is_one_line_naming_the_fix(tmp_path, capsys, make, options, message):
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE})
    make(tmp_path)
    try:
        code = bulk_run(klass, tmp_path / "out", *options)
    except SystemExit as stop:  # argparse's own exit, after its one line (and the usage)
        code = stop.code
    assert code == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith(message.format(t=tmp_path))
    assert not (tmp_path / "out").is_dir()


def test_an_empty_or_missing_class_folder_says_it_found_nothing(tmp_path, capsys):
    (tmp_path / "empty" / ".hidden").mkdir(parents=True)
    assert bulk_run(tmp_path / "empty", tmp_path / "out") == 2
    assert bulk_run(tmp_path / "nowhere", tmp_path / "out") == 2
    assert error_lines(capsys.readouterr().err) == [
        f"autograder bulk: {tmp_path}/empty: no submissions found (it is empty, or holds only hidden files); "
        "point autograder bulk at the folder with one entry per student",
        f"autograder bulk: {tmp_path}/nowhere: not a folder; point `autograder bulk` at the folder holding "
        "the submissions (an LMS's download, unzipped or not, may sit in it)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("old", "new", "fix"), [
    ("points = 10\n", 'points = "ten"\n', "points = 'ten': write a number of at least 0 here, without"),
    ("cpu_seconds = 120", "cpu_secs = 120", 'unknown key "cpu_secs"; did you mean "cpu_seconds"?'),
])
def test_a_broken_grading_toml_is_one_line_naming_the_fix(tmp_path, capsys, monkeypatch, old, new, fix):
    toml = tmp_path / "grading.toml"
    toml.write_text((KIT / "grading.toml").read_text().replace(old, new, 1))
    monkeypatch.setattr(bulk, "load", lambda: parse(toml))
    assert bulk_run(one_engine_class(tmp_path / "class", {"una": SOURCE}), tmp_path / "out") == 2
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith(f"autograder bulk: {toml}: [") and fix in line


def test_a_damaged_gradebook_or_a_full_disk_is_one_line(tmp_path, capsys, monkeypatch, reference_cache):
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE})
    out = outdir(tmp_path / "out", reference_cache)
    secret = tmp_path / "grading.secret"  # made beforehand: a first run would say it made one
    make_secret(secret)
    (out / "gradebook.sqlite").write_bytes(b"not a database, but long enough to be read as one" * 40)
    assert bulk_run(klass, out, "--secret", str(secret)) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"autograder bulk: {out}/gradebook.sqlite: not a gradebook this kit can read (file is not a "
        "database); move it away, or give -o a folder of its own"]
    (out / "gradebook.sqlite").unlink()

    def full(*_args):
        raise OSError(28, "No space left on device")

    def disk_full(*_args):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Gradebook, "record", disk_full)
    assert bulk_run(klass, out, "--secret", str(secret)) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"autograder bulk: {out}/gradebook.sqlite: could not be written (database or disk is full); what is "
        "in it is whole: make room, then run the same command again to grade the rest"]
    monkeypatch.undo()

    monkeypatch.setattr(reports, "write_all", full)
    assert bulk_run(klass, out, "--secret", str(secret)) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"autograder bulk: the reports could not be written into {out} ([Errno 28] No space left on device); "
        "every grade is in the gradebook: make room or fix the folder, then run the same command again"]
    assert rows(out)["una"][4] == "graded"


def test_paths_are_taken_from_where_the_user_stands(tmp_path, reference_cache):
    one_engine_class(tmp_path / "class", {"una": SOURCE})
    outdir(tmp_path / "out", reference_cache)
    done = subprocess.run(CLI + ["bulk", "class", "-o", "out"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=RUN_SECONDS)
    assert done.returncode == 0, done.stderr
    assert rows(tmp_path / "out")["una"][4] == "graded"
    assert (tmp_path / "out" / "grades.csv").read_text().splitlines()[1].startswith("una,")


@pytest.mark.parametrize("command", ["bulk", "release", "check"])
def test_a_package_installed_without_its_course_folder_says_so_in_one_line(tmp_path, command):
    # What a wheel installs: the autograder package alone, with no grading.toml, solutions/ or
    # assignments/ beside it. The kit grades from its folder, so every command says how to install it.
    site = tmp_path / "site"
    shutil.copytree(KIT / "autograder", site / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "fresh").mkdir()
    done = subprocess.run([sys.executable, "-m", "autograder.staff.cli", command, "--help"],
                          cwd=tmp_path / "fresh", env={**os.environ, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, timeout=RUN_SECONDS)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.splitlines() == [
        f"autograder: {site} is not a course folder (no grading.toml, solutions, assignments beside the "
        "autograder package); the kit grades from its own folder: install it from there with pip install -e "
        "<the kit's folder> (an editable install), not from a wheel"]


# Run with the staff extra's packages made unimportable, as where only the base install is.
WITHOUT_EXTRAS = """
import sys
class Absent:
    def find_spec(self, name, path=None, target=None):
        extras = ("rich", "nbformat", "sklearn", "matplotlib", "pytest_timeout", "nbgrader")
        if name.partition(".")[0] in extras:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Absent())
from autograder.staff.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("command", "needs"), [
    ("bulk", "rich"), ("release", None), ("check", None), ("stubs", None), ("part", None), ("mutate", None),
    ("secret", None),
])
def test_without_the_staff_extra_only_what_needs_it_refuses_in_one_line(command, needs):
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, command, "--help"], cwd=KIT,
                          capture_output=True, text=True, timeout=RUN_SECONDS)
    if needs:
        assert done.returncode == 2 and done.stderr.splitlines() == [
            f"autograder {command}: needs {needs}, which comes with the kit's staff extra: "
            "pip install -e '.[staff]'"]
    else:
        assert done.returncode == 0 and done.stdout.startswith("usage: autograder " + command), done.stderr


def test_release_all_refuses_at_once_what_it_could_not_finish(tmp_path):
    """`autograder release all` builds the four releases after one check, all or none: into a folder
    that holds something, or without nbgrader, it says so in one line before the check starts."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine", encoding="utf-8")

    def release_all(*program: str, out: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *program, "release", "all", "-o", str(out)], cwd=KIT,
                              capture_output=True, text=True, timeout=RUN_SECONDS)

    done = release_all("-m", "autograder.staff.cli", out=tmp_path / "out")
    assert done.returncode == 1 and done.stderr.splitlines() == [
        f"autograder release: {tmp_path / 'out'} already exists and is not an empty folder; choose a new "
        "path or remove it first"], done.stderr
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["notes.txt"]
    done = release_all("-c", WITHOUT_EXTRAS, out=tmp_path / "new")
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "the nbgrader notebooks need nbgrader" in done.stderr, done.stderr
    assert "pip install -e '.[nbgrader]'" in done.stderr
    assert not (tmp_path / "new").exists()


def test_mutate_where_mutation_testing_is_not_installed_says_how_to_install_it():
    """mutants/ sits beside the grader, installed by the editable install with the dev extra: an
    install made before it existed, or without it, gets one line that says how."""
    without = WITHOUT_EXTRAS.replace('extras = ("rich",', 'extras = ("mutants", "rich",')
    done = subprocess.run([sys.executable, "-c", without, "mutate", "--help"], cwd=KIT,
                          capture_output=True, text=True, timeout=RUN_SECONDS)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "autograder mutate: mutation testing of the suites (the kit's mutants/ package) is not installed "
        "here; install the kit with its dev extra: pip install -e '.[dev]'"], done.stderr


# -- Ctrl-C ----------------------------------------------------------------------------------------

def interrupt(*_args, **_kwargs):
    raise KeyboardInterrupt


def test_an_error_no_command_foresaw_is_one_line_that_says_where(monkeypatch, capsys):
    """The last line of defence: whatever a command meets that it has no message for ends in one
    line naming the error and the kit's own line it was raised at, never a traceback."""
    from autograder.staff import check, cli

    def unforeseen(*_args, **_kwargs):
        raise FileNotFoundError(2, "No such file or directory", "assignments/dual.py")

    monkeypatch.setattr(check, "findings", unforeseen)
    assert cli.main(["check"]) == 1
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and said[0].startswith(
        "autograder: stopped by FileNotFoundError: [Errno 2] No such file or directory: "
        "'assignments/dual.py' (at tests/staff/test_cli.py, line "), said
    assert said[0].endswith("which the kit has no message for; `autograder check` names what is inconsistent "
                            "in the kit, and this line is worth reporting")


@pytest.mark.parametrize(("where", "said"), [
    ((intake, "collect"), "autograder bulk: interrupted while reading the class folder; nothing was graded: "
                          "run the same command again to grade the class"),
    ((bulk, "sealed_reference"), "autograder bulk: interrupted while sealing the reference's answers: 0 of "
                                 "the 2 submissions this run set out to grade were graded and are in the "
                                 "gradebook; run the same command again to grade the other 2"),
    ((reports, "write_all"), "autograder bulk: interrupted while writing the reports; every grade is in the "
                             "gradebook: run the same command again to write grades.csv, feedback/ and "
                             "summary.html (nothing is graded twice)"),
])
def test_ctrl_c_in_each_phase_is_one_line(tmp_path, capsys, monkeypatch, reference_cache, where, said):
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE, "val": SOURCE})
    monkeypatch.setattr(*where, interrupt)
    assert bulk_run(klass, outdir(tmp_path / "out", reference_cache)) == 130
    assert error_lines(capsys.readouterr().err) == [said]


@pytest.mark.parametrize(("options", "again"), [((), "run the same command again"),
                                                (("--force",), "run the command again without --force")])
def test_ctrl_c_right_after_the_last_grading_says_every_grade_is_in(tmp_path, capsys, monkeypatch,
                                                                    reference_cache, options, again):
    """The interrupt lands once every submission is recorded, before the reports: it said "2 of the
    2 ... run the same command again to grade the other 0" (with --force: "of the other 0, 0 keep")."""
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE, "val": SOURCE})
    out = outdir(tmp_path / "out", reference_cache)
    if options:
        assert bulk_run(klass, out) == 0
    monkeypatch.setattr(Gradebook, "entries", interrupt)  # read right after the last grading
    assert bulk_run(klass, out, *options) == 130
    assert error_lines(capsys.readouterr().err)[-1] == (
        "autograder bulk: interrupted after the last grading: all 2 submissions this run set out to grade "
        f"are in the gradebook; {again} to write the reports (nothing is graded twice)")


def test_a_successful_run_removes_what_a_killed_run_left_behind(tmp_path, reference_cache):
    """staging/, work/, feedback.new/ and half-written files go, also when nothing is graded."""
    klass = one_engine_class(tmp_path / "class", {"una": SOURCE})
    out = outdir(tmp_path / "out", reference_cache)
    assert bulk_run(klass, out) == 0
    kept = sorted(p.relative_to(out) for p in out.rglob("*") if p.suffix != ".sqlite-wal")
    left = [out / "staging" / "una-123abc" / f"{SAMPLE}.py", out / "work" / "una-123abc-x" / "pytest.log",
            out / "feedback.new" / "una.md", out / "grades.csv.partial", out / "reference" / "0123.partial"]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("left by a run that was killed")
    assert bulk_run(klass, out) == 0  # nothing to grade
    assert not [path for path in left if path.exists()]
    assert not (out / "staging").exists() and not (out / "work").exists()
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.suffix != ".sqlite-wal") == kept


def ids(out: Path) -> dict[str, int]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return dict(db.execute("SELECT source, id FROM submissions"))


# The `autograder` command with one of its functions (`module:Class.method`) made to wait for
# Ctrl-C when it is called the Nth time: the run cannot end before the test's signal, however
# busy the machine, and the signal lands where the test says.
WAITING = """
import functools, importlib, signal, sys
# Ctrl-C raises KeyboardInterrupt, as in a terminal, even where this test run was started with
# SIGINT ignored (a background job of a shell, or nohup), which every child would inherit.
signal.signal(signal.SIGINT, signal.default_int_handler)
where, count = sys.argv[1], int(sys.argv[2])
module, _, name = where.partition(":")
holder = importlib.import_module(module)
*path, attribute = name.split(".")
for step in path:
    holder = getattr(holder, step)
original, calls = getattr(holder, attribute), []

@functools.wraps(original)
def waiting(*args, **kwargs):
    calls.append(args)
    if len(calls) == count:
        signal.pause()  # the test's Ctrl-C raises KeyboardInterrupt here
    return original(*args, **kwargs)

setattr(holder, attribute, waiting)
from autograder.staff.cli import main
sys.exit(main(sys.argv[3:]))
"""


def waiting_at(where: str, count: int, *arguments: str) -> list[str]:
    """The command line of `autograder ARGUMENTS` that waits for Ctrl-C at the `count`th call of
    `where`."""
    return [sys.executable, "-c", WAITING, where, str(count), *arguments]


def run_until(command: list[str], ready, deadline: float) -> subprocess.CompletedProcess:
    """Start the command in a session of its own, and press Ctrl-C (SIGINT to the whole group,
    as a terminal does) once `ready()` is true."""
    process = subprocess.Popen(command, cwd=KIT, start_new_session=True, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, f"the run ended before Ctrl-C: {process.communicate()}"
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=RUN_SECONDS)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_during_a_forced_run_counts_what_this_run_graded(tmp_path, reference_cache):
    klass = one_engine_class(tmp_path / "class", dict.fromkeys(("ada", "bea", "cy", "dee", "eve"), SOURCE))
    out = outdir(tmp_path / "out", reference_cache)
    assert bulk_run(klass, out, "--jobs", "1") == 0
    before = max(ids(out).values())
    deadline = time.monotonic() + RUN_SECONDS

    def two_regraded() -> bool:
        try:
            return sum(i > before for i in ids(out).values()) >= 2
        except sqlite3.OperationalError:
            return False

    command = waiting_at("autograder.staff.gradebook:Gradebook.record", 3,
                            "bulk", str(klass), "-o", str(out), "--jobs", "1", "--force")
    done = run_until(command, two_regraded, deadline)
    assert done.returncode == 130 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    match = re.fullmatch(r"autograder bulk: interrupted while grading: (\d) of the 5 submissions this run "
                         r"set out to grade were graded and are in the gradebook; of the other (\d), (\d) "
                         r"keep the grade an earlier run gave them with this grader and 0 have none: run the "
                         r"command again without --force to grade nothing and write the reports", last)
    assert match, last
    graded_now = sum(i > before for i in ids(out).values())
    assert int(match[1]) == graded_now >= 2 and int(match[2]) == int(match[3]) == 5 - graded_now
    assert done.stderr.count("interrupted") == 1
    while bulk_processes(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bulk_processes(out) == [], "a grading process outlived the interrupted run"


def test_ctrl_c_as_soon_as_the_gradebook_exists_is_one_line_and_counts_what_is_in_it(tmp_path):
    klass = one_engine_class(tmp_path / "class", {"ada": SOURCE, "bea": SOURCE})
    out = tmp_path / "out"  # no sealed reference yet: the interrupt lands before it is sealed, at the latest
    command = waiting_at("autograder.staff.bulk:sealed_reference", 1, "bulk", str(klass), "-o", str(out))
    done = run_until(command, (out / "gradebook.sqlite").exists, time.monotonic() + RUN_SECONDS)
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "interrupted" in line]
    recorded = len(Gradebook(out / "gradebook.sqlite").entries())
    graded = re.search(r": (\d) of the 2 submissions this run set out to grade were graded", line)
    assert int(graded[1]) == recorded if graded else "nothing was graded" in line and recorded == 0, line


# -- what a submission's names do on the screen and in the reports ----------------------------------

def test_names_are_printed_as_text_and_reach_the_reports_harmless(tmp_path, capsys, reference_cache):
    klass = tmp_path / "class"
    klass.mkdir()
    fake = "esc\x1b[2J\r\x1b]0;title\x07\nall 40 submissions graded"
    for name in (fake, "[bold red]loud"):  # nothing gradable: both are printed as failures
        (klass / name).mkdir()
    for name in ("-2-3", os.fsdecode(b"caf\xe9")):
        (klass / name).mkdir()
        (klass / name / f"{SAMPLE}.py").write_text(SOURCE)
    (klass / "mdz.zip").write_bytes(zipped({f"<img src=x onerror=alert(1)>[x](http:e)/{SAMPLE}.py": SOURCE}))
    out = outdir(tmp_path / "out", reference_cache)
    assert bulk_run(klass, out) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\r" not in err
    assert not [line for line in err.splitlines() if line.startswith("all 40")]
    assert "failed esc\\x1b[2J\\r\\x1b]0;title\\x07\\nall 40 submissions graded: " in err
    assert "failed [bold red]loud: " in err  # the markup is shown, not applied
    found = rows(out)
    assert sorted(found) == sorted(["-2-3", "caf\\xe9", "mdz.zip", fake, "[bold red]loud"])
    assert found["-2-3"][0] == "-2-3" and found["caf\\xe9"][4] == "graded"
    assert "'-2-3," in (out / "grades.csv").read_text()
    markdown = (out / "feedback" / "mdz.md").read_text()
    # The word holding an address (`http:e`) is a code span, where nothing is a tag or a link.
    assert f"taken from \\<img src=x `onerror=alert(1)>[x](http:e)/{SAMPLE}.py`" in markdown
    notes = re.sub(r"`[^`]*`", "", markdown.split("## ", 2)[1])
    assert not re.search(r"(?<!\\)[<\[]", notes)  # every other < and [ of the notes escaped
    page = (out / "feedback" / "mdz.html").read_text()
    assert f"taken from &lt;img src=x onerror=alert(1)&gt;[x](http:e)/{SAMPLE}.py" in page
    assert "<img" not in page


def zipped(files: dict[str, str]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# -- what a run imports ------------------------------------------------------------------------------

def test_nbformat_and_matplotlib_are_imported_only_when_needed(tmp_path):
    (tmp_path / "py" / "ana").mkdir(parents=True)
    (tmp_path / "py" / "ana" / f"{SAMPLE}.py").write_text(SOURCE)
    (tmp_path / "v4").mkdir()
    cell = {"cell_type": "code", "source": SOURCE, "metadata": {}, "outputs": [], "execution_count": None}
    (tmp_path / "v4" / "bo.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                                         "cells": [cell]}))
    (tmp_path / "v3").mkdir()
    (tmp_path / "v3" / "cy.ipynb").write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                                                         "worksheets": [{"cells": [], "metadata": {}}]}))
    script = ("import sys; from pathlib import Path\n"
              "import autograder.staff.cli, autograder.staff.bulk, autograder.staff.reports\n"
              "from autograder import intake\n"
              "heavy = lambda: [m for m in ('nbformat', 'matplotlib') if m in sys.modules]\n"
              "seen = [heavy()]\n"
              "for klass in sys.argv[1:]:\n"
              "    intake.collect(Path(klass))\n"
              "    seen.append(heavy())\n"
              "print(seen)\n")
    done = subprocess.run([sys.executable, "-c", script, *(str(tmp_path / k) for k in ("py", "v4", "v3"))],
                          cwd=KIT, capture_output=True, text=True, check=True, timeout=RUN_SECONDS)
    # A notebook is read in intake's parsing process (bounded.py), which imports nbformat for a
    # notebook of format 3 alone: the grader's own process never does.
    assert done.stdout.strip() == "[[], [], [], []]"
