"""value.sigmoid (bonus): a primitive with its own rule, stable at both ends."""

from __future__ import annotations

from autograder.parts import Part
from autograder.suites.draws import signed
from autograder.suspects import lost_a_contribution, ratio

PART = Part("value.sigmoid",
            misconceptions=("ignores-upstream", "overwrites-gradient", "rule-on-the-wrong-node"))

# Inputs between -4 and 4: large and small of both signs, and one near 0.
POINTS = [(-4.0, -4.0, -3.0), (-1.3, -2.0, -1.0), (0.0, -0.3, 0.3), (0.7, 0.5, 1.5), (2.2, 1.5, 3.0),
          (4.0, 3.0, 4.0)]


def points(ask) -> list[float]:
    return [ask.number(*point) for point in POINTS]


def test_sigmoid_at_the_root(grade, ask):
    """sigmoid at a few inputs between -4 and 4, each the root of its graph."""
    grade("activations:sigmoid_at_root", points=points(ask))


def test_sigmoid_at_moderate_inputs(grade, ask):
    """sigmoid at a few inputs between -4 and 4, with an upstream gradient of 3."""
    grade("activations:sigmoid_values", points=points(ask))


def test_sigmoid_of_computed_values(grade, ask):
    """sigmoid of a computed value, not a leaf, with an upstream gradient of 3."""
    grade("activations:sigmoid_of_computed_values", points=points(ask),
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


def test_sigmoid_beside_its_input(grade, ask):
    """sigmoid(x) + x, at x of both signs: x collects a gradient from both terms."""
    grade("activations:sigmoid_beside_input", points=signed(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})


def test_sigmoid_far_from_zero(grade, ask):
    """sigmoid far below and far above 0, at {points}: 0 and 1, never an overflow."""
    grade("activations:sigmoid_at_root",
          points=[ask.number(-1000.0, -1e5, -1000.0), ask.number(1000.0, 1000.0, 1e5)])
