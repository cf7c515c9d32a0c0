"""What the replicas of array scenarios share: answers as the worker writes them, and central
differences of a whole-array loss at every entry at once."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def array(x: object) -> dict:
    """An array as an observation carries it (`{"ndarray": [...], "shape": [...]}`)."""
    x = np.asarray(x, dtype=np.float64)
    return {"ndarray": x.ravel().tolist(), "shape": list(x.shape)}


def central_differences(loss: Callable[..., np.ndarray], arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The central difference of `loss` along every entry of every array, as the scenarios take
    it one entry at a time ((f(x + h) - f(x - h)) / 2h, h = 6e-6 * max(1, |x|)). `loss` takes the
    arrays with one more axis, last, that holds two copies per entry (that entry +h, then -h),
    and returns one loss per copy."""
    flat = np.concatenate([a.ravel() for a in arrays])
    steps = 6e-6 * np.maximum(1.0, np.abs(flat))
    copies = 2 * flat.size
    stacks, start = [], 0
    for a in arrays:
        stacked = np.repeat(a.reshape(-1, 1), copies, axis=1)
        own = np.arange(a.size)
        stacked[own, 2 * (start + own)] = flat[start + own] + steps[start + own]
        stacked[own, 2 * (start + own) + 1] = flat[start + own] - steps[start + own]
        stacks.append(stacked.reshape(*a.shape, copies))
        start += a.size
    values = loss(*stacks)
    differences = (values[0::2] - values[1::2]) / (2 * steps)
    bounds = np.cumsum([0] + [a.size for a in arrays])
    return [differences[low:high].reshape(a.shape) for a, low, high in zip(arrays, bounds, bounds[1:])]
