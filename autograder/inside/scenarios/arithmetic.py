"""Scenarios of the arithmetic operations of `value.py`: `*` (value.mul) and `/` (value.truediv).

Each runs the operation's rule by hand from an upstream gradient, as its snippet does (value.py).
"""

from __future__ import annotations

from .common import case, scenario
from .value import LIFT, Tape, binary_cases, times, unary_cases


def _product(a, b):
    return a * b


def _quotient(a, b):
    return a / b


# -- value.mul ---------------------------------------------------------------------------------

@scenario("value", reverse="kit")
def products(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    c = a * b
    c.grad = 3.0           # the gradient a loss above c would pass down
    c._backward()          # your rule for *, run by hand: no backward() needed
    print(c.data, a.grad, b.grad)
    """
    return binary_cases(value, _product, seed, count, -3.0, 3.0, margin=0.1, named="c")


@scenario("value", reverse="kit")
def products_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    c = a * b
    c.grad = 1.0           # as at the root of a graph
    c._backward()          # your rule for *, run by hand: no backward() needed
    print(c.data, a.grad, b.grad)
    """
    return binary_cases(value, _product, seed, count, -3.0, 3.0, margin=0.1, upstream=1.0, named="c")


@scenario("value", reverse="kit")
def products_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    u, v = Value({a}) + 0.25, Value({b}) + 0.25     # computed values, not leaves
    c = u * v
    c.grad = 3.0           # the gradient a loss above c would pass down
    c._backward()          # your rule for *, run by hand: no backward() needed
    print(c.data, u.grad, v.grad)
    """
    return binary_cases(value, _product, seed, count, -3.25, 2.75, avoid=-LIFT, margin=0.1, computed=True,
                         named="c")


@scenario("value", reverse="kit")
def times_number(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    y = x * {k}
    y.grad = 1.0
    y._backward()          # your rule for *, run by hand
    print(y.data, x.grad)
    """
    return times(value, points, lambda v, k: v * k)


@scenario("value", reverse="kit")
def number_times(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    y = {k} * x            # Python asks x.__rmul__, which calls your __mul__
    y.grad = 1.0
    y._backward()          # your rule for *, run by hand
    print(y.data, x.grad)
    """
    return times(value, points, lambda v, k: k * v)


@scenario("value", reverse="kit")
def square(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = x * x              # x is both operands
    y.grad = 1.0
    y._backward()          # your rule for *, run by hand
    print(y.data, x.grad)
    """
    return unary_cases(value, lambda x: x * x, points, upstream=1.0, named="y")


@scenario("value", reverse="kit")
def with_numbers(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    p, q = x * {k}, {k} * x        # a Value times a plain number, both ways round
    y = p + q
    y.grad = 1.0
    for each in (y, q, p):         # each rule by hand, the newest node first
        each._backward()

    print(y.data, x.grad)
    """
    return times(value, points, lambda v, k: v * k + k * v)


@scenario("value", reverse="kit")
def lesson_product(value, a: float, b: float) -> dict:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    p = a * b
    c = p + a
    c.grad = 1.0
    for each in (c, p):            # each rule by hand, the newest node first
        each._backward()

    print(c.data, a.grad, b.grad)
    """
    with Tape(value) as tape:
        x, y = value.Value(a), value.Value(b)
        tape.mark()
        p = x * y
        c = p + x
    tape.reverse(c, 1.0, a=x, b=y, p=p, c=c)
    return {"data": c.data, "grads": [x.grad, y.grad]}


# -- value.truediv ---------------------------------------------------------------------------------

@scenario("value", reverse="kit")
def quotients(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    q.grad = 3.0           # the gradient a loss above q would pass down
    q._backward()          # your rule for /, run by hand: no backward() needed
    print(q.data, a.grad, b.grad)
    """
    return binary_cases(value, _quotient, seed, count, -3.0, 3.0, margin=0.5, named="q")


@scenario("value", reverse="kit")
def quotients_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    q.grad = 1.0           # as at the root of a graph
    q._backward()          # your rule for /, run by hand: no backward() needed
    print(q.data, a.grad, b.grad)
    """
    return binary_cases(value, _quotient, seed, count, -3.0, 3.0, margin=0.5, upstream=1.0, named="q")


@scenario("value", reverse="kit")
def quotients_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    u, v = Value({a}) + 0.25, Value({b}) + 0.25     # numerator and denominator are computed
    q = u / v
    q.grad = 3.0           # the gradient a loss above q would pass down
    q._backward()          # your rule for /, run by hand: no backward() needed
    print(q.data, u.grad, v.grad)
    """
    return binary_cases(value, _quotient, seed, count, -3.25, 2.75, avoid=-LIFT, margin=0.5, computed=True,
                         named="q")


def _quotient_beside(value, points: list[list[float]], beside: int) -> list[dict]:
    """a / b plus one of its operands (0: a, 1: b), at each [a, b], the rules run by hand."""
    def observe(a: float, b: float) -> dict:
        with Tape(value) as tape:
            x, z = value.Value(a), value.Value(b)
            tape.mark()
            q = x / z
            y = q + (x, z)[beside]
        tape.reverse(y, 1.0, a=x, b=z, q=q, y=y)
        return {"data": y.data, "grads": [x.grad, z.grad]}

    return [case({"a": a, "b": b}, lambda a=a, b=b: observe(a, b)) for a, b in points]


@scenario("value", reverse="kit")
def quotient_beside_numerator(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    y = q + a              # a gets a gradient from both terms
    y.grad = 1.0
    for each in (y, q):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, a.grad, b.grad)
    """
    return _quotient_beside(value, points, beside=0)


@scenario("value", reverse="kit")
def quotient_beside_denominator(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    y = q + b              # b gets a gradient from both terms
    y.grad = 1.0
    for each in (y, q):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, a.grad, b.grad)
    """
    return _quotient_beside(value, points, beside=1)


@scenario("value", reverse="kit")
def quotient_by_the_same_twice(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    y = q / b              # b is the denominator of two quotients
    y.grad = 1.0
    for each in (y, q):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, a.grad, b.grad)
    """
    def observe(a: float, b: float) -> dict:
        with Tape(value) as tape:
            x, z = value.Value(a), value.Value(b)
            tape.mark()
            q = x / z
            y = q / z
        tape.reverse(y, 1.0, a=x, b=z, q=q, y=y)
        return {"data": y.data, "grads": [x.grad, z.grad]}

    return [case({"a": a, "b": b}, lambda a=a, b=b: observe(a, b)) for a, b in points]


@scenario("value", reverse="kit")
def divide_by_number(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    y = x / {k}
    y.grad = 1.0
    y._backward()          # your rule for /, run by hand
    print(y.data, x.grad)
    """
    return times(value, points, lambda v, k: v / k)


@scenario("value", reverse="kit")
def number_over_value(value, points: list[list[float]]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    y = {k} / x            # Python asks x.__rtruediv__, which calls your __truediv__
    y.grad = 1.0
    y._backward()          # your rule for /, run by hand
    print(y.data, x.grad)
    """
    return times(value, points, lambda v, k: k / v)


@scenario("value", reverse="kit")
def quotient_of_itself(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    u = x + 1
    y = u / x              # x on both sides of the bar
    y.grad = 1.0
    for each in (y, u):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, x.grad)
    """
    def observe(a: float) -> dict:
        with Tape(value) as tape:
            x = value.Value(a)
            tape.mark()
            u = x + 1
            y = u / x
        tape.reverse(y, 1.0, x=x, u=u, y=y)
        return {"data": y.data, "grad": x.grad}

    return [case({"x": a}, lambda a=a: observe(a)) for a in points]
