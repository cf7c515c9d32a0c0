"""value.stability: tanh at inputs where a careless formula overflows."""

import pytest

from autograder.parts import Part

PART = Part("value.stability",
            misconceptions=("tanh-overflow",))


def overflowed(expected, got):
    """An OverflowError, or a nan where the reference has a finite value."""
    seen = got.observations
    return (got.raised is not None and got.raised.type == "OverflowError") \
        or (isinstance(seen, dict) and seen.get("data") != seen.get("data"))


# Beyond about 354.9, exp(2x) overflows: every input here is past it, on either side.
FAR = {"positive": (400.0, 360.0, 700.0), "negative": (-400.0, -700.0, -360.0), "huge": (1000.0, 800.0, 1e5)}


@pytest.mark.parametrize("where", list(FAR))
def test_tanh_far_from_zero(grade, ask, where):
    """tanh far from zero: exactly +-1 with gradient 0, never an overflow."""
    grade("activations:tanh_large", x=ask.number(*FAR[where]), suspects={"tanh-overflow": overflowed})
