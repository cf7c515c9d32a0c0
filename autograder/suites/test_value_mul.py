"""value.mul: Value.__mul__ and its reflected form."""

from __future__ import annotations

import pytest

from autograder.parts import Part
from autograder.suites.draws import SMALL, signed, signed_pairs
from autograder.suspects import ratio, unwrapped

PART = Part("value.mul",
            also_costs=("value.training",),
            misconceptions=("ignores-upstream", "overwrites-gradient", "number-not-wrapped",
                            "rule-on-the-wrong-node"))

NOT_WRAPPED = {"number-not-wrapped": unwrapped("data")}
# A plain number of each kind: whole ones (ints), and floats.
WHOLE = ((2, 2, 4), (7, 5, 9))


def numbers_of(ask, kind: str) -> list[list[float]]:
    """Four [x, k]: x and the plain number k each of both signs and both sizes."""
    if kind == "int":
        return signed_pairs(ask, second=WHOLE, whole=True)
    return signed_pairs(ask, second=(SMALL, (2.5, 1.5, 4.0)))


def test_products_at_the_root(grade, ask):
    """Products of two values at seeded random inputs of both signs, each product the root of its graph."""
    grade("arithmetic:products_at_root", seed=ask.seed(11), count=10)


def test_products_with_an_upstream_gradient(grade, ask):
    """Products of two values at seeded random inputs of both signs, with an upstream gradient of 3."""
    grade("arithmetic:products", seed=ask.seed(1), count=20,
          suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def test_products_of_computed_values(grade, ask):
    """Products of computed values, with an upstream gradient of 3."""
    grade("arithmetic:products_of_computed_values", seed=ask.seed(15), count=10,
          suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def test_value_used_twice(grade, ask):
    """A value multiplied by itself: x * x, at x of both signs, small and large."""
    grade("arithmetic:square", points=signed(ask), suspects={"overwrites-gradient": ratio("grad", 0.5)})


@pytest.mark.parametrize("kind", ["int", "float"])
def test_a_value_times_a_number(grade, ask, kind):
    """A Value times a plain number (an int and a float), each of both signs."""
    grade("arithmetic:times_number", points=numbers_of(ask, kind), suspects=NOT_WRAPPED)


@pytest.mark.parametrize("kind", ["int", "float"])
def test_a_number_times_a_value(grade, ask, kind):
    """A plain number times a Value: the reflected form."""
    grade("arithmetic:number_times", points=numbers_of(ask, kind), suspects=NOT_WRAPPED)


def test_numbers_on_both_sides_in_one_graph(grade, ask):
    """x * k + k * x: both forms in one graph, so x collects two contributions."""
    grade("arithmetic:with_numbers", points=numbers_of(ask, "int"),
          suspects={**NOT_WRAPPED, "overwrites-gradient": ratio("grad", 0.5)})


def test_lesson_example(grade, ask):
    """The lesson's example: c = a * b + a, at a = {a} and b = {b}."""
    grade("arithmetic:lesson_product", a=ask.number(2.0, 1.2, 3.5), b=ask.number(-3.0, -4.0, -1.2))
