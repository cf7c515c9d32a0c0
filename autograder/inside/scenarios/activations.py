"""Scenarios of the activations of `value.py`: tanh, relu and the bonus sigmoid.

Each runs the operation's rule by hand from an upstream gradient, as its snippet does (value.py).
"""

from __future__ import annotations

from .common import scenario, uniform
from .value import LIFT, Tape, beside, unary_cases


def _tanh(x):
    return x.tanh()


def _relu(x):
    return x.relu()


def _sigmoid(x):
    return x.sigmoid()


# -- value.tanh, value.relu, value.sigmoid --------------------------------------------------------

@scenario("value", reverse="kit")
def tanh_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    t = x.tanh()
    t.grad = 3.0           # the gradient a loss above t would pass down
    t._backward()          # your rule for tanh, run by hand: no backward() needed
    print(t.data, x.grad)
    """
    return unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5, margin=0.05), named="t")


@scenario("value", reverse="kit")
def tanh_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    t = x.tanh()
    t.grad = 1.0           # as at the root of a graph
    t._backward()          # your rule for tanh, run by hand: no backward() needed
    print(t.data, x.grad)
    """
    return unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5, margin=0.05), upstream=1.0, named="t")


@scenario("value", reverse="kit")
def tanh_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    u = Value({a}) + 0.25      # a computed value, not a leaf
    t = u.tanh()
    t.grad = 3.0           # the gradient a loss above t would pass down
    t._backward()          # your rule for tanh, run by hand: no backward() needed
    print(t.data, u.grad)
    """
    points = uniform(seed, count, -2.75, 2.25, avoid=-LIFT, margin=0.05)
    return unary_cases(value, _tanh, points, computed=True, named="t")


@scenario("value", reverse="kit")
def tanh_beside_input(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    t = x.tanh()
    y = t + x              # x gets a gradient from both terms
    y.grad = 1.0
    for each in (y, t):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, x.grad)
    """
    return beside(value, _tanh, points)


@scenario("value", reverse="kit")
def tanh_large(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    t = x.tanh()
    t.grad = 1.0
    t._backward()          # your rule for tanh, run by hand
    print(t.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        tape.mark()
        t = v.tanh()
    tape.reverse(t, 1.0, x=v, t=t)
    return {"data": t.data, "grad": v.grad}


@scenario("value", reverse="kit")
def relu_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    r = x.relu()
    r.grad = 3.0           # the gradient a loss above r would pass down
    r._backward()          # your rule for relu, run by hand: no backward() needed
    print(r.data, x.grad)
    """
    return unary_cases(value, _relu, uniform(seed, count, -3.0, 3.0, margin=0.05), named="r")


@scenario("value", reverse="kit")
def relu_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    r = x.relu()
    r.grad = 1.0           # as at the root of a graph
    r._backward()          # your rule for relu, run by hand: no backward() needed
    print(r.data, x.grad)
    """
    return unary_cases(value, _relu, uniform(seed, count, -3.0, 3.0, margin=0.05), upstream=1.0, named="r")


@scenario("value", reverse="kit")
def relu_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    u = Value({a}) + 0.25      # a computed value, not a leaf
    r = u.relu()
    r.grad = 3.0           # the gradient a loss above r would pass down
    r._backward()          # your rule for relu, run by hand: no backward() needed
    print(r.data, u.grad)
    """
    # The kink of relu(x + LIFT) is at x = -LIFT: the points stay clear of it.
    points = uniform(seed, count, -3.25, 2.75, avoid=-LIFT, margin=0.05)
    return unary_cases(value, _relu, points, computed=True, named="r")


@scenario("value", reverse="kit")
def relu_beside_input(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    t = x.relu()
    y = t + x              # x gets a gradient from both terms
    y.grad = 1.0
    for each in (y, t):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, x.grad)
    """
    return beside(value, _relu, points)


@scenario("value", reverse="kit")
def relu_in_expression(value, a: float, c: float) -> dict:
    """
    from value import Value
    a, c = Value({a}), Value({c})
    s = a + c
    r, ra, rc = s.relu(), a.relu(), c.relu()       # the gate of a or of c is shut
    m = r + ra
    L = m + rc
    L.grad = 1.0
    for each in (L, m, rc, ra, r, s):    # each rule by hand, the newest node first
        each._backward()

    print(L.data, a.grad, c.grad)
    # 1.0 where a relu is a node of its own with its input as a parent, shut or open:
    print([float(y is not x and any(p is x for p in y._prev)) for y, x in ((r, s), (ra, a), (rc, c))])
    """
    with Tape(value) as tape:
        x, z = value.Value(a), value.Value(c)
        tape.mark()
        s = x + z
        r, ra, rc = s.relu(), x.relu(), z.relu()
        m = r + ra
        out = m + rc
    tape.reverse(out, 1.0, a=x, c=z, s=s, L=out)
    return {"data": out.data, "grads": [x.grad, z.grad],
            "kept": [_kept(y, operand) for y, operand in ((r, s), (ra, x), (rc, z))]}


def _kept(out, operand) -> float:
    """1.0 where `out` is a node of its own with `operand` among its parents (or the engine keeps
    no `_prev`, and is judged by its gradients alone), else 0.0: a relu that returns its input, or
    a constant with no parent, cuts a unit out of the graph that zero_grad() and backward() walk."""
    parents = getattr(out, "_prev", None)
    if parents is None:
        return 1.0
    return float(out is not operand and any(parent is operand for parent in parents))


@scenario("value", reverse="kit")
def sigmoid_beside_input(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    t = x.sigmoid()
    y = t + x              # x gets a gradient from both terms
    y.grad = 1.0
    for each in (y, t):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, x.grad)
    """
    return beside(value, _sigmoid, points)


@scenario("value", reverse="kit")
def sigmoid_values(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    s = x.sigmoid()
    s.grad = 3.0           # the gradient a loss above s would pass down
    s._backward()          # your rule for sigmoid, run by hand: no backward() needed
    print(s.data, x.grad)
    """
    return unary_cases(value, _sigmoid, points, named="s")


@scenario("value", reverse="kit")
def sigmoid_at_root(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    s = x.sigmoid()
    s.grad = 1.0           # as at the root of a graph
    s._backward()          # your rule for sigmoid, run by hand: no backward() needed
    print(s.data, x.grad)
    """
    return unary_cases(value, _sigmoid, points, upstream=1.0, named="s")


@scenario("value", reverse="kit")
def sigmoid_of_computed_values(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    u = Value({a}) + 0.25      # a computed value, not a leaf
    s = u.sigmoid()
    s.grad = 3.0           # the gradient a loss above s would pass down
    s._backward()          # your rule for sigmoid, run by hand: no backward() needed
    print(s.data, u.grad)
    """
    return unary_cases(value, _sigmoid, points, computed=True, named="s")
