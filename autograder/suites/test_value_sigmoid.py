"""value.sigmoid (bonus): a primitive with its own rule, stable at both ends."""

import pytest

from autograder.judge import lost_a_contribution, ratio

pytestmark = pytest.mark.part("value.sigmoid")

POINTS = [-4.0, -1.3, 0.0, 0.7, 2.2, 4.0]


def test_sigmoid_at_the_root(grade):
    """sigmoid at a few inputs between -4 and 4, each the root of its graph."""
    grade("value:sigmoid_at_root", points=POINTS)


def test_sigmoid_at_moderate_inputs(grade):
    """sigmoid at a few inputs between -4 and 4, with an upstream gradient of 3."""
    grade("value:sigmoid_values", points=POINTS)


def test_sigmoid_of_computed_values(grade):
    """sigmoid of a computed value, x + 0.25, with an upstream gradient of 3: the gradient must reach x."""
    grade("value:sigmoid_of_computed_values", points=POINTS,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


def test_sigmoid_beside_its_input(grade):
    """sigmoid(x) + x: x collects a gradient from both terms."""
    grade("value:sigmoid_beside_input", x=0.5,
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})


def test_sigmoid_far_from_zero(grade):
    """sigmoid at -1000 and 1000: 0 and 1, never an overflow."""
    grade("value:sigmoid_at_root", points=[-1000.0, 1000.0])
