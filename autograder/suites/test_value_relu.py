"""value.relu. Inputs stay away from the kink at 0, where the derivative is a convention."""

import pytest

from autograder.judge import ratio

pytestmark = pytest.mark.part("value.relu")


def wrong_side(expected, got):
    """Some gradient flows where the input is negative, or stops where it is positive."""
    return any((case["inputs"]["a"] < 0) == (case["grad"] != 0) for case in got.observations)


def test_relu_at_random_inputs(grade):
    """relu at seeded random inputs in [-3, 3] (none near 0), with an upstream gradient of 3."""
    grade("value:relu_values", seed=3, count=20,
          suspects={"relu-gate": wrong_side, "ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.parametrize(("a", "c"), [(1.5, -0.5), (-1.0, 2.0)])
def test_relu_in_an_expression(grade, a, c):
    """relu on both sides of the gate in one expression: relu(a - c) + a**2 + relu(c - a)."""
    grade("value:relu_in_expression", a=a, c=c)
