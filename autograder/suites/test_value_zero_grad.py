"""value.zero_grad: clearing a value and everything it depends on."""

from autograder.parts import Part
from autograder.suites.loops import lesson_loop, trained

PART = Part("value.zero_grad",
            also_costs=("value.training",),
            misconceptions=("zero-grad-self-only", "zero-grad-leaves-only"))


def only_itself(expected, got):
    seen = got.observations
    return seen["root"] == 0 and any(seen["intermediates"]) and any(seen["leaves"])


def only_leaves(expected, got):
    seen = got.observations
    return not any(seen["leaves"]) and any(seen["intermediates"])


def stale_intermediates(expected, got):
    """Leaves cleared each time, intermediates not: the second call pushes twice the gradient.
    (Clearing nothing but the root would give three times: the leaves keep theirs too.)"""
    first, second = expected["calls"][0]["leaves"], got.observations["calls"][1]["leaves"]
    return all(abs(g - 2 * f) < 1e-9 * (1 + abs(f)) for f, g in zip(first, second))


def test_correct_loop(grade, ask):
    """The lesson's loop: forward, zero_grad, backward, step; w from {w0} to near half of {target}."""
    loop = lesson_loop(ask)
    piled_up = trained(**loop, body="no_zero_grad")  # a zero_grad that leaves w alone
    grade("value:loop_correct", **loop,
          suspects={"zero-grad-self-only": lambda e, g: abs(g.observations["w"] - piled_up) < 1e-9})


def test_loop_with_zero_grad_too_late(grade, ask):
    """forward, backward, zero_grad, step: the step sees 0, so w stays at {w0}."""
    grade("value:loop_zero_grad_after_backward", **lesson_loop(ask))


def leaves(ask) -> dict:
    """Two leaves of opposite signs."""
    return {"a": ask.number(0.3, 0.1, 1.5), "b": ask.number(-0.8, -1.5, -0.1)}


def test_zero_grad_reaches_the_whole_graph(grade, ask):
    """After backward, zero_grad on the root clears the root, the intermediates and the leaves."""
    grade("value:zero_grad_reach", **leaves(ask),
          suspects={"zero-grad-self-only": only_itself, "zero-grad-leaves-only": only_leaves})


def test_zero_grad_and_backward_repeated(grade, ask):
    """zero_grad then backward, three times on one graph: the same gradients each time."""
    grade("value:zero_grad_then_backward", **leaves(ask),
          suspects={"zero-grad-leaves-only": stale_intermediates})


def test_zero_grad_of_an_intermediate(grade, ask):
    """zero_grad on an intermediate clears it and its inputs, and leaves the rest alone."""
    grade("value:zero_grad_of_intermediate", **leaves(ask))
