"""Scenarios for `tensor.py`: `unbroadcast` called directly and through the Tensor engine, and
any operation of the engine (`operation`), against central differences of its own forward pass.

Every array is filled from Python's `random.Random(seed)`, whose stream is the same on every
machine and NumPy version, so a sealed reference stays valid. Shapes arrive as JSON lists and
are handed to the engine as tuples. An upstream gradient is handed to `backward(gradient)`,
the engine's own way in: no scenario sums or multiplies with an operation a part may stub.
"""

from __future__ import annotations

import random

import numpy as np

from .common import case, gradient_fd, scenario

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
        grad = _entries(random.Random(seed + index), tuple(out_shape))
        inputs = {"seed": seed + index, "entries": grad.size, "out_shape": out_shape, "shape": shape}
        cases.append(case(inputs, lambda grad=grad, shape=shape: {
            "gradient": _array(tensor.unbroadcast(grad, tuple(shape)))}))
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

def _operand_output(tensor, x: np.ndarray, y: np.ndarray, w: np.ndarray):
    """X, Y and the output of `broadcast_operand`, on the engine's Tensors."""
    X, Y, W = tensor.Tensor(x), tensor.Tensor(y), tensor.Tensor(w)
    return X, Y, (X + Y) * W + (Y - X) * X


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
    Z = (X + Y) * W + (Y - X) * X
    Z.backward(np.ones((4, 5)))      # the gradient of Z's sum, L: 1 for every entry
    print(Z.data.sum(), X.grad, Y.grad)
    print(X.grad.shape, Y.grad.shape)   # the shapes of X and Y
    """
    rng = random.Random(seed)
    x, y, w = (_entries(rng, s) for s in [(ROWS, COLUMNS), tuple(shape), (ROWS, COLUMNS)])
    X, Y, out = _operand_output(tensor, x, y, w)
    out.backward(np.ones((ROWS, COLUMNS)))

    def forward(point: list[float]) -> float:
        here = np.array(point)
        output = _operand_output(tensor, here[:x.size].reshape(x.shape), here[x.size:].reshape(y.shape), w)[2]
        return float(_array(output.data).sum())

    fd = np.array(gradient_fd(forward, [*x.ravel(), *y.ravel()]))
    return {"data": float(_array(out.data).sum()), "grad_X": _array(X.grad), "grad_Y": _array(Y.grad),
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


# -- any operation of the engine -------------------------------------------------------------------

DTYPES = ("float64", "float32", "int64")  # what an operand may be made from; the engine keeps float64


def _operands(tensor, arrays: dict[str, np.ndarray], computed: bool) -> tuple[dict, dict]:
    """The leaves made from `arrays`, and the operands an expression sees: the leaves, or, when
    `computed`, values computed from them (-(-x)), so that a rule attached to the wrong node shows."""
    leaves = {name: tensor.Tensor(array) for name, array in arrays.items()}
    return leaves, {name: -(-leaf) if computed else leaf  # noqa: B002 - two given negations, no other operation
                    for name, leaf in leaves.items()}


def _operation_case(tensor, expression: str, shapes: dict[str, list[int]], seed: int, low: float,
                    high: float, dtype: str, computed: bool, twice: bool) -> dict:
    """One case of `operation`: the output, its dtype, and each operand's gradient beside the central
    difference of the submission's own forward pass (and, `twice`, after a second backward)."""
    rng = random.Random(seed)
    arrays = {name: np.array([rng.uniform(low, high) for _ in range(int(np.prod(shape)))])
              .reshape(tuple(shape)).astype(dtype) for name, shape in shapes.items()}
    leaves, operands = _operands(tensor, arrays, computed)
    out = eval(expression, {}, operands)  # noqa: S307 - the suite's own expression
    data = _array(out.data)
    upstream = np.array([rng.uniform(-1, 1) for _ in range(data.size)]).reshape(data.shape)
    out.backward(upstream)
    found: dict[str, object] = {"data": data, "dtype": str(np.asarray(out.data).dtype)}
    sizes = [int(np.prod(shape)) for shape in shapes.values()]
    bounds = np.cumsum([0, *sizes])

    def forward(point: list[float]) -> float:
        here = np.array(point)
        pieces = {name: here[start:end].reshape(tuple(shape))
                  for (name, shape), start, end in zip(shapes.items(), bounds, bounds[1:])}
        return float((_array(eval(expression, {}, _operands(tensor, pieces, computed)[1]).data)
                      * upstream).sum())

    fd = gradient_fd(forward, [v for array in arrays.values() for v in array.astype(np.float64).ravel()])
    for (name, shape), start, end in zip(shapes.items(), bounds, bounds[1:]):
        found[f"grad_{name}"] = _array(leaves[name].grad)
        found[f"grad_{name}_fd"] = np.array(fd[start:end]).reshape(tuple(shape))
    if twice:  # a leaf's gradient adds up: `=` where `+=` belongs shows here
        out.backward(upstream)
        found.update({f"grad_{name}_twice": _array(leaf.grad) for name, leaf in leaves.items()})
    return found


@scenario("tensor", reverse="backward")
def operation(tensor, expression: str, shapes: list[dict[str, list[int]]], seed: int, low: float = -1.0,
              high: float = 1.0, dtype: str = "float64", computed: bool = False, twice: bool = False
              ) -> list[dict]:
    """
    import random
    import numpy as np
    from tensor import Tensor

    rng = random.Random({seed})
    leaves, operands = dict(), dict()
    for name, shape in {shapes}.items():     # each operand: seeded values in [low, high]
        values = [rng.uniform({low}, {high}) for _ in range(int(np.prod(shape)))]
        leaves[name] = Tensor(np.array(values).reshape(shape).astype({dtype}))
        operands[name] = -(-leaves[name]) if {computed} else leaves[name]
    out = eval({expression}, dict(), operands)
    print(out.data, out.data.dtype)
    upstream = np.array([rng.uniform(-1, 1) for _ in range(out.data.size)]).reshape(out.data.shape)
    out.backward(upstream)                 # the upstream gradient, handed to backward
    for name, leaf in leaves.items():
        print(name, leaf.grad)             # must match central differences of out.data
    if {twice}:                            # backward again: each leaf's .grad adds up, to twice that
        out.backward(upstream)
        print([leaf.grad for leaf in leaves.values()])
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r}: one of {DTYPES}")
    return [case({"shapes": case_shapes, "seed": seed + index},
                 lambda case_shapes=case_shapes, index=index: _operation_case(
                     tensor, expression, case_shapes, seed + index, low, high, dtype, computed, twice))
            for index, case_shapes in enumerate(shapes)]
