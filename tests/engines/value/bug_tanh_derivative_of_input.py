"""Style: height-ordered engine (as in value/height_order.py). One bug: tanh's rule uses the
input, `1 - x**2`, instead of the output, `1 - t**2`.
The bug is at line 94.
"""

import math


class Value:
    def __init__(self, data, _prev=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._backward = lambda: None
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def _out(self, data, parents, op, rule):
        out = Value(data, parents, op)
        out._backward = lambda: rule(out.grad)
        return out

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)

        def rule(g):
            self.grad += g
            other.grad += g
        return self._out(self.data + other.data, (self, other), "+", rule)

    def __sub__(self, other):
        other = other if isinstance(other, Value) else Value(other)

        def rule(g):
            self.grad += g
            other.grad -= g
        return self._out(self.data - other.data, (self, other), "-", rule)

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)

        def rule(g):
            self.grad += other.data * g
            other.grad += self.data * g
        return self._out(self.data * other.data, (self, other), "*", rule)

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented

        def rule(g):
            self.grad += k * self.data ** (k - 1) * g
        return self._out(self.data ** k, (self,), f"**{k}", rule)

    def __neg__(self):
        def rule(g):
            self.grad -= g
        return self._out(-self.data, (self,), "neg", rule)

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return self * other ** -1

    def __rtruediv__(self, other):
        return Value(other) * self ** -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return Value(other) - self

    def __rmul__(self, other):
        return self * other

    def exp(self):
        e = math.exp(self.data)

        def rule(g):
            self.grad += e * g
        return self._out(e, (self,), "exp", rule)

    def log(self):
        def rule(g):
            self.grad += g / self.data
        return self._out(math.log(self.data), (self,), "log", rule)

    def tanh(self):
        t = math.tanh(self.data)

        def rule(g):
            self.grad += g * (1 - self.data ** 2)
        return self._out(t, (self,), "tanh", rule)

    def relu(self):
        positive = self.data > 0

        def rule(g):
            if positive:
                self.grad += g
        return self._out(self.data if positive else 0.0, (self,), "relu", rule)

    def sigmoid(self):
        x = self.data
        s = 1 / (1 + math.exp(-x)) if x >= 0 else 1 - 1 / (1 + math.exp(x))

        def rule(g):
            self.grad += g * s * (1 - s)
        return self._out(s, (self,), "sigmoid", rule)

    def _heights(self):
        heights, nodes = {}, {}

        def height(node):
            key = id(node)
            if key not in heights:
                nodes[key] = node
                heights[key] = 1 + max((height(p) for p in node._prev), default=-1)
            return heights[key]

        height(self)
        return heights, nodes

    def backward(self):
        heights, nodes = self._heights()
        self.grad = 1.0
        for key in sorted(heights, key=heights.get, reverse=True):
            nodes[key]._backward()

    def zero_grad(self):
        _, nodes = self._heights()
        for node in nodes.values():
            node.grad = 0.0
