"""Style: creation-counter engine, list parents (as in value/list_counter_order.py). One bug:
`__mul__`'s rule assigns (`=`) each operand's share instead of adding it (`+=`), so a value
used twice keeps one contribution.
The bug is at lines 56-57.
"""

import itertools
import math


class Value:
    _serial = itertools.count()

    def __init__(self, data, _parents=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = list(_parents)
        self._backward = lambda: None
        self._op = _op
        self._n = next(Value._serial)

    def __repr__(self):
        return f"Value({self.data!r}, grad={self.grad!r})"

    @staticmethod
    def _lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value._lift(other)
        out = Value(self.data + other.data, [self, other], "+")

        def rule():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = rule
        return out

    def __sub__(self, other):
        other = Value._lift(other)
        out = Value(self.data - other.data, [self, other], "-")

        def rule():
            self.grad += out.grad
            other.grad -= out.grad

        out._backward = rule
        return out

    def __mul__(self, other):
        other = Value._lift(other)
        out = Value(self.data * other.data, [self, other], "*")

        def rule():
            self.grad = other.data * out.grad
            other.grad = self.data * out.grad

        out._backward = rule
        return out

    def __truediv__(self, other):
        other = Value._lift(other)
        out = Value(self.data / other.data, [self, other], "/")

        def rule():
            self.grad += out.grad / other.data
            other.grad += -self.data / (other.data * other.data) * out.grad

        out._backward = rule
        return out

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        out = Value(self.data ** k, [self], f"**{k}")

        def rule():
            self.grad += k * self.data ** (k - 1) * out.grad

        out._backward = rule
        return out

    def __neg__(self):
        out = Value(-self.data, [self], "neg")

        def rule():
            self.grad -= out.grad

        out._backward = rule
        return out

    def __radd__(self, other):
        return Value._lift(other) + self

    def __rsub__(self, other):
        return Value._lift(other) - self

    def __rmul__(self, other):
        return Value._lift(other) * self

    def __rtruediv__(self, other):
        return Value._lift(other) / self

    def exp(self):
        out = Value(math.exp(self.data), [self], "exp")

        def rule():
            self.grad += out.data * out.grad

        out._backward = rule
        return out

    def log(self):
        out = Value(math.log(self.data), [self], "log")

        def rule():
            self.grad += out.grad / self.data

        out._backward = rule
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), [self], "tanh")

        def rule():
            self.grad += (1.0 - out.data ** 2) * out.grad

        out._backward = rule
        return out

    def relu(self):
        out = Value(max(0, self.data), [self], "relu")

        def rule():
            if self.data > 0:
                self.grad += out.grad

        out._backward = rule
        return out

    def sigmoid(self):
        z = math.exp(-abs(self.data))
        s = 1.0 / (1.0 + z) if self.data >= 0 else z / (1.0 + z)
        out = Value(s, [self], "sigmoid")

        def rule():
            self.grad += out.data * (1.0 - out.data) * out.grad

        out._backward = rule
        return out

    def _reachable(self):
        found = {id(self): self}
        work = [self]
        while work:
            node = work.pop()
            for parent in node._prev:
                if id(parent) not in found:
                    found[id(parent)] = parent
                    work.append(parent)
        return found.values()

    def backward(self):
        nodes = sorted(self._reachable(), key=lambda v: v._n, reverse=True)
        self.grad = 1.0
        for node in nodes:
            node._backward()

    def zero_grad(self):
        for node in self._reachable():
            node.grad = 0.0
