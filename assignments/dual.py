"""Forward-mode automatic differentiation with dual numbers: the `Dual` class.

A `Dual` carries a value and its derivative along one chosen direction. Every operation
computes both at once, so one forward pass gives the derivative and no graph is stored.
Seed the input you differentiate by with der=1.0; a plain number is a constant (der 0.0).

Every method below is yours to write: replace each `TODO` line and its `raise` with your
code, then check your work from the top of the kit with:

    pytest autograder
"""

from __future__ import annotations

import math  # noqa: F401 - the methods you write need it


class Dual:
    """A number val + der * eps with eps**2 = 0: a value and its derivative, together."""

    def __init__(self, val: float, der: float = 0.0) -> None:
        """Store val and der as floats in .val and .der; der defaults to 0.0, a constant."""
        # TODO(dual): store the value and its derivative
        raise NotImplementedError("dual: implement Dual.__init__")

    def __add__(self, other: Dual | float) -> Dual:
        """Return self + other, by the sum rule. A plain number is a constant."""
        # TODO(dual): the sum rule
        raise NotImplementedError("dual: implement Dual.__add__")

    def __radd__(self, other: float) -> Dual:
        """Return other + self, for a plain number on the left."""
        # TODO(dual): a plain number on the left
        raise NotImplementedError("dual: implement Dual.__radd__")

    def __mul__(self, other: Dual | float) -> Dual:
        """Return self * other, by the product rule. A plain number is a constant."""
        # TODO(dual): the product rule
        raise NotImplementedError("dual: implement Dual.__mul__")

    def __rmul__(self, other: float) -> Dual:
        """Return other * self, for a plain number on the left."""
        # TODO(dual): a plain number on the left
        raise NotImplementedError("dual: implement Dual.__rmul__")

    def sin(self) -> Dual:
        """Return sin(self), by the chain rule."""
        # TODO(dual): the chain rule through sin
        raise NotImplementedError("dual: implement Dual.sin")

    def exp(self) -> Dual:
        """Return e**self, by the chain rule."""
        # TODO(dual): the chain rule through exp
        raise NotImplementedError("dual: implement Dual.exp")
