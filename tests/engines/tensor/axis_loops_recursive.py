"""Style: `unbroadcast` with explicit Python loops over axes (one loop that sums the leading
axes broadcasting added, one that walks the operand's axes and sums every stretched size-1
axis, keeping it), inside a compact micrograd-like Tensor engine whose backward() builds the
topological order with a recursive depth-first search over a tuple of parents. Correct.
"""

import numpy as np


def unbroadcast(grad, shape):
    grad = np.asarray(grad, dtype=np.float64)
    shape = tuple(shape)
    for _ in range(grad.ndim - len(shape)):
        grad = grad.sum(axis=0)
    for axis in range(len(shape)):
        if shape[axis] == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def _t(x):
    return x if isinstance(x, Tensor) else Tensor(x)


class Tensor:
    def __init__(self, data, _prev=(), _op=""):
        self.data = np.array(data, dtype=np.float64)
        self.grad = np.zeros_like(self.data)
        self._prev = tuple(_prev)
        self._backward = lambda: None
        self._op = _op

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data!r})"

    def __add__(self, other):
        other = _t(other)
        out = Tensor(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad = self.grad + unbroadcast(out.grad, self.shape)
            other.grad = other.grad + unbroadcast(out.grad, other.shape)
        out._backward = _backward
        return out

    def __sub__(self, other):
        other = _t(other)
        out = Tensor(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad = self.grad + unbroadcast(out.grad, self.shape)
            other.grad = other.grad - unbroadcast(out.grad, other.shape)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = _t(other)
        out = Tensor(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad = self.grad + unbroadcast(out.grad * other.data, self.shape)
            other.grad = other.grad + unbroadcast(out.grad * self.data, other.shape)
        out._backward = _backward
        return out

    def __neg__(self):
        out = Tensor(-self.data, (self,), "neg")

        def _backward():
            self.grad = self.grad - out.grad
        out._backward = _backward
        return out

    def __matmul__(self, other):
        other = _t(other)
        out = Tensor(self.data @ other.data, (self, other), "@")

        def _backward():
            self.grad = self.grad + out.grad @ other.data.T
            other.grad = other.grad + self.data.T @ out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return Tensor(other) - self

    def __rmul__(self, other):
        return self * other

    def sum(self, axis=None, keepdims=False):
        out = Tensor(self.data.sum(axis=axis, keepdims=keepdims), (self,), "sum")

        def _backward():
            g = out.grad
            if axis is not None and not keepdims:
                g = np.expand_dims(g, axis)
            self.grad = self.grad + np.broadcast_to(g, self.shape)
        out._backward = _backward
        return out

    def mean(self):
        n = self.data.size
        out = Tensor(self.data.mean(), (self,), "mean")

        def _backward():
            self.grad = self.grad + np.full(self.shape, out.grad / n)
        out._backward = _backward
        return out

    def relu(self):
        out = Tensor(np.maximum(self.data, 0.0), (self,), "relu")

        def _backward():
            self.grad = self.grad + out.grad * (self.data > 0)
        out._backward = _backward
        return out

    def exp(self):
        out = Tensor(np.exp(self.data), (self,), "exp")

        def _backward():
            self.grad = self.grad + out.grad * out.data
        out._backward = _backward
        return out

    def log(self):
        out = Tensor(np.log(self.data), (self,), "log")

        def _backward():
            self.grad = self.grad + out.grad / self.data
        out._backward = _backward
        return out

    def backward(self, gradient=None):
        order, seen = [], set()

        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for parent in node._prev:
                    visit(parent)
                order.append(node)

        visit(self)
        if gradient is None:
            gradient = np.ones_like(self.data)
        self.grad = np.array(gradient, dtype=np.float64)
        for node in reversed(order):
            node._backward()


def cross_entropy(logits, labels):
    labels = np.asarray(labels, dtype=int)
    n = len(labels)
    z = logits.data - logits.data.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    out = Tensor(-logp[np.arange(n), labels].mean(), (logits,), "xent")

    def _backward():
        p = np.exp(logp)
        p[np.arange(n), labels] -= 1.0
        logits.grad = logits.grad + out.grad * p / n
    out._backward = _backward
    return out
