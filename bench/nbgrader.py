"""How long `nbgrader autograde` takes against `autograder bulk`, on the same nbgrader course.

Makes an nbgrader course of 10 notebook submissions (the reference, and nine bugs of
tests/corpus.py typed into the answer cells), copies it twice, and times, in one run:

- `nbgrader autograde engines` as nbgrader runs it by default, executing every notebook in a
  kernel, where each grading cell asks the kit for its part (PYTHONPATH holds the kit);
- `autograder bulk COURSE -o OUT --nbgrader-db ... --assignment engines`, the TA's command:
  the kit grades the class, then nbgrader's own autograde records it without a kernel.

It prints both times, their ratio, and any part the two scored differently (nbgrader's own
run has no bonus: its cell is worth 0 points, and only the kit records the extra credit).

    .venv/bin/python bench/nbgrader.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This file is named for what it measures, as nbgrader is: keep its folder off the import path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT / "tests"))

import nbformat  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402
from support.corpus import BUGS  # noqa: E402 - the kit's tests folder is not a package

from autograder.config import load  # noqa: E402
from autograder.notebook import grade_id  # noqa: E402
from autograder.parts import engines  # noqa: E402
from autograder.staff.nbgrader_release import BEGIN, END  # noqa: E402

ASSIGNMENT = "engines"
SIZE = 10


def run(command: list[str], cwd: Path, env: dict | None = None) -> float:
    """Run a command to the end; its wall-clock seconds."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # nbgrader calls `alembic`
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, "PATH": path, **(env or {})})
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds


def answers_with(source: Path, edits) -> dict[str, nbformat.NotebookNode] | None:
    """The source notebooks with their answers as a student types them, these edits made in
    the answer cells; None when an edit does not fit one answer cell exactly once."""
    notebooks = {engine: nbformat.read(source / f"{engine}.ipynb", as_version=4) for engine in engines()}
    for notebook in notebooks.values():
        for cell in notebook.cells:
            if cell.metadata["nbgrader"]["solution"]:
                cell.source = "\n".join(line for line in cell.source.splitlines()
                                        if line.strip() not in (BEGIN, END))
    for edit in edits:
        cells = [cell for cell in notebooks[edit.file].cells
                 if cell.metadata["nbgrader"]["solution"] and edit.old in cell.source]
        if len(cells) != 1 or cells[0].source.count(edit.old) != 1:
            return None
        cells[0].source = cells[0].source.replace(edit.old, edit.new)
    return notebooks


def make_course(root: Path) -> list[str]:
    """The course with its 10 submissions; the students' names."""
    (root / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(root)!r}\n",
                                             encoding="utf-8")
    source = root / "source" / ASSIGNMENT
    run([sys.executable, "-m", "autograder.staff.cli", "release", "nbgrader", "-o", str(source)], KIT)
    run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--create"], root)
    chosen = {"reference": answers_with(source, ())}
    for bug in BUGS:
        notebooks = answers_with(source, bug.edits)
        if notebooks is not None and len(chosen) < SIZE:
            chosen[bug.name] = notebooks
    for student, notebooks in chosen.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for engine, notebook in notebooks.items():
            nbformat.write(notebook, folder / f"{engine}.ipynb")
    return list(chosen)


def scores(course: Path, students: list[str]) -> dict[tuple[str, str], float]:
    parts = [part for part in load().parts.values() if not part.bonus]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {(student, part.id): gradebook.find_grade(grade_id(part.id), part.id.split(".")[0],
                                                         ASSIGNMENT, student).score
                for student in students for part in parts}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-nbgrader-") as scratch:
        prepared = Path(scratch) / "prepared"
        prepared.mkdir()
        students = make_course(prepared)
        if len(students) < SIZE:
            raise SystemExit(f"only {len(students)} submissions could be made from tests/corpus.py")
        by_nbgrader, by_kit = Path(scratch) / "nbgrader", Path(scratch) / "kit"
        for copy in (by_nbgrader, by_kit):
            shutil.copytree(prepared, copy)
            text = (copy / "nbgrader_config.py").read_text(encoding="utf-8")
            (copy / "nbgrader_config.py").write_text(text.replace(str(prepared), str(copy)), encoding="utf-8")
        nbgrader_seconds = run([sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT], by_nbgrader,
                               env={"PYTHONPATH": str(KIT)})
        kit_seconds = run([sys.executable, "-m", "autograder.staff.cli", "bulk", str(by_kit),
                           "-o", str(Path(scratch) / "out"), "--nbgrader-db",
                           f"sqlite:///{by_kit / 'gradebook.db'}", "--assignment", ASSIGNMENT], KIT)
        print(f"{len(students)} nbgrader submissions ({', '.join(students)})")
        print(f"nbgrader autograde (executing the notebooks): {nbgrader_seconds:6.1f} s")
        print(f"autograder bulk --nbgrader-db:                {kit_seconds:6.1f} s")
        print(f"ratio: nbgrader autograde takes {nbgrader_seconds / kit_seconds:.1f} x as long")
        theirs, ours = scores(by_nbgrader, students), scores(by_kit, students)
        differ = {key: (theirs[key], ours[key]) for key in ours if theirs[key] != ours[key]}
        print("every part scored the same by both" if not differ else
              "parts scored differently (nbgrader, kit): " + ", ".join(
                  f"{student} {part} {a:g}/{b:g}" for (student, part), (a, b) in sorted(differ.items())))


if __name__ == "__main__":
    main()
