"""A reverse-mode autograd engine over NumPy arrays: the `Tensor` class.

The same design as `value.py`, one level up: every node holds a float64 array, and every
backward rule is a whole-array operation. Everything here is complete except `unbroadcast`,
which the broadcasting operations (`+`, `-`, `*`) call to give each operand a gradient of its
own shape. Replace its `TODO` line and its `raise` with your code, then check your work from
the top of the kit with:

    pytest autograder

How backward() finds its order (a note; nothing here is yours to change, and it is not the
topological sort that value.py's backward() asks of you): every tensor takes a number as it
is made, so a tensor's number is larger than its parents'. backward() keeps the tensors it
has reached in a heap and always runs the newest one's rule next, so a tensor's rule runs
only after the rules of every tensor made from it. It reaches the root's own graph and
nothing else, and keeps no list of tensors: a graph lives as long as you hold on to it, and
a training loop frees each step's graph with the step.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


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

    _numbers = itertools.count()  # the one thing tensors share; next() on it is atomic in CPython

    def __init__(self, data: npt.ArrayLike, _parents: Sequence[Tensor] = (), _op: str = ""):
        self.data = np.array(data, dtype=np.float64)  # a copy, never an alias of the input
        self.grad = np.zeros(self.data.shape)
        self._prev = tuple(_parents)
        self._backward = lambda: None  # a leaf has nothing to pass on
        self._op = _op
        self._number = next(Tensor._numbers)  # larger than every parent's

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

    def backward(self, gradient: npt.ArrayLike | None = None) -> None:
        """Add d(self)/d(leaf) into the .grad of every leaf that self depends on.

        Sets self.grad to `gradient` (by default ones, which only a tensor of one entry may
        take, as in PyTorch), then runs the rule of every tensor of self's graph, newest first
        (the note at the top). A tensor in between gets its .grad afresh, from zero, each time;
        a leaf's .grad is never cleared, so it adds up across calls. The graph is kept:
        backward() may run through it again, from self or from a tensor made from it later.

        Raises RuntimeError when self has more than one entry and no `gradient` is given, or
        when `gradient` has another shape than self.
        """
        if gradient is None and self.data.size != 1:
            raise RuntimeError(f"tensor.py: backward() without a gradient needs a tensor of one entry, such "
                               f"as a loss, not one of shape {self.shape} (in PyTorch: grad can be "
                               f"implicitly created only for scalar outputs); call .sum() or .mean() on it "
                               f"first, or pass backward(gradient) an array of shape {self.shape}")
        seed = np.ones(self.shape) if gradient is None else np.array(gradient, dtype=np.float64)
        if seed.shape != self.shape:
            raise RuntimeError(f"tensor.py: backward(gradient) takes a gradient of the tensor's shape "
                               f"{self.shape}, not {seed.shape}")
        if not self._prev:  # a leaf: its gradient adds up, as every leaf's does
            self.grad += seed
            return
        self.grad = seed
        reached = {self}
        newest_first = [(-self._number, self)]  # a heap: the largest number comes out first
        while newest_first:
            _, tensor = heapq.heappop(newest_first)
            for parent in tensor._prev:
                if parent._prev and parent not in reached:  # a tensor in between, met the first time
                    reached.add(parent)
                    parent.grad = np.zeros(parent.data.shape)
                    heapq.heappush(newest_first, (-parent._number, parent))
            tensor._backward()


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
