"""value.relu. Inputs stay away from the kink at 0, where the derivative is a convention."""

import pytest

from autograder.parts import Part
from autograder.suites.draws import signed
from autograder.suspects import lost_a_contribution, ratio

PART = Part("value.relu",
            also_costs=("value.training",),
            misconceptions=("relu-gate", "ignores-upstream", "overwrites-gradient", "rule-on-the-wrong-node",
                            "relu-cuts-graph"))


def wrong_side(expected, got):
    """Gradient flows exactly where the input is negative: the gate is the wrong way round."""
    cases = [case for case in got.observations if "grad" in case]
    return bool(cases) and len(cases) == len(got.observations) and all(
        (case["inputs"]["a"] < 0) == (case["grad"] != 0) for case in cases)


def test_relu_at_the_root(grade, ask):
    """relu at seeded random inputs in [-3, 3] (none near 0), each the root of its graph."""
    grade("activations:relu_at_root", seed=ask.seed(13), count=10, suspects={"relu-gate": wrong_side})


def test_relu_at_random_inputs(grade, ask):
    """relu at seeded random inputs in [-3, 3] (none near 0), with an upstream gradient of 3."""
    grade("activations:relu_values", seed=ask.seed(3), count=20,
          suspects={"relu-gate": wrong_side, "ignores-upstream": ratio("grad", 1 / 3)})


def test_relu_of_computed_values(grade, ask):
    """relu of a computed value, not a leaf, with an upstream gradient of 3."""
    grade("activations:relu_of_computed_values", seed=ask.seed(18), count=10,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


# a and c of opposite signs, the one above 0 the larger, so a + c is above 0 by 0.5 or more:
# the gates of a and c, one open and one shut, each way round.
OPPOSITES = {"a above c": ((2.0, 1.5, 2.5), (-0.5, -1.0, -0.2)),
             "c above a": ((-0.6, -1.0, -0.2), (2.0, 1.5, 2.5))}


def cut_out(expected, got):
    """A relu's output is its input itself, or holds no parent: shut or open, the unit is not a
    node of the graph (every gradient of the pass may still be right)."""
    return 0.0 in got.observations["kept"]


@pytest.mark.parametrize("order", list(OPPOSITES))
def test_relu_in_an_expression(grade, ask, order):
    """relu on both sides of the gate in one expression: relu(a + c) + relu(a) + relu(c), each a node
    of its own whose parent is its input."""
    a, c = OPPOSITES[order]
    grade("activations:relu_in_expression", a=ask.number(*a), c=ask.number(*c),
          suspects={"relu-cuts-graph": cut_out})


def test_relu_beside_its_input(grade, ask):
    """relu(x) + x, at a positive and at a negative x: x collects a gradient from both terms."""
    grade("activations:relu_beside_input", points=signed(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})
