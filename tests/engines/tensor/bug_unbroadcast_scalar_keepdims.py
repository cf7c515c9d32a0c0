"""One bug, in the style of keepdims_reshape_tape.py: unbroadcast pads the shape and sums every
stretched axis with keepdims=True, then reshapes to the operand's shape, except for a scalar
operand, whose gradient it returns as summed: every axis kept as size 1, `(1, 1)` for `()`.
"""

import numpy as np


def unbroadcast(grad, shape):
    grad = np.asarray(grad, dtype=np.float64)
    shape = tuple(shape)
    padded = (1,) * (grad.ndim - len(shape)) + shape
    axes = tuple(i for i, (have, want) in enumerate(zip(grad.shape, padded)) if want == 1 and have != 1)
    summed = grad.sum(axis=axes, keepdims=True)
    if not shape:
        return summed  # the bug: a scalar operand's gradient keeps its summed axes, (1, 1) for ()
    return summed.reshape(shape)


class Tensor:
    def __init__(self, data, _prev=(), _op=""):
        self.data = np.array(data, dtype=np.float64)
        self.grad = np.zeros(self.data.shape)
        self._prev = tuple(_prev)
        self._backward = lambda: None
        self._op = _op
        tape, seen = [], set()
        for parent in self._prev:
            for node in parent._tape:
                if id(node) not in seen:
                    seen.add(id(node))
                    tape.append(node)
        if self._prev:
            tape.append(self)
        self._tape = tape

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor(shape={self.shape})"

    @staticmethod
    def _lift(x):
        return x if isinstance(x, Tensor) else Tensor(x)

    def _binary(self, other, data, op, rule):
        other = Tensor._lift(other)
        out = Tensor(data(self.data, other.data), (self, other), op)
        out._backward = lambda: rule(self, other, out)
        return out

    def __add__(self, other):
        def rule(a, b, out):
            a.grad += unbroadcast(out.grad, a.shape)
            b.grad += unbroadcast(out.grad, b.shape)
        return self._binary(other, np.add, "+", rule)

    def __sub__(self, other):
        def rule(a, b, out):
            a.grad += unbroadcast(out.grad, a.shape)
            b.grad -= unbroadcast(out.grad, b.shape)
        return self._binary(other, np.subtract, "-", rule)

    def __mul__(self, other):
        def rule(a, b, out):
            a.grad += unbroadcast(out.grad * b.data, a.shape)
            b.grad += unbroadcast(out.grad * a.data, b.shape)
        return self._binary(other, np.multiply, "*", rule)

    def __matmul__(self, other):
        def rule(a, b, out):
            a.grad += out.grad @ b.data.T
            b.grad += a.data.T @ out.grad
        return self._binary(other, np.matmul, "@", rule)

    def __neg__(self):
        out = Tensor(-self.data, (self,), "neg")

        def rule():
            self.grad -= out.grad
        out._backward = rule
        return out

    def __radd__(self, other):
        return Tensor._lift(other) + self

    def __rsub__(self, other):
        return Tensor._lift(other) - self

    def __rmul__(self, other):
        return Tensor._lift(other) * self

    def sum(self, axis=None, keepdims=False):
        out = Tensor(self.data.sum(axis=axis, keepdims=keepdims), (self,), "sum")

        def rule():
            g = out.grad if keepdims or axis is None else np.expand_dims(out.grad, axis)
            self.grad += g  # broadcasts back over the summed axes
        out._backward = rule
        return out

    def mean(self):
        out = Tensor(self.data.mean(), (self,), "mean")

        def rule():
            self.grad += out.grad / self.data.size
        out._backward = rule
        return out

    def relu(self):
        mask = self.data > 0
        out = Tensor(self.data * mask, (self,), "relu")

        def rule():
            self.grad += out.grad * mask
        out._backward = rule
        return out

    def exp(self):
        out = Tensor(np.exp(self.data), (self,), "exp")

        def rule():
            self.grad += out.grad * out.data
        out._backward = rule
        return out

    def log(self):
        out = Tensor(np.log(self.data), (self,), "log")

        def rule():
            self.grad += out.grad / self.data
        out._backward = rule
        return out

    def backward(self, gradient=None):
        seed = np.ones(self.shape) if gradient is None else np.array(gradient, dtype=np.float64)
        self.grad = seed
        for node in reversed(self._tape):
            node._backward()


def cross_entropy(logits, labels):
    labels = np.asarray(labels).astype(np.intp)
    rows = np.arange(labels.shape[0])
    top = logits.data.max(axis=1, keepdims=True)
    logsumexp = top + np.log(np.exp(logits.data - top).sum(axis=1, keepdims=True))
    log_probs = logits.data - logsumexp
    out = Tensor(-log_probs[rows, labels].mean(), (logits,), "cross_entropy")

    def rule():
        grad = np.exp(log_probs)
        grad[rows, labels] -= 1.0
        logits.grad += out.grad * grad / labels.shape[0]
    out._backward = rule
    return out
