"""Write the example class for `autograder bulk`, made from the reference and the stubs.

    python examples/make_class.py [FOLDER]      (default: examples/class)

Every submission is `solutions/` (or `assignments/`) in one of the shapes a class arrives in,
most with a one-line bug; examples/README.md says what each should score. The files are made
afresh from the kit every time, so they follow the reference as it changes, and byte for byte
the same every time, so a second bulk run finds nothing changed. The engines are those of the
kit's grading.toml: with one removed, its files, its bug and its demo are left out, and the
class is still written.
"""

from __future__ import annotations

import ast
import shutil
import sys
import zipfile
from pathlib import Path

import nbformat

from autograder.parts import engines

KIT = Path(__file__).resolve().parent.parent
ENGINES = engines(KIT / "grading.toml")
# One-line bugs: (file, the reference's line, the line with the bug). Each must occur once.
BUGS = {
    "overwrites-gradient": ("value", "self.grad += other.data * out.grad",
                            "self.grad = other.data * out.grad"),
    "tanh-derivative-of-input": ("value", "self.grad += (1.0 - t * t) * out.grad",
                                 "self.grad += (1.0 - self.data**2) * out.grad"),
    "relu-gate": ("value", "self.grad += (self.data > 0) * out.grad",
                  "self.grad += (self.data < 0) * out.grad"),
    "zero-grad-self-only": ("value", "                stack.extend(node._prev)\n", "                break\n"),
    "dual-constant-derivative": ("dual", "der: float = 0.0", "der: float = 1.0"),
}
FIXED_TIME = (2026, 11, 30, 9, 0, 0)  # zip entries carry this date, so the bytes never change


def source(folder: str, engine: str, bug: str = "") -> str:
    """An engine file of `folder` (solutions or assignments), with one bug put in."""
    text = (KIT / folder / f"{engine}.py").read_text(encoding="utf-8")
    if bug and BUGS[bug][0] == engine:
        _, line, buggy = BUGS[bug]
        if text.count(line) != 1:
            raise SystemExit(f"examples/make_class.py: the bug {bug!r} no longer fits {folder}/{engine}.py: "
                             f"update BUGS to a line that occurs there exactly once")
        text = text.replace(line, buggy)
    return text


def reference(bug: str = "") -> dict[str, str]:
    """The reference's engine files, with one bug put in (none where its engine is not the kit's)."""
    return {engine: source("solutions", engine, bug) for engine in ENGINES}


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, FIXED_TIME), data)


def statements(text: str) -> tuple[str, list[str]]:
    """A module's imports, and each of its other top-level statements (a definition with its
    decorators, an assignment such as a module's constants) as source text: all the module runs,
    but its docstring."""
    tree = ast.parse(text)
    lines = text.splitlines()
    imports, blocks = [], []
    for index, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.get_source_segment(text, node))
        elif not (index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
            blocks.append("\n".join(lines[start:node.end_lineno]))
    return "\n".join(imports), blocks


# A heading before an engine's code, and a demo cell after it, as a student would write them.
HEADINGS = {"dual": "## Forward mode"}
DEMOS = {"value": "a, b = Value(2.0), Value(-3.0)\nc = a * b + a\nc.backward()\n"
                  "print(c.data, a.grad, b.grad)",
         "dual": "x = Dual(1.5, 1.0)\n(x * x.sin()).der"}


def notebook(modules: dict[str, str], author: str) -> nbformat.NotebookNode:
    """The engines as a student's notebook: imports, every statement in a cell of its own, a
    demo or two."""
    cells = [nbformat.v4.new_markdown_cell(f"# Homework 3: autograd engines\n{author}")]
    imports = set()
    bodies = {}
    for engine, text in modules.items():
        found, bodies[engine] = statements(text)
        imports.update(found.splitlines())
    future = sorted(line for line in imports if "__future__" in line)
    cells.append(nbformat.v4.new_code_cell("\n".join(future + sorted(imports - set(future)))))
    cells.append(nbformat.v4.new_code_cell("%matplotlib inline"))
    for engine, blocks in bodies.items():
        if engine in HEADINGS:
            cells.append(nbformat.v4.new_markdown_cell(HEADINGS[engine]))
        cells += [nbformat.v4.new_code_cell(block) for block in blocks]
        if engine in DEMOS:
            cells.append(nbformat.v4.new_code_cell(DEMOS[engine]))
    for number, cell in enumerate(cells):
        cell.id = f"cell-{number}"  # fixed ids: the same notebook every time
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})


def make_class(folder: Path) -> Path:
    """Write the example class into `folder` (emptied first)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "alice").mkdir()
    for engine, text in reference().items():
        (folder / "alice" / f"{engine}.py").write_text(text, encoding="utf-8")
    bob = {f"bob_hw3/{engine}.py": text.encode() for engine, text in reference("overwrites-gradient").items()}
    write_zip(folder / "bob.zip", {**bob, "__MACOSX/bob_hw3/._value.py": b"\x00\x05\x16\x07Mac"})
    nbformat.write(notebook(reference("tanh-derivative-of-input"), "Carol"), folder / "carol.ipynb")
    smithjane = reference("zero-grad-self-only")
    windows = "\ufeff" + smithjane["value"].replace("\n", "\r\n")  # a BOM and Windows line endings
    (folder / "smithjane_12345_67890_Value.py").write_bytes(windows.encode("utf-8"))
    for engine in [engine for engine in ENGINES if engine != "value"]:
        (folder / f"smithjane_12345_67890_{engine}.py").write_text(smithjane[engine], encoding="utf-8")
    (folder / "doejohn_23456_78901_value.py").write_text(source("assignments", "value"), encoding="utf-8")
    (folder / "doejohn_23456_78902_value-1.py").write_text(source("solutions", "value", "relu-gate"),
                                                           encoding="utf-8")
    for engine in [engine for engine in ENGINES if engine not in ("value", "tensor")]:  # no tensor.py
        (folder / f"doejohn_23456_78901_{engine}.py").write_text(source("solutions", engine),
                                                                 encoding="utf-8")
    (folder / "dave.py").write_text(source("solutions", "value"), encoding="utf-8")
    grace = folder / "Grace Hopper_300021_assignsubmission_file_"  # Moodle's "Download all submissions"
    grace.mkdir()
    for engine, text in reference("dual-constant-derivative").items():
        (grace / f"{engine}.py").write_text(text, encoding="utf-8")
    whole = folder / "erin-whole.zip"
    write_zip(whole, {f"{engine}.py": text.encode() for engine, text in reference().items()})
    (folder / "erin.zip").write_bytes(whole.read_bytes()[:600])  # an upload cut off halfway
    whole.unlink()
    (folder / "frank").mkdir()
    (folder / "frank" / "README.txt").write_text("I could not get it to run, sorry.\n", encoding="utf-8")
    return folder


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else KIT / "examples" / "class"
    print(f"example class written to {make_class(target)}")
