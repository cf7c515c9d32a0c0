"""The suites' own scenario calls, run again in this process on an engine loaded from source.

A graded run of the reference reports every scenario call its tests made (`--junitxml`, read
by `autograder check`); `replay` runs one of them again on any module (the reference, or a
mutant of it) and returns what it observed, flattened into labelled values as the probe
compares them. `reached` runs every call once on the reference with each marked region made
to say when it runs: the stubs each call reaches, whatever given code it went through (a
Tensor's `*` reaches `unbroadcast`), on every engine.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from autograder.stubs import BEGIN, Region, engine_files, functions, regions

Observations = list[tuple[str, object]]


def load(engine: str, source: str, name: str, names: dict | None = None) -> ModuleType:
    """Import `source` as a module of its own named `name`, outside sys.modules; `names` are put
    in its globals first."""
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(names or {})
    exec(compile(source, f"<{name}: {engine}.py>", "exec"), module.__dict__)  # our own reference, edited
    return module


@dataclass(frozen=True)
class SuiteCall:
    """One scenario call a test of the suites made, with the reference's CPU time for it."""

    test: str  # module:function, as check names it
    part: str
    scenario: str
    kwargs: dict
    seconds: float

    @property
    def label(self) -> str:
        """How evidence names it: the scenario, and the test that asked for it."""
        return f"{self.scenario} (asked by {self.test.rpartition('.')[2]})"


def suite_calls(kit: Path, folder: Path) -> tuple[Path, list[SuiteCall]]:
    """The reference graded by its own suites at the public seed (as `autograder check` grades
    it), in `folder`: its sealed answers, and every scenario call its tests made. Raises
    RuntimeError when it does not answer every call."""
    from autograder.staff.reference_run import grade_reference, tail

    folder.mkdir(parents=True, exist_ok=True)
    done, sealed, junit = grade_reference(kit, folder)
    if not sealed.is_file() or not junit.is_file():
        raise RuntimeError("the reference does not answer every scenario of its own suites; run `autograder "
                           f"check`, which says what to fix. pytest said:\n{tail(done.stdout)}")
    return sealed, calls_from(kit, junit, sealed)


def calls_from(kit: Path, junit: Path, sealed: Path) -> list[SuiteCall]:
    """Every scenario call of a grading of the reference, from pytest's report (--junitxml) and the
    answers it sealed, each with the part of the test that made it."""
    from autograder.staff.reference_run import calls_of, part_of

    parts: dict[str, str] = {}
    return [SuiteCall(found.test, parts.setdefault(found.test, part_of(kit, found.test)), found.scenario,
                 found.kwargs, found.seconds) for found in calls_of(kit, junit, sealed)]


def scenario_function(scenario_id: str) -> Callable:
    """The scenario behind an id such as `value:products`, imported from autograder/inside/."""
    module_name, _, name = scenario_id.partition(":")
    return getattr(importlib.import_module(f"autograder.inside.scenarios.{module_name}"), name)


def engine_of(scenario_id: str) -> str:
    """The engine a scenario takes, as its @scenario declaration says."""
    return scenario_function(scenario_id).engine


def replay(call: SuiteCall, module: ModuleType) -> object:
    """What the scenario of `call` observes when it runs on `module` (its engine's file), as it
    returns it (a copy of the arguments, which a scenario may change)."""
    return scenario_function(call.scenario)(module, **copy.deepcopy(call.kwargs))


def flatten(tree: object, label: str = "") -> Observations:
    """An observation as labelled plain values, in order: numbers as floats, arrays as (shape,
    entries), strings and None as they are, anything else by its type's name."""
    if isinstance(tree, dict):
        return [pair for key, value in tree.items() for pair in flatten(value, f"{label}.{key}".lstrip("."))]
    if isinstance(tree, (list, tuple)):
        return [(f"{label} (a list of {len(tree)})", len(tree))] + [
            pair for index, value in enumerate(tree) for pair in flatten(value, f"{label}[{index}]")]
    if isinstance(tree, (bool, int, float, np.generic)) and not isinstance(tree, np.str_):
        return [(label, float(tree))]
    if isinstance(tree, np.ndarray):
        if tree.dtype.kind not in "biuf":
            return [(label, str(tree.dtype))]
        return [(label, (tuple(tree.shape), tree.astype(np.float64).ravel().tolist()))]
    if tree is None or isinstance(tree, str):
        return [(label, tree)]
    return [(label, f"a {type(tree).__name__}")]


# -- the stubs each call reaches -------------------------------------------------------------------

@dataclass(frozen=True)
class Reach:
    """A marked region that a call ran: the region, its engine, and the given function of that
    engine it was reached from (None when the scenario called the stub itself)."""

    engine: str
    region: Region
    via: str | None


class _Reached:
    """What runs `__reached__(n)`, the statement put on the line of region n's BEGIN marker."""

    def __init__(self, engine: str, found: list[Region], tree: ast.Module, filename: str) -> None:
        self.engine, self.regions, self.filename = engine, found, filename
        self.holders = functions(tree)
        self.seen: set[Reach] = set()

    def holder(self, line: int) -> str | None:
        """The function (as Class.method) whose lines hold `line`, innermost of those listed."""
        found = [name for name, node in self.holders if node.lineno <= line <= node.end_lineno]
        return found[-1] if found else None

    def __call__(self, index: int) -> None:
        region = self.regions[index]
        frame = sys._getframe(1).f_back
        via = None
        while frame is not None and frame.f_code.co_filename == self.filename:
            caller = self.holder(frame.f_lineno)
            if caller != region.function:
                via = caller
                break
            frame = frame.f_back
        self.seen.add(Reach(self.engine, region, via))


def instrumented(source: str, where: Path) -> tuple[str, list[Region]]:
    """`source` with `__reached__(n)` on the line of each region's BEGIN marker (n counts the
    regions), so that its lines keep their numbers; and the regions. Raises StubError."""
    found = regions(source, where)
    lines = source.splitlines()
    for index, region in enumerate(found):
        marker = BEGIN.match(lines[region.first - 1])
        lines[region.first - 1] = f"{marker['indent']}__reached__({index})  {lines[region.first - 1].strip()}"
    return "\n".join(lines) + "\n", found


def reached(kit: Path, calls: list[SuiteCall]) -> list[set[Reach]]:
    """For each call, the marked regions of solutions/ that it runs on the reference, and from
    which given function: a call that raises reaches what it ran before it raised."""
    recorders, modules = {}, {}
    for path in engine_files(kit / "solutions"):
        source = path.read_text(encoding="utf-8")
        text, found = instrumented(source, path)
        name = f"reach_{path.stem}"
        recorder = _Reached(path.stem, found, ast.parse(source), f"<{name}: {path.name}>")
        modules[path.stem] = load(path.stem, text, name, {"__reached__": recorder})
        recorders[path.stem] = recorder
    found = []
    for call in calls:
        for recorder in recorders.values():
            recorder.seen = set()
        engine = engine_of(call.scenario)
        if engine in modules:
            with contextlib.suppress(Exception):  # what it reached before it raised still counts
                replay(call, modules[engine])
        found.append(set().union(*(recorder.seen for recorder in recorders.values())))
    return found
