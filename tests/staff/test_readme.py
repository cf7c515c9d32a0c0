"""What the README and docs/ tell a user to type works as they say, and what they show is
what the kit prints."""

import re
import subprocess
import sys

import pytest
from support import KIT
from support.corpus import BUGS, build

pytestmark = pytest.mark.slow  # grades, or starts workers, in processes of its own

RUN_SECONDS = 600


def section(title: str) -> str:
    """The text of the README's `## title` section."""
    text = (KIT / "README.md").read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_students_command_for_one_part_prints_a_table_of_that_part_only():
    commands = re.findall(r"^pytest autograder --part ([\w.]+)$", section("For students"), re.MULTILINE)
    assert commands, "the students' section says no command that grades one part"
    for part in commands:
        done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "--part", part, "-p",
                               "no:cacheprovider"], cwd=KIT, capture_output=True, text=True,
                              timeout=RUN_SECONDS)
        table = done.stdout.split(" score ", 1)[1].splitlines()[1:]
        assert table[0].split() == ["part", "tests", "points"], done.stdout[-2000:]
        parts = [line.split()[0] for line in table[1:] if line.strip() and not line.startswith("Only ")]
        assert parts == [part, "total"], table
        assert " lost checks " not in done.stdout, "one part's run shows whole messages, not a line each"


def test_the_message_docs_students_shows_is_the_one_the_kit_prints(tmp_path):
    text = (KIT / "docs" / "students.md").read_text(encoding="utf-8")
    shown = text.split("with `=` instead of `+=` in `__mul__`:\n\n```\n", 1)[1].split("\n```", 1)[0]
    bug = next(entry for entry in BUGS if entry.name == "mul-assigns-instead-of-adding")
    build(bug, KIT / "solutions", tmp_path / "submission")
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder/suites/test_value_mul.py", "-p",
                           "no:cacheprovider", "--submission=" + str(tmp_path / "submission")], cwd=KIT,
                          capture_output=True, text=True, timeout=RUN_SECONDS)
    # The snippet's first line names the folder graded: the guide shows a student's own.
    guide = "sys.path.insert(0, '/home/you/engines/assignments')"
    printed = re.sub(r"sys\.path\.insert\(0, '[^']*'\)", guide, done.stdout)
    assert shown.count("\n") > 15 and shown in printed, done.stdout[-3000:]


def test_messages_full_and_repro_do_what_the_students_doc_says(tmp_path):
    """`--messages full` shows every lost check's whole message where a plain run shows a line
    each, and `--repro` writes each failed check's snippet to repro/<check>.py beside the
    student's files, which prints what the message says came out."""
    text = (KIT / "docs" / "students.md").read_text(encoding="utf-8")
    assert "`pytest autograder --messages full`" in text and "`pytest autograder --repro`" in text
    assert "`repro/<check>.py` beside your files" in text
    bug = next(entry for entry in BUGS if entry.name == "mul-assigns-instead-of-adding")
    submission = tmp_path / "submission"
    build(bug, KIT / "solutions", submission)

    def graded(*options: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-p", "no:cacheprovider",
                               "--submission=" + str(submission), *options], cwd=KIT, capture_output=True,
                              text=True, timeout=RUN_SECONDS)
        return done.stdout

    plain = graded()
    lost = re.findall(r"^[\w.]+ +(test_\w+): ", plain, re.MULTILINE)
    assert "test_value_used_twice" in lost and "To reproduce" not in plain, plain[-3000:]
    assert not (submission / "repro").exists(), "a plain run wrote snippets"
    full = graded("--messages", "full", "--repro")
    for test in lost:
        assert re.search(rf"^_+ {test} _+$", full, re.MULTILINE), f"{test}: no whole message\n{full[-3000:]}"
    assert full.count("To reproduce") == len(lost)
    assert sorted(path.stem for path in (submission / "repro").glob("*.py")) == sorted(lost)
    snippet = subprocess.run([sys.executable, "repro/test_value_used_twice.py"], cwd=submission,
                             capture_output=True, text=True, timeout=RUN_SECONDS)
    assert snippet.returncode == 0 and snippet.stdout.split()[-1] == "0.5", snippet.stdout + snippet.stderr
    assert "Came out: x.grad = 0.5" in full
