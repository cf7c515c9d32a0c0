"""One bug, in the style of rule_partial_property.py: relu returns its input itself where the
input is positive, and a fresh constant `Value(0.0)` where it is not. Every value and every
gradient of one backward() is right; but a unit shut for a whole batch is cut out of the graph,
so zero_grad() on the loss never reaches the weights behind it, and the stale gradients of a
step it was open in move them again.
"""

import functools
import math
from collections import deque


def _push(node):
    for parent, local in zip(node._prev, node._locals):
        parent.grad += local * node.grad


class Value:
    def __init__(self, data, _children=(), _op="", _locals=()):
        self.data = float(data)
        self.grad = 0.0
        self._prev = list(_children)
        self._op = _op
        self._locals = tuple(_locals)

    @property
    def _backward(self):
        return functools.partial(_push, self)

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    @staticmethod
    def _as_value(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value._as_value(other)
        return Value(self.data + other.data, [self, other], "+", (1.0, 1.0))

    def __mul__(self, other):
        other = Value._as_value(other)
        return Value(self.data * other.data, [self, other], "*", (other.data, self.data))

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        return Value(self.data ** k, [self], f"**{k}", (k * self.data ** (k - 1),))

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + Value._as_value(other) * -1

    def __truediv__(self, other):
        return self * Value._as_value(other) ** -1

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return self * -1 + other

    def __rtruediv__(self, other):
        return self ** -1 * other

    def exp(self):
        e = math.exp(self.data)
        return Value(e, [self], "exp", (e,))

    def log(self):
        return Value(math.log(self.data), [self], "log", (1.0 / self.data,))

    def tanh(self):
        t = math.tanh(self.data)
        return Value(t, [self], "tanh", (1.0 - t * t,))

    def relu(self):
        if self.data > 0:
            return self  # the bug: an open unit is its input itself ...
        return Value(0.0)  # ... and a shut one a fresh constant, cut out of the graph

    def sigmoid(self):
        x = self.data
        s = 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
        return Value(s, [self], "sigmoid", (s * (1.0 - s),))

    def backward(self):
        consumers, seen, stack = {}, {id(self)}, [self]
        while stack:
            node = stack.pop()
            for parent in node._prev:
                consumers[id(parent)] = consumers.get(id(parent), 0) + 1
                if id(parent) not in seen:
                    seen.add(id(parent))
                    stack.append(parent)
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
        seen, queue = {id(self)}, deque([self])
        while queue:
            node = queue.popleft()
            node.grad = 0.0
            for parent in node._prev:
                if id(parent) not in seen:
                    seen.add(id(parent))
                    queue.append(parent)
