"""Replicas of the tensor scenarios (inside/scenarios/tensor.py): NumPy, without the engine's graph.

The arrays are drawn from the same `random.Random` streams, each loss is the same NumPy
expression, its gradients are the closed forms of the scenario's expression, and the central
differences perturb every entry at once.
"""

from __future__ import annotations

import random

import numpy as np

from . import case
from .arrays import array, central_differences

ROWS, COLUMNS = 4, 5


def _entries(rng: random.Random, shape: tuple[int, ...]) -> np.ndarray:
    """The scenario's uniform(-1, 1) draws, which are -1 + 2 * random()."""
    draw = rng.random
    return (-1.0 + 2.0 * np.array([draw() for _ in range(int(np.prod(shape)))])).reshape(shape)


def _summed_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A broadcast result's gradient summed down to an operand's shape: the axes broadcasting
    added, then (keeping them) those it stretched from size 1."""
    added = grad.ndim - len(shape)
    if added > 0:
        grad = grad.sum(axis=tuple(range(added)))
    stretched = tuple(axis for axis, size in enumerate(shape) if size == 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def unbroadcast_cases(seed: int, pairs: list) -> list:
    cases = []
    for index, (out_shape, shape) in enumerate(pairs):
        grad = _entries(random.Random(seed + index), tuple(out_shape))
        inputs = {"seed": seed + index, "entries": grad.size, "out_shape": out_shape, "shape": shape}
        cases.append(case({"gradient": array(_summed_to(grad, tuple(shape)))}, inputs))
    return cases


def every_operand_shape(seed: int, out_shape: list) -> list:
    shapes = []
    for dropped in range(len(out_shape) + 1):
        kept = out_shape[dropped:]
        for mask in range(2 ** len(kept)):
            shapes.append([1 if mask >> axis & 1 else size for axis, size in enumerate(kept)])
    return unbroadcast_cases(seed, [[out_shape, shape] for shape in shapes])


def broadcast_operand(seed: int, shape: list) -> dict:
    rng = random.Random(seed)
    x, y, w = (_entries(rng, s) for s in [(ROWS, COLUMNS), tuple(shape), (ROWS, COLUMNS)])

    def loss(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """L = sum((X + Y) * W + (Y - X) * X); for operands stacked along a last axis, one each."""
        here = w if x.ndim == 2 else w[..., None]
        return ((x + y) * here + (y - x) * x).sum(axis=(0, 1))

    grad_x = w + y - 2 * x  # d/dX: W from (X + Y) * W, Y - 2X from (Y - X) * X
    grad_y = _summed_to(np.broadcast_to(w + x, (ROWS, COLUMNS)), y.shape)
    fd_x, fd_y = central_differences(loss, [x, y])
    return {"data": float(loss(x, y)), "grad_X": array(grad_x), "grad_Y": array(grad_y),
            "grad_X_fd": array(fd_x), "grad_Y_fd": array(fd_y)}


OPERAND_SHAPES = {"X": (ROWS, COLUMNS), "b": (COLUMNS,), "c": (ROWS, 1), "r": (1, COLUMNS), "s": ()}


def all_operands(seed: int) -> dict:
    rng = random.Random(seed)
    X, b, c, r, s = (_entries(rng, shape) for shape in OPERAND_SHAPES.values())

    def loss(X: np.ndarray, b: np.ndarray, c: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
        """L = mean((X * c + b) * r - s * X + (c - s)); for operands stacked along a last axis, one each."""
        return ((X * c + b) * r - s * X + (c - s)).mean(axis=(0, 1))

    # Each term's derivative, averaged over the (4, 5) result and summed to its operand's shape.
    n = ROWS * COLUMNS
    grads = {"X": (c * r - s) / n,
             "b": _summed_to(np.broadcast_to(r, (ROWS, COLUMNS)), (COLUMNS,)) / n,
             "c": _summed_to(X * r + 1, (ROWS, 1)) / n,
             "r": _summed_to(X * c + b, (1, COLUMNS)) / n,
             "s": np.array(-(X.sum() + n) / n)}
    fds = central_differences(loss, [X, b, c, r, s])
    observations: dict = {"data": float(loss(X, b, c, r, s))}
    for (name, grad), fd in zip(grads.items(), fds):
        observations[f"grad_{name}"] = array(grad)
        observations[f"grad_{name}_fd"] = array(fd)
    return observations
