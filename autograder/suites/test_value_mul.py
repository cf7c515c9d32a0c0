"""value.mul: Value.__mul__ and its reflected form."""

import pytest

from autograder.judge import raised, ratio

pytestmark = pytest.mark.part("value.mul")

NOT_WRAPPED = {"number-not-wrapped": raised("TypeError", "AttributeError")}


def test_products_at_the_root(grade):
    """Products of two values at seeded random inputs, each product the root of its graph."""
    grade("value:products_at_root", seed=11, count=10)


def test_products_with_an_upstream_gradient(grade):
    """Products of two values at seeded random inputs, with an upstream gradient of 3."""
    grade("value:products", seed=1, count=20, suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def test_products_of_computed_values(grade):
    """Products of computed values, with an upstream gradient of 3: the gradient must reach the leaves."""
    grade("value:products_of_computed_values", seed=15, count=10,
          suspects={"ignores-upstream": ratio("grads", 1 / 3)})


def test_value_used_twice(grade):
    """A value multiplied by itself: x * x."""
    grade("value:square", x=3.0, suspects={"overwrites-gradient": ratio("grad", 0.5)})


@pytest.mark.parametrize("k", [2, -0.5])
def test_a_value_times_a_number(grade, k):
    """A Value times a plain number (an int and a float)."""
    grade("value:times_number", x=1.5, k=k, suspects=NOT_WRAPPED)


@pytest.mark.parametrize("k", [2, -0.5])
def test_a_number_times_a_value(grade, k):
    """A plain number times a Value: the reflected form."""
    grade("value:number_times", x=1.5, k=k, suspects=NOT_WRAPPED)


def test_numbers_on_both_sides_in_one_graph(grade):
    """x * k + k * x: both forms in one graph, so x collects two contributions."""
    grade("value:with_numbers", x=1.5, k=2, suspects=NOT_WRAPPED)


def test_lesson_example(grade):
    """The lesson's example: c = a * b + a at a = 2, b = -3."""
    grade("value:lesson_product")
