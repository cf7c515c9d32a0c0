"""What the README tells a user to type works as it says."""

import re
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
RUN_SECONDS = 600


def section(title: str) -> str:
    """The text of the README's `## title` section."""
    text = (KIT / "README.md").read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_students_command_for_one_part_prints_a_table_of_that_part_only():
    commands = re.findall(r"^pytest (autograder/suites/test_\w+\.py)$", section("For students"), re.MULTILINE)
    assert commands, "the students' section says no command that grades one part"
    for suite in commands:
        done = subprocess.run([sys.executable, "-m", "pytest", suite, "-p", "no:cacheprovider"], cwd=KIT,
                              capture_output=True, text=True, timeout=RUN_SECONDS)
        table = done.stdout.split(" score ", 1)[1].splitlines()[1:]
        assert table[0].split() == ["part", "tests", "points"], done.stdout[-2000:]
        parts = [line.split()[0] for line in table[1:] if line.strip() and not line.startswith("Only ")]
        assert parts == [Path(suite).stem.removeprefix("test_").replace("_", ".", 1), "total"], table
