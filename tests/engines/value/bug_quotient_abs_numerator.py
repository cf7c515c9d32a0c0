"""Style: op-name dispatch engine, primitive `/` (as in value/op_dispatch_recursive.py). One bug:
the divisor's share of `/` uses the numerator's magnitude, `-|a|/b**2`, right only for non-
negative numerators.
The bug is at line 42.
"""

import math
import sys


class Value:
    def __init__(self, data, _prev=(), _op="", _k=None):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._op = _op
        self._k = _k
        self._backward = self._apply

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad}, op={self._op!r})"

    def _apply(self):
        g, op = self.grad, self._op
        if op == "":
            return
        if op == "+":
            a, b = self._prev
            a.grad += g
            b.grad += g
        elif op == "-":
            a, b = self._prev
            a.grad += g
            b.grad -= g
        elif op == "*":
            a, b = self._prev
            a.grad += b.data * g
            b.grad += a.data * g
        elif op == "/":
            a, b = self._prev
            a.grad += g / b.data
            b.grad -= g * abs(a.data) / b.data ** 2
        elif op == "**":
            (a,) = self._prev
            a.grad += self._k * a.data ** (self._k - 1) * g
        elif op == "exp":
            (a,) = self._prev
            a.grad += self.data * g
        elif op == "log":
            (a,) = self._prev
            a.grad += g / a.data
        elif op == "tanh":
            (a,) = self._prev
            a.grad += (1.0 - self.data ** 2) * g
        elif op == "relu":
            (a,) = self._prev
            a.grad += g if a.data > 0 else 0.0
        elif op == "sigmoid":
            (a,) = self._prev
            a.grad += self.data * (1.0 - self.data) * g
        else:
            raise ValueError(f"no rule for {op!r}")

    @staticmethod
    def _v(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value._v(other)
        return Value(self.data + other.data, (self, other), "+")

    def __sub__(self, other):
        other = Value._v(other)
        return Value(self.data - other.data, (self, other), "-")

    def __mul__(self, other):
        other = Value._v(other)
        return Value(self.data * other.data, (self, other), "*")

    def __truediv__(self, other):
        other = Value._v(other)
        return Value(self.data / other.data, (self, other), "/")

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        return Value(self.data ** k, (self,), "**", k)

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def __rtruediv__(self, other):
        return Value(other) / self

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
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
        topo, visited = [], set()

        def visit(node):
            if node not in visited:
                visited.add(node)
                for parent in node._prev:
                    visit(parent)
                topo.append(node)

        visit(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()

    def zero_grad(self, _visited=None):
        visited = set() if _visited is None else _visited
        if self in visited:
            return
        visited.add(self)
        self.grad = 0.0
        for parent in self._prev:
            parent.zero_grad(visited)
