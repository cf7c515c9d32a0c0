"""value.relu. Inputs stay away from the kink at 0, where the derivative is a convention."""

import pytest

from autograder.judge import lost_a_contribution, ratio
from autograder.parts import Part

PART = Part("value.relu",
            also_costs=("value.training",),
            misconceptions=("relu-gate", "ignores-upstream", "overwrites-gradient", "rule-on-the-wrong-node"))


def wrong_side(expected, got):
    """Gradient flows exactly where the input is negative: the gate is the wrong way round."""
    cases = [case for case in got.observations if "grad" in case]
    return bool(cases) and len(cases) == len(got.observations) and all(
        (case["inputs"]["a"] < 0) == (case["grad"] != 0) for case in cases)


def test_relu_at_the_root(grade, ask):
    """relu at seeded random inputs in [-3, 3] (none near 0), each the root of its graph."""
    grade("value:relu_at_root", seed=ask.seed(13), count=10, suspects={"relu-gate": wrong_side})


def test_relu_at_random_inputs(grade, ask):
    """relu at seeded random inputs in [-3, 3] (none near 0), with an upstream gradient of 3."""
    grade("value:relu_values", seed=ask.seed(3), count=20,
          suspects={"relu-gate": wrong_side, "ignores-upstream": ratio("grad", 1 / 3)})


def test_relu_of_computed_values(grade, ask):
    """relu of a computed value, x + 0.25, with an upstream gradient of 3: the gradient must reach x."""
    grade("value:relu_of_computed_values", seed=ask.seed(18), count=10,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


# a and c of opposite signs, at least 1 apart: one gate open, the other shut, and each way round.
OPPOSITES = {"a above c": ((1.5, 0.5, 2.5), (-0.5, -2.0, -0.5)),
             "c above a": ((-1.0, -2.5, -0.5), (2.0, 0.5, 2.5))}


@pytest.mark.parametrize("order", list(OPPOSITES))
def test_relu_in_an_expression(grade, ask, order):
    """relu on both sides of the gate in one expression: relu(a - c) + a**2 + relu(c - a)."""
    a, c = OPPOSITES[order]
    grade("value:relu_in_expression", a=ask.number(*a), c=ask.number(*c))


def test_relu_beside_its_input(grade, ask):
    """relu(x) + x, at a positive and at a negative x: x collects a gradient from both terms."""
    grade("value:relu_beside_input", points=[ask.number(0.8, 0.2, 2.5), ask.number(-0.8, -2.5, -0.2)],
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})
