"""The package's shape: no import circle among the kit's modules, and no two modules of one name.

The graph is read from the source (ast), every `import` counted wherever it is written, in a
function as at the top: a circle that only a late import keeps from failing is still a circle.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]
PACKAGES = ("autograder", "mutants")
# Stems more than one module has on purpose: each package's own command, and a replica named
# for the scenario module it mirrors (replicas/__init__.py finds it by that name).
SHARED_STEMS = {"__init__", "cli", "dual", "tensor", "training"}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the kit's packages under `root`, by dotted name (a package by its own)."""
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The kit's modules that module `name` imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def kit_module(dotted: str) -> str | None:  # the longest prefix that is one of ours
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {kit_module(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            # `from package import module` imports the module; `from module import name` the module
            found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else kit_module(base)
                      for alias in node.names}
    return found - {None, name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of `graph`: its strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for after in sorted(graph[node]):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph(root: Path = KIT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    assert len(graph) > 100 and "mutants.replay" in graph["autograder.staff.dry_run"]
    found = circles(graph)
    said = ["; ".join(f"{module} imports {', '.join(sorted(graph[module] & set(circle)))}"
                      for module in circle) for circle in found]
    assert not found, "import circles (imports inside functions included):\n" + "\n".join(said)


def test_the_graph_sees_late_and_relative_imports(tmp_path):
    """The graph itself: a circle closed by an import inside a function, written relative, is found."""
    package = tmp_path / "autograder"
    (package / "staff").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text("from .staff import bulk\n")
    (package / "staff" / "bulk.py").write_text("def run():\n    from ..config import KIT_ROOT\n")
    (package / "staff" / "cli.py").write_text("import autograder.staff.bulk\n")
    (tmp_path / "mutants").mkdir()
    graph = import_graph(tmp_path)
    assert graph["autograder.staff.cli"] == {"autograder.staff.bulk"}
    assert circles(graph) == [["autograder.config", "autograder.staff.bulk"]]


def test_no_two_modules_share_a_name_unless_they_mean_one_thing():
    stems = Counter(path.stem for path in modules(KIT).values())
    shared = {stem for stem, count in stems.items() if count > 1}
    assert shared <= SHARED_STEMS, f"modules of one name for two ideas: {sorted(shared - SHARED_STEMS)}"
