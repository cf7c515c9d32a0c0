"""The probe: which mutants change behaviour, told without the suites, in this process.

Two kinds of evidence, each run on the reference and on a mutant under a limit of CPU time:
the seeded programs of the mutant's engine (programs.py), random uses of its public API that
every correct implementation agrees on; and the scenario calls of the mutant's own part, as
its tests made them (replay.py), which reach whatever the part grades, an operation the
programs never use included. The first label whose value differs is the evidence that the
mutant changes behaviour; a mutant nothing tells apart is equivalent, left out of the score.
"""

from __future__ import annotations

import contextlib
import math
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from autograder.config import KIT_ROOT as KIT
from autograder.stubs import engine_files

from .generate import Mutant
from .programs import Observations, Observer, programs_for
from .replay import SuiteCall, engine_of, flatten, load, replay

# A mutant's number is the reference's if |got - expected| <= ABSOLUTE + RELATIVE * |expected|:
# far tighter than the grader's tolerances, and loose enough for the last bit of a sum.
RELATIVE, ABSOLUTE = 1e-9, 1e-12
# CPU seconds one program may take; the reference takes a few milliseconds. A replayed scenario
# call may take SCENARIO_ROOM times the reference's own time for it, if that is more.
PROGRAM_SECONDS = 1.0
SCENARIO_ROOM = 10.0


class ProbeTimeout(Exception):
    """A program ran longer than PROGRAM_SECONDS of CPU time."""


@contextlib.contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Raise ProbeTimeout in this (the main) thread once it has used `seconds` of CPU time."""
    def expire(signum, frame):
        raise ProbeTimeout(f"ran longer than {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _run(program: Callable[[ModuleType, Observer], None], module: ModuleType,
         seconds: float = PROGRAM_SECONDS) -> Observations:
    """What `program` shows on `module`, ending with how it stopped if it did not finish."""
    record = Observer()
    try:
        with _cpu_limit(seconds):
            program(module, record)
    except ProbeTimeout:
        record.seen.append(("the program", "did not finish"))
    except RecursionError:
        record.seen.append(("the program", "raised RecursionError"))
    except Exception as error:  # a mutant may raise anything; which one is an observation
        record.seen.append(("the program", f"raised {type(error).__name__}"))
    return record.seen


def _close(expected: object, got: object) -> bool:
    """Is `got` the reference's `expected`, within RELATIVE and ABSOLUTE (nan matches nan)?"""
    if isinstance(expected, float) and isinstance(got, float):
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        return expected == got or abs(got - expected) <= ABSOLUTE + RELATIVE * abs(expected)
    if isinstance(expected, tuple) and isinstance(got, tuple):
        return expected[0] == got[0] and len(expected[1]) == len(got[1]) and all(
            _close(e, g) for e, g in zip(expected[1], got[1]))
    return expected == got


def _first_difference(expected: Observations, got: Observations) -> str | None:
    """Where the mutant's observations first differ from the reference's, in words, or None."""
    for (label, want), (seen, have) in zip(expected, got):
        if seen != label:
            return f"{label}: the reference gives {want!r}; the mutant, there: {seen} {have}"
        if not _close(want, have):
            return f"{label}: the reference gives {want!r}, the mutant {have!r}"
    if len(expected) != len(got):
        shorter, longer = (got, expected) if len(got) < len(expected) else (expected, got)
        label, extra = longer[len(shorter)]
        who = "reference" if longer is expected else "mutant"
        return f"only the {who} shows {label}: {extra!r}"
    return None


@dataclass(frozen=True)
class Verdict:
    """The probe's answer for one mutant: does it change behaviour, and where it first showed."""

    changes: bool
    evidence: str  # "value program 3: after step 1 (...): node 2 grad: the reference gives ..."


@dataclass(frozen=True)
class Replay:
    """A scenario call of the suites as a program of the probe: the engine it runs on, what the
    reference observes, and the CPU time it may take."""

    call: SuiteCall
    engine: str
    expected: Observations
    seconds: float

    def run(self, module: ModuleType) -> Observations:
        """What the call observes on `module`, flattened, ending with how it stopped if it did not."""
        def program(module: ModuleType, record: Observer) -> None:
            record.seen += flatten(replay(self.call, module))
        return _run(program, module, self.seconds)


class Probe:
    """Differential testing of mutants against the reference, in this process (main thread only):
    the seeded programs of the mutant's engine, then the scenario calls of its part (`calls`),
    compare every value, gradient and exception (every correct implementation agrees on the
    programs: tests/staff/test_mutation.py); a mutant none tells apart is equivalent. A
    program the reference itself cannot run (an operation the kit no longer has) is no
    evidence, and is left out (`dropped`)."""

    def __init__(self, kit: Path = KIT, calls: list[SuiteCall] = ()) -> None:
        self.reference = {path.stem: load(path.stem, path.read_text("utf-8"), f"probe_reference_{path.stem}")
                          for path in engine_files(kit / "solutions")}
        self.calls = list(calls)
        self.programs: dict[str, list] = {}
        self.expected: dict[str, list[Observations]] = {}
        self.dropped: list[str] = []
        for engine, module in self.reference.items():
            # The shortest programs first, so that a mutant's evidence is as small as it can be.
            runs = sorted(((program, _run(program[1], module)) for program in programs_for(engine)),
                          key=lambda pair: len(pair[1]))
            failed = [label for (label, _), seen in runs if seen and seen[-1][0] == "the program"]
            self.dropped += failed
            kept = [(program, seen) for program, seen in runs if program[0] not in failed]
            self.programs[engine] = [program for program, _ in kept]
            self.expected[engine] = [seen for _, seen in kept]
        self.replays: dict[str, list[Replay]] = {}
        self.loaded = 0

    def part_replays(self, part: str) -> list[Replay]:
        """The scenario calls of `part`, with the reference's observations; made once per part, the
        first time a mutant of it is probed."""
        if part not in self.replays:
            found = []
            for call in (call for call in self.calls if call.part == part):
                engine = engine_of(call.scenario)
                if engine in self.reference:
                    seconds = max(PROGRAM_SECONDS, SCENARIO_ROOM * call.seconds)
                    found.append(Replay(call, engine, [], seconds))
                    found[-1] = Replay(call, engine, found[-1].run(self.reference[engine]), seconds)
            self.replays[part] = found
        return self.replays[part]

    def __call__(self, mutant: Mutant) -> Verdict:
        """The probe's Verdict on `mutant`: the first program or scenario call whose observations
        differ, if any."""
        self.loaded += 1
        try:
            module = load(mutant.engine, mutant.source, f"probe_mutant_{self.loaded}_{mutant.engine}")
        except Exception as error:  # an edit may break the file at import time
            return Verdict(True, f"importing it raised {type(error).__name__}: {error}")
        programs = self.programs.get(mutant.engine, [])
        for (label, program), expected in zip(programs, self.expected.get(mutant.engine, [])):
            difference = _first_difference(expected, _run(program, module))
            if difference:
                return Verdict(True, f"{label}: {difference}")
        replays = self.part_replays(mutant.part)
        for call in replays:
            modules = {**self.reference, mutant.engine: module}
            difference = _first_difference(call.expected, call.run(modules[call.engine]))
            if difference:
                return Verdict(True, f"{call.call.label}: {difference}")
        return Verdict(False, f"no difference in {len(programs)} programs and {len(replays)} scenario calls "
                       f"of {mutant.part}")
