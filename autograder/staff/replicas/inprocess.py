"""The scalar engine's scenarios, answered for the reference in this process: no new code.

The reference's answers to the value scenarios (arithmetic, activations, backward, value) take
little computing; what they cost live is mostly the round trip to its worker, fifty of them a
grading. So their replicas are the scenarios themselves: the scenario modules, read as text as
a worker is sent them, and the reference's own engine file, both loaded here into modules of
their own, with a scenario called as the worker calls it. The same code on the same file gives
the same answer, so these need no verification of their own, only the first call's comparison
with the live answer that every replica gets (runner.FastReference).

Where this process could answer otherwise than the worker, the live reference answers
(runner.AnswerLive): a case where the reference raised (the worker names the line in its own
folder), and a call that runs past test_timeout_seconds of CPU time (the worker stops it by its
limit, and says so).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import signal
import sys
import threading
import types
from functools import cache

from ... import runner, scenario_sources
from ...config import load

MODULES = ("activations", "arithmetic", "backward", "value")  # the scenario modules answered here
PACKAGE = f"{__name__}._scenarios"  # where their copies live in sys.modules


def answer(scenario_id: str, kwargs: dict, reference: dict[str, bytes]) -> object:
    """The scenario's answer, run on the reference's engine file, as the worker would send it."""
    module, _, name = scenario_id.partition(":")
    function = getattr(_package()[module], name)
    engine = _engine(reference[function.engine])
    with _limit(load().limits.test_timeout_seconds), _collected():
        found = function(engine, **kwargs)
    text = json.dumps(found, allow_nan=True)
    if '"raised"' in text:
        raise runner.AnswerLive(f"{scenario_id}: the reference raised in a case")
    return json.loads(text)


@cache
def _package() -> dict[str, types.ModuleType]:
    """The scenario modules, as a package of their own, each run after those it imports."""
    sources = scenario_sources.sources()
    package = types.ModuleType(PACKAGE)
    package.__path__ = []
    sys.modules[PACKAGE] = package
    modules: dict[str, types.ModuleType] = {}

    def load(name: str) -> None:
        if name in modules:
            return
        module = modules[name] = sys.modules[f"{PACKAGE}.{name}"] = types.ModuleType(f"{PACKAGE}.{name}")
        module.__package__ = PACKAGE
        for other in scenario_sources.needs(name):
            load(other)
        exec(compile(sources[name], f"<scenarios/{name}.py>", "exec"), module.__dict__)  # noqa: S102

    for name in sources:
        load(name)
    return modules


@cache
def _engine(source: bytes) -> types.ModuleType:
    """The reference's engine file as a module of its own (one per distinct file)."""
    name = f"{PACKAGE}_engine_{hashlib.sha256(source).hexdigest()[:16]}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # a dataclass looks its module up there
    exec(compile(source, "value.py", "exec"), module.__dict__)  # noqa: S102
    return module


@contextlib.contextmanager
def _collected():
    """No automatic collection during the call, the youngest generation collected after it. Its
    graph is all reference cycles (a node's rule refers to the node): left to the automatic
    collector here, they would set off rescans of everything the grading process holds, charged
    to whichever code ran next."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
        gc.collect(0)


class _TimeUp(BaseException):
    """The call's CPU time is spent (not an Exception: a scenario's case must not catch it)."""


def _time_up(signum, frame):
    raise _TimeUp


@contextlib.contextmanager
def _limit(seconds: float):
    """Stop the call after `seconds` of this process's CPU time: the live reference answers it
    (as it does every call outside the main thread, where no signal can stop one)."""
    if threading.current_thread() is not threading.main_thread():
        raise runner.AnswerLive("a call outside the main thread")
    previous = signal.signal(signal.SIGPROF, _time_up)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    except _TimeUp:
        raise runner.AnswerLive(f"ran past {seconds} s of CPU time here") from None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL if previous is None else previous)
