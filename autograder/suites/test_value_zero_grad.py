"""value.zero_grad: clearing a value and everything it depends on."""

from __future__ import annotations

from autograder.parts import Part
from autograder.suites.loops import lesson_loop

PART = Part("value.zero_grad",
            also_costs=("value.training",),
            misconceptions=("zero-grad-self-only", "zero-grad-one-level", "zero-grad-leaves-only"))

# The graph of the scenarios below (backward.py, `_graph`), node by node in the order made, each
# with its parents and the local derivative towards each: x, y; s = x + y; p = s**2; t = y**2;
# w = x + t; q = w**3; L = p + q. What each kind of zero_grad clears, when called on L.
CLEARS = {"self": {"L"}, "one level": {"L", "p", "q"}, "leaves": {"x", "y"}}


def _nodes(x: float, y: float) -> dict[str, list[tuple[str, float]]]:
    s, w = x + y, x + y ** 2
    return {"s": [("x", 1.0), ("y", 1.0)], "p": [("s", 2 * s)], "t": [("y", 2 * y)],
            "w": [("x", 1.0), ("t", 1.0)], "q": [("w", 3 * w ** 2)], "L": [("p", 1.0), ("q", 1.0)]}


def calls_when_zero_grad_clears(kind: str, x: float, y: float) -> list[dict]:
    """What three rounds of zero_grad then the kit's reverse pass give on the graph, when
    zero_grad clears only what `kind` says: the leaves' and p's and q's gradients each round."""
    nodes = _nodes(x, y)
    grads = dict.fromkeys(["x", "y", *nodes], 0.0)
    calls = []
    for _ in range(3):
        for name in CLEARS[kind]:
            grads[name] = 0.0
        grads["L"] = 1.0
        for name in reversed(list(nodes)):  # newest first, as the kit's reverse pass runs them
            for parent, local in nodes[name]:
                grads[parent] += local * grads[name]
        calls.append({"leaves": [grads["x"], grads["y"]], "intermediates": [grads["p"], grads["q"]]})
    return calls


def only_itself(expected, got):
    seen = got.observations
    return seen["root"] == 0 and all(seen["intermediates"]) and all(seen["inner"]) and all(seen["leaves"])


def one_level(expected, got):
    seen = got.observations
    return seen["root"] == 0 and not any(seen["intermediates"]) and all(seen["inner"]) and all(seen["leaves"])


def only_leaves(expected, got):
    seen = got.observations
    return not any(seen["leaves"]) and all(seen["intermediates"]) and all(seen["inner"])


def test_correct_loop(grade, ask):
    """The lesson's loop: forward, zero_grad, backward, step; w from {w0} to near half of {target}."""
    grade("backward:loop_correct", **lesson_loop(ask))


def test_loop_with_zero_grad_too_late(grade, ask):
    """forward, backward, zero_grad, step: the step sees 0, so w stays at {w0}."""
    grade("backward:loop_zero_grad_after_backward", **lesson_loop(ask))


def leaves(ask) -> dict:
    """Two leaves of opposite signs."""
    return {"a": ask.number(0.3, 0.1, 1.5), "b": ask.number(-0.8, -1.5, -0.1)}


def test_zero_grad_reaches_the_whole_graph(grade, ask):
    """After backward, zero_grad on the root clears the root, the intermediates and the leaves."""
    grade("backward:zero_grad_reach", **leaves(ask),
          suspects={"zero-grad-self-only": only_itself, "zero-grad-one-level": one_level,
                    "zero-grad-leaves-only": only_leaves})


def test_zero_grad_and_backward_repeated(grade, ask):
    """zero_grad then backward, three times on one graph: the same gradients each time."""
    operands = leaves(ask)
    grade("backward:zero_grad_then_backward", **operands,
          suspects={f"zero-grad-{name}": repeated(name, operands)
                    for name in ("self-only", "one-level", "leaves-only")})


def repeated(name: str, operands: dict):
    """The suspect of a zero_grad of the kind `name` on the rounds asked at `operands`."""
    kind = {"self-only": "self", "one-level": "one level", "leaves-only": "leaves"}[name]
    def test(expected, got):
        model = calls_when_zero_grad_clears(kind, operands["a"], operands["b"])
        found = got.observations["calls"]
        return len(found) == len(model) and all(
            abs(g - m) <= 1e-9 * (1 + abs(m)) for call, wanted in zip(found, model)
            for key in ("leaves", "intermediates") for g, m in zip(call[key], wanted[key]))
    return test


def test_zero_grad_of_an_intermediate(grade, ask):
    """zero_grad on an intermediate clears it and its inputs, and leaves the rest alone."""
    grade("backward:zero_grad_of_intermediate", **leaves(ask))
