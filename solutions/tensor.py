"""A reverse-mode autograd engine over NumPy arrays: the `Tensor` class.

The same design as `value.py`, one level up: every node holds a float64 array and every
backward rule is a whole-array operation. The order of the reverse pass comes from tapes,
not from a search of the graph. Every tensor takes a number as it is made; a tensor is made
after its parents, so in order of number each tensor comes after its parents. A leaf (a
tensor you make from data) has no tape. A tensor made by an operation appends itself to its
parents' tape; to a new one when none of them has a tape; and to a new one that merges
theirs by number when they have different tapes. backward() runs the root's tape back from
the root and runs the rule of each tensor the root reaches through parents, so it runs the
root's own graph and nothing else. A tape keeps order, not tensors: it holds weak
references, so a graph lives as long as you use it.

Everything here is complete except `unbroadcast`, which the broadcasting operations (`+`,
`-`, `*`) call to give each operand a gradient of its own shape. Replace its `TODO` line and
its `raise` with your code, then check your work from the top of the kit with:

    pytest autograder
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import weakref
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


def _tape_for(parents: tuple[Tensor, ...]) -> list[tuple[int, weakref.ref[Tensor]]]:
    """The tape that a tensor made from `parents` appends itself to: their one tape, a new one
    when none of them has a tape, or their different tapes merged in order of number (which
    costs the size of both, when their tensors were made in turns)."""
    tapes = list({id(p._tape): p._tape for p in parents if p._tape is not None}.values())
    if len(tapes) < 2:
        return tapes[0] if tapes else []
    tapes.sort(key=lambda tape: tape[0][0])
    if all(older[-1][0] < newer[0][0] for older, newer in zip(tapes, tapes[1:])):
        # Graphs built one after another (a running total): the oldest tape takes the others,
        # so adding up many losses costs the size of each, not of all so far.
        for newer in tapes[1:]:
            tapes[0].extend(newer)
        return tapes[0]
    merged: list[tuple[int, weakref.ref[Tensor]]] = []
    for entry in heapq.merge(*tapes):  # each tape is in order of number already
        if not merged or merged[-1][0] < entry[0]:  # a tensor on two tapes goes on once
            merged.append(entry)
    return merged


class Tensor:
    """A float64 array that records how it was computed, so gradients can flow back.

    Threads may build and run graphs at once if no tensor made by an operation is in two of
    them, and no two backward() calls add into one leaf's .grad at the same time: each graph's
    tape and gradients are its own, and the one thing all tensors share, the counter of
    numbers, counts atomically under CPython's GIL.
    """

    _numbers = itertools.count()  # a tensor's number is larger than its parents'

    def __init__(self, data: npt.ArrayLike, _parents: Sequence[Tensor] = (), _op: str = ""):
        self.data = np.array(data, dtype=np.float64)  # a copy, never an alias of the input
        self.grad = np.zeros(self.data.shape)
        self._prev = tuple(_parents)
        self._backward = lambda: None  # a leaf has nothing to pass on
        self._op = _op
        self._number = next(Tensor._numbers)
        self._tape = None  # a leaf has no tape
        if self._prev:
            self._tape = _tape_for(self._prev)
            self._tape.append((self._number, weakref.ref(self)))

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
        take, as in PyTorch), then runs self's tape from self back to its oldest tensor. The
        rule of a tensor runs only if self reaches it: self does, and so do the parents of a
        tensor whose rule runs. A tensor in between gets its .grad afresh, from zero, the
        first time it is reached; a leaf's .grad is never cleared, so it adds up across calls.
        The graph is kept, not used up: backward() may run through it again, from self or
        from any tensor made from it later. Entries of tensors freed since leave the tape.

        Raises RuntimeError when self has more than one entry and no `gradient` is given, or
        when `gradient` has another shape than self.
        """
        if gradient is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"tensor.py: backward() without a gradient needs a tensor of one entry, such "
                    f"as a loss, not one of shape {self.shape} (in PyTorch: grad can be implicitly "
                    f"created only for scalar outputs); call .sum() or .mean() on it first, or "
                    f"pass backward(gradient) an array of shape {self.shape}")
            seed = np.ones(self.data.shape)
        else:
            seed = np.array(gradient, dtype=np.float64)
            if seed.shape != self.shape:
                raise RuntimeError(f"tensor.py: backward(gradient) takes a gradient of the tensor's "
                                   f"shape {self.shape}, not {seed.shape}")
        if self._tape is None:  # a leaf: its gradient adds up, as every leaf's does
            self.grad += seed
            return
        self.grad = seed
        end = bisect.bisect_left(self._tape, (self._number + 1,))  # the tensors made up to self
        alive = [entry for entry in self._tape[:end] if entry[1]() is not None]
        self._tape[:end] = alive  # a freed tensor was no part of self's graph
        reached = {self}
        for _, ref in reversed(alive):
            node = ref()
            if node in reached:
                for parent in node._prev:
                    if parent not in reached:
                        reached.add(parent)
                        if parent._prev:  # a tensor in between: this pass gives it its gradient
                            parent.grad = np.zeros(parent.data.shape)
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
