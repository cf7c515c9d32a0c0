"""Helpers the scenarios share: seeded inputs, central differences, cases, and graph drawings.

When a request asks for them (`draw_graphs`), a scenario draws the graphs it builds (`drawn`),
and the worker sends them beside the observations: one per case, else the last one drawn.
They only explain a failed answer (graphs.py), never decide one.
"""

from __future__ import annotations

import linecache
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field

REVERSES = ("none", "kit", "backward")


def scenario(engine: str, reverse: str = "none") -> Callable[[Callable], Callable]:
    """Declare a function a scenario of `engine` (`value`, `tensor`, `dual`: its first argument);
    `reverse` runs its reverse pass: "kit" (Tape: a backward() bug costs nothing here), "backward"
    or "none". Raises ValueError for another `reverse`."""
    if reverse not in REVERSES:
        raise ValueError(f"reverse={reverse!r}: one of {REVERSES}")

    def declare(function: Callable) -> Callable:
        function.engine, function.reverse = engine, reverse
        return function
    return declare


def central_difference(f: Callable[[float], float], x: float) -> float:
    """(f(x + h) - f(x - h)) / 2h, with h near the cube root of float64's epsilon, scaled to x."""
    h = 6e-6 * max(1.0, abs(x))
    return (f(x + h) - f(x - h)) / (2 * h)


def gradient_fd(f: Callable[[list[float]], float], point: list[float]) -> list[float]:
    """The central-difference gradient of f at point, one coordinate at a time."""
    def along(i: int) -> Callable[[float], float]:
        return lambda t: f(point[:i] + [t] + point[i + 1:])
    return [central_difference(along(i), x) for i, x in enumerate(point)]


def uniform(seed: int, count: int, low: float, high: float, avoid: float = 0.0,
            margin: float = 0.0) -> list[float]:
    """`count` seeded numbers, one from each of `count` equal slices of [low, high], in a
    seeded order, none within `margin` of `avoid` (a kink): whatever the seed, they cover the
    whole range (both signs, small and large sizes)."""
    rng = random.Random(seed)
    width = (high - low) / count
    numbers = []
    for index in range(count):
        start = low + index * width
        for _ in range(100):
            x = round(rng.uniform(start, start + width), 6)
            if abs(x - avoid) >= margin:
                break
        else:  # the whole slice lies within the margin: the nearest number outside it
            x = avoid - margin if start + width / 2 < avoid else avoid + margin
        numbers.append(x)
    rng.shuffle(numbers)
    return numbers


def pairs(seed: int, count: int, low: float, high: float, avoid: float = 0.0,
          margin: float = 0.0) -> list[tuple[float, float]]:
    """`count` seeded pairs (a, b) for a range that holds both signs around `avoid` (low < avoid
    < high): each of a and b takes one number from each slice of the range (`uniform`), and
    every combination of their sides of `avoid` comes about count/4 times, whatever the seed. No
    pair's a and b are equal, nor a the reciprocal of b (`apart`)."""
    firsts, seconds = uniform(seed, count, low, high, avoid, margin), uniform(seed + 1, count, low, high,
                                                                               avoid, margin)
    below = [b for b in seconds if b < avoid]
    above = [b for b in seconds if b >= avoid]
    found = []
    for side in ([a for a in firsts if a < avoid], [a for a in firsts if a >= avoid]):
        half = (len(side) + 1) // 2  # half of this side's a with a b below, the rest with one above
        for index, a in enumerate(side):
            partners = below if (index < half and below) or not above else above
            found.append((a, partners.pop()))
    for index, (a, b) in enumerate(found):  # b's side of `avoid` kept, so each combination's count too
        if not apart(a, b):
            other = next((j for j, (c, d) in enumerate(found)
                          if (d < avoid) == (b < avoid) and apart(a, d) and apart(c, b)), None)
            if other is not None:
                found[index], found[other] = (a, found[other][1]), (found[other][0], b)
    random.Random(seed + 2).shuffle(found)
    return found


def apart(a: float, b: float) -> bool:
    """Do a and the nodes an engine may make of b (b, and b ** -1 for a quotient) hold different
    data? An engine that compares values by data merges two distinct nodes with equal data: the
    cases built to ask that ask it at every seed, and a pair drawn at random never does (the
    slices of `uniform` nearest a kink give a and b the same number). The suites' own pairs keep
    the same rule (suites/draws.py)."""
    return a != b and (b == 0 or a != 1 / b)


def describe(error: BaseException) -> dict:
    """An exception as plain data: its type, its message, and the last line of the
    submission's own code it passed through (`where`)."""
    try:
        text = str.__str__(str(error))[:2000]
    except Exception:  # noqa: BLE001 - a submission's exception may fail to print
        text = ""
    return {"type": type(error).__name__, "message": text, "where": where(error)}


def where(error: BaseException) -> str:
    """The last line of the submission's own code (a file of the worker's folder) that `error`
    passed through, as `value.py, line 12: return down(n + 1)`, or "". Sought from the deepest
    frame up, and only that line read: a recursion's traceback holds 20,000 frames, and reading
    each of them took more CPU time than a case's limit leaves (the error became a timeout)."""
    steps, step = [], error.__traceback__
    while step is not None:
        steps.append(step)
        step = step.tb_next
    here = os.getcwd()
    for step in reversed(steps):
        filename = step.tb_frame.f_code.co_filename
        if filename.startswith(here):
            line = linecache.getline(filename, step.tb_lineno).strip()
            return f"{os.path.basename(filename)}, line {step.tb_lineno}: {line}"
    return ""


@dataclass
class Drawings:
    """What the request being run has drawn: whether it draws graphs at all, the graph drawn
    last and not yet given to a case, and the graphs of the cases run so far. The worker's
    child runs one request at a time and starts each with `draw_graphs`."""

    on: bool = False
    last: dict | None = None
    cases: list = field(default_factory=list)
    notes: dict = field(default_factory=dict)  # inputs the case being run adds of its own (`note`)


_request = Drawings()


def draw_graphs(on: bool) -> None:
    """Start a request: it draws graphs when `on`, and nothing drawn before it is kept."""
    _request.on, _request.last = on, None
    _request.cases.clear()


def drawing() -> bool:
    """Whether the request being run draws graphs."""
    return _request.on


def drawn(graph: dict | None) -> None:
    """Keep a graph the scenario drew (None: it could not be drawn)."""
    _request.last = graph


def drawings() -> list:
    """The graphs drawn since the last call, and forget them: one per case (None where a case
    drew none) when the scenario ran cases, else the last one drawn; empty if none was."""
    found = list(_request.cases) if _request.cases else [_request.last]
    _request.cases.clear()
    _request.last = None
    return found if any(graph is not None for graph in found) else []


def note(**inputs) -> None:
    """Add to the inputs of the case being run what it found out on the way (how many nodes an
    operation made): never compared, only read to choose the snippet its message shows."""
    _request.notes.update(inputs)


def case(inputs: dict, observe: Callable[[], dict]) -> dict:
    """One case of a scenario: its inputs and what `observe` saw, or the exception it raised,
    so that a message can show the very case that failed. `observe` may add inputs of its own
    (a shift it computed) under "inputs". The graph it drew, if any, is kept as this case's."""
    _request.last = None
    _request.notes.clear()
    try:
        found = observe()
    except (RecursionError, MemoryError):
        raise  # the scenario's answer: every case would spend its time exhausting the same limit
    except Exception as error:  # noqa: BLE001 - whatever the submission raises is the answer
        return {"inputs": {**inputs, **_request.notes}, "raised": describe(error)}
    finally:
        if _request.on:
            _request.cases.append(_request.last)
        _request.last = None
    return {**found, "inputs": {**inputs, **found.get("inputs", {}), **_request.notes}}
