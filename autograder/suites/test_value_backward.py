"""value.backward: the order of the reverse pass, and accumulation across calls.

The graphs use only `+` and `** number`, one node each in every engine, so these tests need
nothing but backward() itself, and an answer after several calls is the same however a student
built the other given operations.
"""

from __future__ import annotations

import pytest

from autograder.answers import numbers_at
from autograder.parts import Part
from autograder.suites.draws import signed
from autograder.suites.loops import SLOW_BACKWARD, lesson_loop, trained
from autograder.suspects import sequence

PART = Part("value.backward",
            also_costs=("value.training",),
            misconceptions=("no-topological-order", "backward-pre-order", "backward-runs-no-rule",
                            "root-not-seeded", "root-accumulates", "backward-clears"))


def cases_of(observations) -> list:
    return observations if isinstance(observations, list) else [observations]


def leaf_off_by(*factors: float):
    """The first value's gradient is one of `factors` times the right one (the leaf comes first)."""
    def test(expected, got):
        wanted, cases = cases_of(expected), cases_of(got.observations)
        return len(wanted) == len(cases) and wanted[0]["grads"][0] != 0 and all(
            "grads" in g and any(abs(g["grads"][0] - f * e["grads"][0]) <= 1e-6 * (1 + abs(e["grads"][0]))
                                 for f in factors) for e, g in zip(wanted, cases))
    return test


def still_zero(keys: tuple[str, ...], root: float):
    """Every gradient under `keys` is still 0, where the reference's are not, and the root's
    gradient (under "root") is `root` in every case: 1.0 when no rule ran, 0.0 when the root was
    never seeded."""
    def test(expected, got):
        found = [v for key in keys for v in numbers_at(got.observations, key)]
        wanted = [v for key in keys for v in numbers_at(expected, key)]
        roots = list(numbers_at(got.observations, "root"))
        return len(found) == len(wanted) and any(wanted) and not any(found) and bool(roots) \
            and all(r == root for r in roots)
    return test


def diamond_grads(grads: list[float]):
    """The diamond's gradients of a, b and c (the root) are exactly `grads`, in every case."""
    return lambda e, g: len(g.observations) == len(e) and all(c["grads"] == grads for c in g.observations)


def starved_leaf(expected, got):
    """The leaf got nothing while the node between it and the root got its gradient: a rule
    ran before its node's gradient was complete (the diamond tells this apart from no rule)."""
    return len(got.observations) == len(expected) and all(
        g["grads"][0] == 0 != e["grads"][0] and g["grads"][1] == e["grads"][1] != 0
        for e, g in zip(expected, got.observations))


NO_ORDER = {"no-topological-order": leaf_off_by(1.5, 2)}


def passed_on_early(expected, got):
    """x got half of its gradient while r's own is complete: r ran its rule after its first
    consumer had added its share, and never again (a pre-order walk with a visited set)."""
    (x, r), (wanted_x, wanted_r) = got.observations["grads"], expected["grads"]
    return wanted_x != 0 and abs(x - wanted_x / 2) <= 1e-9 * (1 + abs(wanted_x)) \
        and abs(r - wanted_r) <= 1e-9 * (1 + abs(wanted_r))


def test_a_value_added_to_itself(grade, ask):
    """a + a, at a of both signs: the gradient of a is 2."""
    grade("backward:reused_leaf", points=signed(ask),
          suspects={"backward-runs-no-rule": still_zero(("grad",), 1.0),
                    "root-not-seeded": still_zero(("grad",), 0.0)})


def test_a_diamond(grade, ask):
    """b = a + a; c = b + b: c = 4a and dc/da = 4, at a of both signs."""
    grade("backward:diamond", points=signed(ask), suspects={
        "no-topological-order": lambda e, g: leaf_off_by(1.5, 2)(e, g) or starved_leaf(e, g),
        "backward-runs-no-rule": diamond_grads([0.0, 0.0, 1.0]),
        "root-not-seeded": diamond_grads([0.0, 0.0, 0.0])})


# A positive and a negative x, each away from 0, where x**2 + 1 would hide a sign.
CONSUMED = {"positive": (2.0, 1.0, 3.0), "negative": (-0.7, -1.5, -0.3)}


@pytest.mark.parametrize("sign", list(CONSUMED))
def test_a_node_with_two_consumers(grade, ask, sign):
    """r = x**2 + 1 feeds two separate squares: r must pass its gradient on once, complete."""
    # A leaf with no gradient here may be a backward() that runs no rule or one in the wrong
    # order: neither is named from this graph alone (the diamond tells them apart).
    grade("backward:shared_node", x=ask.number(*CONSUMED[sign]),
          suspects={**NO_ORDER, "backward-pre-order": passed_on_early})


def test_a_chain_a_thousand_deep(grade, ask):
    """A chain 1000 nodes deep that uses x at every step: dL/dx = 1001."""
    grade("backward:long_chain", depth=1000, x=ask.number(0.5, 0.1, 2.0), slow=SLOW_BACKWARD)


def test_a_mixed_graph(grade, ask):
    """Powers and sums with shared values, at seeded random inputs."""
    grade("backward:mixed_graph", seed=ask.seed(5), count=10, suspects=NO_ORDER)


def first_call_each_time(key: str):
    """The numbers under `key` stay at the reference's first call: each call cleared, then added."""
    def test(expected, got):
        first = expected["calls"][0][key]
        return sequence(key, [first] * 3)(expected, got) and expected["calls"][1][key] != first
    return test


def unseeded(expected, got):
    """The root stays at 0 and no gradient moves at all: a root cleared after its rule ran (the
    leaves' gradients moved) is not this."""
    return sequence("root", [0.0] * 3)(expected, got) and sequence("a", [0.0] * 3)(expected, got)


def test_three_calls_without_zero_grad(grade, ask):
    """Three backward() calls on one graph: every gradient grows with each call, and the root's stays 1."""
    grade("backward:three_calls", a=ask.number(2.0, 1.5, 4.5), b=ask.number(3.0, 1.5, 4.5),
          c=ask.number(4.0, 1.5, 4.5), suspects={
              "root-accumulates": sequence("root", [1.0, 2.0, 3.0]),
              "root-not-seeded": unseeded,
              "backward-clears": first_call_each_time("a"),
          })


def test_gradients_add_up_over_fresh_graphs(grade, ask):
    """Two fresh graphs through the same leaf, no zero_grad: the gradient doubles."""
    grade("backward:rebuilt_graph", x=ask.number(0.5, 0.2, 1.2), suspects={
        "backward-clears": lambda e, g: g.observations["grads"][1] == e["grads"][0] != 0})


def test_loop_that_forgets_zero_grad(grade, ask):
    """The lesson's loop with no zero_grad, w from {w0} towards half of {target}: the gradients pile up."""
    loop = lesson_loop(ask)
    grade("backward:loop_without_zero_grad", **loop,
          suspects={"backward-clears": lambda e, g: abs(g.observations["w"] - trained(**loop)) < 1e-9})
