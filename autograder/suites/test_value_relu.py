"""value.relu. Inputs stay away from the kink at 0, where the derivative is a convention."""

import pytest

from autograder.judge import ratio
from autograder.scenarios.value import ORDERED

pytestmark = pytest.mark.part("value.relu")


def wrong_side(expected, got):
    """Some gradient flows where the input is negative, or stops where it is positive."""
    return any((case["inputs"]["a"] < 0) == (case["grad"] != 0) for case in got.observations)


def test_relu_at_the_root(grade):
    """relu at seeded random inputs in [-3, 3] (none near 0), each the root of its graph."""
    grade("value:relu_at_root", seed=13, count=10, suspects={"relu-gate": wrong_side})


def test_relu_at_random_inputs(grade):
    """relu at seeded random inputs in [-3, 3] (none near 0), with an upstream gradient of 3."""
    grade("value:relu_values", seed=3, count=20, provided=ORDERED,
          suspects={"relu-gate": wrong_side, "ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.parametrize(("a", "c"), [(1.5, -0.5), (-1.0, 2.0)])
def test_relu_in_an_expression(grade, a, c):
    """relu on both sides of the gate in one expression: relu(a - c) + a**2 + relu(c - a)."""
    grade("value:relu_in_expression", a=a, c=c, provided=ORDERED)


def test_relu_beside_its_input(grade):
    """relu(x) + x: x collects a gradient from both terms."""
    grade("value:relu_beside_input", x=0.8, provided=ORDERED,
          suspects={"overwrites-gradient": ratio("grad", 0.5)})
