"""Style: np.add.reduce unbroadcast, composite Tensor (as in tensor/add_reduce_composite.py). One
bug: the added axes are reduced at the end (the last axes) instead of at the front.
The bug is at line 14.
"""

import numpy as np


def unbroadcast(grad, shape):
    grad = np.asarray(grad, dtype=np.float64)
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    if lead:
        grad = np.add.reduce(grad, axis=tuple(range(len(shape), grad.ndim)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = np.add.reduce(grad, axis=stretched, keepdims=True)
    return grad


class Tensor:
    def __init__(self, data, _children=(), _op=""):
        self.data = np.array(data, dtype=np.float64)
        self.grad = np.zeros(self.data.shape, dtype=np.float64)
        self._prev = tuple(_children)
        self._backward = lambda: None
        self._op = _op

    shape = property(lambda self: self.data.shape)

    def __repr__(self):
        return "Tensor(%r)" % (self.data,)

    def __add__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += unbroadcast(out.grad, self.data.shape)
            other.grad += unbroadcast(out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += unbroadcast(other.data * out.grad, self.data.shape)
            other.grad += unbroadcast(self.data * out.grad, other.data.shape)
        out._backward = _backward
        return out

    def __matmul__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data @ other.data, (self, other), "@")

        def _backward():
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other)

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def sum(self, axis=None, keepdims=False):
        out = Tensor(self.data.sum(axis=axis, keepdims=keepdims), (self,), "sum")

        def _backward():
            g = out.grad
            if axis is not None and not keepdims:
                g = np.expand_dims(g, axis)
            self.grad += np.broadcast_to(g, self.data.shape)
        out._backward = _backward
        return out

    def mean(self):
        return self.sum() * (1.0 / self.data.size)

    def relu(self):
        out = Tensor(np.where(self.data > 0, self.data, 0.0), (self,), "relu")

        def _backward():
            self.grad += np.where(self.data > 0, out.grad, 0.0)
        out._backward = _backward
        return out

    def exp(self):
        out = Tensor(np.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out

    def log(self):
        out = Tensor(np.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def backward(self, gradient=None):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node._prev if id(p) not in seen)
        self.grad = np.ones(self.data.shape) if gradient is None else np.array(gradient, dtype=np.float64)
        for node in reversed(order):
            node._backward()


def cross_entropy(logits, labels):
    y = np.asarray(labels, dtype=np.intp)
    n = y.size
    shifted = logits.data - np.max(logits.data, axis=1, keepdims=True)
    expd = np.exp(shifted)
    probs = expd / expd.sum(axis=1, keepdims=True)
    loss = -np.mean(shifted[np.arange(n), y] - np.log(expd.sum(axis=1)))
    out = Tensor(loss, (logits,), "cross_entropy")

    def _backward():
        d = probs.copy()
        d[np.arange(n), y] -= 1.0
        logits.grad += out.grad * d / n
    out._backward = _backward
    return out
