"""The expressions every engine is checked on: by central differences (test_lessons.py) and
against PyTorch's answers (torch_answers.py), with the inputs each draws."""

from __future__ import annotations

import numpy as np

# (name, expression, how to draw each input): "any" is +-[0.5, 2], "positive" is [0.5, 2].
VALUE_OPS = [
    ("a + b", lambda a, b: a + b, "any"),
    ("a + number", lambda a, b: a + 1.7, "any"),
    ("number + a", lambda a, b: 1.7 + a, "any"),
    ("a - b", lambda a, b: a - b, "any"),
    ("a - number", lambda a, b: a - 1.7, "any"),
    ("number - a", lambda a, b: 1.7 - a, "any"),
    ("a * b", lambda a, b: a * b, "any"),
    ("a * number", lambda a, b: a * 1.7, "any"),
    ("number * a", lambda a, b: 1.7 * a, "any"),
    ("a / b", lambda a, b: a / b, "any"),
    ("a / number", lambda a, b: a / 1.7, "any"),
    ("number / a", lambda a, b: 1.7 / a, "any"),
    ("-a", lambda a, b: -a, "any"),
    ("a ** 3", lambda a, b: a**3, "any"),
    ("a ** -2", lambda a, b: a**-2, "any"),
    ("a ** 0.5", lambda a, b: a**0.5, "positive"),
    ("a.exp()", lambda a, b: a.exp(), "any"),
    ("a.log()", lambda a, b: a.log(), "positive"),
    ("a.tanh()", lambda a, b: a.tanh(), "any"),
    ("a.relu()", lambda a, b: a.relu(), "any"),
    ("a.sigmoid()", lambda a, b: a.sigmoid(), "any"),
    ("a * a + a / b", lambda a, b: a * a + a / b, "any"),
]


def draw(rng: np.random.Generator, kind: str, size=None):
    """Inputs at least 0.5 away from 0, where relu has its kink and 1/x its pole."""
    magnitude = rng.uniform(0.5, 2.0, size=size)
    sign = 1.0 if kind == "positive" else rng.choice([-1.0, 1.0], size=size)
    return magnitude * sign



def tensor_ops(cross_entropy):
    labels = np.array([0, 2, 1, 2])
    # (name, expression, input shapes, how to draw the inputs)
    return [
        ("A + B, (4,3) + (3,)", lambda A, B: A + B, [(4, 3), (3,)], "any"),
        ("A + B, (2,3,5) + (3,1)", lambda A, B: A + B, [(2, 3, 5), (3, 1)], "any"),
        ("A + B, (2,3) + ()", lambda A, B: A + B, [(2, 3), ()], "any"),
        ("A - B, (4,3) - (3,)", lambda A, B: A - B, [(4, 3), (3,)], "any"),
        ("A - B, (4,1) - (1,5)", lambda A, B: A - B, [(4, 1), (1, 5)], "any"),
        ("A * B, (4,1) * (1,5)", lambda A, B: A * B, [(4, 1), (1, 5)], "any"),
        ("A * B, (4,3) * (3,)", lambda A, B: A * B, [(4, 3), (3,)], "any"),
        ("A @ B", lambda A, B: A @ B, [(4, 3), (3, 5)], "any"),
        ("-A", lambda A: -A, [(4, 3)], "any"),
        ("number + A", lambda A: 1.7 + A, [(4, 3)], "any"),
        ("number - A", lambda A: 1.7 - A, [(4, 3)], "any"),
        ("number * A", lambda A: 1.7 * A, [(4, 3)], "any"),
        ("A.sum()", lambda A: A.sum(), [(4, 3)], "any"),
        ("A.sum(axis=0)", lambda A: A.sum(axis=0), [(4, 3)], "any"),
        ("A.sum(axis=1, keepdims=True)", lambda A: A.sum(axis=1, keepdims=True), [(4, 3)], "any"),
        ("A.sum(axis=(0, 2))", lambda A: A.sum(axis=(0, 2)), [(2, 3, 4)], "any"),
        ("A.sum(axis=-1)", lambda A: A.sum(axis=-1), [(2, 3, 4)], "any"),
        ("A.mean()", lambda A: A.mean(), [(4, 3)], "any"),
        ("A.relu()", lambda A: A.relu(), [(4, 3)], "any"),
        ("A.exp()", lambda A: A.exp(), [(4, 3)], "any"),
        ("A.log()", lambda A: A.log(), [(4, 3)], "positive"),
        ("cross_entropy(A, labels)", lambda A: cross_entropy(A, labels), [(4, 3)], "any"),
        ("a layer: (A @ W + b) * c", lambda A, W, b, c: (A @ W + b) * c,
         [(4, 3), (3, 5), (5,), (4, 1)], "any"),
    ]


TENSOR_OP_NAMES = [case[0] for case in tensor_ops(None)]


def two_losses(leaf, backward, W0: np.ndarray, X0: np.ndarray, v0: np.ndarray) -> tuple:
    """Two losses over one graph, reuse after backward and repeated calls, then a loss made
    after three backward() calls: the gradients of W, X and v (`leaf` makes a leaf of an array,
    `backward` runs a loss's reverse pass)."""
    W, X, v = leaf(W0), leaf(X0), leaf(v0)
    h = (X @ W).relu()
    first = (h * v).sum()
    second = (h * h).mean()
    backward(first)
    backward(second)
    backward(first)
    third = ((h + v) * h).sum()
    backward(third)
    return W.grad, X.grad, v.grad
