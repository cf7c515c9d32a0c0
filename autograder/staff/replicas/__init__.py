"""Replicas: the reference's answers to its costliest scenarios, computed in the grading process.

An official grading asks every submission questions of its own, so the reference answers them
too. Its scalar engine takes most of that time in the training runs, and its worker some more.
A replica is a function of the same name as a scenario, in the module of the same name as the
scenario's (training.py: `training:train_moons`), that computes the reference's answer with
NumPy instead: the same numbers within grading.toml's tolerances (the training tolerance for
a module that declares TOLERANCE = "training", the strict one elsewhere). The value scenarios'
replicas are the scenarios themselves, run here on the reference's own value.py
(inprocess.py): the same code on the same file needs no verification, only the first call's
comparison below.

A replica can never drift from solutions/ unnoticed:

- It is used only while it is verified: `verified.json` records, for each replica, a key of
  the scenario modules it mirrors, the reference's engine file and the replica's own module,
  as they were when `autograder replicas` last held it against the live reference at many
  seeds. Change any of them and the key differs: the scenario is answered live until the
  replica is verified again (the kit's tests fail until then).
- In each grading process, the first call of a replicated scenario is answered live, and the
  replica's answer is compared with it; a replica that disagrees is not used again in that
  process, and says so on standard error.
- The live answer's CPU time stays each scenario's yardstick: a replica's answer carries the
  time the live reference took for that scenario in this process (a scenario's time depends
  on its sizes, which the test fixes, not on the numbers drawn), so no limit shrinks because
  a replica is fast.

Replicas answer only where a grading process grades one submission after another, so they
live with bulk grading's tools and never ship: `autograder bulk` loads this module as a pytest
plugin (`-p autograder.staff.replicas`), which hands them to the runner (runner.FastReference).
The scenarios' graphs, drawn for a failed check's message, always come from the live reference.

    autograder replicas [--seeds N]     verify every replica at the public seed and N more,
                                        and record the ones that agree in verified.json
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from functools import cache
from pathlib import Path

import pytest

from ... import runner, scenario_sources
from ...answers import Tolerance, is_number
from ...parts import engines
from . import inprocess

# One thread for NumPy's BLAS, set before this process imports NumPy (the grader's side imports
# it for the replicas alone): small matrix products on several threads cost half as much CPU
# time again, spent spinning.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

HERE = Path(__file__).parent
VERIFIED = HERE / "verified.json"
MODULES = ("dual", "tensor", "training")  # the scenario modules that have replicas here


def case(found: dict, inputs: dict) -> dict:
    """One case of an answer, as the scenarios' `case` makes it: what it found, then its inputs."""
    return {**found, "inputs": inputs}


def replicated() -> list[str]:
    """The scenario ids that have a replica, of the engines grading.toml grades (an engine removed
    from it leaves its replicas unasked)."""
    found, graded = [], engines()
    for scenario in scenario_sources.every_scenario():
        module, _, name = scenario.id.partition(":")
        if (module in MODULES and scenario.engine in graded and not name.startswith("_")
                and callable(getattr(_module(module), name, None))):
            found.append(scenario.id)
    return found


@cache
def _module(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def mirrored(module: str) -> list[str]:
    """The scenario modules a scenario module's answers depend on: itself and what it imports."""
    sources, found, todo = scenario_sources.sources(), [], [module]
    while todo:
        name = todo.pop()
        if name not in found and name in sources:
            found.append(name)
            todo += scenario_sources.needs(name)
    return sorted(found)


def key(scenario_id: str, reference: dict[str, bytes]) -> str:
    """What a replica's verification holds for: the sources of the scenario modules it mirrors,
    the reference's file of the engine the scenario runs on, and the replicas' own code."""
    module = scenario_id.partition(":")[0]
    digest = hashlib.sha256(scenario_id.encode() + b"\0" + _sources_digest(module))
    engine = scenario_sources.scenario(scenario_id).engine
    digest.update(f"solutions/{engine}.py\0".encode() + hashlib.sha256(reference.get(engine, b"")).digest())
    return digest.hexdigest()


@cache
def _sources_digest(module: str) -> bytes:
    """The digest of the scenario modules `module` mirrors and of the replicas' code (this
    module, `arrays` and `module`'s replicas), as this process holds them."""
    digest = hashlib.sha256()
    for name in mirrored(module):
        digest.update(f"scenarios/{name}.py\0".encode() + _sha256(scenario_sources.sources()[name].encode()))
    for name in ("__init__", "arrays", module):
        digest.update(f"replicas/{name}.py\0".encode() + _sha256((HERE / f"{name}.py").read_bytes()))
    return digest.digest()


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def verified() -> dict[str, str]:
    """The keys recorded in verified.json, by scenario id (none where there is no such file)."""
    try:
        return json.loads(VERIFIED.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def tolerance_of(scenario_id: str) -> str:
    """The tolerance a replica is held to: "training" where its module says so, else "default"."""
    return getattr(_module(scenario_id.partition(":")[0]), "TOLERANCE", "default")


def answer(scenario_id: str, kwargs: dict) -> object:
    """The replica's answer to `kwargs` as a worker receives them (`as_sent`), in the form of a
    worker's reply (plain lists, dicts, floats and texts, which `disagreement` holds it to)."""
    module, _, name = scenario_id.partition(":")
    return getattr(_module(module), name)(**as_sent(kwargs))


def as_sent(x: object) -> object:
    """`x` as a worker receives it, in JSON: a tuple (a shape a suite parametrizes with) is a list,
    a key is text. A list that starts with a number is taken to hold numbers alone, and kept as
    it is: the training data is tens of thousands of them."""
    if isinstance(x, dict):
        return {str(key): as_sent(value) for key, value in x.items()}
    if isinstance(x, (list, tuple)):
        if type(x) is list and x and isinstance(x[0], (int, float)):
            return x
        return [as_sent(item) for item in x]
    return x


def disagreement(expected: object, got: object, tolerance: Tolerance, path: str = "") -> str | None:
    """Where a replica's answer `got` first differs from the live reference's `expected`, or None:
    the same keys in the same order, the same lengths, the same inputs and texts exactly, and
    every number (central differences too) within `tolerance`."""
    here = path or "the answer"
    if isinstance(expected, dict):
        if not isinstance(got, dict) or list(got) != list(expected):
            return f"{here}: {_keys(got)} where the reference has {_keys(expected)}"
        for name, value in expected.items():
            if name == "inputs" and got[name] != value:
                return f"{path}.inputs: {got[name]} where the reference has {value}"
            if found := disagreement(value, got[name], tolerance, f"{path}.{name}" if path else name):
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return f"{here}: {_length(got)} where the reference has {len(expected)} items"
        return next((found for index, (e, g) in enumerate(zip(expected, got))
                     if (found := disagreement(e, g, tolerance, f"{path}[{index}]"))), None)
    if is_number(expected) and type(expected) is not bool:
        if is_number(got) and type(got) is not bool and tolerance.close(got, expected):
            return None
        return f"{here}: {got!r} where the reference has {expected!r}"
    return None if got == expected and type(got) is type(expected) else \
        f"{here}: {got!r} where the reference has {expected!r}"


def _keys(x: object) -> str:
    return f"the keys {list(x)}" if isinstance(x, dict) else f"a {type(x).__name__}"


def _length(x: object) -> str:
    return f"{len(x)} items" if isinstance(x, list) else f"a {type(x).__name__}"


def _runs_here(scenario_id: str) -> bool:
    """Is the scenario one of those run as they are on the reference's engine (inprocess.py)?"""
    return scenario_id.partition(":")[0] in inprocess.MODULES


class Replicas:
    """The replicas a grading may answer from (the runner's side of them: runner.FastReference)."""

    def __init__(self) -> None:
        self.recorded = verified()

    def usable(self, scenario_id: str, reference: dict[str, bytes]) -> bool:
        """Is there a replica of this scenario, verified for these reference files and the
        scenario modules as they are, or run here on the reference's own engine file?"""
        if _runs_here(scenario_id):
            return scenario_sources.scenario(scenario_id).engine in reference
        return scenario_id in self.recorded and key(scenario_id, reference) == self.recorded[scenario_id]

    def answer(self, scenario_id: str, kwargs: dict, reference: dict[str, bytes]) -> object:
        if _runs_here(scenario_id):
            return inprocess.answer(scenario_id, as_sent(kwargs), reference)
        return answer(scenario_id, kwargs)

    def tolerance(self, scenario_id: str) -> str:
        return "default" if _runs_here(scenario_id) else tolerance_of(scenario_id)

    disagreement = staticmethod(disagreement)


_REPLICAS = Replicas()  # one per grading process: verified.json is read once


def pytest_configure(config: pytest.Config) -> None:
    """Loaded as a pytest plugin (`-p autograder.staff.replicas`): the grading's reference may
    answer from the replicas."""
    config.stash[runner.REPLICAS] = _REPLICAS


def pytest_terminal_summary(terminalreporter) -> None:
    """A replica that disagreed with the live reference in this session, said once, in the
    grading's output (a bulk run keeps it in logs/ when the grading fails)."""
    for line in runner.FastReference.distrusted:
        terminalreporter.write_line(line, red=True)
    runner.FastReference.distrusted.clear()
