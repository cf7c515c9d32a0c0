"""The probe's seeded programs: random uses of each engine's public API, and what they show.

A program takes an engine module, a seed and a `Observer`, and records labelled values (every
node's value and gradient, every Dual's val and der) as it goes; every correct implementation
records the same (tests/staff/test_mutation.py).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from types import ModuleType

import numpy as np

# Seeded programs per engine (tensor: half call unbroadcast directly, half go through Tensor).
PROGRAMS = {"value": 160, "tensor": 120, "dual": 80}
Observations = list[tuple[str, object]]  # labelled values, in the order a program shows them


def _plain(value: object) -> object:
    """A number as a float; anything else by its type's name."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    return f"a {type(value).__name__}"


def _array(value: object) -> object:
    """An array, a NumPy scalar or a number as (shape, entries), as the grader reads them."""
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return (tuple(array.shape), array.astype(np.float64).ravel().tolist())
    return f"a {type(value).__name__}"


class Observer:
    """What one program shows: labelled values, and the exception that stopped it, if any."""

    def __init__(self) -> None:
        self.seen: Observations = []

    def __call__(self, label: str, value: object) -> None:
        self.seen.append((label, _plain(value)))

    def array(self, label: str, value: object) -> None:
        """Record an array (or number) as its shape and entries."""
        self.seen.append((label, _array(value)))


def _choose(rng: random.Random, count: int) -> int:
    """An operand's index: often one of the newest nodes, so that the graph grows deep and reuses."""
    return rng.randrange(max(0, count - 3), count) if rng.random() < 0.5 else rng.randrange(count)


def _operands(name: str, i: int, j: int, c: object) -> str:
    """`a * c with a = node 3, c = 2.0`: an operation and the operands it used."""
    used = [f"a = node {i}"] + [f"b = node {j}"] * ("b" in name.split("(")[0]) + [
        f"c = {c!r}" if not isinstance(c, np.ndarray) else f"c = an array of shape {c.shape}"] * (
        "c" in name.replace("exp", "").replace("sum", ""))
    return f"{name} with {', '.join(used)}"


def _sigmoid(x: float) -> float:
    """The logistic function, without overflow on either side."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


# Each operation of the scalar engine: how many operands, its value on plain numbers (None
# outside its domain, or near a point where the derivative is a convention), and the call.
_NUMBERS = (2.0, -1.5, 0.5, 3.0)
_VALUE_OPERATIONS: list[tuple[str, int, Callable, Callable]] = [
    ("a + b", 2, lambda a, b, c: a + b, lambda a, b, c: a + b),
    ("a - b", 2, lambda a, b, c: a - b, lambda a, b, c: a - b),
    ("a * b", 2, lambda a, b, c: a * b, lambda a, b, c: a * b),
    ("a / b", 2, lambda a, b, c: a / b if abs(b) > 0.25 else None, lambda a, b, c: a / b),
    ("a + c", 1, lambda a, b, c: a + c, lambda a, b, c: a + c),
    ("c + a", 1, lambda a, b, c: c + a, lambda a, b, c: c + a),
    ("a - c", 1, lambda a, b, c: a - c, lambda a, b, c: a - c),
    ("c - a", 1, lambda a, b, c: c - a, lambda a, b, c: c - a),
    ("a * c", 1, lambda a, b, c: a * c, lambda a, b, c: a * c),
    ("c * a", 1, lambda a, b, c: c * a, lambda a, b, c: c * a),
    ("a / c", 1, lambda a, b, c: a / c, lambda a, b, c: a / c),
    ("c / a", 1, lambda a, b, c: c / a if abs(a) > 0.25 else None, lambda a, b, c: c / a),
    ("a ** 2", 1, lambda a, b, c: a**2, lambda a, b, c: a**2),
    ("a ** 3", 1, lambda a, b, c: a**3, lambda a, b, c: a**3),
    ("a ** -1", 1, lambda a, b, c: a**-1 if abs(a) > 0.25 else None, lambda a, b, c: a**-1),
    ("a ** 0.5", 1, lambda a, b, c: a**0.5 if a > 0.05 else None, lambda a, b, c: a**0.5),
    ("-a", 1, lambda a, b, c: -a, lambda a, b, c: -a),
    ("a.tanh()", 1, lambda a, b, c: math.tanh(a), lambda a, b, c: a.tanh()),
    ("a.sigmoid()", 1, lambda a, b, c: _sigmoid(a), lambda a, b, c: a.sigmoid()),
    ("a.relu()", 1, lambda a, b, c: max(a, 0.0) if abs(a) > 1e-3 else None, lambda a, b, c: a.relu()),
    ("a.exp()", 1, lambda a, b, c: math.exp(a) if a < 5 else None, lambda a, b, c: a.exp()),
    ("a.log()", 1, lambda a, b, c: math.log(a) if a > 0.05 else None, lambda a, b, c: a.log()),
]
LARGEST = 1e4  # an operation whose value would be larger than this is drawn again


def value_program(value: ModuleType, seed: int, record: Observer) -> None:
    """A random expression DAG over every operation of Value, with reused and computed operands
    and numbers on either side; then backward() and zero_grad() on the root and on intermediates,
    in a random order, each followed by every node's value and gradient."""
    rng = random.Random(seed)
    nodes, numbers, quotients = [], [], []  # quotients[i]: node i's graph holds a quotient
    for _ in range(rng.randint(1, 4)):
        x = rng.uniform(-3, 3) if rng.random() < 0.85 else rng.choice((-1, 1)) * rng.uniform(20, 1000)
        nodes.append(value.Value(x))
        numbers.append(x)
        quotients.append(False)
    for _ in range(rng.randint(3, 16)):
        for _attempt in range(50):
            name, arity, plain, call = rng.choice(_VALUE_OPERATIONS)
            i, j, c = _choose(rng, len(nodes)), _choose(rng, len(nodes)), rng.choice(_NUMBERS)
            result = plain(numbers[i], numbers[j], c)
            if result is not None and abs(result) <= LARGEST:
                break
        else:
            continue
        nodes.append(call(nodes[i], nodes[j] if arity == 2 else None, c))
        numbers.append(result)
        quotients.append(name in ("a / b", "a / c", "c / a") or quotients[i] or (arity == 2 and quotients[j]))
        record(f"node {len(nodes) - 1} = {_operands(name, i, j, c)}: data", nodes[-1].data)
    root = len(nodes) - 1
    drawn = [("backward", root)] + [(rng.choice(("backward", "zero_grad")), rng.choice(
        (root, root, rng.randrange(len(nodes))))) for _ in range(rng.randint(1, 4))]
    # A quotient may be a product with a power, whose node a second backward() pushes its leftover
    # gradient through: so every later backward() of such a graph follows a zero_grad() of its node.
    actions = drawn[:1]
    for action, index in drawn[1:]:
        if action == "backward" and quotients[index]:
            actions.append(("zero_grad", index))
        actions.append((action, index))
    for step, (action, index) in enumerate(actions):
        getattr(nodes[index], action)()
        for position, node in enumerate(nodes):
            record(f"after step {step} ({action} of node {index}): node {position} data", node.data)
            record(f"after step {step} ({action} of node {index}): node {position} grad", node.grad)


def _operand_shape(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: some leading axes dropped, some axes of size 1."""
    kept = shape[rng.randint(0, len(shape)):] if rng.random() < 0.6 else shape
    return tuple(1 if rng.random() < 0.4 else size for size in kept)


def _result_shape(rng: random.Random) -> tuple[int, ...]:
    """A random shape of 0 to 4 axes, each of 1 to 4."""
    return tuple(rng.choice((1, 2, 3, 4)) for _ in range(rng.randint(0, 4)))


def _entries(rng: random.Random, shape: tuple[int, ...]) -> np.ndarray:
    """Seeded entries in [-2, 2] of the given shape."""
    return np.array([rng.uniform(-2, 2) for _ in range(math.prod(shape))], dtype=np.float64).reshape(shape)


def unbroadcast_program(tensor: ModuleType, seed: int, record: Observer) -> None:
    """unbroadcast called directly on random shapes: added axes, size-1 axes, both, neither, ()."""
    rng = random.Random(seed)
    for case in range(6):
        shape = _result_shape(rng)
        target = shape if case == 0 else () if case == 1 else _operand_shape(rng, shape)
        record.array(f"unbroadcast(grad of shape {shape}, {target})",
                     tensor.unbroadcast(_entries(rng, shape), target))


# The Tensor engine's operations: the call on Tensors, and the same on plain arrays (None where
# the call is not drawn: an array on the left would broadcast over the Tensor object itself).
_TENSOR_OPERATIONS: list[tuple[str, Callable, Callable]] = [
    ("a + b", lambda a, b, c: a + b, lambda a, b, c: a + b),
    ("a - b", lambda a, b, c: a - b, lambda a, b, c: a - b),
    ("a * b", lambda a, b, c: a * b, lambda a, b, c: a * b),
    ("a + c", lambda a, b, c: a + c, lambda a, b, c: a + c),
    ("a - c", lambda a, b, c: a - c, lambda a, b, c: a - c),
    ("a * c", lambda a, b, c: a * c, lambda a, b, c: a * c),
    ("c + a", lambda a, b, c: c + a, lambda a, b, c: None if isinstance(c, np.ndarray) else c + a),
    ("c - a", lambda a, b, c: c - a, lambda a, b, c: None if isinstance(c, np.ndarray) else c - a),
    ("c * a", lambda a, b, c: c * a, lambda a, b, c: None if isinstance(c, np.ndarray) else c * a),
    ("a.relu()", lambda a, b, c: a.relu(),
     lambda a, b, c: np.maximum(a, 0.0) if np.abs(a).min(initial=1.0) > 1e-3 else None),
    ("a.exp()", lambda a, b, c: a.exp(), lambda a, b, c: np.exp(a) if a.max(initial=0.0) < 2 else None),
    ("a.sum(axis=0, keepdims=True)", lambda a, b, c: a.sum(axis=0, keepdims=True),
     lambda a, b, c: a.sum(axis=0, keepdims=True) if a.ndim else None),
]


def tensor_program(tensor: ModuleType, seed: int, record: Observer) -> None:
    """Tensors of random shapes that broadcast together, combined by +, - and * (with each other,
    with numbers and arrays on either side), relu, exp and sums; backward, and again on the
    graph built anew, with the leaves' gradients kept or zeroed in between, as training steps
    do; every node's gradient is read after each backward."""
    rng = random.Random(seed)
    shape = _result_shape(rng) or (3,)
    arrays = [_entries(rng, _operand_shape(rng, shape)) for _ in range(rng.randint(2, 4))]
    leaves = [tensor.Tensor(array) for array in arrays]
    steps = []
    for _ in range(rng.randint(2, 8)):
        name, call, plain = rng.choice(_TENSOR_OPERATIONS)
        i, j = _choose(rng, len(arrays)), _choose(rng, len(arrays))
        c = rng.choice((2.0, -0.5, _entries(rng, _operand_shape(rng, shape))))
        result = plain(arrays[i], arrays[j], c)
        if result is None or np.abs(result).max(initial=0.0) > LARGEST:
            continue
        steps.append((name, call, i, j, c))
        arrays.append(result)
    mean = rng.random() < 0.5

    def build() -> list:
        nodes = list(leaves)
        for _, call, i, j, c in steps:
            nodes.append(call(nodes[i], nodes[j], c))
        nodes.append(nodes[-1].mean() if mean else nodes[-1].sum())
        return nodes

    for round_ in range(rng.randint(1, 3)):
        nodes = build()
        for position, (name, _, i, j, c) in enumerate(steps, start=len(leaves)):
            label = f"round {round_}: node {position} = {_operands(name, i, j, c)}: data"
            record.array(label, nodes[position].data)
        nodes[-1].backward()
        for position, node in enumerate(nodes):
            record.array(f"after backward {round_}: node {position} grad", node.grad)
        if rng.random() < 0.5:
            for leaf in leaves:
                leaf.grad = np.zeros_like(leaf.data)


# Forward mode's operations: the call on Duals, and the value on plain numbers (None outside
# the range the programs keep to).
_DUAL_OPERATIONS: list[tuple[str, Callable, Callable]] = [
    ("a + b", lambda a, b, c: a + b, lambda a, b, c: a + b),
    ("a * b", lambda a, b, c: a * b, lambda a, b, c: a * b),
    ("a + c", lambda a, b, c: a + c, lambda a, b, c: a + c),
    ("c + a", lambda a, b, c: c + a, lambda a, b, c: c + a),
    ("a * c", lambda a, b, c: a * c, lambda a, b, c: a * c),
    ("c * a", lambda a, b, c: c * a, lambda a, b, c: c * a),
    ("a.sin()", lambda a, b, c: a.sin(), lambda a, b, c: math.sin(a)),
    ("a.exp()", lambda a, b, c: a.exp(), lambda a, b, c: math.exp(a) if a < 5 else None),
]


def dual_program(dual: ModuleType, seed: int, record: Observer) -> None:
    """Random functions of Duals: the constructor with and without der, + and * with Duals and
    with numbers on either side, sin and exp; every node's val and der."""
    rng = random.Random(seed)
    Dual = dual.Dual
    nodes, values = [], []
    for _ in range(rng.randint(1, 3)):
        x, d = round(rng.uniform(-2, 2), 3), rng.choice((0.0, 1.0, rng.uniform(-2, 2)))
        form = rng.randrange(4)
        if form == 3:
            x = rng.randint(-3, 3)  # an int, which Dual stores as a float
        if form in (0, 3):
            nodes.append(Dual(x))
        else:
            nodes.append(Dual(x, d) if form == 1 else Dual(x, der=d))
        label = f"Dual({x!r})" if form in (0, 3) else f"Dual({x!r}, {'' if form == 1 else 'der='}{d!r})"
        values.append(x)
        _show(record, nodes, label)
    for _ in range(rng.randint(2, 10)):
        name, call, plain = rng.choice(_DUAL_OPERATIONS)
        i, j, c = _choose(rng, len(nodes)), _choose(rng, len(nodes)), rng.choice((2, 3, -1, 0.5, -1.5, 2.5))
        result = plain(values[i], values[j], c)
        if result is None or abs(result) > LARGEST:
            continue
        nodes.append(call(nodes[i], nodes[j], c))
        values.append(result)
        _show(record, nodes, _operands(name, i, j, c))


def _show(record: Observer, nodes: list, made: str) -> None:
    """Record the newest Dual's val and der, labelled with how it was `made`."""
    record(f"node {len(nodes) - 1} = {made}: val", nodes[-1].val)
    record(f"node {len(nodes) - 1} = {made}: der", nodes[-1].der)


def programs_for(engine: str) -> list[tuple[str, Callable[[ModuleType, Observer], None]]]:
    """(label, program) of every seeded program of the probe for `engine`."""
    def bind(program: Callable, seed: int) -> Callable[[ModuleType, Observer], None]:
        return lambda module, record: program(module, seed, record)

    count = PROGRAMS.get(engine, 0)  # an engine of the kit's own making has the suites' scenarios alone
    if engine == "value":
        return [(f"value program {seed}", bind(value_program, seed)) for seed in range(count)]
    if engine == "tensor":
        half = range(count // 2)
        return [(f"unbroadcast program {seed}", bind(unbroadcast_program, seed)) for seed in half] + [
            (f"Tensor program {seed}", bind(tensor_program, seed)) for seed in half]
    return [(f"Dual program {seed}", bind(dual_program, seed)) for seed in range(count)]
