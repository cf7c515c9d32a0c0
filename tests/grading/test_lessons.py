"""The reference engines reproduce every number the lessons state, and agree with calculus.

Lesson numbers are asserted as the lessons print them. Everything else is checked against
an independent source: central differences, a brute-force sum, or PyTorch when installed.
These tests may read the reference's private fields (`_prev`, `_backward`): they test how
the reference is built. The graders never do.
"""

import importlib.util
import math

import numpy as np
import pytest
from support import KIT, corpus, torch_answers
from support.expressions import TENSOR_OP_NAMES, VALUE_OPS, draw, tensor_ops

from autograder.inside.scenarios import backward

# Central differences err by O(h^2) from truncation and O(eps / h) from rounding; the step
# that balances the two in float64 is about eps ** (1/3), scaled to the size of x.
FD_STEP = np.finfo(np.float64).eps ** (1 / 3)
FD_RTOL, FD_ATOL = 1e-6, 1e-8


def fd_step(x: float) -> float:
    return FD_STEP * max(1.0, abs(x))


def count_nodes(root) -> int:
    """The number of distinct nodes of the graph that ends at root."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(node._prev)
    return len(seen)


# --- The scalar engine: the lessons' worked examples -------------------------------------


def test_square_of_product_plus_x(reference):
    Value = reference.value.Value
    x, y = Value(2.0), Value(-3.0)
    f = (x * y + x) ** 2
    f.backward()
    assert (f.data, x.grad, y.grad) == (16.0, 16.0, -16.0)


def neuron_inputs(Value):
    x1, x2, w1, w2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
    b = Value(6.8813735870195432)
    n = x1 * w1 + x2 * w2 + b
    return (x1, x2, w1, w2), n


def test_tanh_neuron(reference):
    (x1, x2, w1, w2), n = neuron_inputs(reference.value.Value)
    o = n.tanh()
    o.backward()
    assert o.data == pytest.approx(0.7071067812, abs=1e-10)
    assert n.grad == pytest.approx(0.5, abs=1e-12)
    assert [x1.grad, w1.grad, x2.grad, w2.grad] == pytest.approx([-1.5, 1.0, 0.5, 0.0], abs=1e-12)
    assert count_nodes(o) == 10


def test_tanh_neuron_with_tanh_built_from_exp(reference):
    (x1, x2, w1, w2), n = neuron_inputs(reference.value.Value)
    e = (n * 2).exp()
    o = (e - 1) / (e + 1)
    o.backward()
    assert o.data == pytest.approx(0.7071067812, abs=1e-10)
    assert [x1.grad, w1.grad, x2.grad, w2.grad] == pytest.approx([-1.5, 1.0, 0.5, 0.0], abs=1e-12)
    # e feeds both the numerator and the denominator: -0.1036 and +0.1464 add up here.
    assert e.grad == pytest.approx(0.0429, abs=5e-5)


def test_exercise_1_relu_expression(reference):
    Value = reference.value.Value
    a, b, c = Value(3.0), Value(-1.0), Value(-5.0)
    L = (a * b - c).relu() + a**2
    L.backward()
    assert (L.data, a.grad, b.grad, c.grad) == (11.0, 5.0, 3.0, -1.0)


def test_product_plus_a(reference):
    Value = reference.value.Value
    a, b = Value(2.0), Value(-3.0)
    c = a * b + a
    c.backward()
    assert (c.data, a.grad, b.grad) == (-4.0, -2.0, 2.0)


@pytest.fixture(scope="module")
def naive(tmp_path_factory: pytest.TempPathFactory):
    """Exercise 3's mistake as the corpus grades it: the reference's value.py with a backward
    that pushes each node's gradient on as soon as it is reached, no sort."""
    folder = tmp_path_factory.mktemp("naive")
    bug = next(s for s in corpus.BUGS if s.name == "backward-recursive-without-sort")
    corpus.build(bug, KIT / "solutions", folder)
    spec = importlib.util.spec_from_file_location("lessons_naive_value", folder / "value.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_x_to_the_fourth_needs_the_topological_sort(reference, naive):
    for engine, expected in ((reference.value, 32.0), (naive, 64.0)):
        x = engine.Value(2.0)
        q = x * x
        L = q * q
        L.backward()
        assert x.grad == expected, engine.__name__


def test_two_distinct_consumers_expose_a_naive_backward(reference, naive):
    """The suites' own scenario of the lesson's graph, (x^2 + 1)^2 + (x^2 + 1)^2: the reference
    gives the lesson's number, and the naive backward another."""
    x = 2.0
    assert backward.shared_node(reference.value, x)["grads"][0] == 8 * x * (x**2 + 1)  # d/dx 2(x^2 + 1)^2
    assert backward.shared_node(naive, x)["grads"][0] != 8 * x * (x**2 + 1)


def test_a_value_used_twice_collects_both_contributions(reference):
    Value = reference.value.Value
    a = Value(3.0)
    (a + a).backward()
    assert a.grad == 2.0

    a = Value(1.0)
    b = a + a
    c = b + b
    c.backward()
    assert a.grad == 4.0


def test_three_backward_calls_without_zero_grad(reference):
    Value = reference.value.Value
    a, b, c = Value(2.0), Value(3.0), Value(4.0)
    L = a * b + a * c
    seen = []
    for _ in range(3):
        L.backward()
        seen.append((a.grad, b.grad, c.grad))
    assert seen == [(7.0, 2.0, 2.0), (21.0, 6.0, 6.0), (42.0, 12.0, 12.0)]


def test_zero_grad_clears_the_whole_graph_and_backward_repeats(reference):
    Value = reference.value.Value
    a, b, c = Value(2.0), Value(3.0), Value(4.0)
    p, q = a * b, a * c
    L = p + q
    for _ in range(3):
        L.backward()
        L.zero_grad()
        assert [v.grad for v in (a, b, c, p, q, L)] == [0.0] * 6
    L.backward()
    assert (a.grad, b.grad, c.grad, p.grad, q.grad) == (7.0, 2.0, 2.0, 1.0, 1.0)


def train_three_steps(Value, body: str) -> tuple[float, float]:
    """prediction = 2w, target 4, loss (2w - 4)^2, w0 = 0, lr 0.1, three iterations."""
    w = Value(0.0)

    def forward():
        return (w * 2 - 4) ** 2

    for _ in range(3):
        loss = forward()
        if body == "correct":
            loss.zero_grad()
            loss.backward()
        elif body == "no zero_grad":
            loss.backward()
        elif body == "zero_grad after backward":
            loss.backward()
            loss.zero_grad()
        w.data -= 0.1 * w.grad
    return w.data, forward().data


@pytest.mark.parametrize(
    ("body", "w", "loss"),
    [("correct", 1.984, 0.001), ("no zero_grad", 4.224, 19.785), ("zero_grad after backward", 0, 16)],
)
def test_three_loop_bodies(reference, body, w, loss):
    got_w, got_loss = train_three_steps(reference.value.Value, body)
    assert round(got_w, 3) == w
    assert round(got_loss, 3) == loss


def test_a_deep_chain(reference):
    Value = reference.value.Value
    x = Value(1.0)
    y = x
    for _ in range(5000):
        y = y * 1.0 + 1.0
    y.backward()
    assert (y.data, x.grad) == (5001.0, 1.0)
    y.zero_grad()
    assert x.grad == 0.0


def test_large_inputs_stay_finite(reference):
    Value = reference.value.Value
    for x, expected in [(1000.0, 1.0), (-1000.0, -1.0)]:
        v = Value(x)
        t = v.tanh()
        t.backward()
        assert (t.data, v.grad) == (expected, 0.0)
    with pytest.raises(OverflowError):
        Value(1000.0).exp()  # math.exp's own behaviour, kept on purpose


# --- Exercise 2: sigmoid as a primitive ----------------------------------------------------


def test_sigmoid_primitive_against_its_composition(reference):
    Value = reference.value.Value
    x1, x2, x3 = Value(0.7), Value(0.7), Value(0.7)
    primitive = x1.sigmoid()
    # As the lesson composed it: negation as * -1 and division as * (...) ** -1.
    lesson_composed = Value(1.0) * (1 + (x2 * -1).exp()) ** -1
    composed = 1 / (1 + (-x3).exp())
    for out in (primitive, lesson_composed, composed):
        out.backward()
    assert round(primitive.data, 6) == 0.668188
    assert round(x1.grad, 6) == 0.221713
    for out, x in [(lesson_composed, x2), (composed, x3)]:
        assert out.data == pytest.approx(primitive.data, rel=1e-15)
        assert x.grad == pytest.approx(x1.grad, rel=1e-14)
    assert (count_nodes(primitive), count_nodes(lesson_composed)) == (2, 9)


def test_sigmoid_primitive_is_finite_where_the_composition_overflows(reference):
    Value = reference.value.Value
    for x, expected in [(-1000.0, 0.0), (1000.0, 1.0)]:
        v = Value(x)
        s = v.sigmoid()
        s.backward()
        assert (s.data, v.grad) == (expected, 0.0)
    with pytest.raises(OverflowError):
        1 / (1 + (-Value(-1000.0)).exp())


# --- Exercise 4: unbroadcast ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "a_entries", "b_entries"),
    [((32, 10), (10,), 1, 32), ((4, 1), (1, 6), 6, 4), ((2, 3, 5), (3, 1), 1, 10)],
)
def test_unbroadcast_lesson_cases(reference, a_shape, b_shape, a_entries, b_entries):
    unbroadcast = reference.tensor.unbroadcast
    out = np.ones(np.broadcast_shapes(a_shape, b_shape))
    grad_a, grad_b = unbroadcast(out, a_shape), unbroadcast(out, b_shape)
    assert np.shape(grad_a) == a_shape and np.all(grad_a == a_entries)
    assert np.shape(grad_b) == b_shape and np.all(grad_b == b_entries)


def brute_force_unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Add every output entry's gradient to the operand entry it was copied from."""
    source = np.broadcast_to(np.arange(math.prod(shape)).reshape(shape), grad.shape)
    return np.bincount(source.ravel(), weights=grad.ravel(), minlength=math.prod(shape)).reshape(shape)


@pytest.mark.parametrize(
    ("out_shape", "shape"),
    [
        ((2, 3), (1, 3)),
        ((2, 3), (2, 1)),
        ((4, 2, 3), (2, 1)),
        ((4, 2, 3), (1, 1, 3)),
        ((4, 2, 3), (3,)),
        ((4, 2, 3), (4, 1, 3)),
        ((4, 2, 3), (4, 2, 3)),
        ((2, 3), ()),
        ((), ()),
    ],
)
def test_unbroadcast_against_brute_force(reference, out_shape, shape):
    grad = np.random.default_rng(0).normal(size=out_shape)
    got = reference.tensor.unbroadcast(grad, shape)
    assert np.shape(got) == shape
    np.testing.assert_allclose(got, brute_force_unbroadcast(grad, shape), rtol=1e-13, atol=1e-13)


# --- Exercise 5: fused and composed cross-entropy ------------------------------------------


def lesson_composed_cross_entropy(Tensor, logits, labels):
    """Softmax cross-entropy from primitives, built as the lesson built it (17 nodes).

    The lesson's engine had no subtraction or mean nodes: `-` was an addition of a product
    with -1 and mean a sum times 1/size, so those are spelled out here.
    """
    n, k = logits.shape
    row_max = Tensor(logits.data.max(axis=1, keepdims=True))  # a constant: the shift cancels
    shifted = logits + row_max * -1.0
    log_sum_exp = shifted.exp().sum(axis=1, keepdims=True).log()
    picked = (shifted * Tensor(np.eye(k)[labels])).sum(axis=1, keepdims=True)
    return (log_sum_exp + picked * -1.0).sum() * (1.0 / n)


def composed_cross_entropy(Tensor, logits, labels):
    """The same loss with this engine's own subtraction and mean."""
    row_max = Tensor(logits.data.max(axis=1, keepdims=True))
    shifted = logits - row_max
    log_sum_exp = shifted.exp().sum(axis=1, keepdims=True).log()
    picked = (shifted * Tensor(np.eye(logits.shape[1])[labels])).sum(axis=1, keepdims=True)
    return (log_sum_exp - picked).mean()


@pytest.mark.parametrize("scale", [3.0, 300.0])
def test_fused_and_composed_cross_entropy_agree(reference, scale):
    Tensor, cross_entropy = reference.tensor.Tensor, reference.tensor.cross_entropy
    rng = np.random.default_rng(0)
    Z, labels = rng.normal(size=(6, 4)) * scale, rng.integers(0, 4, size=6)
    fused_logits = Tensor(Z)
    fused = cross_entropy(fused_logits, labels)
    fused.backward()
    assert np.isfinite(fused.data) and count_nodes(fused) == 2
    for build, nodes in [(lesson_composed_cross_entropy, 17), (composed_cross_entropy, None)]:
        logits = Tensor(Z)
        loss = build(Tensor, logits, labels)
        loss.backward()
        assert loss.data == pytest.approx(fused.data, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(logits.grad, fused_logits.grad, rtol=0, atol=1e-12)
        if nodes is not None:
            assert count_nodes(loss) == nodes


# --- Exercise 6: forward mode ------------------------------------------------------------------


@pytest.mark.engine("dual")
def test_dual_on_the_lesson_example(reference):
    Dual = reference.dual.Dual
    x = Dual(1.0, 1.0)
    f = x.sin() * x.exp() + x * x
    exact = (math.cos(1.0) + math.sin(1.0)) * math.e + 2.0
    assert round(f.val, 10) == 3.2873552872
    assert round(f.der, 10) == 5.7560492271
    assert f.der == pytest.approx(exact, rel=1e-15)


@pytest.mark.engine("dual")
def test_dual_plain_numbers_are_constants(reference):
    Dual = reference.dual.Dual
    assert Dual(2.0).der == 0.0
    x = Dual(2.0, 1.0)
    f = 3.0 * x + 2.0 + (x * 4.0 + 1.0) * Dual(5.0)
    assert (f.val, f.der) == (3 * 2 + 2 + (2 * 4 + 1) * 5, 3.0 + 4.0 * 5)


def value_sin(x):
    """sin as a reverse-mode primitive, so that Value can follow the same expressions as Dual."""
    Value = type(x)
    out = Value(math.sin(x.data), (x,), "sin")

    def _backward():
        x.grad += math.cos(x.data) * out.grad

    out._backward = _backward
    return out


# One step of a random expression: earlier results a and b, a plain number c, and sin.
STEPS = {
    "add": lambda a, b, c, sin: a + b,
    "mul": lambda a, b, c, sin: a * b,
    "sin": lambda a, b, c, sin: sin(a),
    "exp": lambda a, b, c, sin: (a * 0.5).exp(),  # halved, so that nested exps stay small
    "number+": lambda a, b, c, sin: c + a,
    "number*": lambda a, b, c, sin: c * a,
    "+number": lambda a, b, c, sin: a + c,
    "*number": lambda a, b, c, sin: a * c,
}


def random_program(seed: int, length: int = 12) -> list[tuple[str, int, int, float]]:
    """Steps that each combine earlier results, with plain-number constants on both sides."""
    rng = np.random.default_rng(seed)
    names = sorted(STEPS)
    return [
        (names[rng.integers(len(names))], int(rng.integers(size)), int(rng.integers(size)),
         float(rng.uniform(-1, 1)))
        for size in range(1, length + 1)
    ]


def run_program(steps, x, sin):
    results = [x]
    for name, i, j, c in steps:
        results.append(STEPS[name](results[i], results[j], c, sin))
    return results[-1]


@pytest.mark.engine("dual")
@pytest.mark.parametrize("seed", range(8))
def test_dual_agrees_with_reverse_mode(reference, seed):
    Dual, Value = reference.dual.Dual, reference.value.Value
    steps = random_program(seed)
    x0 = float(np.random.default_rng(100 + seed).uniform(-1.5, 1.5))
    forward = run_program(steps, Dual(x0, 1.0), lambda d: d.sin())
    x = Value(x0)
    out = run_program(steps, x, value_sin)
    out.backward()
    assert forward.val == out.data
    assert forward.der == pytest.approx(x.grad, rel=1e-12, abs=1e-12)
    h = fd_step(x0)
    plus = run_program(steps, Dual(x0 + h), lambda d: d.sin()).val
    minus = run_program(steps, Dual(x0 - h), lambda d: d.sin()).val
    assert forward.der == pytest.approx((plus - minus) / (2 * h), rel=FD_RTOL, abs=FD_ATOL)


# --- Every operation against central differences ----------------------------------------------

@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("name", "op", "kind"), VALUE_OPS, ids=[case[0] for case in VALUE_OPS])
def test_value_op_against_central_differences(reference, name, op, kind, seed):
    Value = reference.value.Value
    rng = np.random.default_rng(seed)
    a0, b0 = float(draw(rng, kind)), float(draw(rng, kind))
    a, b = Value(a0), Value(b0)
    op(a, b).backward()

    def f(x, y):
        return op(Value(x), Value(y)).data

    ha, hb = fd_step(a0), fd_step(b0)
    expected_a = (f(a0 + ha, b0) - f(a0 - ha, b0)) / (2 * ha)
    expected_b = (f(a0, b0 + hb) - f(a0, b0 - hb)) / (2 * hb)
    assert a.grad == pytest.approx(expected_a, rel=FD_RTOL, abs=FD_ATOL)
    assert b.grad == pytest.approx(expected_b, rel=FD_RTOL, abs=FD_ATOL)


@pytest.mark.parametrize("index", range(len(TENSOR_OP_NAMES)), ids=TENSOR_OP_NAMES)
def test_tensor_op_against_central_differences(reference, index):
    Tensor = reference.tensor.Tensor
    _, op, shapes, kind = tensor_ops(reference.tensor.cross_entropy)[index]
    rng = np.random.default_rng(index)
    arrays = [np.asarray(draw(rng, kind, size=shape)) for shape in shapes]
    leaves = [Tensor(array) for array in arrays]
    out = op(*leaves)
    # Weigh the outputs unevenly, so that a gradient sent to the wrong entry shows.
    weights = rng.normal(size=out.shape)
    (out * Tensor(weights)).sum().backward()

    def f():
        return float((op(*(Tensor(array) for array in arrays)).data * weights).sum())

    for array, leaf in zip(arrays, leaves):
        assert leaf.grad.shape == array.shape
        expected = np.zeros_like(array)
        for idx in np.ndindex(array.shape):
            x0 = float(array[idx])
            h = fd_step(x0)
            array[idx] = x0 + h
            plus = f()
            array[idx] = x0 - h
            minus = f()
            array[idx] = x0
            expected[idx] = (plus - minus) / (2 * h)
        np.testing.assert_allclose(leaf.grad, expected, rtol=FD_RTOL, atol=FD_ATOL)


# --- The same expressions as PyTorch answers them (tests/support/torch_answers.py) ----------------------


def test_pytorch_answers_are_kept_for_every_expression():
    record = torch_answers.recorded()
    assert sorted(record["scalar"]) == sorted(name for name, _, _ in VALUE_OPS), \
        "run `cd tests && python -m support.torch_answers` where torch is installed"
    assert sorted(record["tensor"]) == sorted(TENSOR_OP_NAMES), \
        "run `cd tests && python -m support.torch_answers` where torch is installed"


@pytest.mark.parametrize(("name", "op", "kind"), VALUE_OPS, ids=[case[0] for case in VALUE_OPS])
def test_pytorch_agrees_on_the_scalar_op(reference, name, op, kind):
    answer = torch_answers.recorded()["scalar"][name]
    leaves = [reference.value.Value(x) for x in answer["inputs"]]
    out = op(*leaves)
    out.backward()
    assert out.data == pytest.approx(answer["out"], rel=1e-12)
    assert [leaf.grad for leaf in leaves] == pytest.approx(answer["grads"], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("index", range(len(TENSOR_OP_NAMES)), ids=TENSOR_OP_NAMES)
def test_pytorch_agrees_on_the_tensor_op(reference, index):
    Tensor = reference.tensor.Tensor
    name, op, _, _ = tensor_ops(reference.tensor.cross_entropy)[index]
    answer = torch_answers.recorded()["tensor"][name]
    leaves = [Tensor(np.asarray(array, dtype=float)) for array in answer["inputs"]]
    out = op(*leaves)
    (out * Tensor(np.asarray(answer["weights"], dtype=float))).sum().backward()
    np.testing.assert_allclose(out.data, answer["out"], rtol=1e-12, atol=1e-12)
    for leaf, grad in zip(leaves, answer["grads"]):
        np.testing.assert_allclose(leaf.grad, grad, rtol=1e-12, atol=1e-12)
