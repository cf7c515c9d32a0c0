"""value.tanh, and tanh at inputs where a careless formula overflows (value.stability)."""

import pytest

from autograder.judge import lost_a_contribution, ratio


def derivative_from_input(upstream: float):
    """The gradient is upstream * (1 - x^2) instead of upstream * (1 - tanh(x)^2)."""
    def test(expected, got):
        cases = got.observations
        return bool(cases) and all(
            "grad" in case and abs(case["grad"] - upstream * (1 - case["inputs"]["a"] ** 2)) < 1e-6
            for case in cases)
    return test


@pytest.mark.part("value.tanh")
def test_tanh_at_the_root(grade, ask):
    """tanh at seeded random inputs in [-2.5, 2.5], each the root of its graph."""
    grade("value:tanh_at_root", seed=ask.seed(12), count=10,
          suspects={"tanh-derivative-of-input": derivative_from_input(1.0)})


@pytest.mark.part("value.tanh")
def test_tanh_at_random_inputs(grade, ask):
    """tanh at seeded random inputs in [-2.5, 2.5], with an upstream gradient of 3."""
    grade("value:tanh_values", seed=ask.seed(2), count=20,
          suspects={"tanh-derivative-of-input": derivative_from_input(3.0),
                    "ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.part("value.tanh")
def test_tanh_of_computed_values(grade, ask):
    """tanh of a computed value, x + 0.25, with an upstream gradient of 3: the gradient must reach x."""
    grade("value:tanh_of_computed_values", seed=ask.seed(17), count=10,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.part("value.tanh")
def test_tanh_beside_its_input(grade, ask):
    """tanh(x) + x: x collects a gradient from both terms."""
    grade("value:tanh_beside_input", x=ask.number(0.5, 0.2, 1.5),
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})


def overflowed(expected, got):
    """An OverflowError, or a nan where the reference has a finite value."""
    seen = got.observations
    return got.raised == "OverflowError" or (isinstance(seen, dict) and seen.get("data") != seen.get("data"))


# Beyond about 354.9, exp(2x) overflows: every input here is past it, on either side.
FAR = {"positive": (400.0, 360.0, 700.0), "negative": (-400.0, -700.0, -360.0), "huge": (1000.0, 800.0, 1e5)}


@pytest.mark.part("value.stability")
@pytest.mark.parametrize("where", list(FAR))
def test_tanh_far_from_zero(grade, ask, where):
    """tanh far from zero: exactly +-1 with gradient 0, never an overflow."""
    grade("value:tanh_large", x=ask.number(*FAR[where]), suspects={"tanh-overflow": overflowed})
