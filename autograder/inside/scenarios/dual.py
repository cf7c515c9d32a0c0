"""Scenarios for forward mode, `dual.py`: the class `Dual(val, der=0.0)`.

A function is a small tree of nested lists, so that it can be drawn at random from a seed,
printed as Python for the student, and rebuilt by the grader: `["x"]` is the input,
`["const", c]` a plain number, `["add", a, b]` and `["mul", a, b]` the operators, `["sin", a]`
and `["exp", a]` the methods. A constant only ever stands beside an operand that depends
on x, so every subtree but a bare constant evaluates to a Dual.
"""

from __future__ import annotations

import math
import random

from .common import case, central_difference, scenario, uniform

X = ["x"]
LESSON = ["add", ["mul", ["sin", X], ["exp", X]], ["mul", X, X]]
CONSTANTS = [2, 3, -1, 0.5, -1.5, 2.5]
LARGEST = 1e4  # a random function is redrawn if its value at x is larger than this


def evaluate(tree: list, x: object) -> object:
    """The function at x, through the operators and methods of whatever x is."""
    kind = tree[0]
    if kind == "x":
        return x
    if kind == "const":
        return tree[1]
    if kind == "add":
        return evaluate(tree[1], x) + evaluate(tree[2], x)
    if kind == "mul":
        return evaluate(tree[1], x) * evaluate(tree[2], x)
    inner = evaluate(tree[1], x)
    return inner.sin() if kind == "sin" else inner.exp()


def value_at(tree: list, x: float) -> float:
    """The function at a plain number x: math's sin and exp, no derivative."""
    kind = tree[0]
    if kind == "x":
        return x
    if kind == "const":
        return tree[1]
    if kind in ("add", "mul"):
        a, b = value_at(tree[1], x), value_at(tree[2], x)
        return a + b if kind == "add" else a * b
    return (math.sin if kind == "sin" else math.exp)(value_at(tree[1], x))


def render(tree: list) -> str:
    """The function as Python source in x."""
    kind = tree[0]
    if kind == "x":
        return "x"
    if kind == "const":
        return repr(tree[1])
    if kind in ("add", "mul"):
        sign = " + " if kind == "add" else " * "
        return sign.join(f"({render(t)})" if t[0] in ("add", "mul") else render(t) for t in tree[1:])
    inner = render(tree[1])
    return f"({inner}).{kind}()" if tree[1][0] in ("add", "mul") else f"{inner}.{kind}()"


def random_tree(rng: random.Random, depth: int) -> list:
    """A function of x at most `depth` operations deep, with constants on either side."""
    kind = rng.choice(["x", "add", "mul", "mul", "sin", "exp"]) if depth else "x"
    if kind == "x":
        return X
    if kind in ("sin", "exp"):
        return [kind, random_tree(rng, depth - 1)]
    operands = [random_tree(rng, depth - 1)]
    operands.append(["const", rng.choice(CONSTANTS)] if rng.random() < 0.5 else random_tree(rng, depth - 1))
    rng.shuffle(operands)
    return [kind, *operands]


def covered(tree: list, x: float) -> set[tuple[str, str, str]]:
    """What the function shows of each rule at x: for sin, exp and *, the sign of each operand's
    value and of its derivative in x, as (rule, "value" or "slope", "+" or "-"); for + and *, the
    side a plain number stands on, as (rule, "number", "left" or "right"): `2 + x` reaches the
    reflected form `__radd__`, `x + 2` the plain `__add__`."""
    found: set[tuple[str, str, str]] = set()

    def walk(node: list) -> tuple[float, float]:  # (value, derivative in x), by the forward rules
        kind = node[0]
        if kind == "x":
            return x, 1.0
        if kind == "const":
            return node[1], 0.0
        for side, child in zip(("left", "right"), node[1:] if kind in ("add", "mul") else ()):
            if child[0] == "const":
                found.add((kind, "number", side))
        operands = [walk(child) for child in node[1:]]
        if kind != "add":
            for value, slope in operands:
                found.add((kind, "value", "+" if value >= 0 else "-"))
                found.add((kind, "slope", "+" if slope >= 0 else "-"))
        (a, da), (b, db) = operands if len(operands) == 2 else (operands[0], (0.0, 0.0))
        if kind == "add":
            return a + b, da + db
        if kind == "mul":
            return a * b, da * b + a * db
        return (math.sin(a), math.cos(a) * da) if kind == "sin" else (math.exp(a), math.exp(a) * da)

    walk(tree)
    return found


EVERY_SIGN = {(kind, what, sign) for kind in ("sin", "exp", "mul") for what in ("value", "slope")
              for sign in "+-"} | {(kind, "number", side) for kind in ("add", "mul")
                                   for side in ("left", "right")}


def random_functions_at(seed: int, count: int) -> list[tuple[list, float]]:
    """`count` seeded functions with a point each, none of them larger than LARGEST there, that
    together show every rule at operands of both signs and of slopes of both signs, and a plain
    number on either side of + and of *, whatever the seed: a function is taken while the slots
    left outnumber the signs still unshown, and then only if it shows one of them."""
    rng = random.Random(seed)
    drawn, shown = [], set()
    while len(drawn) < count:
        tree = random_tree(rng, 3)
        x = round(rng.uniform(-1.5, 1.5), 6)
        if tree == X or abs(value_at(tree, x)) > LARGEST:
            continue
        new = covered(tree, x) - shown
        if count - len(drawn) > len(EVERY_SIGN - shown) or new:
            drawn.append((tree, x))
            shown |= new
    return drawn


def _observed(d: object) -> dict:
    """A Dual's `val` and `der`."""
    return {"val": d.val, "der": d.der}


# -- scenarios -----------------------------------------------------------------------------------

@scenario("dual")
def lesson(dual, x: float) -> dict:
    """
    from dual import Dual
    x = Dual({x}, 1.0)                   # seed: dx/dx = 1
    f = x.sin() * x.exp() + x * x
    print(f.val, f.der)                  # f.der is f'({x})
    """
    return _observed(evaluate(LESSON, dual.Dual(x, 1.0)))


@scenario("dual")
def lesson_plus_constant(dual, x: float, c: float) -> dict:
    """
    from dual import Dual
    x = Dual({x}, 1.0)
    f = x.sin() * x.exp() + x * x + {c}   # a constant changes f, not f'
    print(f.val, f.der)
    """
    return _observed(evaluate(["add", LESSON, ["const", c]], dual.Dual(x, 1.0)))


@scenario("dual")
def constant(dual, c: float) -> dict:
    """
    from dual import Dual
    k = Dual({c})                        # no der given: a constant
    print(k.val, k.der)                  # der is 0.0
    """
    return _observed(dual.Dual(c))


@scenario("dual")
def with_numbers(dual, x: float, der: float, k: float) -> dict:
    """
    from dual import Dual
    x = Dual({x}, {der})
    for f in (x + {k}, {k} + x, x * {k}, {k} * x):    # a plain number on either side
        print(f.val, f.der)
    """
    d = dual.Dual(x, der)
    return {"sums": [_observed(d + k), _observed(k + d)], "products": [_observed(d * k), _observed(k * d)]}


@scenario("dual")
def products(dual, seed: int, count: int) -> list[dict]:
    """
    from dual import Dual
    a, b = Dual({a}, {da}), Dual({b}, {db})
    p = a * b
    print(p.val, p.der)                  # a'b + ab'
    """
    return [case({"a": a, "da": da, "b": b, "db": db},
                 lambda a=a, da=da, b=b, db=db: _observed(dual.Dual(a, da) * dual.Dual(b, db)))
            for a, da, b, db in zip(*(uniform(seed + i, count, -2.0, 2.0) for i in range(4)))]


@scenario("dual")
def sin_and_exp(dual, seed: int, count: int, der: float) -> list[dict]:
    """
    from dual import Dual
    x = Dual({x}, {der})
    s, e = x.sin(), x.exp()
    print(s.val, s.der, e.val, e.der)    # s.der = cos(x) * {der}
    """
    def observe(x: float) -> dict:
        d = dual.Dual(x, der)
        s, e = d.sin(), d.exp()
        return {"sin_val": s.val, "sin_der": s.der, "exp_val": e.val, "exp_der": e.der}

    return [case({"x": x, "der": der}, lambda x=x: observe(x)) for x in uniform(seed, count, -3.0, 3.0)]


@scenario("dual")
def random_functions(dual, seed: int, count: int, der: float) -> list[dict]:
    """
    from dual import Dual
    x = Dual({x}, {der})                 # a tangent of {der}, so f.der = {der} * f'(x)
    f = eval({f})
    print(f.val, f.der)
    """
    return [case({"f": render(tree), "x": x, "der": der},
                 lambda tree=tree, x=x: _observed(evaluate(tree, dual.Dual(x, der))))
            for tree, x in random_functions_at(seed, count)]


@scenario("dual")
def operation(dual, expression: str, seed: int, count: int, low: float, high: float, der: float = 1.0
              ) -> list[dict]:
    """
    from dual import Dual
    x = Dual({x}, {der})                 # der = {der}: f.der must be {der} * f'(x)
    f = eval({expression}, dict(), {"x": x, "Dual": Dual})
    print(f.val, f.der)
    """
    def at(x: float, tangent: float) -> object:
        return eval(expression, {}, {"x": dual.Dual(x, tangent), "Dual": dual.Dual})  # noqa: S307 - the suite's own

    def observe(x: float) -> dict:
        slope = central_difference(lambda t: float(at(t, 0.0).val), x)  # of the submission's own forward pass
        return {**_observed(at(x, der)), "der_fd": der * slope}

    return [case({"x": x, "der": der}, lambda x=x: observe(x)) for x in uniform(seed, count, low, high)]
