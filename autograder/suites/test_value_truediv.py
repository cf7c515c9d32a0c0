"""value.truediv: Value / Value and Value / number. (number / Value is given.)"""

import pytest

from autograder.judge import raised, ratio
from autograder.scenarios.value import ORDERED

pytestmark = pytest.mark.part("value.truediv")


def sign_of_b(expected, got):
    """d(a/b)/db came out as +a/b**2 (or -a/b) instead of -a/b**2."""
    cases = zip(expected, got.observations)
    return all(abs(g["grads"][1] + e["grads"][1]) < 1e-6 or
               abs(g["grads"][1] - e["grads"][1] * e["inputs"]["b"]) < 1e-6 for e, g in cases)


def test_quotients_at_the_root(grade):
    """Quotients a / b at seeded random inputs in [0.5, 3], each the root of its graph."""
    grade("value:quotients_at_root", seed=14, count=10,
          suspects={"quotient-rule": sign_of_b})


def test_quotients_of_random_values(grade):
    """Quotients a / b at seeded random inputs in [0.5, 3], with an upstream gradient of 3."""
    grade("value:quotients", seed=4, count=20, provided=ORDERED,
          suspects={"quotient-rule": sign_of_b, "ignores-upstream": ratio("grads", 1 / 3)})


@pytest.mark.parametrize("k", [4, 0.25])
def test_divide_by_a_number(grade, k):
    """A Value divided by a plain number (an int and a float)."""
    grade("value:divide_by_number", x=3.0, k=k,
          suspects={"number-not-wrapped": raised("TypeError", "AttributeError")})


def test_value_on_both_sides(grade):
    """(x + 1) / x: x appears above and below the bar."""
    grade("value:quotient_of_itself", x=2.0, provided=ORDERED)


def test_a_quotient_beside_its_numerator(grade):
    """a / b + a: a collects a gradient from both terms."""
    grade("value:quotient_beside_numerator", a=1.5, b=2.0, provided=ORDERED,
          suspects={"overwrites-gradient": lambda e, g: abs(g.observations["grads"][0] - 0.5) < 1e-9})
