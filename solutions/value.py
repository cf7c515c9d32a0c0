"""A scalar reverse-mode autograd engine: the `Value` class.

Every arithmetic operation on a `Value` returns a new `Value` that remembers its parents and
carries a small `_backward` closure. The closure knows one local derivative and adds
(`+=`) the output's gradient, times that derivative, into each parent's `.grad`.
`backward()` then runs those closures from the output back to the inputs.

The operations that are complete below are worked examples: read them first. Each stub
says in its docstring which rule it follows; replace its `TODO` line and its `raise` with
your code. Check your work from the top of the kit with:

    pytest autograder
"""

from __future__ import annotations

import math


class Value:
    """A float that records how it was computed, so gradients can flow back through it."""

    def __init__(self, data: float, _parents: tuple[Value, ...] = (), _op: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_parents)
        self._backward = lambda: None  # a leaf has nothing to pass on
        self._op = _op

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Value | float) -> Value:
        """Return self * other: a new Value whose parents are self and other.

        Follows the product rule. Wrap a plain number in a Value first, and give the new node
        a _backward that adds (+=) each parent's share of out.grad, since a parent may be used
        twice (x * x).
        """
        # BEGIN SOLUTION value.mul: the product rule, for a Value or a plain number
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def __pow__(self, k: float) -> Value:
        if not isinstance(k, (int, float)):
            return NotImplemented  # only a plain-number exponent has this rule
        out = Value(self.data**k, (self,), f"**{k}")

        def _backward() -> None:
            self.grad += k * self.data ** (k - 1) * out.grad

        out._backward = _backward
        return out

    def __truediv__(self, other: Value | float) -> Value:
        """Return self / other.

        Follows the quotient rule, for divisors of either sign. Wrap a plain number in a Value
        first, and accumulate with +=. A node of its own, with its own rule, and a composition
        of operations you already have are both correct.
        """
        # BEGIN SOLUTION value.truediv: division, with the quotient rule
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data / other.data, (self, other), "/")

        def _backward() -> None:
            self.grad += out.grad / other.data
            other.grad += -self.data / other.data**2 * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def exp(self) -> Value:
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward() -> None:
            self.grad += out.data * out.grad  # e^x is its own derivative

        out._backward = _backward
        return out

    def log(self) -> Value:
        out = Value(math.log(self.data), (self,), "log")

        def _backward() -> None:
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def tanh(self) -> Value:
        """Return tanh(self): a new Value whose parent is self.

        Its rule takes the derivative from the output t, not from the input. The forward value
        must stay finite for large inputs such as x = 1000 or -1000. Accumulate with +=.
        """
        # BEGIN SOLUTION value.tanh: tanh and its derivative from the output
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1.0 - t * t) * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def relu(self) -> Value:
        """Return max(0, self): a new Value whose parent is self.

        Its rule is a gate, open or shut by the sign of the input. Accumulate with +=.
        """
        # BEGIN SOLUTION value.relu: relu and its gate
        out = Value(max(0.0, self.data), (self,), "relu")

        def _backward() -> None:
            self.grad += (self.data > 0) * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def sigmoid(self) -> Value:
        """Bonus: return 1 / (1 + e^-self) as one node of its own, with its own rule.

        Its rule takes the derivative from the output, as tanh's does; accumulate with +=. The
        forward value must be right at x = 1000 and at x = -1000, where 1 / (1 + e^-x)
        overflows.
        """
        # BEGIN SOLUTION value.sigmoid: (bonus) a stable sigmoid primitive
        if self.data >= 0:
            s = 1.0 / (1.0 + math.exp(-self.data))
        else:
            e = math.exp(self.data)  # the other form, so exp never sees a large argument
            s = e / (1.0 + e)
        out = Value(s, (self,), "sigmoid")

        def _backward() -> None:
            self.grad += s * (1.0 - s) * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

    def __neg__(self) -> Value:
        out = Value(-self.data, (self,), "neg")

        def _backward() -> None:
            self.grad += -out.grad

        out._backward = _backward
        return out

    def __sub__(self, other: Value | float) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += -out.grad

        out._backward = _backward
        return out

    # The reflected forms: Python calls these for `2 + v`, `1 - v`, `2 * v`, `2 / v`.
    def __radd__(self, other: float) -> Value:
        return self + other

    def __rsub__(self, other: float) -> Value:
        return Value(other) - self

    def __rmul__(self, other: float) -> Value:
        return self * other

    def __rtruediv__(self, other: float) -> Value:
        return Value(other) / self

    def backward(self) -> None:
        """Fill in d(self)/d(node) for every node of the graph that ends at self.

        Order the nodes topologically (each one after all of its parents, each exactly
        once), set self.grad to 1.0, then call every node's _backward in reverse order.
        Clear nothing: gradients add up across calls (zero_grad() clears them).
        """
        # BEGIN SOLUTION value.backward: topological order, then the closures in reverse
        order: list[Value] = []
        visited: set[Value] = set()
        stack: list[tuple[Value, bool]] = [(self, False)]
        while stack:  # an explicit stack, so deep graphs do not hit the recursion limit
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))
                stack.extend((parent, False) for parent in node._prev)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
        # END SOLUTION

    def zero_grad(self) -> None:
        """Set .grad to 0.0 on self and on every value it depends on, intermediates included."""
        # BEGIN SOLUTION value.zero_grad: zero every gradient in the graph
        seen: set[Value] = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                node.grad = 0.0
                stack.extend(node._prev)
        # END SOLUTION
