"""Helpers the scenarios share: seeded inputs and central differences."""

from __future__ import annotations

import random
from collections.abc import Callable


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
    """`count` seeded numbers in [low, high], none within `margin` of `avoid` (a kink)."""
    rng = random.Random(seed)
    numbers = []
    while len(numbers) < count:
        x = rng.uniform(low, high)
        if abs(x - avoid) >= margin:
            numbers.append(round(x, 6))
    return numbers
