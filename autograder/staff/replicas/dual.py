"""Replicas of the forward-mode scenarios (inside/scenarios/dual.py), on (value, derivative) pairs.

The reference's `Dual` is a pair and a rule per operation, so a replica is the same rules on
plain tuples: the same functions drawn from the same seeds, the same arithmetic in the same
order, and no worker to ask.
"""

from __future__ import annotations

import math
import random

from . import case

X = ["x"]
LESSON = ["add", ["mul", ["sin", X], ["exp", X]], ["mul", X, X]]
CONSTANTS = [2, 3, -1, 0.5, -1.5, 2.5]
LARGEST = 1e4


def _pair(x: object) -> tuple[float, float]:
    """A plain number as the reference wraps one: a constant, derivative 0."""
    return x if isinstance(x, tuple) else (float(x), 0.0)


def _add(a: object, b: object) -> tuple[float, float]:
    (u, du), (v, dv) = _pair(a), _pair(b)
    return u + v, du + dv


def _mul(a: object, b: object) -> tuple[float, float]:
    (u, du), (v, dv) = _pair(a), _pair(b)
    return u * v, du * v + u * dv


def _evaluate(tree: list, x: tuple[float, float]) -> object:
    kind = tree[0]
    if kind == "x":
        return x
    if kind == "const":
        return tree[1]
    if kind in ("add", "mul"):
        left, right = _evaluate(tree[1], x), _evaluate(tree[2], x)
        return (_add if kind == "add" else _mul)(left, right)
    value, der = _evaluate(tree[1], x)
    if kind == "sin":
        return math.sin(value), math.cos(value) * der
    e = math.exp(value)
    return e, e * der


def _value_at(tree: list, x: float) -> float:
    kind = tree[0]
    if kind == "x":
        return x
    if kind == "const":
        return tree[1]
    if kind in ("add", "mul"):
        a, b = _value_at(tree[1], x), _value_at(tree[2], x)
        return a + b if kind == "add" else a * b
    return (math.sin if kind == "sin" else math.exp)(_value_at(tree[1], x))


def _render(tree: list) -> str:
    kind = tree[0]
    if kind == "x":
        return "x"
    if kind == "const":
        return repr(tree[1])
    if kind in ("add", "mul"):
        sign = " + " if kind == "add" else " * "
        return sign.join(f"({_render(t)})" if t[0] in ("add", "mul") else _render(t) for t in tree[1:])
    inner = _render(tree[1])
    return f"({inner}).{kind}()" if tree[1][0] in ("add", "mul") else f"{inner}.{kind}()"


def _random_tree(rng: random.Random, depth: int) -> list:
    kind = rng.choice(["x", "add", "mul", "mul", "sin", "exp"]) if depth else "x"
    if kind == "x":
        return X
    if kind in ("sin", "exp"):
        return [kind, _random_tree(rng, depth - 1)]
    operands = [_random_tree(rng, depth - 1)]
    operands.append(["const", rng.choice(CONSTANTS)] if rng.random() < 0.5 else _random_tree(rng, depth - 1))
    rng.shuffle(operands)
    return [kind, *operands]


def _covered(tree: list, x: float) -> set[tuple[str, str, str]]:
    """For sin, exp and *, the sign of each operand's value and of its derivative in x at x; for
    + and *, the side a plain number stands on."""
    found: set[tuple[str, str, str]] = set()

    def walk(node: list) -> tuple[float, float]:
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


def _uniform(seed: int, count: int, low: float, high: float) -> list[float]:
    """common.uniform with no kink to avoid: one number from each slice, in a seeded order."""
    rng = random.Random(seed)
    width = (high - low) / count
    numbers = []
    for index in range(count):
        start = low + index * width
        numbers.append(round(rng.uniform(start, start + width), 6))
    rng.shuffle(numbers)
    return numbers


def _observed(pair: object) -> dict:
    value, der = _pair(pair)
    return {"val": value, "der": der}


def lesson(x: float) -> dict:
    return _observed(_evaluate(LESSON, (float(x), 1.0)))


def lesson_plus_constant(x: float, c: float) -> dict:
    return _observed(_evaluate(["add", LESSON, ["const", c]], (float(x), 1.0)))


def constant(c: float) -> dict:
    return _observed((float(c), 0.0))


def with_numbers(x: float, der: float, k: float) -> dict:
    d = (float(x), float(der))
    return {"sums": [_observed(_add(d, k)), _observed(_add(d, k))],
            "products": [_observed(_mul(d, k)), _observed(_mul(d, k))]}


def products(seed: int, count: int) -> list:
    draws = zip(*(_uniform(seed + i, count, -2.0, 2.0) for i in range(4)))
    return [case(_observed(_mul((a, da), (b, db))), {"a": a, "da": da, "b": b, "db": db})
            for a, da, b, db in draws]


def sin_and_exp(seed: int, count: int, der: float) -> list:
    cases = []
    for x in _uniform(seed, count, -3.0, 3.0):
        e = math.exp(x)
        found = {"sin_val": math.sin(x), "sin_der": math.cos(x) * float(der),
                 "exp_val": e, "exp_der": e * float(der)}
        cases.append(case(found, {"x": x, "der": der}))
    return cases


def random_functions(seed: int, count: int, der: float) -> list:
    """Functions drawn as the scenario draws them: until every rule has shown operands and slopes
    of both signs and a number on either side of + and *, a function is taken only while the
    slots left outnumber the signs unshown, or if it shows one of them."""
    rng, drawn, shown = random.Random(seed), [], set()
    while len(drawn) < count:
        tree = _random_tree(rng, 3)
        x = round(rng.uniform(-1.5, 1.5), 6)
        if tree == X or abs(_value_at(tree, x)) > LARGEST:
            continue
        new = _covered(tree, x) - shown
        if count - len(drawn) > len(EVERY_SIGN - shown) or new:
            drawn.append((tree, x))
            shown |= new
    return [case(_observed(_evaluate(tree, (float(x), float(der)))), {"f": _render(tree), "x": x, "der": der})
            for tree, x in drawn]
