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
def test_tanh_at_the_root(grade):
    """tanh at seeded random inputs in [-2.5, 2.5], each the root of its graph."""
    grade("value:tanh_at_root", seed=12, count=10,
          suspects={"tanh-derivative-of-input": derivative_from_input(1.0)})


@pytest.mark.part("value.tanh")
def test_tanh_at_random_inputs(grade):
    """tanh at seeded random inputs in [-2.5, 2.5], with an upstream gradient of 3."""
    grade("value:tanh_values", seed=2, count=20,
          suspects={"tanh-derivative-of-input": derivative_from_input(3.0),
                    "ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.part("value.tanh")
def test_tanh_of_computed_values(grade):
    """tanh of a computed value, x + 0.25, with an upstream gradient of 3: the gradient must reach x."""
    grade("value:tanh_of_computed_values", seed=17, count=10,
          suspects={"ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.part("value.tanh")
def test_tanh_beside_its_input(grade):
    """tanh(x) + x: x collects a gradient from both terms."""
    grade("value:tanh_beside_input", x=0.5,
          suspects={"overwrites-gradient": lost_a_contribution("grad", None, 1.0)})


def overflowed(expected, got):
    """An OverflowError, or a nan where the reference has a finite value."""
    seen = got.observations
    return got.raised == "OverflowError" or (isinstance(seen, dict) and seen.get("data") != seen.get("data"))


@pytest.mark.part("value.stability")
@pytest.mark.parametrize("x", [400.0, -400.0, 1000.0])
def test_tanh_far_from_zero(grade, x):
    """tanh far from zero: exactly +-1 with gradient 0, never an overflow."""
    grade("value:tanh_large", x=x, suspects={"tanh-overflow": overflowed})
