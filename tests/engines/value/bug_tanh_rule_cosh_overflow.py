"""One bug, in the style of rule_table_method.py: tanh's value is `math.tanh`, right everywhere,
but its rule is `1 / cosh(x)**2`, whose square overflows (OverflowError) once |x| passes about
355; nothing here computes `exp(2*x)`.
"""

import math


class Value:
    def __init__(self, data, _children=(), _op="", _k=None):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_children)
        self._op = _op
        self._k = _k

    def _backward(self):
        RULES.get(self._op, _leaf)(self)

    def __repr__(self):
        return f"Value({self.data!r}, grad={self.grad!r})"

    @staticmethod
    def lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value.lift(other)
        return Value(self.data + other.data, (self, other), "+")

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        other = Value.lift(other)
        return Value(self.data - other.data, (self, other), "-")

    def __rsub__(self, other):
        return Value(other) - self

    def __mul__(self, other):
        other = Value.lift(other)
        return Value(self.data * other.data, (self, other), "*")

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        other = Value.lift(other)
        return Value(self.data / other.data, (self, other), "/")

    def __rtruediv__(self, other):
        return Value(other) / self

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        return Value(self.data ** k, (self,), "**", k)

    def __neg__(self):
        return Value(-self.data, (self,), "neg")

    def exp(self):
        return Value(math.exp(self.data), (self,), "exp")

    def log(self):
        return Value(math.log(self.data), (self,), "log")

    def tanh(self):
        return Value(math.tanh(self.data), (self,), "tanh")

    def relu(self):
        return Value(self.data if self.data > 0 else 0.0, (self,), "relu")

    def sigmoid(self):
        x = self.data
        z = math.exp(-abs(x))
        return Value(1 / (1 + z) if x >= 0 else z / (1 + z), (self,), "sigmoid")

    def backward(self):
        order, seen = [], set()

        def visit(node):
            if id(node) in seen:
                return
            seen.add(id(node))
            for parent in node._prev:
                visit(parent)
            order.append(node)

        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()

    def zero_grad(self):
        seen, stack = set(), [self]
        while stack:
            node = stack.pop()
            if id(node) not in seen:
                seen.add(id(node))
                node.grad = 0.0
                stack.extend(node._prev)


def _leaf(node):
    pass


def _add(node):
    a, b = node._prev
    a.grad += node.grad
    b.grad += node.grad


def _sub(node):
    a, b = node._prev
    a.grad += node.grad
    b.grad -= node.grad


def _mul(node):
    a, b = node._prev
    a.grad += b.data * node.grad
    b.grad += a.data * node.grad


def _div(node):
    a, b = node._prev
    a.grad += node.grad / b.data
    b.grad -= a.data / b.data ** 2 * node.grad


def _unary(local):
    """The rule of a one-operand operation whose local derivative is local(node, operand)."""
    def rule(node):
        (a,) = node._prev
        a.grad += local(node, a) * node.grad
    return rule


RULES = {
    "+": _add, "-": _sub, "*": _mul, "/": _div,
    "**": _unary(lambda n, a: n._k * a.data ** (n._k - 1)),
    "neg": _unary(lambda n, a: -1.0),
    "exp": _unary(lambda n, a: n.data),
    "log": _unary(lambda n, a: 1.0 / a.data),
    "tanh": _unary(lambda n, a: 1.0 / math.cosh(a.data) ** 2),  # the bug: cosh(x)**2 overflows far out
    "relu": _unary(lambda n, a: 1.0 if a.data > 0 else 0.0),
    "sigmoid": _unary(lambda n, a: n.data * (1.0 - n.data)),
}
