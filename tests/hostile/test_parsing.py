"""One notebook never ends the class: intake parses a submission's text in a process of its own,
under a memory limit, so a cell built to make Python's parser take gigabytes costs only its own
entry, and the grader's process stays small."""

import csv
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import KIT
from support.shape import SAMPLE, points_of, reference, scored

from autograder.intake import bounded

pytestmark = pytest.mark.slow  # grades, or starts workers, in processes of its own

# About 0.4 GB of the parser's memory per MB of this source: 4 MB of it asks for some 1.7 GB.
HOSTILE_CELL = "x = [" + "(a+b)*c, " * (4 * 2**20 // 9) + "]\n"
# The grader's process reading the class, parsing process apart: 35 MB reading, 90 MB the whole
# bulk command; the attack this bounds took 739 MB.
OWN_MEMORY_MB = 200
# A process's own peak: ru_maxrss would also count the parent that started it (Linux keeps the
# high-water mark of the memory an exec replaces, here the test run's own), VmHWM is this image's.
PEAK_MB = "int(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))) // 1024"


def hostile_class(folder: Path) -> Path:
    (folder / "honest").mkdir(parents=True)
    (folder / "honest" / f"{SAMPLE}.py").write_text(reference(SAMPLE), encoding="utf-8")
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                "cells": [{"cell_type": "code", "source": HOSTILE_CELL, "metadata": {}, "outputs": [],
                           "execution_count": None}]}
    (folder / "bomb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    return folder


def test_a_cell_built_to_exhaust_the_parser_costs_its_entry_alone(tmp_path):
    """Intake reads the class in a process of its own here, which reports its own peak memory:
    the parsing happens elsewhere, under PARSE_MEMORY, so it stays small; the honest classmate
    is read whole and the hostile notebook's cell is a note (the parser ran out of its memory)."""
    klass = hostile_class(tmp_path / "class")
    script = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from autograder import intake
        found = {s.source: [sorted(s.files), s.notes] for s in intake.collect(Path(sys.argv[1]))}
        print(json.dumps({"found": found, "peak_mb": PEAK_MB}))
        """).replace("PEAK_MB", PEAK_MB)
    done = subprocess.run([sys.executable, "-c", script, str(klass)], cwd=KIT, capture_output=True, text=True,
                          check=True, timeout=600)
    report = json.loads(done.stdout)
    assert report["peak_mb"] < OWN_MEMORY_MB, report["peak_mb"]
    assert report["found"]["honest"][0] == [SAMPLE]
    files, notes = report["found"]["bomb.ipynb"]
    assert files == [] and "bomb.ipynb: cell 1 is not valid Python (or is nested too deep for Python's " \
        "parser) and defines no engine; left out" in notes


def test_a_notebook_too_large_for_the_parsing_process_is_a_note_and_the_next_is_read(monkeypatch):
    """JSON of `[{}, {}, ...]` takes some 25 bytes a byte to read: past the parsing process's
    memory, the notebook is a note; the process is started again for the next request."""
    monkeypatch.setattr(bounded, "PARSE_MEMORY", 128 * 2**20)
    bounded.PARSER.stop()
    try:
        crowded = '{"nbformat": 4, "cells": [' + "{}," * (4 * 2**20) + '{"cell_type": "code"}]}'
        with pytest.raises(bounded.OverLimits, match="too large or too deeply nested to parse"):
            bounded.notebook_modules(crowded, "crowded.ipynb")
        assert bounded.defines(HOSTILE_CELL) == set()  # the parser's MemoryError: no tree, no class line
        assert bounded.defines("class Dual:\n    pass\n") == {"dual"}
    finally:
        bounded.PARSER.stop()


@pytest.mark.slow
def test_bulk_grades_the_honest_classmate_and_holds_the_hostile_notebook_back(tmp_path):
    """The whole command: the honest classmate gets full marks for its engine, the notebook is held
    back with the reason, and the bulk process itself stays small."""
    klass = hostile_class(tmp_path / "class")
    out = tmp_path / "out"
    script = textwrap.dedent("""
        import json, sys
        from autograder.staff.cli import main
        code = main(["bulk", sys.argv[1], "-o", sys.argv[2], "--jobs", "1"])
        print(json.dumps({"code": code, "peak_mb": PEAK_MB}))
        """).replace("PEAK_MB", PEAK_MB)
    done = subprocess.run([sys.executable, "-c", script, str(klass), str(out)], cwd=KIT, capture_output=True,
                          text=True, timeout=900)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr[-2000:]
    assert report["peak_mb"] < OWN_MEMORY_MB, report["peak_mb"]
    with (out / "grades.csv").open(newline="", encoding="utf-8") as table:
        honest = next(row for row in csv.DictReader(table) if row["student"] == "honest")
    assert scored(honest) == points_of(SAMPLE)  # full marks
    assert "held back bomb: could not be graded: bomb.ipynb: cell 1 is not valid Python" in done.stderr
