"""Scenarios for the scalar engine, `value.py`.

An operation's scenarios (declared `reverse="kit"`) make the operation's node, set its gradient
to the upstream one a loss above it would pass down (1, or UPSTREAM), and run its rule by hand
(`Tape`): the snippet a student is shown does the same, so it needs neither backward() nor any
operation but the one graded and the given `+`. An operand is a leaf, a computed value (`x +
LIFT`) or a value used twice, and every operand takes both signs, small and large, in every
test at every seed (`common.pairs`, `uniform`). The graphs are drawn with the names their
snippets give them. This module holds the kit's reverse pass and what the operations' scenarios
share; arithmetic.py (`*`, `/`) and activations.py (tanh, relu, sigmoid) hold those scenarios, and
backward.py those of backward() and zero_grad().
"""

from __future__ import annotations

from .common import case, drawing, gradient_fd, note, pairs, scenario, uniform
from .drawing import Recorder

UPSTREAM = 3.0
# The constant that makes an operand a computed value: x + LIFT.
LIFT = 0.25


class WrongParents(Exception):
    """A rule changed the gradient of a value that is not among its node's parents."""


class MergedNodes(Exception):
    """A rule changed the gradient of a value its node's parents hold only as an equal one: two
    distinct values with equal data were kept as one (a set of Values that compare by data)."""


class Tape(Recorder):
    """The kit's own reverse pass over the Values made inside `with Tape(value) as tape:`.

    `tape.mark()` notes where an operation starts; `tape.reverse(root, upstream)` sets the root's
    gradient to `upstream` and runs the rule of each node made since the mark (since the start,
    with no mark) once, newest first: a node is made after its parents, so that order is right
    without a search, and the rules of the operands made before the mark are not run.
    """

    start = 0
    rules: tuple = ()  # the rule object of every node made before the mark, as read at the mark

    def mark(self) -> None:
        """The nodes made from now on are the operation's, whose rules `reverse` runs."""
        self.start = len(self.made)
        self.rules = tuple((node, getattr(node, "_backward", None)) for node in self.made)

    def moved(self) -> bool:
        """Did the operation give one of its operands (a node made before the mark) a rule that
        reads the gradient of a node the operation made? Judged by what the rule does, never by
        which object holds it: a rule read anew on every access (a bound method, a partial, a
        property) is not a new rule. Every gradient is as it was afterwards."""
        ours = self.made[self.start:]
        saved = [node.grad for node in self.made]
        try:
            for node, rule in self.rules:
                if getattr(node, "_backward", None) is not rule and _reads(node, ours, self.made):
                    return True
            return False
        finally:
            for node, grad in zip(self.made, saved):
                node.grad = grad

    def usable(self, root) -> bool:
        """Does the tape hold the root, and every node of the operation the given fields?"""
        ours = self.made[self.start:]
        if id(root) not in {id(node) for node in ours}:
            return False
        return all(isinstance(getattr(node, "_prev", None), (tuple, list, set, frozenset))
                   and callable(getattr(node, "_backward", None)) for node in ours)

    def reverse(self, root, upstream: float = 1.0, **names) -> None:
        """Run the operation's rules back from `root`; with `names`, then draw the graph, even
        when a rule raised. Raises WrongParents, or whatever a rule raises. An engine whose nodes
        the tape cannot run (no given fields) runs its own backward() on `upstream` copies of
        the root added up, which passes the same gradient down."""
        try:
            if self.usable(root):
                self._rules(root, upstream)
            else:
                total = root
                for _ in range(int(upstream) - 1):
                    total = total + root
                total.backward()
        finally:
            if names:
                self.draw(root, **names)

    def _rules(self, root, upstream: float) -> None:
        """Each rule of the operation newest first; WrongParents when one changes a gradient
        outside its node's `_prev`, or when the operation gave one of its operands a new rule."""
        moved = self.moved()
        note(made=len(self.made) - self.start)
        root.grad = upstream
        for newest in reversed(self.made[self.start:]):
            allowed = {id(parent) for parent in newest._prev}
            before = [other.grad for other in self.made]
            newest._backward()
            if drawing():
                self.passes[id(newest)] = {id(other): [grad, other.grad]
                                         for other, grad in zip(self.made, before) if id(other) in allowed}
            for other, grad in zip(self.made, before):
                if id(other) not in allowed and not _same(other.grad, grad):
                    if _merged(other, newest._prev):
                        raise MergedNodes(f"a rule changed the gradient of a value with data {other.data!r} "
                                          "that its node's parents hold only as another value with equal "
                                          "data: the two compare equal, and the parents kept one of them")
                    label = getattr(newest, "_op", "")
                    whose = f"the rule of a `{label}` newest" if label else "a rule attached to a leaf"
                    raise WrongParents(f"{whose} changed the gradient of a value that is not one of its "
                                       "parents")
        if moved:
            raise WrongParents("the operation gave one of its operands a rule that passes on the gradient of "
                               "the node it made: that rule belongs to the node it returned")


# The gradient the operation's own nodes hold while an operand's rule is probed (moved).
PROBE = 7.0


def _reads(operand, ours: list, made: list) -> bool:
    """Does `operand`'s rule pass on a gradient of the nodes in `ours`? Its rule runs twice, with
    every gradient 0 and then with those of `ours` at PROBE: a rule of its own reads only its own
    node's gradient (0 both times), so the two runs change the same gradients the same way."""
    mine = {id(other) for other in ours}
    rest = [other for other in made if id(other) not in mine]
    outcomes = []
    for probe in (0.0, PROBE):
        for other in made:
            other.grad = probe if id(other) in mine else 0.0
        try:
            operand._backward()
        except Exception as error:  # noqa: BLE001 - a rule that raises is compared by what it raised
            outcomes.append(type(error).__name__)
        else:
            outcomes.append([other.grad for other in rest])
    first, second = outcomes
    if isinstance(first, str) or isinstance(second, str):
        return first != second
    return not all(_same(a, b) for a, b in zip(first, second))


def _merged(node, parents) -> bool:
    """Is `node` not among `parents` by identity, but equal to one of them by the engine's own
    `==` (a Value compared by data)?"""
    try:
        return any(parent is not node and bool(parent == node) for parent in parents)
    except Exception:  # noqa: BLE001 - a comparison of the submission's that raises tells nothing
        return False


def _same(a, b) -> bool:
    """Are two gradients the same (nan is the same as nan)?"""
    return a == b or (a != a and b != b)  # nan stays nan


def binary(value, op, a: float, b: float, *, upstream: float, computed: bool, named: str) -> dict:
    """op(x, y) on leaves x = a, y = b (or on computed values a + LIFT, b + LIFT), its rule run
    by hand from `upstream`: its value, its operands' gradients, their central differences."""
    Value = value.Value
    with Tape(value) as tape:
        x, y = Value(a), Value(b)
        left, right = (x + LIFT, y + LIFT) if computed else (x, y)
        tape.mark()
        out = op(left, right)
    tape.reverse(out, upstream, **({"u": left, "v": right} if computed else {"a": x, "b": y}), **{named: out})
    operands = [left.data, right.data]
    fd = gradient_fd(lambda p: upstream * op(Value(p[0]), Value(p[1])).data, operands)
    return {"data": out.data, "grads": [left.grad, right.grad], "grads_fd": fd}


def binary_cases(value, op, seed: int, count: int, low: float, high: float, *, named: str,
                  upstream: float = UPSTREAM, computed: bool = False, avoid: float = 0.0,
                  margin: float = 0.0) -> list[dict]:
    """op at seeded pairs of both signs (`pairs`), on leaves or on computed operands."""
    return [case({"a": a, "b": b}, lambda a=a, b=b: binary(value, op, a, b, upstream=upstream,
                                                           computed=computed, named=named))
            for a, b in pairs(seed, count, low, high, avoid, margin)]


def unary(value, op, a: float, *, upstream: float, computed: bool, named: str) -> dict:
    """op(x) on a leaf x = a (or on the computed value a + LIFT), its rule run by hand."""
    Value = value.Value
    with Tape(value) as tape:
        x = Value(a)
        operand = x + LIFT if computed else x
        tape.mark()
        out = op(operand)
    tape.reverse(out, upstream, **({"u": operand} if computed else {"x": x}), **{named: out})
    fd = gradient_fd(lambda p: upstream * op(Value(p[0])).data, [operand.data])[0]
    return {"data": out.data, "grad": operand.grad, "grad_fd": fd}


def unary_cases(value, op, points: list[float], *, named: str, upstream: float = UPSTREAM,
                 computed: bool = False) -> list[dict]:
    """op at the given points, on a leaf or on a computed operand."""
    return [case({"a": a}, lambda a=a: unary(value, op, a, upstream=upstream, computed=computed,
                                              named=named))
            for a in points]


def beside(value, op, points: list[float], *, named: str = "y") -> list[dict]:
    """op(x) + x at each point: x collects a gradient from both terms (the given `+` and the
    operation's rules, run by hand newest first)."""
    def observe(a: float) -> dict:
        with Tape(value) as tape:
            x = value.Value(a)
            tape.mark()
            out = op(x)
            y = out + x
        tape.reverse(y, 1.0, x=x, t=out, **{named: y})
        fd = gradient_fd(lambda p: (op(value.Value(p[0])) + value.Value(p[0])).data, [a])[0]
        return {"data": y.data, "grad": x.grad, "grad_fd": fd}

    return [case({"x": a}, lambda a=a: observe(a)) for a in points]


def times(value, points: list[list[float]], op, named: str = "y") -> list[dict]:
    """op(x, k) for a Value x and a plain number k, at each [x, k]: the rule run by hand."""
    def observe(x: float, k: float) -> dict:
        with Tape(value) as tape:
            v = value.Value(x)
            tape.mark()
            y = op(v, k)
        tape.reverse(y, 1.0, x=v, **{named: y})
        return {"data": y.data, "grad": v.grad}

    return [case({"x": x, "k": k}, lambda x=x, k=k: observe(x, k)) for x, k in points]


# -- the given operations --------------------------------------------------------------------------

@scenario("value", reverse="kit")
def given_operations(value, a: float, b: float, checks: dict[str, list[str]]) -> dict:
    """
    from value import Value
    for name, expressions in {checks}.items():
        a, b = Value({a}), Value({b})          # the same two leaves for every expression of one operation
        for expression in expressions:
            out = eval(expression)
            out.backward()
            print(name, expression, out.data)
        print(name, a.grad, b.grad)            # what every expression passed back, added up

    """
    def check(expressions: list[str]) -> dict:
        leaves = {"Value": value.Value, "a": value.Value(a), "b": value.Value(b)}
        data = []
        for expression in expressions:
            with Tape(value) as tape:
                out = eval(expression, leaves)  # noqa: S307 - the kit's own expressions
            tape.reverse(out)
            data.append(out.data)
        return {"data": data, "grads": [leaves["a"].grad, leaves["b"].grad]}

    return {name: case({}, lambda expressions=expressions: check(expressions))
            for name, expressions in checks.items()}


# -- any operation, by name: the checks `autograder part new` starts a new part's suite with --------------

def _method(name: str):
    """The operation that calls the method `name` of its operand."""
    return lambda x: getattr(x, name)()


@scenario("value", reverse="kit")
def method_at_root(value, method: str, seed: int, count: int, low: float, high: float) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = getattr(x, {method})()
    y.grad = 1.0           # as at the root of a graph
    y._backward()          # your rule, run by hand: no backward() needed
    print(y.data, x.grad)
    """
    return unary_cases(value, _method(method), uniform(seed, count, low, high), upstream=1.0, named="y")


@scenario("value", reverse="kit")
def method_values(value, method: str, seed: int, count: int, low: float, high: float) -> list[dict]:
    """
    from value import Value
    x = Value({a})
    y = getattr(x, {method})()
    y.grad = 3.0           # the gradient a loss above y would pass down
    y._backward()          # your rule, run by hand: no backward() needed
    print(y.data, x.grad)
    """
    return unary_cases(value, _method(method), uniform(seed, count, low, high), named="y")


@scenario("value", reverse="kit")
def method_of_computed_values(value, method: str, seed: int, count: int, low: float,
                              high: float) -> list[dict]:
    """
    from value import Value
    u = Value({a}) + 0.25      # a computed value, not a leaf
    y = getattr(u, {method})()
    y.grad = 3.0           # the gradient a loss above y would pass down
    y._backward()          # your rule, run by hand: no backward() needed
    print(y.data, u.grad)
    """
    points = uniform(seed, count, low - LIFT, high - LIFT)  # x + LIFT stays in [low, high]
    return unary_cases(value, _method(method), points, computed=True, named="y")


@scenario("value", reverse="kit")
def method_beside_input(value, method: str, x: float) -> list[dict]:
    """
    from value import Value
    x = Value({x})
    t = getattr(x, {method})()
    y = t + x              # x gets a gradient from both terms
    y.grad = 1.0
    for each in (y, t):    # each rule by hand, the newest node first
        each._backward()

    print(y.data, x.grad)
    """
    return beside(value, _method(method), [x])
