"""value.tanh, and tanh at inputs where a careless formula overflows (value.stability)."""

import pytest

from autograder.judge import ratio
from autograder.scenarios.value import ORDERED


def derivative_from_input_at_root(expected, got):
    """The gradient is 1 - x^2 instead of 1 - tanh(x)^2."""
    return all(abs(case["grad"] - (1 - case["inputs"]["a"] ** 2)) < 1e-6 for case in got.observations)


def derivative_from_input(expected, got):
    """The gradient is 3 (1 - x^2) instead of 3 (1 - tanh(x)^2)."""
    return all(abs(case["grad"] - 3 * (1 - case["inputs"]["a"] ** 2)) < 1e-6
               for case in got.observations)


@pytest.mark.part("value.tanh")
def test_tanh_at_the_root(grade):
    """tanh at seeded random inputs in [-2.5, 2.5], each the root of its graph."""
    grade("value:tanh_at_root", seed=12, count=10,
          suspects={"tanh-derivative-of-input": derivative_from_input_at_root})


@pytest.mark.part("value.tanh")
def test_tanh_at_random_inputs(grade):
    """tanh at seeded random inputs in [-2.5, 2.5], with an upstream gradient of 3."""
    grade("value:tanh_values", seed=2, count=20, provided=ORDERED,
          suspects={"tanh-derivative-of-input": derivative_from_input,
                    "ignores-upstream": ratio("grad", 1 / 3)})


@pytest.mark.part("value.tanh")
def test_tanh_beside_its_input(grade):
    """tanh(x) + x: x collects a gradient from both terms."""
    grade("value:tanh_beside_input", x=0.5, provided=ORDERED,
          suspects={"overwrites-gradient": lost_the_one})


def lost_the_one(expected, got):
    """The 1 from `+ x` was overwritten by tanh's contribution."""
    return abs(got.observations["grad"] - (expected["grad"] - 1)) < 1e-9


@pytest.mark.part("value.stability")
@pytest.mark.parametrize("x", [400.0, -400.0, 1000.0])
def test_tanh_far_from_zero(grade, x):
    """tanh far from zero: exactly +-1 with gradient 0, never an overflow."""
    grade("value:tanh_large", x=x, suspects={"tanh-overflow": raised_overflow})


def raised_overflow(expected, got):
    return got.raised in ("OverflowError", "ZeroDivisionError") or (
        isinstance(got.observations, dict) and got.observations.get("data") != got.observations.get("data"))
