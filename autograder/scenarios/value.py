"""Scenarios for the scalar engine, `value.py`.

Each builds its graph from the operation it grades and the given ones (+, -, **, exp, log,
unary -), so that a bug in one stub costs only the parts that use it. An upstream gradient
other than 1 comes from `L = (out + shift) ** 2` with `shift` chosen so that dL/dout = 3;
such a graph has several levels, so it is judged only when backward() gets the order of the
given operations right (ORDERED), and every operation is also judged at the root.
"""

from __future__ import annotations

import math

from .common import gradient_fd, uniform

UPSTREAM = 3.0
# Multi-level graphs are judged only when backward() passes this scenario.
ORDERED = ("value:order_probe", "a backward() that runs the nodes in topological order (value.backward)")


def _shift(out: float) -> float:
    """The constant that makes d/d(out) (out + shift)**2 equal UPSTREAM."""
    return UPSTREAM / 2 - out


def _loss(out, shift: float | None):
    """`out` itself at the root, or `(out + shift) ** 2` above it."""
    return out if shift is None else (out + shift) ** 2


def _binary_cases(value, op, seed: int, count: int, low: float, high: float,
                  upstream: bool = True) -> list[dict]:
    Value = value.Value
    numbers = uniform(seed, 2 * count, low, high)
    cases = []
    for a, b in zip(numbers[::2], numbers[1::2]):
        shift = _shift(op(a, b)) if upstream else None

        def loss(point, shift=shift):
            return _loss(op(Value(point[0]), Value(point[1])), shift).data

        x, y = Value(a), Value(b)
        out = op(x, y)
        _loss(out, shift).backward()
        inputs = {"a": a, "b": b} if shift is None else {"a": a, "b": b, "shift": shift}
        cases.append({"inputs": inputs, "data": out.data, "grads": [x.grad, y.grad],
                      "grads_fd": gradient_fd(loss, [a, b])})
    return cases


def _unary_cases(value, op, points: list[float], upstream: bool = True) -> list[dict]:
    Value = value.Value
    cases = []
    for a in points:
        shift = _shift(op(a)) if upstream else None
        x = Value(a)
        out = op(x)
        _loss(out, shift).backward()
        inputs = {"a": a} if shift is None else {"a": a, "shift": shift}
        cases.append({"inputs": inputs, "data": out.data, "grad": x.grad,
                      "grad_fd": gradient_fd(lambda p, s=shift: _loss(op(Value(p[0])), s).data, [a])[0]})
    return cases


def _tanh(x):
    return x.tanh() if not isinstance(x, float) else math.tanh(x)


def _relu(x):
    return x.relu() if not isinstance(x, float) else max(x, 0.0)


def _sigmoid(x):
    return x.sigmoid() if not isinstance(x, float) else 0.5 * (1 + math.tanh(x / 2))


def order_probe(value) -> dict:
    """
    x = Value(2.0)
    r = x ** 2 + 1
    L = r ** 2 + r ** 2      # r has two consumers: its gradient is complete only after both
    L.backward()
    print(x.grad)            # 80.0
    """
    return shared_node(value, 2.0)


# -- value.mul ---------------------------------------------------------------------------------

def products(value, seed: int, count: int) -> list[dict]:
    """
    a, b = Value({a}), Value({b})
    c = a * b
    L = (c + {shift}) ** 2      # so that dL/dc = 3
    L.backward()
    print(c.data, a.grad, b.grad)
    """
    return _binary_cases(value, lambda a, b: a * b, seed, count, -3.0, 3.0)


def products_at_root(value, seed: int, count: int) -> list[dict]:
    """
    a, b = Value({a}), Value({b})
    c = a * b
    c.backward()
    print(c.data, a.grad, b.grad)
    """
    return _binary_cases(value, lambda a, b: a * b, seed, count, -3.0, 3.0, upstream=False)


def times_number(value, x: float, k: float) -> dict:
    """
    x = Value({x})
    y = x * {k}
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = v * k
    y.backward()
    return {"data": y.data, "grad": v.grad}


def number_times(value, x: float, k: float) -> dict:
    """
    x = Value({x})
    y = {k} * x               # Python asks x.__rmul__
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = k * v
    y.backward()
    return {"data": y.data, "grad": v.grad}


def square(value, x: float) -> dict:
    """
    x = Value({x})
    y = x * x
    y.backward()
    print(y.data, x.grad)      # d(x*x)/dx = 2x
    """
    v = value.Value(x)
    y = v * v
    y.backward()
    return {"data": y.data, "grad": v.grad}


def with_numbers(value, x: float, k: float) -> dict:
    """
    x = Value({x})
    y = x * {k} + {k} * x     # a Value times a plain number, both ways round
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = v * k + k * v
    y.backward()
    return {"data": y.data, "grad": v.grad}


def lesson_product(value) -> dict:
    """
    a, b = Value(2.0), Value(-3.0)
    c = a * b + a
    c.backward()
    print(c.data, a.grad, b.grad)   # -4.0 -2.0 2.0
    """
    a, b = value.Value(2.0), value.Value(-3.0)
    c = a * b + a
    c.backward()
    return {"data": c.data, "grads": [a.grad, b.grad]}


# -- value.tanh, value.relu, value.sigmoid --------------------------------------------------------

def tanh_values(value, seed: int, count: int) -> list[dict]:
    """
    x = Value({a})
    t = x.tanh()
    L = (t + {shift}) ** 2      # so that dL/dt = 3
    L.backward()
    print(t.data, x.grad)
    """
    return _unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5))


def tanh_at_root(value, seed: int, count: int) -> list[dict]:
    """
    x = Value({a})
    t = x.tanh()
    t.backward()
    print(t.data, x.grad)
    """
    return _unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5), upstream=False)


def tanh_beside_input(value, x: float) -> dict:
    """
    x = Value({x})
    y = x.tanh() + x       # x gets a gradient from both terms
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = v.tanh() + v
    y.backward()
    return {"data": y.data, "grad": v.grad}


def tanh_large(value, x: float) -> dict:
    """
    x = Value({x})
    t = x.tanh()
    t.backward()
    print(t.data, x.grad)
    """
    v = value.Value(x)
    t = v.tanh()
    t.backward()
    return {"data": t.data, "grad": v.grad}


def relu_values(value, seed: int, count: int) -> list[dict]:
    """
    x = Value({a})
    r = x.relu()
    L = (r + {shift}) ** 2      # so that dL/dr = 3
    L.backward()
    print(r.data, x.grad)
    """
    return _unary_cases(value, _relu, uniform(seed, count, -3.0, 3.0, avoid=0.0, margin=0.05))


def relu_at_root(value, seed: int, count: int) -> list[dict]:
    """
    x = Value({a})
    r = x.relu()
    r.backward()
    print(r.data, x.grad)
    """
    return _unary_cases(value, _relu, uniform(seed, count, -3.0, 3.0, avoid=0.0, margin=0.05),
                        upstream=False)


def relu_beside_input(value, x: float) -> dict:
    """
    x = Value({x})
    y = x.relu() + x       # x gets a gradient from both terms
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = v.relu() + v
    y.backward()
    return {"data": y.data, "grad": v.grad}


def relu_in_expression(value, a: float, c: float) -> dict:
    """
    a, c = Value({a}), Value({c})
    L = (a - c).relu() + a ** 2 + (c - a).relu()
    L.backward()
    print(L.data, a.grad, c.grad)
    """
    x, z = value.Value(a), value.Value(c)
    out = (x - z).relu() + x ** 2 + (z - x).relu()
    out.backward()
    return {"data": out.data, "grads": [x.grad, z.grad]}


def sigmoid_values(value, points: list[float]) -> list[dict]:
    """
    x = Value({a})
    s = x.sigmoid()
    L = (s + {shift}) ** 2      # so that dL/ds = 3
    L.backward()
    print(s.data, x.grad)
    """
    return _unary_cases(value, _sigmoid, points)


def sigmoid_at_root(value, points: list[float]) -> list[dict]:
    """
    x = Value({a})
    s = x.sigmoid()
    s.backward()
    print(s.data, x.grad)
    """
    return _unary_cases(value, _sigmoid, points, upstream=False)


# -- value.truediv ---------------------------------------------------------------------------------

def quotients(value, seed: int, count: int) -> list[dict]:
    """
    a, b = Value({a}), Value({b})
    q = a / b
    L = (q + {shift}) ** 2      # so that dL/dq = 3
    L.backward()
    print(q.data, a.grad, b.grad)
    """
    return _binary_cases(value, lambda a, b: a / b, seed, count, 0.5, 3.0)


def quotients_at_root(value, seed: int, count: int) -> list[dict]:
    """
    a, b = Value({a}), Value({b})
    q = a / b
    q.backward()
    print(q.data, a.grad, b.grad)
    """
    return _binary_cases(value, lambda a, b: a / b, seed, count, 0.5, 3.0, upstream=False)


def quotient_beside_numerator(value, a: float, b: float) -> dict:
    """
    a, b = Value({a}), Value({b})
    y = a / b + a          # a gets a gradient from both terms
    y.backward()
    print(y.data, a.grad, b.grad)
    """
    x, z = value.Value(a), value.Value(b)
    y = x / z + x
    y.backward()
    return {"data": y.data, "grads": [x.grad, z.grad]}


def divide_by_number(value, x: float, k: float) -> dict:
    """
    x = Value({x})
    y = x / {k}
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = v / k
    y.backward()
    return {"data": y.data, "grad": v.grad}


def quotient_of_itself(value, x: float) -> dict:
    """
    x = Value({x})
    y = (x + 1) / x          # x on both sides of the bar
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = (v + 1) / v
    y.backward()
    return {"data": y.data, "grad": v.grad}


# -- value.backward ---------------------------------------------------------------------------------

def reused_leaf(value, x: float) -> dict:
    """
    a = Value({x})
    b = a + a
    b.backward()
    print(b.data, a.grad)    # 2.0
    """
    a = value.Value(x)
    b = a + a
    b.backward()
    return {"data": b.data, "grad": a.grad}


def diamond(value) -> dict:
    """
    a = Value(1.0)
    b = a + a
    c = b + b
    c.backward()
    print(c.data, a.grad, b.grad)    # 4.0 4.0 2.0
    """
    a = value.Value(1.0)
    b = a + a
    c = b + b
    c.backward()
    return {"data": c.data, "grads": [a.grad, b.grad, c.grad]}


def shared_node(value, x: float) -> dict:
    """
    x = Value({x})
    r = x ** 2 + 1
    L = r ** 2 + r ** 2      # r has two consumers
    L.backward()
    print(L.data, x.grad, r.grad)
    """
    v = value.Value(x)
    r = v ** 2 + 1
    out = r ** 2 + r ** 2
    out.backward()
    return {"data": out.data, "grads": [v.grad, r.grad]}


def long_chain(value, depth: int, x: float) -> dict:
    """
    x = Value({x})
    y = x
    for _ in range({depth}):
        y = y + x            # a chain {depth} nodes deep that uses x at every step
    y.backward()
    print(y.data, x.grad)
    """
    v = value.Value(x)
    y = v
    for _ in range(depth):
        y = y + v
    y.backward()
    return {"data": y.data, "grad": v.grad}


def mixed_graph(value, seed: int, count: int) -> list[dict]:
    """
    a, b = Value({a}), Value({b})
    u = (a + b).exp()
    L = (u - a ** 2).log() + (a - b) ** 3 + u
    L.backward()
    print(L.data, a.grad, b.grad)
    """
    Value = value.Value

    def build(a, b):
        u = (a + b).exp()
        return (u - a ** 2).log() + (a - b) ** 3 + u

    cases = []
    numbers = uniform(seed, 2 * count, -1.0, 1.0)
    for a, b in zip(numbers[::2], numbers[1::2]):
        x, y = Value(a), Value(b)
        out = build(x, y)
        out.backward()
        cases.append({"inputs": {"a": a, "b": b}, "data": out.data, "grads": [x.grad, y.grad],
                      "grads_fd": gradient_fd(lambda p: build(Value(p[0]), Value(p[1])).data,
                                              [a, b])})
    return cases


def three_calls(value) -> dict:
    """
    a, b, c = Value(2.0), Value(3.0), Value(4.0)
    ab = (a.log() + b.log()).exp()     # a*b, built from given operations
    ac = (a.log() + c.log()).exp()     # a*c
    L = ab + ac
    for _ in range(3):
        L.backward()                   # no zero_grad in between
        print(L.grad, a.grad, b.grad, c.grad)   # a: 7, 21, 42
    """
    a, b, c = value.Value(2.0), value.Value(3.0), value.Value(4.0)
    out = (a.log() + b.log()).exp() + (a.log() + c.log()).exp()
    calls = []
    for _ in range(3):
        out.backward()
        calls.append({"root": out.grad, "a": a.grad, "b": b.grad, "c": c.grad})
    return {"calls": calls}


def rebuilt_graph(value, x: float) -> dict:
    """
    x = Value({x})
    for _ in range(2):
        y = (x ** 2).exp()   # a fresh graph each time
        y.backward()         # no zero_grad: x.grad doubles
    print(x.grad)
    """
    v = value.Value(x)
    grads = []
    for _ in range(2):
        y = (v ** 2).exp()
        y.backward()
        grads.append(v.grad)
    return {"grads": grads}


def _loop(value, body: str, steps: int = 3, lr: float = 0.1) -> dict:
    """prediction = 2w (as w + w), target 4, loss (2w - 4)**2, w0 = 0: the lesson's three bodies."""
    w = value.Value(0.0)
    history = []
    for _ in range(steps):
        loss = ((w + w) - 4.0) ** 2
        if body == "correct":
            loss.zero_grad()
            loss.backward()
        elif body == "no_zero_grad":
            loss.backward()
        else:
            loss.backward()
            loss.zero_grad()
        w.data -= lr * w.grad
        history.append({"w": w.data, "grad": w.grad})
    final = ((w + w) - 4.0) ** 2
    return {"steps": history, "w": w.data, "loss": final.data}


def loop_without_zero_grad(value) -> dict:
    """
    w = Value(0.0)
    for _ in range(3):
        loss = ((w + w) - 4.0) ** 2    # prediction 2w, target 4
        loss.backward()                # no zero_grad: gradients pile up
        w.data -= 0.1 * w.grad
    print(w.data, (((w + w) - 4.0) ** 2).data)   # 4.224 19.785
    """
    return _loop(value, "no_zero_grad")


# -- value.zero_grad -------------------------------------------------------------------------------

def loop_correct(value) -> dict:
    """
    w = Value(0.0)
    for _ in range(3):
        loss = ((w + w) - 4.0) ** 2    # prediction 2w, target 4
        loss.zero_grad()
        loss.backward()
        w.data -= 0.1 * w.grad
    print(w.data, (((w + w) - 4.0) ** 2).data)   # 1.984 0.001
    """
    return _loop(value, "correct")


def loop_zero_grad_after_backward(value) -> dict:
    """
    w = Value(0.0)
    for _ in range(3):
        loss = ((w + w) - 4.0) ** 2
        loss.backward()
        loss.zero_grad()               # too late: the step sees 0
        w.data -= 0.1 * w.grad
    print(w.data, (((w + w) - 4.0) ** 2).data)   # 0.0 16.0
    """
    return _loop(value, "after_backward")


def _graph(value, a: float, b: float):
    Value = value.Value
    x, y = Value(a), Value(b)
    p = (x + y) ** 2
    q = (x - y).exp()
    out = p + q
    return x, y, p, q, out


def zero_grad_reach(value, a: float, b: float) -> dict:
    """
    x, y = Value({a}), Value({b})
    p = (x + y) ** 2
    q = (x - y).exp()
    L = p + q
    L.backward()
    L.zero_grad()
    print(L.grad, p.grad, q.grad, x.grad, y.grad)   # all 0.0
    """
    x, y, p, q, out = _graph(value, a, b)
    out.backward()
    out.zero_grad()
    return {"root": out.grad, "intermediates": [p.grad, q.grad], "leaves": [x.grad, y.grad]}


def zero_grad_then_backward(value, a: float, b: float) -> dict:
    """
    x, y = Value({a}), Value({b})
    p = (x + y) ** 2
    q = (x - y).exp()
    L = p + q
    for _ in range(3):
        L.zero_grad()
        L.backward()           # the same gradients every time
        print(x.grad, y.grad, p.grad)
    """
    x, y, p, q, out = _graph(value, a, b)
    calls = []
    for _ in range(3):
        out.zero_grad()
        out.backward()
        calls.append({"leaves": [x.grad, y.grad], "intermediates": [p.grad, q.grad]})
    return {"calls": calls}


def zero_grad_of_intermediate(value, a: float, b: float) -> dict:
    """
    x, y = Value({a}), Value({b})
    p = (x + y) ** 2
    q = (x - y).exp()
    L = p + q
    L.backward()
    p.zero_grad()       # p and what p depends on; L and q keep theirs
    print(L.grad, p.grad, q.grad, x.grad, y.grad)
    """
    x, y, p, q, out = _graph(value, a, b)
    out.backward()
    p.zero_grad()
    return {"root": out.grad, "p": p.grad, "q": q.grad, "leaves": [x.grad, y.grad]}
