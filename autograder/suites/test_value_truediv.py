"""value.truediv: Value / Value, Value / number, and number / Value (given: it calls __truediv__)."""

from __future__ import annotations

import pytest

from autograder.parts import Part
from autograder.suites.draws import signed, signed_pairs
from autograder.suspects import lost_a_contribution, ratio, unwrapped

PART = Part("value.truediv",
            misconceptions=("quotient-rule", "ignores-upstream", "overwrites-gradient", "number-not-wrapped",
                            "rule-on-the-wrong-node"))


def sign_of_b(expected, got):
    """d(a/b)/db came out as +a/b**2 (or -a/b) instead of -a/b**2, in every case or only in
    those of one sign (a rule written with abs()), while d(a/b)/da is right in every case."""
    cases = list(zip(expected, got.observations))

    def close(x: float, y: float) -> bool:
        return abs(x - y) < 1e-6 * (1 + abs(y))

    def shape_of_rule(e: dict, g: dict) -> str:
        wanted, found = e["grads"][1], g["grads"][1]
        if close(found, wanted):
            return "right"
        return "wrong" if close(found, -wanted) or close(found, wanted * e["inputs"]["b"]) else "other"

    shapes = [shape_of_rule(e, g) for e, g in cases]
    return bool(cases) and "wrong" in shapes and "other" not in shapes \
        and all(close(g["grads"][0], e["grads"][0]) for e, g in cases)


def half_of(key: str, index: int):
    """Item `index` under `key` is half the reference's in every case: one of two contributions
    was assigned over."""
    def test(expected, got):
        cases = got.observations
        return len(cases) == len(expected) and all(
            abs(g[key][index] - e[key][index] / 2) < 1e-9 * (1 + abs(e[key][index]))
            for e, g in zip(expected, cases))
    return test


NOT_WRAPPED = {"number-not-wrapped": unwrapped("data")}
# Divisors away from 0: |b| >= 0.5 in every quotient of two values.
DIVISOR = ((0.75, 0.5, 0.9), (2.5, 1.5, 3.0))


def test_quotients_at_the_root(grade, ask):
    """Quotients a / b at seeded random inputs of both signs (|b| >= 0.5), each the root of its graph."""
    grade("arithmetic:quotients_at_root", seed=ask.seed(14), count=10, suspects={"quotient-rule": sign_of_b})


def test_quotients_of_random_values(grade, ask):
    """Quotients a / b at seeded random inputs of both signs (|b| >= 0.5), with an upstream gradient of 3."""
    grade("arithmetic:quotients", seed=ask.seed(4), count=20,
          suspects={"quotient-rule": sign_of_b, "ignores-upstream": ratio("grads", 1 / 3)})


def test_quotients_of_computed_values(grade, ask):
    """Quotients of computed values, with an upstream gradient of 3."""
    grade("arithmetic:quotients_of_computed_values", seed=ask.seed(16), count=10,
          suspects={"ignores-upstream": ratio("grads", 1 / 3)})


# A plain divisor of each kind, of both signs: whole ones (ints), and floats below 1.
DIVISORS = {"int": ((2, 2, 4), (7, 5, 9)), "float": ((0.25, 0.1, 0.45), (0.75, 0.55, 0.9))}


@pytest.mark.parametrize("kind", list(DIVISORS))
def test_divide_by_a_number(grade, ask, kind):
    """A Value divided by a plain number (an int and a float), each of both signs."""
    grade("arithmetic:divide_by_number", points=signed_pairs(ask, second=DIVISORS[kind], whole=kind == "int"),
          suspects=NOT_WRAPPED)


def test_a_number_divided_by_a_value(grade, ask):
    """A plain number over a Value: the given __rtruediv__ wraps the number and calls __truediv__."""
    points = signed_pairs(ask, first=DIVISOR, second=DIVISORS["int"], whole=True)
    grade("arithmetic:number_over_value", points=points, suspects=NOT_WRAPPED)


def test_value_on_both_sides(grade, ask):
    """(x + 1) / x: x appears above and below the bar, at x of both signs."""
    grade("arithmetic:quotient_of_itself", points=signed(ask, *DIVISOR))


def operands(ask) -> list[list[float]]:
    """Four [a, b]: numerators and denominators of both signs, the denominators away from 0."""
    return signed_pairs(ask, second=DIVISOR)


def test_a_quotient_beside_its_numerator(grade, ask):
    """a / b + a: a collects a gradient from both terms."""
    grade("arithmetic:quotient_beside_numerator", points=operands(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grads", 0, 1.0)})


def test_a_quotient_beside_its_denominator(grade, ask):
    """a / b + b: b collects a gradient from both terms."""
    grade("arithmetic:quotient_beside_denominator", points=operands(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grads", 1, 1.0)})


def test_a_denominator_used_twice(grade, ask):
    """a / b / b: b is the denominator of two quotients, and collects from both."""
    grade("arithmetic:quotient_by_the_same_twice", points=operands(ask),
          suspects={"overwrites-gradient": half_of("grads", 1)})
