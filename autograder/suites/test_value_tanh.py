"""value.tanh: tanh and its derivative, taken from the output."""

from autograder.parts import Part
from autograder.suites.draws import signed
from autograder.suspects import lost_a_contribution, ratio

PART = Part("value.tanh",
            also_costs=("value.stability",),
            misconceptions=("tanh-derivative-of-input", "ignores-upstream", "overwrites-gradient",
                            "rule-on-the-wrong-node"))


def derivative_from_input(upstream: float):
    """The gradient is upstream * (1 - x^2) instead of upstream * (1 - tanh(x)^2)."""
    def test(expected, got):
        cases = got.observations
        return bool(cases) and all(
            "grad" in case and abs(case["grad"] - upstream * (1 - case["inputs"]["a"] ** 2)) < 1e-6
            for case in cases)
    return test


def test_tanh_at_the_root(grade, ask):
    """tanh at seeded random inputs in [-2.5, 2.5], each the root of its graph."""
    grade("activations:tanh_at_root", seed=ask.seed(12), count=10,
          suspects={"tanh-derivative-of-input": derivative_from_input(1.0)})


def test_tanh_at_random_inputs(grade, ask):
    """tanh at seeded random inputs in [-2.5, 2.5], with an upstream gradient of 3."""
    grade("activations:tanh_values", seed=ask.seed(2), count=20,
          suspects={"tanh-derivative-of-input": derivative_from_input(3.0),
                    "ignores-upstream": ratio("grad", 1 / 3)})


def test_tanh_of_computed_values(grade, ask):
    """tanh of a computed value, not a leaf, with an upstream gradient of 3."""
    grade("activations:tanh_of_computed_values", seed=ask.seed(17), count=10,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


def test_tanh_beside_its_input(grade, ask):
    """tanh(x) + x, at x of both signs: x collects a gradient from both terms."""
    grade("activations:tanh_beside_input", points=signed(ask),
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})
