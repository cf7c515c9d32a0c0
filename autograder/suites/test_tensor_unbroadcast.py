"""tensor.unbroadcast: summing a broadcast result's gradient down to one operand's shape.

The common bias case (2, 3) -> (3,) is passed by some wrong implementations; the shapes with
size-1 axes, (1, 3), (2, 1), (4, 2, 3) -> (2, 1) and (4, 2, 3) -> (1, 1, 3), are where they
show.
"""

from __future__ import annotations

import pytest

from autograder.answers import arrays_at
from autograder.parts import Part
from autograder.suspects import shape_is

PART = Part("tensor.unbroadcast",
            also_costs=("tensor.training",),
            misconceptions=("unbroadcast-no-keepdims", "unbroadcast-leading-axes", "unbroadcast-wrong-axis"))


def more_axes(expected, got):
    """Every wrong shape has more axes than the operand, and at least one keeps an added leading
    axis at its full size: the added leading axes are still there, never summed. (Added axes
    kept only as size 1, `(1, 1)` for `()`, were summed, with keepdims: not this.)"""
    pairs = list(zip(arrays_at(expected, "gradient"), arrays_at(got.observations, "gradient")))
    wrong = [(e, g) for e, g in pairs if e["shape"] != g["shape"]]
    return bool(wrong) and all(len(g["shape"]) > len(e["shape"]) for e, g in wrong) and any(
        size != 1 for e, g in wrong for size in g["shape"][:len(g["shape"]) - len(e["shape"])])


def trailing_axes(expected, got):
    """Every case that added axes came out with the shape of summing the last axes away, and the
    size-1 axes of the operand's shape kept: `(4, 2, 3) -> (2, 1)` came out `(4, 1)`."""
    def wrong_shape(case: dict) -> list[int]:
        out_shape, shape = case["inputs"]["out_shape"], case["inputs"]["shape"]
        kept = out_shape[:len(shape)]
        return [1 if size == 1 else kept_size for size, kept_size in zip(shape, kept)]
    cases = [(e, g) for e, g in zip(expected, got.observations)
             if len(e["inputs"]["out_shape"]) > len(e["inputs"]["shape"])
             and wrong_shape(e) != e["inputs"]["shape"]]
    return bool(cases) and all(g["gradient"]["shape"] == wrong_shape(e) for e, g in cases)


DIRECT = {
    "unbroadcast-no-keepdims": shape_is("gradient", lambda shape: [size for size in shape if size != 1]),
    "unbroadcast-leading-axes": more_axes,
    "unbroadcast-wrong-axis": trailing_axes,
}


def test_the_lessons_three_sums(grade, ask):
    """The lesson's pairs (32, 10) + (10,), (4, 1) + (1, 6) and (2, 3, 5) + (3, 1), both operands."""
    grade("tensor:unbroadcast_cases", seed=ask.seed(1), suspects=DIRECT, pairs=[
        [[32, 10], [32, 10]], [[32, 10], [10]],
        [[4, 6], [4, 1]], [[4, 6], [1, 6]],
        [[2, 3, 5], [2, 3, 5]], [[2, 3, 5], [3, 1]]])


def test_a_bias_row(grade, ask):
    """A bias of shape (3,) added to a (2, 3) matrix: its gradient sums the rows."""
    grade("tensor:unbroadcast_cases", seed=ask.seed(10), suspects=DIRECT, pairs=[[[2, 3], [3]]])


def test_size_one_axes_are_kept(grade, ask):
    """Operands with size-1 axes, (1, 3), (2, 1), (1, 1) and (1,), keep them in their gradient."""
    grade("tensor:unbroadcast_cases", seed=ask.seed(20), suspects=DIRECT, pairs=[
        [[2, 3], [1, 3]], [[2, 3], [2, 1]], [[3, 4], [1, 1]], [[5], [1]]])


def test_added_axes_and_size_one_axes_together(grade, ask):
    """(4, 2, 3) down to (2, 1), (1, 1, 3), (1, 3) and (2, 3, 4) down to (1, 3, 1)."""
    grade("tensor:unbroadcast_cases", seed=ask.seed(30), suspects=DIRECT, pairs=[
        [[4, 2, 3], [2, 1]], [[4, 2, 3], [1, 1, 3]], [[4, 2, 3], [1, 3]], [[2, 3, 4], [1, 3, 1]]])


def test_a_scalar_operand(grade, ask):
    """A scalar of shape () against (2, 3) and (5,) gets the sum of everything; () to () is unchanged."""
    grade("tensor:unbroadcast_cases", seed=ask.seed(40), suspects=DIRECT, pairs=[
        [[2, 3], []], [[5], []], [[], []]])


def test_an_operand_that_was_not_broadcast(grade, ask):
    """The same shape on both sides: the gradient comes back unchanged."""
    grade("tensor:unbroadcast_cases", seed=ask.seed(50), suspects=DIRECT, pairs=[
        [[3, 4], [3, 4]], [[2, 3, 5], [2, 3, 5]], [[7], [7]]])


@pytest.mark.parametrize("out_shape", [(6,), (2, 3), (4, 2, 3), (2, 3, 4, 5)],
                         ids=lambda shape: "x".join(map(str, shape)))
def test_every_shape_that_broadcasts_to(grade, ask, out_shape):
    """Every operand shape that broadcasts to one output shape: leading axes dropped, others set to 1."""
    grade("tensor:every_operand_shape", seed=ask.seed(100 * len(out_shape)), out_shape=out_shape,
          suspects=DIRECT)


# Through the engine, a wrong-shaped gradient cannot be added into its operand's .grad, and the
# engine raises ValueError for many a bug alike: the direct checks above name the bug instead.
ENGINE = {"bias": (5,), "column": (4, 1), "row": (1, 5), "scalar": (), "single entry": (1, 1),
          "same shape": (4, 5)}


@pytest.mark.parametrize("operand", list(ENGINE))
def test_the_engine_with_an_operand(grade, ask, operand):
    """X (4, 5) and Y broadcast through +, - and *, then sum and backward: each .grad has its shape."""
    grade("tensor:broadcast_operand", seed=ask.seed(200), shape=ENGINE[operand])


def test_the_engine_with_every_kind_of_operand(grade, ask):
    """A bias (5,), a column (4, 1), a row (1, 5) and a scalar () in one expression, then mean."""
    grade("tensor:all_operands", seed=ask.seed(300))
