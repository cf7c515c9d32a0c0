"""value.mul: Value.__mul__ and its reflected form."""

import pytest

from autograder.judge import raised, ratio

pytestmark = pytest.mark.part("value.mul")

NOT_WRAPPED = {"number-not-wrapped": raised("TypeError", "AttributeError")}


def test_products_of_random_values(grade):
    """Products of two values at seeded random inputs, with an upstream gradient of 3."""
    grade("value:products", seed=1, count=20,
          suspects={"ignores-upstream": ratio("grads", 1 / 3), "overwrites-gradient": ratio("grads", 0.5)})


def test_value_used_twice(grade):
    """A value multiplied by itself: x * x."""
    grade("value:square", x=3.0, suspects={"overwrites-gradient": ratio("grad", 0.5)})


@pytest.mark.parametrize("k", [2, -0.5])
def test_plain_numbers_both_sides(grade, k):
    """A Value times a plain number, and a plain number times a Value."""
    grade("value:with_numbers", x=1.5, k=k, suspects=NOT_WRAPPED)


def test_lesson_example(grade):
    """The lesson's example: c = a * b + a at a = 2, b = -3."""
    grade("value:lesson_product", suspects={"overwrites-gradient": ratio("grads", 0.5)})
