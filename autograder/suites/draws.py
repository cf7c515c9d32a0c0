"""Numbers of both signs, small and large, for the tests whose operands are single numbers.

Every test asks each operand of the operation it grades at both signs and at a small and a
large size, at every seed: a bug confined to one sign or one size then fails the same tests
whatever the seed, so its grade never depends on the seed.
"""

from __future__ import annotations

SMALL, LARGE = (0.5, 0.1, 0.9), (3.0, 1.5, 4.5)


def negated(asked: tuple) -> tuple:
    """A (public, low, high) of the other sign."""
    public, low, high = asked
    return (-public, -high, -low)


def signed(ask, small: tuple = SMALL, large: tuple = LARGE) -> list[float]:
    """Four numbers: a small and a large one above 0, then below it."""
    return [ask.number(*small), ask.number(*large), ask.number(*negated(small)), ask.number(*negated(large))]


def signed_pairs(ask, first: tuple = (SMALL, LARGE), second: tuple = (SMALL, LARGE),
                 whole: bool = False) -> list[list[float]]:
    """Four pairs [x, k]: each of x and k takes both signs and both sizes (its `first` or
    `second`: a small and a large (public, low, high)), and each pair of signs comes once. With
    `whole`, k is an int (its sizes are then ranges of ints). A pair whose x and k are not `apart`
    is drawn again; raises ValueError where it cannot be (public values that are not)."""
    (x_small, x_large), (k_small, k_large) = first, second

    def k(asked: tuple) -> float:
        return ask.whole(*asked) if whole else ask.number(*asked)

    def pair(x_asked: tuple, k_asked: tuple) -> list[float]:
        for _ in range(REDRAWS):
            x, other = ask.number(*x_asked), k(k_asked)
            if apart(x, other):
                return [x, other]
        raise ValueError(f"x = {x} and k = {other} are equal, or one is the other's reciprocal: give public "
                         "values that are not")

    return [pair(x_small, k_large), pair(x_large, negated(k_small)),
            pair(negated(x_small), k_small), pair(negated(x_large), negated(k_large))]


# How often a pair is drawn again before its values are taken to be fixed (the public seed's).
REDRAWS = 20


def apart(x: float, k: float) -> bool:
    """Do x and the nodes an engine makes of k (`k`, `k ** -1`) hold different data? Two distinct
    nodes with equal data are where an engine that compares values by data merges them."""
    return x != k and (k == 0 or x != 1 / k)
