"""A reverse-mode autograd engine over NumPy arrays: the `Tensor` class.

The same design as `value.py`, one level up: every node holds a float64 array and every
backward rule is a whole-array operation. The reverse pass is organised differently, as a
tape: every tensor is recorded as it is made, and backward() runs the tape back once,
newest first, then starts a new one (a training step builds a new graph each time, and
zeroes its parameters' gradients itself). Everything here is complete except
`unbroadcast`, which the broadcasting operations (`+`, `-`, `*`) call to give each operand
a gradient of its own shape. Replace its `TODO` line and its `raise` with your code, then
check your work from the top of the kit with:

    pytest autograder
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

# Every tensor made since the last backward(), in the order made.
TAPE: list[Tensor] = []


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` (the shape of a broadcast result) down to `shape` (one operand's shape).

    A broadcast operand was copied into many output entries, so its gradient is the sum of
    theirs. Undo the two ways broadcasting stretches a shape: first sum away the leading
    axes it added (shapes line up from the right), then sum every axis where `shape` has
    size 1 with keepdims=True, so those size-1 axes stay. `shape` may be `()`, a scalar
    operand. Return an array whose shape is exactly `shape`.
    """
    # BEGIN SOLUTION tensor.unbroadcast: undo broadcasting in two steps
    grad = np.asarray(grad)
    added = grad.ndim - len(shape)
    if added > 0:
        grad = grad.sum(axis=tuple(range(added)))
    stretched = tuple(axis for axis, size in enumerate(shape) if size == 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad
    # END SOLUTION


class Tensor:
    """A float64 array that records how it was computed, so gradients can flow back."""

    def __init__(self, data: npt.ArrayLike, _parents: Sequence[Tensor] = (), _op: str = ""):
        self.data = np.array(data, dtype=np.float64)  # a copy, never an alias of the input
        self.grad = np.zeros_like(self.data)
        self._prev = tuple(_parents)
        self._backward = lambda: None  # a leaf has nothing to pass on
        self._op = _op
        TAPE.append(self)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape}, data={self.data!r})"

    def __add__(self, other: Tensor | npt.ArrayLike) -> Tensor:
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(out.grad, other.shape)

        out._backward = _backward
        return out

    def __sub__(self, other: Tensor | npt.ArrayLike) -> Tensor:
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data - other.data, (self, other), "-")

        def _backward() -> None:
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(-out.grad, other.shape)

        out._backward = _backward
        return out

    def __mul__(self, other: Tensor | npt.ArrayLike) -> Tensor:
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += unbroadcast(out.grad * other.data, self.shape)
            other.grad += unbroadcast(out.grad * self.data, other.shape)

        out._backward = _backward
        return out

    def __neg__(self) -> Tensor:
        out = Tensor(-self.data, (self,), "neg")

        def _backward() -> None:
            self.grad += -out.grad

        out._backward = _backward
        return out

    def __matmul__(self, other: Tensor | npt.ArrayLike) -> Tensor:
        """Matrix product of two 2-D tensors."""
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data @ other.data, (self, other), "@")

        def _backward() -> None:
            self.grad += out.grad @ other.data.T
            other.grad += self.data.T @ out.grad

        out._backward = _backward
        return out

    # The reflected forms: Python calls these for `2 + t`, `1 - t`, `2 * t`.
    def __radd__(self, other: npt.ArrayLike) -> Tensor:
        return self + other

    def __rsub__(self, other: npt.ArrayLike) -> Tensor:
        return Tensor(other) - self

    def __rmul__(self, other: npt.ArrayLike) -> Tensor:
        return self * other

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        out = Tensor(self.data.sum(axis=axis, keepdims=keepdims), (self,), "sum")

        def _backward() -> None:
            grad = out.grad
            if axis is not None and not keepdims:
                grad = np.expand_dims(grad, axis)  # put back the axes the sum removed
            self.grad += np.broadcast_to(grad, self.shape)  # each summed entry had derivative 1

        out._backward = _backward
        return out

    def mean(self) -> Tensor:
        """The mean of all entries, as a 0-d tensor."""
        out = Tensor(self.data.mean(), (self,), "mean")

        def _backward() -> None:
            self.grad += out.grad / self.data.size

        out._backward = _backward
        return out

    def relu(self) -> Tensor:
        out = Tensor(np.maximum(self.data, 0.0), (self,), "relu")

        def _backward() -> None:
            self.grad += out.grad * (self.data > 0)

        out._backward = _backward
        return out

    def exp(self) -> Tensor:
        out = Tensor(np.exp(self.data), (self,), "exp")

        def _backward() -> None:
            self.grad += out.grad * out.data

        out._backward = _backward
        return out

    def log(self) -> Tensor:
        out = Tensor(np.log(self.data), (self,), "log")

        def _backward() -> None:
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def backward(self) -> None:
        """Fill in d(self)/d(node) for every tensor made since the previous backward().

        Each tensor is made after its parents, so the tape run newest first is a correct
        order. The tape is used up: the tensors of a graph that backward() already ran back
        pass nothing on again; a new forward pass records a new graph. Leaves made earlier
        (parameters) keep adding up what they receive.
        """
        self.grad = np.ones_like(self.data)
        recorded = TAPE[:]
        TAPE.clear()
        for node in reversed(recorded):
            node._backward()


def cross_entropy(logits: Tensor, labels: Sequence[int] | np.ndarray) -> Tensor:
    """Mean softmax cross-entropy of logits (n, K) against integer labels (n,), one node.

    Fused for stability and size: the row maximum is subtracted before exp, and the
    gradient with respect to the logits is (P - Y) / n, softmax minus one-hot.
    """
    labels = np.asarray(labels, dtype=np.intp)
    rows = np.arange(len(labels))
    shifted = logits.data - logits.data.max(axis=1, keepdims=True)  # exp of at most 0
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    out = Tensor(-log_probs[rows, labels].mean(), (logits,), "cross_entropy")

    def _backward() -> None:
        residual = np.exp(log_probs)
        residual[rows, labels] -= 1.0
        logits.grad += out.grad * residual / len(labels)

    out._backward = _backward
    return out
