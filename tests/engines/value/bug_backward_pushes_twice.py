"""One bug, in the style of rule_callable_object.py: backward()'s iterative post-order keeps no
set of nodes already done, so a node reached along two paths is pushed, listed and its rule run
once per path. The order is topological (each listing after its parents'); the rule runs twice.
"""

import math


class Step:
    """What running a node's rule means: the node's operation, applied to the node."""

    def __init__(self, node):
        self.node = node

    def __call__(self):
        operation = self.node._operation
        if operation is not None:
            operation(self.node)


class RuleOf:
    """A descriptor: `node._backward` is a new Step each time it is read."""

    def __get__(self, node, owner=None):
        return self if node is None else Step(node)


class Operation:
    symbol = ""

    def __init__(self, *extra):
        self.extra = extra

    def __call__(self, node):
        raise NotImplementedError


class Add(Operation):
    symbol = "+"

    def __call__(self, node):
        for parent in node._prev:
            parent.grad += node.grad


class Sub(Operation):
    symbol = "-"

    def __call__(self, node):
        a, b = node._prev
        a.grad += node.grad
        b.grad += -node.grad


class Mul(Operation):
    symbol = "*"

    def __call__(self, node):
        a, b = node._prev
        a.grad += b.data * node.grad
        b.grad += a.data * node.grad


class Div(Operation):
    symbol = "/"

    def __call__(self, node):
        a, b = node._prev
        a.grad += node.grad / b.data
        b.grad += -a.data * node.grad / (b.data * b.data)


class Local(Operation):
    """A one-operand operation: extra holds its name and its local derivative f(out, x)."""

    @property
    def symbol(self):
        return self.extra[0]

    def __call__(self, node):
        (a,) = node._prev
        a.grad += self.extra[1](node.data, a.data) * node.grad


class Value:
    _backward = RuleOf()

    def __init__(self, data, _children=(), _op="", _operation=None):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_children)
        self._op = _op
        self._operation = _operation

    def __repr__(self):
        return f"Value({self.data}, grad={self.grad})"

    @classmethod
    def _made(cls, data, parents, operation):
        return cls(data, parents, operation.symbol, operation)

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value._made(self.data + other.data, (self, other), Add())

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value._made(self.data - other.data, (self, other), Sub())

    def __rsub__(self, other):
        return Value(other) - self

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value._made(self.data * other.data, (self, other), Mul())

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return Value._made(self.data / other.data, (self, other), Div())

    def __rtruediv__(self, other):
        return Value(other) / self

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        return Value._made(self.data ** k, (self,), Local(f"**{k}", lambda out, x: k * x ** (k - 1)))

    def __neg__(self):
        return Value._made(-self.data, (self,), Local("neg", lambda out, x: -1.0))

    def exp(self):
        return Value._made(math.exp(self.data), (self,), Local("exp", lambda out, x: out))

    def log(self):
        return Value._made(math.log(self.data), (self,), Local("log", lambda out, x: 1.0 / x))

    def tanh(self):
        return Value._made(math.tanh(self.data), (self,), Local("tanh", lambda out, x: 1.0 - out * out))

    def relu(self):
        return Value._made(max(self.data, 0.0), (self,), Local("relu", lambda out, x: float(x > 0)))

    def sigmoid(self):
        x = self.data
        s = 1.0 / (1.0 + math.exp(-x)) if x >= 0 else 1.0 - 1.0 / (1.0 + math.exp(x))
        return Value._made(s, (self,), Local("sigmoid", lambda out, x: out * (1.0 - out)))

    def backward(self):
        order, stack = [], [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            stack.append((node, True))  # the bug: no set of done nodes, so a node reached twice is pushed twice
            for parent in node._prev:
                stack.append((parent, False))
        self.grad = 1.0
        for node in reversed(order):
            node._backward()

    def zero_grad(self, _seen=None):
        seen = set() if _seen is None else _seen
        if id(self) in seen:
            return
        seen.add(id(self))
        self.grad = 0.0
        for parent in self._prev:
            parent.zero_grad(seen)
