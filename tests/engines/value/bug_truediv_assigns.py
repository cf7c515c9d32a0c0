"""Style: __slots__ / NumPy-scalar engine, primitive `/` (as in value/slots_numpy_stable.py). One
bug: `/`'s rule assigns (`=`) the numerator's share instead of adding it.
The bug is at line 61.
"""

import numpy as np


class Value:
    __slots__ = ("data", "grad", "_prev", "_backward", "_op")
    __array_ufunc__ = None  # a NumPy scalar on the left hands the operation to us

    def __init__(self, data, _prev=(), _op=""):
        self.data = np.float64(data)
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._backward = _nothing
        self._op = _op

    def __repr__(self):
        return f"Value(data={float(self.data)}, grad={float(self.grad)})"

    def __add__(self, other):
        other = _as_value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __sub__(self, other):
        other = _as_value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += out.grad
            other.grad += -out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = _as_value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __truediv__(self, other):
        other = _as_value(other)
        out = Value(self.data / other.data, (self, other), "/")

        def _backward():
            self.grad = out.grad / other.data
            other.grad += -out.data / other.data * out.grad  # -(a/b)/b = -a/b**2

        out._backward = _backward
        return out

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        out = Value(self.data ** k, (self,), f"**{k}")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad

        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return (-self) + other

    def __rmul__(self, other):
        return self * other

    def __rtruediv__(self, other):
        return _as_value(other) / self

    def exp(self):
        out = Value(np.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out

    def log(self):
        out = Value(np.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def tanh(self):
        e = np.exp(-2.0 * abs(self.data))
        t = np.sign(self.data) * (1.0 - e) / (1.0 + e)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1.0 - t * t) * out.grad

        out._backward = _backward
        return out

    def relu(self):
        out = Value(np.maximum(self.data, 0.0), (self,), "relu")

        def _backward():
            self.grad += (self.data > 0) * out.grad

        out._backward = _backward
        return out

    def sigmoid(self):
        e = np.exp(-abs(self.data))
        s = np.where(self.data >= 0, 1.0 / (1.0 + e), e / (1.0 + e))[()]
        out = Value(s, (self,), "sigmoid")

        def _backward():
            self.grad += s * (1.0 - s) * out.grad

        out._backward = _backward
        return out

    def backward(self):
        order, seen = [], {id(self)}
        stack = [(self, iter(self._prev))]
        while stack:
            node, parents = stack[-1]
            for parent in parents:
                if id(parent) not in seen:
                    seen.add(id(parent))
                    stack.append((parent, iter(parent._prev)))
                    break
            else:
                stack.pop()
                order.append(node)
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


def _nothing():
    pass


def _as_value(x):
    return x if isinstance(x, Value) else Value(x)
