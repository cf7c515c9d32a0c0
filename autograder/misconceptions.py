"""The misconceptions the judge can name, each with the idea it points back to."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Misconception:
    """One misconception: a one-line title of the mistake, and the idea it points back to."""

    title: str
    idea: str


CATALOGUE: dict[str, Misconception] = {
    "overwrites-gradient": Misconception(
        "a gradient is assigned with `=` instead of accumulated with `+=`",
        "A value used in several places receives one contribution from each use, and its "
        "gradient is their sum. Assigning keeps only the last contribution, so a value used "
        "twice ends up with half its gradient."),
    "ignores-upstream": Misconception(
        "the local derivative is not multiplied by `out.grad`",
        "The chain rule: what a node passes to its parent is its own gradient times the local "
        "derivative. Without `* out.grad` the rule is right only when the output is the loss."),
    "number-not-wrapped": Misconception(
        "a plain number is used as if it were a Value",
        "`v * 2`, `2 * v` and `v / 2` mix a Value with a number. Wrap the number in a Value "
        "(a constant leaf) before reading `.data`; the reflected forms route through your "
        "operator."),
    "tanh-derivative-of-input": Misconception(
        "tanh's derivative is computed from the input instead of the output",
        "`d tanh(x)/dx = 1 - tanh(x)**2`: it uses the output `t = tanh(x)`, not x itself."),
    "relu-gate": Misconception(
        "relu passes the gradient on the wrong side of zero",
        "relu's local derivative is 1 where the input is positive and 0 where it is not."),
    "relu-cuts-graph": Misconception(
        "relu returns its input itself, or a constant with no parent, instead of a node of its own",
        "relu's value and slope can be right while the graph is not: `return self` where the gate "
        "is open, or a fresh constant where it is shut, leaves no relu node with x as its parent. A "
        "unit shut for a whole batch is then cut out of the graph: zero_grad() on the loss never "
        "reaches the weights behind it, and the next step moves them with a gradient left from an "
        "earlier one. Return a new Value with `(self,)` as its parents on both sides of the gate."),
    "quotient-rule": Misconception(
        "a / b has the wrong derivative with respect to b",
        "`a / b = a * b**-1`, so `d/db = -a / b**2`: the sign and the square both matter."),
    "no-topological-order": Misconception(
        "backward() runs a shared node's rule more than once, or before its gradient is complete",
        "A node used by two others passed its gradient on twice, or part of it: `(x*x)*(x*x)` at "
        "x = 2 gives 64 instead of 32. Causes that fit: an order with no visited set, or an "
        "iterative sort that pushes a node once per path, so that the node is listed and its rule "
        "run twice; or no topological order at all, so that a node runs before all its consumers "
        "have added their shares. Sort the graph topologically, each node once and after its "
        "parents, then run the rules in reverse."),
    "backward-pre-order": Misconception(
        "backward() runs a node's rule as soon as it reaches the node, before every consumer "
        "has added its share",
        "A visited set makes each rule run once, but not late enough: a node used by two others "
        "must wait until both have passed it their gradients. Collect the nodes in topological "
        "order first (each after all of its parents), then run the rules in reverse."),
    "backward-clears": Misconception(
        "backward() resets gradients before it runs",
        "backward() only adds: calling it again adds the same contributions on top, and "
        "clearing is zero_grad()'s job. On the lesson's graph `a*b + a*c` at a, b, c = 2, 3, 4, "
        "whose intermediate nodes keep their gradients too, a's gradient goes 7, 21, 42 over "
        "three calls."),
    "backward-runs-no-rule": Misconception(
        "backward() runs no node's rule",
        "After setting the root's gradient to 1.0, backward() must call every node's _backward, "
        "from the root back to the leaves; as it is, no gradient reaches any other node."),
    "root-not-seeded": Misconception(
        "backward() does not set the root's gradient to 1.0 before the reverse pass",
        "The reverse pass starts from dL/dL = 1. Every rule passes on its node's gradient times "
        "a local derivative, so with the root's gradient left at 0 every rule runs and passes "
        "on 0, and no gradient in the graph moves."),
    "root-accumulates": Misconception(
        "backward() adds 1 to the root's gradient instead of setting it",
        "The root's gradient is dL/dL = 1: backward() sets it to 1.0 before the reverse pass, "
        "whatever it held before."),
    "rule-on-the-wrong-node": Misconception(
        "an operation's rule is attached to the wrong node, or names the wrong parents",
        "Each operation makes a new node `out`, names its operands as its parents, "
        "`(self, other)`, and attaches its rule to it: `out._backward = _backward`. The rule "
        "then adds into its parents' gradients and nowhere else; that is how the reverse pass "
        "finds, in turn, each operand's own rule."),
    "equal-data-merged": Misconception(
        "two distinct values with equal data are taken for one node (`__eq__` and `__hash__` by data)",
        "Nodes are told apart by identity, not by value: in `p + q` with p.data == q.data, p and q "
        "are two parents, each owed its own gradient. A Value whose `__eq__` and `__hash__` compare "
        "data makes a set of parents, or a set of visited nodes, keep only one of them. Leave "
        "`__eq__` and `__hash__` as Python's (identity), or keep ids in your sets."),
    "zero-grad-self-only": Misconception(
        "zero_grad() clears only the value it is called on",
        "zero_grad() must reach everything the value depends on: walk the same graph that "
        "backward() walks."),
    "zero-grad-one-level": Misconception(
        "zero_grad() clears the value and its parents, but nothing deeper",
        "zero_grad() must reach everything the value depends on, however deep: walk the whole "
        "graph, as backward() does, and clear every node once."),
    "zero-grad-leaves-only": Misconception(
        "zero_grad() clears the leaves but not the intermediate values",
        "Intermediate nodes keep gradients too, and a stale one is added into the next "
        "backward pass through the same graph."),
    "unbroadcast-no-keepdims": Misconception(
        "stretched size-1 axes are summed away instead of kept",
        "An operand of shape (4, 1) needs a gradient of shape (4, 1): sum the stretched axis "
        "with keepdims=True so that its size-1 axis stays."),
    "unbroadcast-leading-axes": Misconception(
        "the leading axes that broadcasting added are not summed away",
        "Shapes align from the right; broadcasting (3,) against (2, 3) first treats it as "
        "(1, 3). Sum over the extra leading axes until the gradient has the operand's rank."),
    "unbroadcast-wrong-axis": Misconception(
        "the axes summed away are the last ones instead of the leading ones",
        "Shapes align from the right, so the axes that broadcasting added are the leading ones: a "
        "bias of shape (3,) against a (2, 3) gradient is summed over axis 0, giving (3,), not over "
        "the last axis, which gives (2,)."),
    "tanh-overflow": Misconception(
        "tanh, or its rule, uses a formula that overflows for large inputs",
        "Formulas that fit: the value from `exp(2*x)` or `exp(-2*x)`, which overflow once |x| "
        "passes about 354.9, or a rule from `cosh(x)`, as `1 / cosh(x)**2`, which overflows further "
        "out. `math.tanh` (or a formula in `exp(-2*abs(x))`) for the value, and "
        "`1 - t**2` from the output t for the rule, stay finite for every input."),
    "dual-product-rule": Misconception(
        "Dual's product does not follow the product rule",
        "`(a, a') * (b, b') = (ab, a'b + ab')`: each factor's derivative times the other's value."),
    "dual-sin-sign": Misconception(
        "Dual's sin has the wrong derivative",
        "d sin(u) = cos(u) * u': a cosine, with a plus sign."),
    "dual-constant-derivative": Misconception(
        "a plain number becomes a Dual with derivative 1",
        "A constant does not change when x does: its derivative is 0. Only the input being "
        "differentiated is seeded with 1, and `Dual(val)` defaults to der = 0."),
    "dual-number-not-wrapped": Misconception(
        "a plain number is used as if it were a Dual",
        "`x + 1`, `1 + x`, `x * 2` and `2 * x` mix a Dual with a plain number. Wrap the number "
        "as `Dual(number)`, a constant with der 0.0, before reading `.val` and `.der`; the "
        "reflected forms `__radd__` and `__rmul__` are what Python calls when the number is on "
        "the left."),
}
