"""Grading a saved notebook from one of its own grading cells, inside the student's kernel.

`check_part`, which every grading cell of `autograder release nbgrader` calls, grades the
saved notebook's code cells with the kit's suites in a pytest process of its own, prints the
part's score and messages, and shows the score as the cell's result (nbgrader's partial
credit). It needs only what a Jupyter kernel has: nbformat, numpy and pytest.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# nbformat validates notebooks with jsonschema, which on import builds rfc3987_syntax's parsers for
# a format no notebook schema uses ("iri"): about two seconds of CPU in every process that reads or
# writes a notebook, each graded notebook's kernel included (python-jsonschema/jsonschema#1428).
# Kept out, jsonschema leaves that format unchecked. The staff command does the same (staff/cli.py).
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat  # noqa: E402 - after the line above

from .config import KIT_ROOT, load  # noqa: E402
from .parts import engines  # noqa: E402


class NotebookError(Exception):
    """A notebook cannot be graded; the message says how to fix it."""


def grade_id(part_id: str) -> str:
    """The grading cell's id in nbgrader for a part (dots would break formgrader's selectors)."""
    return "part-" + part_id.replace(".", "-")


def engine_of(part_id: str) -> str:
    """The engine file whose notebook holds the part's grading cell; raises NotebookError."""
    engine = part_id.split(".")[0]
    if engine not in engines():
        raise NotebookError(f'grading.toml: part "{part_id}" does not start with a file name '
                            f"({', '.join(engines())}), so no notebook can hold its grading cell")
    return engine


# -- grading a notebook ----------------------------------------------------------------------------

def is_grading_cell(cell: nbformat.NotebookNode) -> bool:
    """Is `cell` an nbgrader grading cell (graded, not an answer)?"""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def notebook_source(path: Path) -> str:
    """The module a notebook amounts to: its code cells but the grading ones, with IPython's
    `%magic` and `!shell` lines turned into comments. Raises NotebookError."""
    try:
        notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError) as error:
        raise NotebookError(f"{path}: not a readable notebook ({error}); save it again from "
                            "Jupyter") from None
    chunks = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or is_grading_cell(cell):
            continue
        chunks.append(re.sub(r"(?m)^(\s*)([%!])", r"\1# \2", cell.source))
    return "\n\n\n".join(chunks) + "\n"


def score_modules(modules: Mapping[str, str], kit: Path = KIT_ROOT, *options: str) -> dict[str, dict]:
    """Grade module texts ({"value": source, ...}) with the kit's suites in a pytest process of
    their own; results.json's entries by part. `options` go to pytest (e.g. --reference).
    Raises NotebookError when pytest writes no results."""
    with tempfile.TemporaryDirectory(prefix="autograder-notebooks-") as scratch:
        folder = Path(scratch)
        for engine, text in modules.items():
            (folder / f"{engine}.py").write_text(text, encoding="utf-8")
        results = folder / "results.json"
        done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                               f"--submission={folder}", f"--results-json={results}", *options],
                              cwd=kit, capture_output=True, text=True, check=False)
        if not results.is_file() or done.returncode not in (0, 1):  # no results, or no score in them
            raise NotebookError(f"grading {', '.join(sorted(modules))} stopped "
                                f"(pytest exit status {done.returncode}):\n{done.stdout[-3000:]}"
                                f"{done.stderr[-1000:]}")
        entries = json.loads(results.read_text(encoding="utf-8"))["tests"]
    return {entry["tags"][0]: entry for entry in entries}


def score_notebooks(notebooks: Mapping[str, Path], kit: Path = KIT_ROOT) -> dict[str, dict]:
    """Grade notebooks ({"value": path, ...}) with the kit's suites; results.json's entries by part."""
    return score_modules({engine: notebook_source(Path(path)) for engine, path in notebooks.items()}, kit)


def part_report(part_id: str, entry: Mapping, bonus: bool = False) -> str:
    """What a grading cell prints: the part's score, then every message of its lost points."""
    extra = " (bonus: counted as extra credit)" if bonus else ""
    verdict = f"{part_id}: {entry['score']:g} / {entry['max_score']:g} points{extra}"
    if entry["status"] == "passed":
        return verdict
    return f"{verdict}\n\n{entry['output']}"


_graded: dict[tuple[str, str], dict[str, dict]] = {}  # (path, SHA-256): each saved version graded once


def check_part(part_id: str, notebook: str | Path | None = None) -> None:
    """The grading cell of `part_id`: print its score and messages, and show the score as the
    cell's result (a bonus shows none: its cell is worth 0, the kit's run gives its extra credit).
    Raises NotebookError only when the notebook cannot be graded: nbgrader gives no credit to a
    cell that raises or writes to stderr, so lost points do neither."""
    path = Path(notebook or f"{engine_of(part_id)}.ipynb").resolve()
    try:
        key = (str(path), hashlib.sha256(path.read_bytes()).hexdigest())
    except OSError as error:
        raise NotebookError(f"{path}: cannot be read ({error.strerror}); save the notebook, and run "
                            "this cell from the notebook's own folder") from None
    if key not in _graded:
        _graded[key] = score_notebooks({engine_of(part_id): path})
    entry = _graded[key].get(part_id)
    if entry is None:  # a handout's grading.toml lists only the parts it has tests for
        print(f"{part_id}: no test of this part here; course staff grade it after the deadline.")
        sys.displayhook(0.0)
        return
    bonus = load().parts[part_id].bonus
    print(part_report(part_id, entry, bonus))
    if not bonus:
        sys.displayhook(entry["score"])  # the cell's result, as if the cell ended with the number
