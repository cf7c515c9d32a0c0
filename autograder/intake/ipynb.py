"""A Jupyter notebook as engine modules: its code cells, split by the names they define."""

from __future__ import annotations

import json
import re
import warnings

from ..escape import SURROGATE, printable
from . import bounded
from .python import cell_engines, defined_here
from .submissions import Submission

FUTURE_IMPORT = re.compile(r"^from __future__ import .+$", re.MULTILINE)
MOVED_UP = r"# \g<0>  (moved to the top)"


def code_cells(text: str, where: str, submission: Submission) -> list[tuple[int, str]] | None:
    """(number, source) of a notebook's code cells; None, and a note, for a notebook that cannot
    be read. Read from its JSON: a cell that is not what the format describes is a note, never
    an error."""
    notebook = notebook_json(text)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        problem = "not JSON" if notebook is None else "no list of cells"
        submission.note(f"{where}: not a readable notebook ({problem}); save it again from Jupyter")
        return None
    found = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            submission.note(f"{where}: cell {number} has a source that is not text; left out")
            continue
        if source.strip() and not nbgrader_check(cell):
            if SURROGATE.search(source):
                submission.note(f"{where}: cell {number} holds characters that are not valid Unicode; "
                                "each was replaced by U+FFFD")
            found.append((number, SURROGATE.sub("\ufffd", source)))
    return found


def notebook_json(text: str) -> object:
    """A notebook as nbformat 4 describes it; None when the text is not JSON. Notebooks of
    format 3 and older are converted by nbformat (imported only then: it takes most of a second)."""
    try:
        notebook = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(notebook, dict) and notebook.get("nbformat") in (1, 2, 3):
        import nbformat

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return nbformat.convert(nbformat.from_dict(notebook), 4)
        except Exception:  # noqa: BLE001 - an old notebook that nbformat cannot convert
            return {}
    return notebook


def split_notebook(text: str, where: str, submission: Submission) -> dict[str, str]:
    """One module per engine from a notebook's code cells, read in the parsing process
    (bounded.py): a notebook too large for its limits is a note, and no module."""
    try:
        modules, notes = bounded.notebook_modules(text, where)
    except bounded.OverLimits as error:
        submission.note(f"{where}: {error}; not read")
        return {}
    for note in notes:
        submission.note(note)
    return modules


def modules_here(text: str, where: str) -> tuple[dict[str, str], list[str]]:
    """split_notebook, in this process: the parsing process's own. The modules and the notes."""
    scratch = Submission(where, "notebook", "notebook")
    modules = split_here(text, where, scratch)
    return modules, scratch.notes


def split_here(text: str, where: str, submission: Submission) -> dict[str, str]:
    """One module per engine from a notebook's code cells, in notebook order: a cell goes to the
    engines whose names it defines, else to those it uses (a demo, a method attached to the
    class), else, mentioning none (imports, helpers), to every module."""
    cells = code_cells(text, where, submission)
    if cells is None:
        return {}
    if not cells:
        submission.note(f"{where}: the notebook has no code")
        return {}
    routed = []
    for number, source in cells:
        if source.lstrip().startswith("%%"):
            submission.note(f"{where}: cell {number} is a cell magic, not Python; left out")
            continue
        source = python_of(source)
        engines = cell_engines(source)
        if engines is None:
            submission.note(f"{where}: cell {number} is not valid Python (or is nested too deep for "
                            "Python's parser) and defines no engine; left out")
            continue
        routed.append((number, source, engines))
    defined = {e for _, source, _ in routed for e in defined_here(source)}
    return {engine: module_of(engine, routed, where) for engine in sorted(defined)}


def module_of(engine: str, routed: list[tuple[int, str, set[str]]], where: str) -> str:
    """The module of one engine: the cells that belong to it, under a header that names them."""
    label = printable(where)  # the module's first line is a comment: no line break may end it early
    cells = [(n, s) for n, s, engines in routed if not engines or engine in engines]
    # A cell may start with a __future__ import; a module may only do so at its very top.
    futures = sorted({line for _, s in cells for line in FUTURE_IMPORT.findall(s)})
    cells_text = "\n\n".join(f"# cell {n}\n" + FUTURE_IMPORT.sub(MOVED_UP, s) for n, s in cells)
    header = f"# {engine}.py, made from the code cells {', '.join(str(n) for n, _ in cells)} of {label}\n"
    return header + "".join(line + "\n" for line in futures) + cells_text + "\n"


def nbgrader_check(cell: dict) -> bool:
    """An nbgrader grading cell: it grades the notebook, it is no part of the student's module."""
    metadata = cell.get("metadata")
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return isinstance(meta, dict) and bool(meta.get("grade")) and not meta.get("solution")


def python_of(cell: str) -> str:
    """A cell's source with IPython's magics and shell lines commented out, line numbers kept."""
    lines = cell.replace("\r\n", "\n").split("\n")
    return "\n".join(f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in lines)
