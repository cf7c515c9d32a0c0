"""value.relu. Inputs stay away from the kink at 0, where the derivative is a convention."""

import pytest

from autograder.judge import lost_a_contribution, ratio

pytestmark = pytest.mark.part("value.relu")


def wrong_side(expected, got):
    """Gradient flows exactly where the input is negative: the gate is the wrong way round."""
    cases = [case for case in got.observations if "grad" in case]
    return bool(cases) and len(cases) == len(got.observations) and all(
        (case["inputs"]["a"] < 0) == (case["grad"] != 0) for case in cases)


def test_relu_at_the_root(grade):
    """relu at seeded random inputs in [-3, 3] (none near 0), each the root of its graph."""
    grade("value:relu_at_root", seed=13, count=10, suspects={"relu-gate": wrong_side})


def test_relu_at_random_inputs(grade):
    """relu at seeded random inputs in [-3, 3] (none near 0), with an upstream gradient of 3."""
    grade("value:relu_values", seed=3, count=20,
          suspects={"relu-gate": wrong_side, "ignores-upstream": ratio("grad", 1 / 3)})


def test_relu_of_computed_values(grade):
    """relu of a computed value, x + 0.25, with an upstream gradient of 3: the gradient must reach x."""
    grade("value:relu_of_computed_values", seed=18, count=10,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.parametrize(("a", "c"), [(1.5, -0.5), (-1.0, 2.0)])
def test_relu_in_an_expression(grade, a, c):
    """relu on both sides of the gate in one expression: relu(a - c) + a**2 + relu(c - a)."""
    grade("value:relu_in_expression", a=a, c=c)


def test_relu_beside_its_input(grade):
    """relu(x) + x, at x = 0.8 and at x = -0.8: x collects a gradient from both terms."""
    grade("value:relu_beside_input", points=[0.8, -0.8],
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})
