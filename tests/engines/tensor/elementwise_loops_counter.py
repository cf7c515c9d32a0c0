"""Style: `unbroadcast` written element by element, as a student who does not trust NumPy's
axis arguments writes it: make a zero array of the operand's shape and, for every index of the
gradient (`np.ndindex`), add the entry into the operand's entry it was copied from (drop the
leading indices, use 0 on size-1 axes). Slow but correct. The Tensor engine orders its reverse
pass by a creation counter (reachable tensors sorted by serial number, newest first). Correct.
"""

import itertools

import numpy as np


def unbroadcast(grad, shape):
    grad = np.asarray(grad, dtype=np.float64)
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    result = np.zeros(shape)
    for index in np.ndindex(*grad.shape):
        target = tuple(0 if size == 1 else i for i, size in zip(index[lead:], shape))
        result[target] += grad[index]
    return result


class Tensor:
    _serial = itertools.count()

    def __init__(self, data, _prev=(), _op=""):
        self.data = np.array(data, dtype=np.float64)
        self.grad = np.zeros(self.data.shape)
        self._prev = tuple(_prev)
        self._backward = lambda: None
        self._op = _op
        self._n = next(Tensor._serial)

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data})"

    @staticmethod
    def _wrap(x):
        return x if isinstance(x, Tensor) else Tensor(x)

    def __add__(self, other):
        other = Tensor._wrap(other)
        out = Tensor(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(out.grad, other.shape)
        out._backward = _backward
        return out

    def __sub__(self, other):
        other = Tensor._wrap(other)
        out = Tensor(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad -= unbroadcast(out.grad, other.shape)
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = Tensor._wrap(other)
        out = Tensor(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += unbroadcast(out.grad * other.data, self.shape)
            other.grad += unbroadcast(out.grad * self.data, other.shape)
        out._backward = _backward
        return out

    def __neg__(self):
        out = Tensor(-self.data, (self,), "neg")

        def _backward():
            self.grad -= out.grad
        out._backward = _backward
        return out

    def __matmul__(self, other):
        other = Tensor._wrap(other)
        out = Tensor(self.data @ other.data, (self, other), "@")

        def _backward():
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return Tensor._wrap(other) + self

    def __rsub__(self, other):
        return Tensor._wrap(other) - self

    def __rmul__(self, other):
        return Tensor._wrap(other) * self

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
            self.grad += out.grad / self.data.size
        out._backward = _backward
        return out

    def relu(self):
        out = Tensor(np.maximum(self.data, 0.0), (self,), "relu")

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
        found, todo = {id(self): self}, [self]
        while todo:
            for parent in todo.pop()._prev:
                if id(parent) not in found:
                    found[id(parent)] = parent
                    todo.append(parent)
        self.grad = np.ones(self.shape) if gradient is None else np.array(gradient, dtype=np.float64)
        for node in sorted(found.values(), key=lambda t: t._n, reverse=True):
            node._backward()


def cross_entropy(logits, labels):
    labels = np.asarray(labels, dtype=np.intp)
    n = labels.shape[0]
    m = logits.data.max(axis=1, keepdims=True)
    e = np.exp(logits.data - m)
    p = e / e.sum(axis=1, keepdims=True)
    out = Tensor(-np.log(p[np.arange(n), labels]).mean(), (logits,), "cross_entropy")

    def _backward():
        g = p.copy()
        g[np.arange(n), labels] -= 1.0
        logits.grad += out.grad * g / n
    out._backward = _backward
    return out
