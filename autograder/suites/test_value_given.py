"""value.given: the operations the handout gives are still the handout's.

Worth no points: it is here so that a changed given operation is named before anything
else. Every other value message whose scenario uses an operation that differs here says so
first.
"""

from autograder.parts import Part

PART = Part("value.given")


def test_the_given_operations(grade, given):
    """Every given operation of value.py, on small graphs of two leaves."""
    grade("value:given_operations", **given)
