"""value.truediv: Value / Value, Value / number, and number / Value (given: it calls __truediv__)."""

import pytest

from autograder.judge import lost_a_contribution, ratio, unwrapped
from autograder.parts import Part

PART = Part("value.truediv",
            misconceptions=("quotient-rule", "ignores-upstream", "overwrites-gradient", "number-not-wrapped",
                            "rule-on-the-wrong-node"))


def sign_of_b(expected, got):
    """d(a/b)/db came out as +a/b**2 (or -a/b) instead of -a/b**2."""
    cases = list(zip(expected, got.observations))
    return bool(cases) and all(
        "grads" in g and (abs(g["grads"][1] + e["grads"][1]) < 1e-6
                          or abs(g["grads"][1] - e["grads"][1] * e["inputs"]["b"]) < 1e-6) for e, g in cases)


def half_of(key: str, index: int):
    """Item `index` under `key` is half the reference's: one of two contributions was assigned over."""
    return lambda e, g: abs(g.observations[key][index] - e[key][index] / 2) < 1e-9


NOT_WRAPPED = {"number-not-wrapped": unwrapped("data")}


def test_quotients_at_the_root(grade, ask):
    """Quotients a / b at seeded random inputs in [0.5, 3], each the root of its graph."""
    grade("value:quotients_at_root", seed=ask.seed(14), count=10, suspects={"quotient-rule": sign_of_b})


def test_quotients_of_random_values(grade, ask):
    """Quotients a / b at seeded random inputs in [0.5, 3], with an upstream gradient of 3."""
    grade("value:quotients", seed=ask.seed(4), count=20,
          suspects={"quotient-rule": sign_of_b, "ignores-upstream": ratio("grads", 1 / 3)})


def test_quotients_of_computed_values(grade, ask):
    """Quotients of computed values, with an upstream gradient of 3: the gradient must reach the leaves."""
    grade("value:quotients_of_computed_values", seed=ask.seed(16), count=10,
          suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def a_divisor(ask, kind: str) -> float:
    """A plain number of the kind a test is about: a whole one (an int) or a float below 1."""
    return ask.whole(4, 2, 9) if kind == "int" else ask.number(0.25, 0.1, 0.9)


@pytest.mark.parametrize("kind", ["int", "float"])
def test_divide_by_a_number(grade, ask, kind):
    """A Value divided by a plain number (an int and a float)."""
    grade("value:divide_by_number", x=ask.number(3.0, 0.5, 4.0), k=a_divisor(ask, kind), suspects=NOT_WRAPPED)


def test_a_number_divided_by_a_value(grade, ask):
    """A plain number over a Value: the given __rtruediv__ wraps the number and calls __truediv__."""
    grade("value:number_over_value", k=ask.whole(3, 2, 9), x=ask.number(2.0, 0.5, 3.0), suspects=NOT_WRAPPED)


def test_value_on_both_sides(grade, ask):
    """(x + 1) / x: x appears above and below the bar."""
    grade("value:quotient_of_itself", x=ask.number(2.0, 0.5, 3.0))


def operands(ask) -> dict:
    """A numerator and a denominator away from 0."""
    return {"a": ask.number(1.5, 0.5, 3.0), "b": ask.number(2.0, 0.5, 3.0)}


def test_a_quotient_beside_its_numerator(grade, ask):
    """a / b + a: a collects a gradient from both terms."""
    grade("value:quotient_beside_numerator", **operands(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grads", 0, 1.0)})


def test_a_quotient_beside_its_denominator(grade, ask):
    """a / b + b: b collects a gradient from both terms."""
    grade("value:quotient_beside_denominator", **operands(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grads", 1, 1.0)})


def test_a_denominator_used_twice(grade, ask):
    """a / b / b: b is the denominator of two quotients, and collects from both."""
    grade("value:quotient_by_the_same_twice", **operands(ask),
          suspects={"overwrites-gradient": half_of("grads", 1)})
