"""Style: tutorial `while` unbroadcast, __slots__ Tensor (as in tensor/while_slots_kahn.py). One
bug: the size-1 axes are summed without keepdims=True, so they disappear: a (4, 1) operand gets
a (4,) gradient.
The bug is at line 17.
"""

from collections import deque

import numpy as np


def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1:
            grad = grad.sum(axis=i)
    return grad


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor(x)


class Tensor:
    __slots__ = ("data", "grad", "_prev", "_backward", "_op")

    def __init__(self, data, _prev=(), _op=""):
        self.data = np.array(data, dtype=np.float64)
        self.grad = np.zeros(self.data.shape)
        self._prev = tuple(_prev)
        self._backward = _leaf
        self._op = _op

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data})"

    def __add__(self, other):
        other = _tensor(other)
        out = Tensor(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(out.grad, other.shape)
        out._backward = _backward
        return out

    def __sub__(self, other):
        other = _tensor(other)
        out = Tensor(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(-out.grad, other.shape)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = _tensor(other)
        out = Tensor(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += unbroadcast(out.grad * other.data, self.shape)
            other.grad += unbroadcast(out.grad * self.data, other.shape)
        out._backward = _backward
        return out

    def __neg__(self):
        out = Tensor(-self.data, (self,), "neg")

        def _backward():
            self.grad += -out.grad
        out._backward = _backward
        return out

    def __matmul__(self, other):
        other = _tensor(other)
        out = Tensor(self.data @ other.data, (self, other), "@")

        def _backward():
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
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
            self.grad += np.broadcast_to(g, self.shape)
        out._backward = _backward
        return out

    def mean(self):
        out = Tensor(self.data.mean(), (self,), "mean")

        def _backward():
            self.grad += np.broadcast_to(out.grad / self.data.size, self.shape)
        out._backward = _backward
        return out

    def relu(self):
        out = Tensor(np.maximum(self.data, 0), (self,), "relu")

        def _backward():
            self.grad += out.grad * (self.data > 0)
        out._backward = _backward
        return out

    def exp(self):
        out = Tensor(np.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.grad * out.data
        out._backward = _backward
        return out

    def log(self):
        out = Tensor(np.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data
        out._backward = _backward
        return out

    def backward(self, gradient=None):
        nodes, todo = {id(self): self}, [self]
        while todo:
            for parent in todo.pop()._prev:
                if id(parent) not in nodes:
                    nodes[id(parent)] = parent
                    todo.append(parent)
        waiting = dict.fromkeys(nodes, 0)
        for node in nodes.values():
            for parent in set(map(id, node._prev)):
                waiting[parent] += 1
        self.grad = np.ones(self.shape) if gradient is None else np.asarray(gradient, dtype=np.float64)
        ready = deque([self])
        while ready:
            node = ready.popleft()
            node._backward()
            for parent in set(map(id, node._prev)):
                waiting[parent] -= 1
                if waiting[parent] == 0:
                    ready.append(nodes[parent])


def _leaf():
    pass


def cross_entropy(logits, labels):
    labels = np.asarray(labels, dtype=np.intp)
    n = len(labels)
    shifted = logits.data - logits.data.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    out = Tensor(-logp[np.arange(n), labels].sum() / n, (logits,), "ce")

    def _backward():
        g = np.exp(logp)
        g[np.arange(n), labels] -= 1
        logits.grad += g * (out.grad / n)
    out._backward = _backward
    return out
