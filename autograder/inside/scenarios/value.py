"""Scenarios for the scalar engine, `value.py`.

Each builds its graph from the operation it grades and the given `+`, `-`, `** number` and
unary `-` alone (exp and log may become stubs), so a bug in one stub costs only the parts that
use it. Scenarios declared `reverse="kit"` run the reverse pass with `Tape`, so a backward()
bug costs value.backward alone. An upstream gradient other than 1 comes from `L = (out +
shift) ** 2` (`_shift`); operands are leaves, computed values, and values used twice. The
graphs are drawn (`tape.reverse(root, x=v, ...)`) with the names the snippet gives them.
"""

from __future__ import annotations

from .common import case, drawing, gradient_fd, scenario, uniform
from .drawing import Recorder

UPSTREAM = 3.0
# The constants that make an operand a computed value: x + LIFT, and y - LIFT.
LIFT = 0.25


class WrongParents(Exception):
    """A rule changed the gradient of a value that is not among its node's parents."""


class Tape(Recorder):
    """The kit's own reverse pass over the Values made inside `with Tape(value) as tape:`.

    `tape.reverse(root)` sets the root's gradient to 1.0 and runs each node's `_backward` once,
    newest first (a node is made after its parents, so that order is correct without a search).
    """

    def usable(self, root) -> bool:
        """Does the tape hold the root and every node it needs, with the given fields?"""
        known = {id(node) for node in self.made}
        if id(root) not in known:
            return False
        for node in self.made:
            parents = getattr(node, "_prev", None)
            if not isinstance(parents, (tuple, list, set, frozenset)) \
                    or not callable(getattr(node, "_backward", None)):
                return False
            # A parent made elsewhere must be a leaf: an inner node not recorded would be skipped.
            if any(id(parent) not in known and getattr(parent, "_prev", ()) for parent in parents):
                return False
        return True

    def reverse(self, root, **names) -> None:
        """Run the reverse pass from `root`; with `names`, then draw the graph, even when a rule
        raised. Raises WrongParents, or whatever a rule raises."""
        try:
            self._reverse(root)
        finally:
            if names:
                self.draw(root, **names)

    def _reverse(self, root) -> None:
        """Run each rule newest first and raise WrongParents when one changes a gradient outside
        its node's `_prev`; an engine this cannot record (no given fields, or no __init__ call)
        runs its own backward()."""
        if not self.usable(root):
            root.backward()
            return
        root.grad = 1.0
        for node in reversed(self.made):
            allowed = {id(parent) for parent in node._prev}
            before = [other.grad for other in self.made]
            node._backward()
            if drawing():
                self.passes[id(node)] = {id(other): [grad, other.grad]
                                         for other, grad in zip(self.made, before) if id(other) in allowed}
            for other, grad in zip(self.made, before):
                if id(other) not in allowed and not _same(other.grad, grad):
                    label = getattr(node, "_op", "")
                    whose = f"the rule of a `{label}` node" if label else "a rule attached to a leaf"
                    raise WrongParents(f"{whose} changed the gradient of a value that is not one of its "
                                       "parents")


def _same(a, b) -> bool:
    """Are two gradients the same (nan is the same as nan)?"""
    return a == b or (a != a and b != b)  # nan stays nan


def _shift(out: float) -> float:
    """The constant that makes d/d(out) (out + shift)**2 equal UPSTREAM."""
    return UPSTREAM / 2 - out


def _loss(out, shift: float | None):
    """`out` itself at the root, or `(out + shift) ** 2` above it."""
    return out if shift is None else (out + shift) ** 2


def _binary_cases(value, op, seed: int, count: int, low: float, high: float, *, named: str,
                  upstream: bool = True, computed: bool = False) -> list[dict]:
    """op(a, b) at seeded points, on leaves or on computed operands (a + LIFT, b - LIFT); the
    snippet calls op's result `named`."""
    Value = value.Value

    def operands(a, b):
        return (a + LIFT, b - LIFT) if computed else (a, b)

    def observe(a: float, b: float) -> dict:
        with Tape(value) as tape:
            x, y = Value(a), Value(b)
            out = op(*operands(x, y))
            shift = _shift(out.data) if upstream else None
            loss = _loss(out, shift)
        tape.reverse(loss, a=x, b=y, **{named: out}, **({"L": loss} if upstream else {}))
        fd = gradient_fd(lambda p: _loss(op(*operands(Value(p[0]), Value(p[1]))), shift).data, [a, b])
        found = {"data": out.data, "grads": [x.grad, y.grad], "grads_fd": fd}
        return {**found, "inputs": {"shift": shift}} if upstream else found

    return [case({"a": a, "b": b}, lambda a=a, b=b: observe(a, b))
            for a, b in zip(uniform(seed, count, low, high), uniform(seed + 1, count, low, high))]


def _unary_cases(value, op, points: list[float], *, named: str, upstream: bool = True,
                 computed: bool = False) -> list[dict]:
    """op(x) at the given points, on a leaf or on a computed operand (x + LIFT); the snippet
    calls op's result `named`."""
    Value = value.Value

    def operand(x):
        return x + LIFT if computed else x

    def observe(a: float) -> dict:
        with Tape(value) as tape:
            x = Value(a)
            out = op(operand(x))
            shift = _shift(out.data) if upstream else None
            loss = _loss(out, shift)
        tape.reverse(loss, x=x, **{named: out}, **({"L": loss} if upstream else {}))
        fd = gradient_fd(lambda p: _loss(op(operand(Value(p[0]))), shift).data, [a])[0]
        found = {"data": out.data, "grad": x.grad, "grad_fd": fd}
        return {**found, "inputs": {"shift": shift}} if upstream else found

    return [case({"a": a}, lambda a=a: observe(a)) for a in points]


def _tanh(x):
    return x.tanh()


def _relu(x):
    return x.relu()


def _sigmoid(x):
    return x.sigmoid()


def _product(a, b):
    return a * b


def _quotient(a, b):
    return a / b


# -- the given operations --------------------------------------------------------------------------

@scenario("value", reverse="kit")
def given_operations(value, a: float, b: float, checks: dict[str, list[str]]) -> dict:
    """
    from value import Value
    for name, expressions in {checks}.items():
        a, b = Value({a}), Value({b})          # the same two leaves for every expression of one operation
        for expression in expressions:
            out = eval(expression)
            out.backward()
            print(name, expression, out.data)
        print(name, a.grad, b.grad)            # what every expression passed back, added up
    """
    def check(expressions: list[str]) -> dict:
        leaves = {"Value": value.Value, "a": value.Value(a), "b": value.Value(b)}
        data = []
        for expression in expressions:
            with Tape(value) as tape:
                out = eval(expression, leaves)  # noqa: S307 - the kit's own expressions
            tape.reverse(out)
            data.append(out.data)
        return {"data": data, "grads": [leaves["a"].grad, leaves["b"].grad]}

    return {name: case({}, lambda expressions=expressions: check(expressions))
            for name, expressions in checks.items()}


# -- value.mul ---------------------------------------------------------------------------------

@scenario("value", reverse="kit")
def products(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    c = a * b
    L = (c + {shift}) ** 2      # so that dL/dc = 3
    L.backward()
    print(c.data, a.grad, b.grad)
    """
    return _binary_cases(value, _product, seed, count, -3.0, 3.0, named="c")


@scenario("value", reverse="kit")
def products_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    c = a * b
    c.backward()
    print(c.data, a.grad, b.grad)
    """
    return _binary_cases(value, _product, seed, count, -3.0, 3.0, upstream=False, named="c")


@scenario("value", reverse="kit")
def products_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    c = (a + 0.25) * (b - 0.25)     # both factors are computed, not leaves
    L = (c + {shift}) ** 2          # so that dL/dc = 3
    L.backward()
    print(c.data, a.grad, b.grad)
    """
    return _binary_cases(value, _product, seed, count, -3.0, 3.0, computed=True, named="c")


@scenario("value", reverse="kit")
def times_number(value, x: float, k: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = x * {k}
    y.backward()
    print(y.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = v * k
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def number_times(value, x: float, k: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = {k} * x               # Python asks x.__rmul__
    y.backward()
    print(y.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = k * v
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def square(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = x * x
    y.backward()
    print(y.data, x.grad)      # d(x*x)/dx = 2x
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = v * v
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def with_numbers(value, x: float, k: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = x * {k} + {k} * x     # a Value times a plain number, both ways round
    y.backward()
    print(y.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = v * k + k * v
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def lesson_product(value, a: float, b: float) -> dict:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    c = a * b + a
    c.backward()
    print(c.data, a.grad, b.grad)
    """
    with Tape(value) as tape:
        x, y = value.Value(a), value.Value(b)
        c = x * y + x
    tape.reverse(c, a=x, b=y, c=c)
    return {"data": c.data, "grads": [x.grad, y.grad]}


# -- value.tanh, value.relu, value.sigmoid --------------------------------------------------------

@scenario("value", reverse="kit")
def tanh_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    t = x.tanh()
    L = (t + {shift}) ** 2      # so that dL/dt = 3
    L.backward()
    print(t.data, x.grad)
    """
    return _unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5), named="t")


@scenario("value", reverse="kit")
def tanh_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    t = x.tanh()
    t.backward()
    print(t.data, x.grad)
    """
    return _unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5), upstream=False, named="t")


@scenario("value", reverse="kit")
def tanh_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    t = (x + 0.25).tanh()       # the input of tanh is computed, not a leaf
    L = (t + {shift}) ** 2      # so that dL/dt = 3
    L.backward()
    print(t.data, x.grad)
    """
    return _unary_cases(value, _tanh, uniform(seed, count, -2.5, 2.5), computed=True, named="t")


@scenario("value", reverse="kit")
def tanh_beside_input(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = x.tanh() + x       # x gets a gradient from both terms
    y.backward()
    print(y.data, x.grad)
    """
    return _beside_input(value, _tanh, x)


def _beside_input(value, op, x: float) -> dict:
    """op(x) + x, through the kit's reverse pass: x collects a gradient from both terms."""
    with Tape(value) as tape:
        v = value.Value(x)
        y = op(v) + v
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def tanh_large(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    t = x.tanh()
    t.backward()
    print(t.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        t = v.tanh()
    tape.reverse(t, x=v, t=t)
    return {"data": t.data, "grad": v.grad}


@scenario("value", reverse="kit")
def relu_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    r = x.relu()
    L = (r + {shift}) ** 2      # so that dL/dr = 3
    L.backward()
    print(r.data, x.grad)
    """
    return _unary_cases(value, _relu, uniform(seed, count, -3.0, 3.0, avoid=0.0, margin=0.05), named="r")


@scenario("value", reverse="kit")
def relu_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    r = x.relu()
    r.backward()
    print(r.data, x.grad)
    """
    return _unary_cases(value, _relu, uniform(seed, count, -3.0, 3.0, avoid=0.0, margin=0.05),
                        upstream=False, named="r")


@scenario("value", reverse="kit")
def relu_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    r = (x + 0.25).relu()       # the input of relu is computed, not a leaf
    L = (r + {shift}) ** 2      # so that dL/dr = 3
    L.backward()
    print(r.data, x.grad)
    """
    # The kink of relu(x + LIFT) is at x = -LIFT: the points stay clear of it.
    points = uniform(seed, count, -3.0, 3.0, avoid=-LIFT, margin=0.05)
    return _unary_cases(value, _relu, points, computed=True, named="r")


@scenario("value", reverse="kit")
def relu_beside_input(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = x.relu() + x       # x gets a gradient from both terms
    y.backward()
    print(y.data, x.grad)
    """
    return _unary_cases(value, lambda x: x.relu() + x, points, named="y", upstream=False)


@scenario("value", reverse="kit")
def relu_in_expression(value, a: float, c: float) -> dict:
    """
    from value import Value
    a, c = Value({a}), Value({c})
    L = (a - c).relu() + a ** 2 + (c - a).relu()
    L.backward()
    print(L.data, a.grad, c.grad)
    """
    with Tape(value) as tape:
        x, z = value.Value(a), value.Value(c)
        out = (x - z).relu() + x ** 2 + (z - x).relu()
    tape.reverse(out, a=x, c=z, L=out)
    return {"data": out.data, "grads": [x.grad, z.grad]}


@scenario("value", reverse="kit")
def sigmoid_beside_input(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = x.sigmoid() + x       # x gets a gradient from both terms
    y.backward()
    print(y.data, x.grad)
    """
    return _beside_input(value, lambda v: v.sigmoid(), x)


@scenario("value", reverse="kit")
def sigmoid_values(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    s = x.sigmoid()
    L = (s + {shift}) ** 2      # so that dL/ds = 3
    L.backward()
    print(s.data, x.grad)
    """
    return _unary_cases(value, _sigmoid, points, named="s")


@scenario("value", reverse="kit")
def sigmoid_at_root(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    s = x.sigmoid()
    s.backward()
    print(s.data, x.grad)
    """
    return _unary_cases(value, _sigmoid, points, upstream=False, named="s")


@scenario("value", reverse="kit")
def sigmoid_of_computed_values(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    s = (x + 0.25).sigmoid()    # the input of sigmoid is computed, not a leaf
    L = (s + {shift}) ** 2      # so that dL/ds = 3
    L.backward()
    print(s.data, x.grad)
    """
    return _unary_cases(value, _sigmoid, points, computed=True, named="s")


# -- value.truediv ---------------------------------------------------------------------------------

@scenario("value", reverse="kit")
def quotients(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    L = (q + {shift}) ** 2      # so that dL/dq = 3
    L.backward()
    print(q.data, a.grad, b.grad)
    """
    return _binary_cases(value, _quotient, seed, count, 0.5, 3.0, named="q")


@scenario("value", reverse="kit")
def quotients_at_root(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = a / b
    q.backward()
    print(q.data, a.grad, b.grad)
    """
    return _binary_cases(value, _quotient, seed, count, 0.5, 3.0, upstream=False, named="q")


@scenario("value", reverse="kit")
def quotients_of_computed_values(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    q = (a + 0.25) / (b - 0.25)     # numerator and denominator are computed, not leaves
    L = (q + {shift}) ** 2          # so that dL/dq = 3
    L.backward()
    print(q.data, a.grad, b.grad)
    """
    return _binary_cases(value, _quotient, seed, count, 0.75, 3.0, computed=True, named="q")


@scenario("value", reverse="kit")
def quotient_beside_numerator(value, a: float, b: float) -> dict:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    y = a / b + a          # a gets a gradient from both terms
    y.backward()
    print(y.data, a.grad, b.grad)
    """
    return _quotient_beside(value, a, b, beside=0)


def _quotient_beside(value, a: float, b: float, beside: int) -> dict:
    """a / b plus one of its operands (0: a, 1: b), through the kit's reverse pass."""
    with Tape(value) as tape:
        x, z = value.Value(a), value.Value(b)
        y = x / z + (x, z)[beside]
    tape.reverse(y, a=x, b=z, y=y)
    return {"data": y.data, "grads": [x.grad, z.grad]}


@scenario("value", reverse="kit")
def quotient_beside_denominator(value, a: float, b: float) -> dict:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    y = a / b + b          # b gets a gradient from both terms
    y.backward()
    print(y.data, a.grad, b.grad)
    """
    return _quotient_beside(value, a, b, beside=1)


@scenario("value", reverse="kit")
def quotient_by_the_same_twice(value, a: float, b: float) -> dict:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    y = a / b / b          # b is the denominator of two quotients
    y.backward()
    print(y.data, a.grad, b.grad)
    """
    with Tape(value) as tape:
        x, z = value.Value(a), value.Value(b)
        y = x / z / z
    tape.reverse(y, a=x, b=z, y=y)
    return {"data": y.data, "grads": [x.grad, z.grad]}


@scenario("value", reverse="kit")
def divide_by_number(value, x: float, k: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = x / {k}
    y.backward()
    print(y.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = v / k
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def number_over_value(value, k: float, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = {k} / x               # Python asks x.__rtruediv__, which calls your __truediv__
    y.backward()
    print(y.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = k / v
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


@scenario("value", reverse="kit")
def quotient_of_itself(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = (x + 1) / x          # x on both sides of the bar
    y.backward()
    print(y.data, x.grad)
    """
    with Tape(value) as tape:
        v = value.Value(x)
        y = (v + 1) / v
    tape.reverse(y, x=v, y=y)
    return {"data": y.data, "grad": v.grad}


# -- value.backward ---------------------------------------------------------------------------------

@scenario("value", reverse="backward")
def reused_leaf(value, x: float) -> dict:
    """
    from value import Value
    a = Value({x})
    b = a + a
    b.backward()
    print(b.data, a.grad, b.grad)
    """
    with Recorder(value) as recorder:
        a = value.Value(x)
        b = a + a
    b.backward()
    recorder.draw(b, a=a, b=b)
    return {"data": b.data, "grad": a.grad, "root": b.grad}


@scenario("value", reverse="backward")
def diamond(value, a: float) -> dict:
    """
    from value import Value
    a = Value({a})
    b = a + a
    c = b + b
    c.backward()
    print(c.data, a.grad, b.grad, c.grad)    # c = 4a; the gradients 4.0 2.0 1.0
    """
    with Recorder(value) as recorder:
        a = value.Value(a)
        b = a + a
        c = b + b
    c.backward()
    recorder.draw(c, a=a, b=b, c=c)
    return {"data": c.data, "grads": [a.grad, b.grad, c.grad]}


@scenario("value", reverse="backward")
def shared_node(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    r = x ** 2 + 1
    L = r ** 2 + r ** 2      # r has two consumers: its gradient is complete only after both
    L.backward()
    print(L.data, x.grad, r.grad)
    """
    with Recorder(value) as recorder:
        v = value.Value(x)
        r = v ** 2 + 1
        out = r ** 2 + r ** 2
    out.backward()
    recorder.draw(out, x=v, r=r, L=out)
    return {"data": out.data, "grads": [v.grad, r.grad]}


@scenario("value", reverse="backward")
def long_chain(value, depth: int, x: float) -> dict:
    """
    from value import Value
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


@scenario("value", reverse="backward")
def mixed_graph(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    u = (a + b) ** 2
    L = (u + 1) ** 0.5 + (a - b) ** 3 + u     # u is used twice
    L.backward()
    print(L.data, a.grad, b.grad)
    """
    Value = value.Value

    def build(a, b):
        u = (a + b) ** 2
        return (u + 1) ** 0.5 + (a - b) ** 3 + u

    def observe(a: float, b: float) -> dict:
        with Recorder(value) as recorder:
            x, y = Value(a), Value(b)
            out = build(x, y)
        out.backward()
        recorder.draw(out, a=x, b=y, L=out)
        return {"data": out.data, "grads": [x.grad, y.grad],
                "grads_fd": gradient_fd(lambda p: build(Value(p[0]), Value(p[1])).data, [a, b])}

    return [case({"a": a, "b": b}, lambda a=a, b=b: observe(a, b))
            for a, b in zip(uniform(seed, count, -1.0, 1.0), uniform(seed + 1, count, -1.0, 1.0))]


@scenario("value", reverse="backward")
def three_calls(value, a: float, b: float, c: float) -> dict:
    """
    from value import Value
    a, b, c = Value({a}), Value({b}), Value({c})
    ab = (a + b) ** 2 - (a - b) ** 2   # 4ab, built from given operations
    ac = (a + c) ** 2 - (a - c) ** 2   # 4ac
    L = ab + ac
    for _ in range(3):
        L.backward()                   # no zero_grad in between: the gradients pile up
        print(L.grad, a.grad, b.grad, c.grad)
    """
    with Recorder(value) as recorder:
        a, b, c = value.Value(a), value.Value(b), value.Value(c)
        ab = (a + b) ** 2 - (a - b) ** 2
        ac = (a + c) ** 2 - (a - c) ** 2
        out = ab + ac
    calls = []
    for _ in range(3):
        out.backward()
        calls.append({"root": out.grad, "a": a.grad, "b": b.grad, "c": c.grad})
    recorder.draw(out, a=a, b=b, c=c, ab=ab, ac=ac, L=out)
    return {"calls": calls}


@scenario("value", reverse="backward")
def rebuilt_graph(value, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    for _ in range(2):
        y = (x ** 2 + x) ** 2   # a fresh graph each time
        y.backward()         # no zero_grad: the second call adds the same again
        print(x.grad)
    """
    v = value.Value(x)
    grads = []
    for _ in range(2):
        y = (v ** 2 + v) ** 2
        y.backward()
        grads.append(v.grad)
    return {"grads": grads}


def _loop(value, body: str, w0: float, target: float, lr: float, steps: int = 3) -> dict:
    """`steps` steps of the lesson's loop `body` ("correct", "no_zero_grad", "after_backward") on
    the loss (w + w - target)**2 from w = w0: w and its gradient after each, then w and the loss.
    Only "no_zero_grad", which grades backward(), calls backward(); the others run the kit's Tape."""
    w = value.Value(w0)
    history = []
    for _ in range(steps):
        with Tape(value) as tape:
            loss = ((w + w) - target) ** 2
        backward = (lambda loss: loss.backward()) if body == "no_zero_grad" else tape.reverse
        if body == "correct":
            loss.zero_grad()
            backward(loss)
        elif body == "no_zero_grad":
            backward(loss)
        else:
            backward(loss)
            loss.zero_grad()
        w.data -= lr * w.grad
        history.append({"w": w.data, "grad": w.grad})
    final = ((w + w) - target) ** 2
    return {"steps": history, "w": w.data, "loss": final.data}


@scenario("value", reverse="backward")
def loop_without_zero_grad(value, w0: float, target: float, lr: float) -> dict:
    """
    from value import Value
    w = Value({w0})
    for _ in range(3):
        loss = ((w + w) - {target}) ** 2    # prediction 2w
        loss.backward()                # no zero_grad: gradients pile up
        w.data -= {lr} * w.grad
        print(w.data, w.grad)
    print(w.data, (((w + w) - {target}) ** 2).data)
    """
    return _loop(value, "no_zero_grad", w0, target, lr)


# -- value.zero_grad -------------------------------------------------------------------------------

@scenario("value", reverse="kit")
def loop_correct(value, w0: float, target: float, lr: float) -> dict:
    """
    from value import Value
    w = Value({w0})
    for _ in range(3):
        loss = ((w + w) - {target}) ** 2    # prediction 2w
        loss.zero_grad()
        loss.backward()
        w.data -= {lr} * w.grad
        print(w.data, w.grad)
    print(w.data, (((w + w) - {target}) ** 2).data)   # w nears half of {target}
    """
    return _loop(value, "correct", w0, target, lr)


@scenario("value", reverse="kit")
def loop_zero_grad_after_backward(value, w0: float, target: float, lr: float) -> dict:
    """
    from value import Value
    w = Value({w0})
    for _ in range(3):
        loss = ((w + w) - {target}) ** 2
        loss.backward()
        loss.zero_grad()               # too late: the step sees 0
        w.data -= {lr} * w.grad
        print(w.data, w.grad)
    print(w.data, (((w + w) - {target}) ** 2).data)   # w stays {w0}
    """
    return _loop(value, "after_backward", w0, target, lr)


def _graph(value, a: float, b: float):
    """x, y, p = (x + y)**2, q = (x - y)**3 and L = p + q: the zero_grad scenarios' graph."""
    Value = value.Value
    x, y = Value(a), Value(b)
    p = (x + y) ** 2
    q = (x - y) ** 3
    out = p + q
    return x, y, p, q, out


@scenario("value", reverse="kit")
def zero_grad_reach(value, a: float, b: float) -> dict:
    """
    from value import Value
    x, y = Value({a}), Value({b})
    p = (x + y) ** 2
    q = (x - y) ** 3
    L = p + q
    L.backward()
    L.zero_grad()
    print(L.grad, p.grad, q.grad, x.grad, y.grad)   # all 0.0
    """
    with Tape(value) as tape:
        x, y, p, q, out = _graph(value, a, b)
    tape.reverse(out)
    out.zero_grad()
    return {"root": out.grad, "intermediates": [p.grad, q.grad], "leaves": [x.grad, y.grad]}


@scenario("value", reverse="kit")
def zero_grad_then_backward(value, a: float, b: float) -> dict:
    """
    from value import Value
    x, y = Value({a}), Value({b})
    p = (x + y) ** 2
    q = (x - y) ** 3
    L = p + q
    for _ in range(3):
        L.zero_grad()
        L.backward()           # the same gradients every time
        print(x.grad, y.grad, p.grad, q.grad)
    """
    with Tape(value) as tape:
        x, y, p, q, out = _graph(value, a, b)
    calls = []
    for _ in range(3):
        out.zero_grad()
        tape.reverse(out)
        calls.append({"leaves": [x.grad, y.grad], "intermediates": [p.grad, q.grad]})
    return {"calls": calls}


@scenario("value", reverse="kit")
def zero_grad_of_intermediate(value, a: float, b: float) -> dict:
    """
    from value import Value
    x, y = Value({a}), Value({b})
    p = (x + y) ** 2
    q = (x - y) ** 3
    L = p + q
    L.backward()
    p.zero_grad()       # p and what p depends on; L and q keep theirs
    print(L.grad, p.grad, q.grad, x.grad, y.grad)
    """
    with Tape(value) as tape:
        x, y, p, q, out = _graph(value, a, b)
    tape.reverse(out)
    p.zero_grad()
    return {"root": out.grad, "p": p.grad, "q": q.grad, "leaves": [x.grad, y.grad]}


# -- any operation, by name: the checks `autograder part new` starts a new part's suite with --------------

def _method(name: str):
    """The operation that calls the method `name` of its operand."""
    return lambda x: getattr(x, name)()


@scenario("value", reverse="kit")
def method_at_root(value, method: str, seed: int, count: int, low: float, high: float) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = getattr(x, {method})()
    y.backward()
    print(y.data, x.grad)
    """
    return _unary_cases(value, _method(method), uniform(seed, count, low, high), upstream=False, named="y")


@scenario("value", reverse="kit")
def method_values(value, method: str, seed: int, count: int, low: float, high: float) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = getattr(x, {method})()
    L = (y + {shift}) ** 2      # so that dL/dy = 3
    L.backward()
    print(y.data, x.grad)
    """
    return _unary_cases(value, _method(method), uniform(seed, count, low, high), named="y")


@scenario("value", reverse="kit")
def method_of_computed_values(value, method: str, seed: int, count: int, low: float,
                              high: float) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = getattr(x + 0.25, {method})()   # its input is computed, not a leaf
    L = (y + {shift}) ** 2              # so that dL/dy = 3
    L.backward()
    print(y.data, x.grad)
    """
    points = uniform(seed, count, low - LIFT, high - LIFT)  # x + LIFT stays in [low, high]
    return _unary_cases(value, _method(method), points, computed=True, named="y")


@scenario("value", reverse="kit")
def method_beside_input(value, method: str, x: float) -> dict:
    """
    from value import Value
    x = Value({x})
    y = getattr(x, {method})() + x       # x gets a gradient from both terms
    y.backward()
    print(y.data, x.grad)
    """
    return _beside_input(value, _method(method), x)
