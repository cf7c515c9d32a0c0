"""Style: Kahn's-algorithm engine, frozenset parents (as in value/kahn_frozenset.py). One bug: `a
/ b` is computed as `exp(log a - log b)`, a math domain error (ValueError) whenever a or b is
negative or zero.
The bug is at line 44.
"""

import math
from collections import deque


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = frozenset(_children)
        self._backward = lambda: None
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return (self.log() - other.log()).exp()  # a / b = e^(log a - log b)

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        out = Value(self.data ** k, (self,), f"**{k}")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        out = Value(-self.data, (self,), "neg")

        def _backward():
            self.grad -= out.grad
        out._backward = _backward
        return out

    def __sub__(self, other):
        return self + other * -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return -self + other

    def __rmul__(self, other):
        return self * other

    def __rtruediv__(self, other):
        return self ** -1 * other

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def tanh(self):
        x = self.data
        e = math.exp(-2.0 * abs(x))
        t = (1.0 - e) / (1.0 + e)
        if x < 0:
            t = -t
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1.0 - t ** 2) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data * (self.data > 0), (self,), "relu")

        def _backward():
            self.grad += out.grad * (self.data > 0)
        out._backward = _backward
        return out

    def sigmoid(self):
        x = self.data
        e = math.exp(-abs(x))
        s = 1.0 / (1.0 + e) if x >= 0 else e / (1.0 + e)
        out = Value(s, (self,), "sigmoid")

        def _backward():
            self.grad += s * (1.0 - s) * out.grad
        out._backward = _backward
        return out

    def _nodes(self):
        nodes = {id(self): self}
        todo = deque([self])
        while todo:
            node = todo.popleft()
            for parent in node._prev:
                if id(parent) not in nodes:
                    nodes[id(parent)] = parent
                    todo.append(parent)
        return nodes

    def backward(self):
        nodes = self._nodes()
        consumers = dict.fromkeys(nodes, 0)
        for node in nodes.values():
            for parent in node._prev:
                consumers[id(parent)] += 1
        self.grad = 1.0
        ready = deque([self])
        while ready:
            node = ready.popleft()
            node._backward()
            for parent in node._prev:
                consumers[id(parent)] -= 1
                if consumers[id(parent)] == 0:
                    ready.append(parent)

    def zero_grad(self):
        for node in self._nodes().values():
            node.grad = 0.0
