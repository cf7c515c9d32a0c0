"""value.mul: Value.__mul__ and its reflected form."""

import pytest

from autograder.judge import ratio, unwrapped
from autograder.parts import Part

PART = Part("value.mul",
            also_costs=("value.training",),
            misconceptions=("ignores-upstream", "overwrites-gradient", "number-not-wrapped",
                            "rule-on-the-wrong-node"))

NOT_WRAPPED = {"number-not-wrapped": unwrapped("data")}


def a_number(ask, kind: str) -> float:
    """A plain number of the kind a test is about: a whole one (an int) or a negative float."""
    return ask.whole(2, 2, 9) if kind == "int" else ask.number(-0.5, -2.5, -0.1)


def test_products_at_the_root(grade, ask):
    """Products of two values at seeded random inputs, each product the root of its graph."""
    grade("value:products_at_root", seed=ask.seed(11), count=10)


def test_products_with_an_upstream_gradient(grade, ask):
    """Products of two values at seeded random inputs, with an upstream gradient of 3."""
    grade("value:products", seed=ask.seed(1), count=20, suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def test_products_of_computed_values(grade, ask):
    """Products of computed values, with an upstream gradient of 3: the gradient must reach the leaves."""
    grade("value:products_of_computed_values", seed=ask.seed(15), count=10,
          suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def test_value_used_twice(grade, ask):
    """A value multiplied by itself: x * x."""
    grade("value:square", x=ask.number(3.0, 1.5, 4.5), suspects={"overwrites-gradient": ratio("grad", 0.5)})


@pytest.mark.parametrize("kind", ["int", "float"])
def test_a_value_times_a_number(grade, ask, kind):
    """A Value times a plain number (an int and a float)."""
    grade("value:times_number", x=ask.number(1.5, 0.5, 2.5), k=a_number(ask, kind), suspects=NOT_WRAPPED)


@pytest.mark.parametrize("kind", ["int", "float"])
def test_a_number_times_a_value(grade, ask, kind):
    """A plain number times a Value: the reflected form."""
    grade("value:number_times", x=ask.number(1.5, 0.5, 2.5), k=a_number(ask, kind), suspects=NOT_WRAPPED)


def test_numbers_on_both_sides_in_one_graph(grade, ask):
    """x * k + k * x: both forms in one graph, so x collects two contributions."""
    grade("value:with_numbers", x=ask.number(1.5, 0.5, 2.5), k=a_number(ask, "int"),
          suspects={**NOT_WRAPPED, "overwrites-gradient": ratio("grad", 0.5)})


def test_lesson_example(grade, ask):
    """The lesson's example: c = a * b + a, at a = {a} and b = {b}."""
    grade("value:lesson_product", a=ask.number(2.0, 1.2, 3.5), b=ask.number(-3.0, -4.0, -1.2))
