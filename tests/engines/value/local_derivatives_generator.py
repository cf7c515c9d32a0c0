"""Style: "local derivatives at forward time". Each operation returns its value together with
the partial derivatives with respect to each parent, and one generic closure (made by `_node`)
applies the chain rule, `parent.grad += local * out.grad`, for every (parent, local) pair, so
`x * x` lists x twice with two locals. The topological order comes from a recursive generator
(`yield from`) over a tuple of parents, with visited ids in a set. The given operations are
composed micrograd's way: `-b` is `b * -1`, `a - b` is `a + (-b)`, `a / b` is `a * b**-1`, and
the reflected forms swap (`k - v` is `k + (-v)`, `k / v` is `k * v**-1`). zero_grad walks the
same generator. Correct.
"""

import math


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_children)
        self._backward = lambda: None
        self._op = _op

    def __repr__(self):
        return f"Value({self.data}, grad={self.grad})"


def _node(data, parents, locals_, op):
    out = Value(data, parents, op)

    def _backward():
        for parent, local in zip(parents, locals_):
            parent.grad += local * out.grad

    out._backward = _backward
    return out


def _wrap(x):
    return x if isinstance(x, Value) else Value(x)


def _add(self, other):
    other = _wrap(other)
    return _node(self.data + other.data, (self, other), (1.0, 1.0), "+")


def _mul(self, other):
    other = _wrap(other)
    return _node(self.data * other.data, (self, other), (other.data, self.data), "*")


def _pow(self, k):
    if not isinstance(k, (int, float)):
        return NotImplemented
    return _node(self.data ** k, (self,), (k * self.data ** (k - 1),), f"**{k}")


def _exp(self):
    e = math.exp(self.data)
    return _node(e, (self,), (e,), "exp")


def _log(self):
    return _node(math.log(self.data), (self,), (1.0 / self.data,), "log")


def _tanh(self):
    t = math.tanh(self.data)
    return _node(t, (self,), (1.0 - t * t,), "tanh")


def _relu(self):
    on = self.data > 0
    return _node(self.data if on else 0.0, (self,), (1.0 if on else 0.0,), "relu")


def _sigmoid(self):
    x = self.data
    s = 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
    return _node(s, (self,), (s * (1.0 - s),), "sigmoid")


def _walk(node, seen):
    if id(node) in seen:
        return
    seen.add(id(node))
    for parent in node._prev:
        yield from _walk(parent, seen)
    yield node


def _backward_pass(self):
    order = list(_walk(self, set()))
    self.grad = 1.0
    for node in reversed(order):
        node._backward()


def _zero_grad(self):
    for node in _walk(self, set()):
        node.grad = 0.0


Value.__add__ = _add
Value.__mul__ = _mul
Value.__pow__ = _pow
Value.exp = _exp
Value.log = _log
Value.tanh = _tanh
Value.relu = _relu
Value.sigmoid = _sigmoid
Value.backward = _backward_pass
Value.zero_grad = _zero_grad
Value.__neg__ = lambda self: self * -1
Value.__sub__ = lambda self, other: self + (-other)
Value.__truediv__ = lambda self, other: self * other ** -1
Value.__radd__ = lambda self, other: self + other
Value.__rmul__ = lambda self, other: self * other
Value.__rsub__ = lambda self, other: other + (-self)
Value.__rtruediv__ = lambda self, other: other * self ** -1
