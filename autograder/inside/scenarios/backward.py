"""Scenarios of the whole graph, for value.backward and value.zero_grad.

Their graphs are built from `+` and `** number` alone: one node each in every engine (the kit
makes those nodes itself where the engine takes nodes made by hand, `Nodes`), so that an
answer after several backward() calls, which also piles gradient into the intermediate nodes,
is a fact about that graph and never depends on how a student built `-`, `/` or unary `-`,
nor on the stubs of the operation parts. Only value.backward's scenarios call backward(); the
others run the kit's reverse pass (`Tape`), so that a bug of backward() costs them nothing.
"""

from __future__ import annotations

from .common import case, gradient_fd, pairs, scenario
from .drawing import Recorder
from .value import Tape

# -- value.backward ---------------------------------------------------------------------------------

def _takes_nodes(value) -> bool:
    """Does the engine take nodes made by hand, as the handout's constructor makes them:
    `Value(data, parents, op)` keeping the parents in `_prev`, with a `_backward` to set? The
    rule set is known by what calling `_backward` then does, not by which object it reads back."""
    try:
        a, b = value.Value(1.0), value.Value(2.0)
        made = value.Value(3.0, (a, b), "+")
        ran = []

        def rule() -> None:
            ran.append(True)

        made._backward = rule
        kept = {id(parent) for parent in made._prev}
        made._backward()
        return kept == {id(a), id(b)} and ran == [True]
    except Exception:  # noqa: BLE001 - an engine built otherwise: its own operations build the graph
        return False


class Nodes:
    """The given `+` and `** number` for a graph whose every node the kit controls: nodes it
    makes itself, each as the handout's `+` and `**` make theirs, where the engine takes nodes
    made by hand; else the engine's own `+` and `**` (one node each in every engine)."""

    def __init__(self, value) -> None:
        self.Value, self.by_hand = value.Value, _takes_nodes(value)

    def add(self, x, y):
        if not self.by_hand:
            return x + y
        y = y if isinstance(y, self.Value) else self.Value(y)
        out = self.Value(x.data + y.data, (x, y), "+")

        def rule() -> None:
            x.grad += out.grad
            y.grad += out.grad

        out._backward = rule
        return out

    def power(self, x, k: float):
        if not self.by_hand:
            return x ** k
        out = self.Value(x.data ** k, (x,), f"**{k}")

        def rule() -> None:
            x.grad += k * x.data ** (k - 1) * out.grad

        out._backward = rule
        return out


@scenario("value", reverse="backward")
def reused_leaf(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    a = Value({x})
    b = a + a
    b.backward()
    print(b.data, a.grad, b.grad)
    """
    def observe(x: float) -> dict:
        with Recorder(value) as recorder:
            a = value.Value(x)
            b = a + a
        b.backward()
        recorder.draw(b, a=a, b=b)
        return {"data": b.data, "grad": a.grad, "root": b.grad}

    return [case({"x": x}, lambda x=x: observe(x)) for x in points]


@scenario("value", reverse="backward")
def diamond(value, points: list[float]) -> list[dict]:
    """
    from value import Value
    a = Value({a})
    b = a + a
    c = b + b
    c.backward()
    print(c.data, a.grad, b.grad, c.grad)    # c = 4a; the gradients 4.0 2.0 1.0
    """
    def observe(x: float) -> dict:
        with Recorder(value) as recorder:
            a = value.Value(x)
            b = a + a
            c = b + b
        c.backward()
        recorder.draw(c, a=a, b=b, c=c)
        return {"data": c.data, "grads": [a.grad, b.grad, c.grad]}

    return [case({"a": a}, lambda a=a: observe(a)) for a in points]


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
    import sys
    sys.setrecursionlimit(20_000)   # as deep as the grader lets a recursive backward() go
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


def _mixed(a, b):
    u = (a + b) ** 2
    return (u + 1) ** 0.5 + (a + b ** 3) ** 2 + u


@scenario("value", reverse="backward")
def mixed_graph(value, seed: int, count: int) -> list[dict]:
    """
    from value import Value
    a, b = Value({a}), Value({b})
    u = (a + b) ** 2
    L = (u + 1) ** 0.5 + (a + b ** 3) ** 2 + u     # u is used twice
    L.backward()
    print(L.data, a.grad, b.grad)
    """
    Value = value.Value

    def observe(a: float, b: float) -> dict:
        with Recorder(value) as recorder:
            x, y = Value(a), Value(b)
            out = _mixed(x, y)
        out.backward()
        recorder.draw(out, a=x, b=y, L=out)
        return {"data": out.data, "grads": [x.grad, y.grad],
                "grads_fd": gradient_fd(lambda p: _mixed(Value(p[0]), Value(p[1])).data, [a, b])}

    return [case({"a": a, "b": b}, lambda a=a, b=b: observe(a, b)) for a, b in pairs(seed, count, -1.0, 1.0)]


@scenario("value", reverse="backward")
def three_calls(value, a: float, b: float, c: float) -> dict:
    """
    from value import Value
    a, b, c = Value({a}), Value({b}), Value({c})
    p = (a + b) ** 2
    q = (a + c) ** 2
    L = p + q                # one node for each + and each **, in every engine
    for _ in range(3):
        L.backward()         # no zero_grad in between: the gradients pile up
        print(L.grad, a.grad, b.grad, c.grad)
    """
    nodes = Nodes(value)
    with Recorder(value) as recorder:
        x, y, z = value.Value(a), value.Value(b), value.Value(c)
        p = nodes.power(nodes.add(x, y), 2)
        q = nodes.power(nodes.add(x, z), 2)
        out = nodes.add(p, q)
    calls = []
    for _ in range(3):
        out.backward()
        calls.append({"root": out.grad, "a": x.grad, "b": y.grad, "c": z.grad})
    recorder.draw(out, a=x, b=y, c=z, p=p, q=q, L=out)
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
# The snippets run the given rules by hand, newest node first, where a graph needs gradients:
# zero_grad() is graded, and shown, without backward().

@scenario("value", reverse="kit")
def loop_correct(value, w0: float, target: float, lr: float) -> dict:
    """
    from value import Value
    w = Value({w0})
    for _ in range(3):
        double = w + w                 # prediction 2w
        error = double - {target}
        loss = error ** 2
        loss.zero_grad()
        loss.grad = 1.0                # the reverse pass, by hand
        for each in (loss, error, double):
            each._backward()
        w.data -= {lr} * w.grad
        print(w.data, w.grad)

    print(w.data, ((w + w - {target}) ** 2).data)   # w nears half of {target}
    """
    return _loop(value, "correct", w0, target, lr)


@scenario("value", reverse="kit")
def loop_zero_grad_after_backward(value, w0: float, target: float, lr: float) -> dict:
    """
    from value import Value
    w = Value({w0})
    for _ in range(3):
        double = w + w                 # prediction 2w
        error = double - {target}
        loss = error ** 2
        loss.grad = 1.0                # the reverse pass, by hand
        for each in (loss, error, double):
            each._backward()
        loss.zero_grad()               # too late: the step sees 0
        w.data -= {lr} * w.grad
        print(w.data, w.grad)

    print(w.data, ((w + w - {target}) ** 2).data)   # w stays {w0}
    """
    return _loop(value, "after_backward", w0, target, lr)


def _graph(value, a: float, b: float):
    """x, y, s = x + y, p = s**2, t = y**2, w = x + t, q = w**3 and L = p + q: the zero_grad
    scenarios' graph, from `+` and `**` alone. s lies two levels below L, the leaves three."""
    Value = value.Value
    x, y = Value(a), Value(b)
    s = x + y
    p = s ** 2
    q = (x + y ** 2) ** 3
    out = p + q
    return x, y, s, p, q, out


@scenario("value", reverse="kit")
def zero_grad_reach(value, a: float, b: float) -> dict:
    """
    from value import Value
    x, y = Value({a}), Value({b})
    s = x + y
    p = s ** 2
    t = y ** 2
    w = x + t
    q = w ** 3
    L = p + q
    L.grad = 1.0
    for each in (L, q, w, t, p, s):      # the reverse pass, by hand
        each._backward()

    L.zero_grad()
    print(L.grad, p.grad, q.grad, s.grad, x.grad, y.grad)   # all 0.0
    """
    with Tape(value) as tape:
        x, y, s, p, q, out = _graph(value, a, b)
    tape.reverse(out)
    out.zero_grad()
    return {"root": out.grad, "intermediates": [p.grad, q.grad], "inner": [s.grad],
            "leaves": [x.grad, y.grad]}


@scenario("value", reverse="kit")
def zero_grad_then_backward(value, a: float, b: float) -> dict:
    """
    from value import Value
    x, y = Value({a}), Value({b})
    s = x + y
    p = s ** 2
    t = y ** 2
    w = x + t
    q = w ** 3
    L = p + q
    for _ in range(3):
        L.zero_grad()
        L.grad = 1.0
        for each in (L, q, w, t, p, s):  # the reverse pass, by hand
            each._backward()
        print(x.grad, y.grad, p.grad, q.grad)   # the same gradients every time
    """
    with Tape(value) as tape:
        x, y, s, p, q, out = _graph(value, a, b)
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
    s = x + y
    p = s ** 2
    t = y ** 2
    w = x + t
    q = w ** 3
    L = p + q
    L.grad = 1.0
    for each in (L, q, w, t, p, s):      # the reverse pass, by hand
        each._backward()

    p.zero_grad()       # p and what p depends on; L and q keep theirs
    print(L.grad, p.grad, q.grad, x.grad, y.grad)
    """
    with Tape(value) as tape:
        x, y, s, p, q, out = _graph(value, a, b)
    tape.reverse(out)
    p.zero_grad()
    return {"root": out.grad, "p": p.grad, "q": q.grad, "leaves": [x.grad, y.grad]}
