"""Scenarios for `unbroadcast` in `tensor.py`: called directly, and through the Tensor engine.

Every array is filled from Python's `random.Random(seed)`, whose stream is the same on every
machine and NumPy version, so a sealed reference stays valid. Shapes arrive as JSON lists and
are handed to the engine as tuples.
"""

from __future__ import annotations

import random

import numpy as np

from .common import gradient_fd, scenario

ROWS, COLUMNS = 4, 5


def _entries(rng: random.Random, shape: tuple[int, ...]) -> np.ndarray:
    """Seeded values in [-1, 1] of the given shape; `()` gives a 0-d array."""
    return np.array([rng.uniform(-1, 1) for _ in range(int(np.prod(shape)))]).reshape(shape)


def _array(x: object) -> np.ndarray:
    """A float64 copy of what the engine returned, whatever array-like it is."""
    return np.array(x, dtype=np.float64)


# -- unbroadcast called directly -----------------------------------------------------------------

@scenario("tensor")
def unbroadcast_cases(tensor, seed: int, pairs: list[list[list[int]]]) -> list[dict]:
    """
    import random
    import numpy as np
    from tensor import unbroadcast

    rng = random.Random({seed})
    grad = np.array([rng.uniform(-1, 1) for _ in range({entries})]).reshape({out_shape})
    shape = tuple({shape})
    g = unbroadcast(grad, shape)
    print(np.shape(g), shape)   # these two must be equal
    print(g)
    """
    cases = []
    for index, (out_shape, shape) in enumerate(pairs):
        rng = random.Random(seed + index)
        grad = _entries(rng, tuple(out_shape))
        cases.append({"inputs": {"seed": seed + index, "entries": grad.size, "out_shape": out_shape,
                                 "shape": shape},
                      "gradient": _array(tensor.unbroadcast(grad, tuple(shape)))})
    return cases


@scenario("tensor")
def every_operand_shape(tensor, seed: int, out_shape: list[int]) -> list[dict]:
    """
    import random
    import numpy as np
    from tensor import unbroadcast

    rng = random.Random({seed})
    grad = np.array([rng.uniform(-1, 1) for _ in range({entries})]).reshape({out_shape})
    shape = tuple({shape})
    g = unbroadcast(grad, shape)
    print(np.shape(g), shape)   # these two must be equal
    print(g)
    """
    return unbroadcast_cases(tensor, seed, [[out_shape, shape] for shape in operand_shapes(out_shape)])


def operand_shapes(out_shape: list[int]) -> list[list[int]]:
    """Every shape that broadcasts to `out_shape`: drop leading axes, set any others to 1."""
    shapes = []
    for dropped in range(len(out_shape) + 1):
        kept = out_shape[dropped:]
        for mask in range(2 ** len(kept)):
            shapes.append([1 if mask >> axis & 1 else size for axis, size in enumerate(kept)])
    return shapes


# -- unbroadcast through the engine --------------------------------------------------------------

def _operand_loss(tensor, x: np.ndarray, y: np.ndarray, w: np.ndarray):
    """X, Y and the loss of `broadcast_operand`, on the engine's Tensors."""
    X, Y, W = tensor.Tensor(x), tensor.Tensor(y), tensor.Tensor(w)
    return X, Y, ((X + Y) * W + (Y - X) * X).sum()


@scenario("tensor", reverse="backward")
def broadcast_operand(tensor, seed: int, shape: list[int]) -> dict:
    """
    import random
    import numpy as np
    from tensor import Tensor

    rng = random.Random({seed})
    def entries(shape):         # seeded values in [-1, 1]
        return np.array([rng.uniform(-1, 1) for _ in range(int(np.prod(shape)))]).reshape(shape)
    X = Tensor(entries((4, 5)))
    Y = Tensor(entries({shape}))     # broadcast against the (4, 5) X
    W = Tensor(entries((4, 5)))
    L = ((X + Y) * W + (Y - X) * X).sum()
    L.backward()
    print(L.data, X.grad, Y.grad)
    print(X.grad.shape, Y.grad.shape)   # the shapes of X and Y
    """
    rng = random.Random(seed)
    x, y, w = (_entries(rng, s) for s in [(ROWS, COLUMNS), tuple(shape), (ROWS, COLUMNS)])
    X, Y, loss = _operand_loss(tensor, x, y, w)
    loss.backward()

    def forward(point: list[float]) -> float:
        here = np.array(point)
        return float(_operand_loss(tensor, here[:x.size].reshape(x.shape),
                                   here[x.size:].reshape(y.shape), w)[2].data)

    fd = np.array(gradient_fd(forward, [*x.ravel(), *y.ravel()]))
    return {"data": float(loss.data), "grad_X": _array(X.grad), "grad_Y": _array(Y.grad),
            "grad_X_fd": fd[:x.size].reshape(x.shape), "grad_Y_fd": fd[x.size:].reshape(y.shape)}


OPERAND_SHAPES = {"X": (ROWS, COLUMNS), "b": (COLUMNS,), "c": (ROWS, 1), "r": (1, COLUMNS), "s": ()}


def _all_operands_loss(tensor, arrays: dict[str, np.ndarray]) -> tuple[dict, object]:
    """The Tensors by name, and the loss of `all_operands`."""
    t = {name: tensor.Tensor(array) for name, array in arrays.items()}
    X, b, c, r, s = (t[name] for name in OPERAND_SHAPES)
    return t, ((X * c + b) * r - s * X + (c - s)).mean()


@scenario("tensor", reverse="backward")
def all_operands(tensor, seed: int) -> dict:
    """
    import random
    import numpy as np
    from tensor import Tensor

    rng = random.Random({seed})
    def entries(shape):         # seeded values in [-1, 1]
        return np.array([rng.uniform(-1, 1) for _ in range(int(np.prod(shape)))]).reshape(shape)
    X = Tensor(entries((4, 5)))
    b = Tensor(entries((5,)))       # a bias
    c = Tensor(entries((4, 1)))     # a column
    r = Tensor(entries((1, 5)))     # a row
    s = Tensor(entries(()))         # a scalar
    L = ((X * c + b) * r - s * X + (c - s)).mean()
    L.backward()
    print(L.data)
    for t in (X, b, c, r, s):
        print(t.grad.shape, t.grad)
    """
    rng = random.Random(seed)
    arrays = {name: _entries(rng, shape) for name, shape in OPERAND_SHAPES.items()}
    tensors, loss = _all_operands_loss(tensor, arrays)
    loss.backward()
    sizes = [arrays[name].size for name in OPERAND_SHAPES]
    bounds = np.cumsum([0, *sizes])

    def forward(point: list[float]) -> float:
        here = np.array(point)
        pieces = {name: here[start:end].reshape(OPERAND_SHAPES[name])
                  for name, start, end in zip(OPERAND_SHAPES, bounds, bounds[1:])}
        return float(_all_operands_loss(tensor, pieces)[1].data)

    fd = np.array(gradient_fd(forward, [v for name in OPERAND_SHAPES for v in arrays[name].ravel()]))
    observations: dict[str, object] = {"data": float(loss.data)}
    for name, start, end in zip(OPERAND_SHAPES, bounds, bounds[1:]):
        observations[f"grad_{name}"] = _array(tensors[name].grad)
        observations[f"grad_{name}_fd"] = fd[start:end].reshape(OPERAND_SHAPES[name])
    return observations
