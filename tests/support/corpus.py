"""Submissions made from the reference by small edits: correct variants and single bugs.

Each entry is a copy of solutions/ (value.py, tensor.py, dual.py) with a few exact text
replacements, so the corpus follows the reference as it changes: an edit whose old text is
not found exactly once stops the build with a message naming the entry and the file.

An entry lists the parts of grading.toml it must lose (none for a correct variant) and the
misconception ids the grader must name in a part that lost points. The training parts
depend on every operation their run uses: the moons run (value.training) multiplies by
plain numbers, adds, takes relu, exp and log, and calls zero_grad then backward on a fresh
graph each step, never tanh or division; the digits run (tensor.training) adds a bias of
shape (128,) or (10,) to a batch, which needs unbroadcast's leading-axes step and never
its keepdims step.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from .shape import GRADED


class Edit(NamedTuple):
    """Replace `old` (found exactly once) by `new` in the engine file `file`."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Submission:
    name: str
    edits: tuple[Edit, ...]
    loses: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()

    @property
    def correct(self) -> bool:
        return not self.loses


class CorpusError(Exception):
    """An edit of tests/corpus.py no longer fits the reference in solutions/."""


def body(code: str, indent: int = 8) -> str:
    """A block of code, dedented and indented to `indent` spaces, ending with a newline."""
    return textwrap.indent(textwrap.dedent(code).strip("\n") + "\n", " " * indent)


def build(submission: Submission, reference: Path, folder: Path) -> None:
    """Write the reference's engine files, with the submission's edits applied, into `folder`."""
    texts = {name: (reference / f"{name}.py").read_text(encoding="utf-8") for name in GRADED}
    for edit in submission.edits:
        found = texts[edit.file].count(edit.old)
        if found != 1:
            raise CorpusError(
                f"tests/corpus.py, entry {submission.name!r}: the old text of an edit occurs {found} "
                f"times in {reference.name}/{edit.file}.py (edited so far), not once; update the "
                f"edit to the reference's current text:\n{edit.old}")
        texts[edit.file] = texts[edit.file].replace(edit.old, edit.new)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")


# -- the reference's blocks that several entries replace -----------------------------------------

TOPOLOGICAL_SORT = body("""
    order: list[Value] = []
    visited: set[Value] = set()
    stack: list[tuple[Value, bool]] = [(self, False)]
    while stack:  # an explicit stack, so deep graphs do not hit the recursion limit
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
        elif node not in visited:
            visited.add(node)
            stack.append((node, True))
            stack.extend((parent, False) for parent in node._prev)
    self.grad = 1.0
    for node in reversed(order):
        node._backward()
""")

ZERO_GRAD = body("""
    seen: set[Value] = set()
    stack = [self]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            node.grad = 0.0
            stack.extend(node._prev)
""")

QUOTIENT = body("""
    out = Value(self.data / other.data, (self, other), "/")

    def _backward() -> None:
        self.grad += out.grad / other.data
        other.grad += -self.data / other.data**2 * out.grad

    out._backward = _backward
    return out
""")

UNBROADCAST = body("""
    grad = np.asarray(grad)
    added = grad.ndim - len(shape)
    if added > 0:
        grad = grad.sum(axis=tuple(range(added)))
    stretched = tuple(axis for axis, size in enumerate(shape) if size == 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad
""", indent=4)

SET_PARENTS = Edit("value", "self._prev = tuple(_parents)", "self._prev = set(_parents)")

OVERWRITE_IN_MUL = (
    Edit("value", "self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
    Edit("value", "other.grad += self.data * out.grad", "other.grad = self.data * out.grad"),
)


# -- correct variants: full marks on every part ------------------------------------------------------

CORRECT = (
    Submission("topological-sort-with-iterator-stack", (Edit("value", TOPOLOGICAL_SORT, body("""
        order: list[Value] = []
        visited = {self}
        stack = [(self, iter(self._prev))]
        while stack:  # each frame remembers how far through its parents it has got
            node, parents = stack[-1]
            parent = next(parents, None)
            if parent is None:
                stack.pop()
                order.append(node)
            elif parent not in visited:
                visited.add(parent)
                stack.append((parent, iter(parent._prev)))
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
    """)),)),
    Submission("kahn-in-degree-counting", (Edit("value", TOPOLOGICAL_SORT, body("""
        consumers: dict[Value, int] = {}
        seen = {self}
        stack = [self]
        while stack:  # count, for every node, the uses of it that must report first
            node = stack.pop()
            for parent in node._prev:
                consumers[parent] = consumers.get(parent, 0) + 1
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        self.grad = 1.0
        ready = [self]
        while ready:
            node = ready.pop()
            node._backward()
            for parent in node._prev:
                consumers[parent] -= 1
                if consumers[parent] == 0:
                    ready.append(parent)
    """)),)),
    # As micrograd writes it: no explicit stack, no change of the recursion limit.
    Submission("recursive-dfs-with-visited-set", (Edit("value", TOPOLOGICAL_SORT, body("""
        order: list[Value] = []
        visited: set[Value] = set()

        def visit(node: Value) -> None:
            if node not in visited:
                visited.add(node)
                for parent in node._prev:
                    visit(parent)
                order.append(node)

        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
    """)),)),
    Submission("parents-as-a-set", (SET_PARENTS,)),
    Submission("division-as-product-with-power", (Edit("value", QUOTIENT, body("""
        return self * other**-1
    """)),)),
    Submission("relu-mask-from-output", (
        Edit("value", "self.grad += (self.data > 0) * out.grad", "self.grad += (out.data > 0) * out.grad"),
    )),
    Submission("tanh-from-stable-expm1", (Edit("value", "        t = math.tanh(self.data)\n", body("""
        e = math.expm1(-2 * abs(self.data))  # in (-1, 0]: never overflows
        t = math.copysign(-e / (2 + e), self.data)
    """)),)),
    Submission("sigmoid-through-tanh", (Edit("value", body("""
        if self.data >= 0:
            s = 1.0 / (1.0 + math.exp(-self.data))
        else:
            e = math.exp(self.data)  # the other form, so exp never sees a large argument
            s = e / (1.0 + e)
    """), body("""
        s = 0.5 * (1.0 + math.tanh(0.5 * self.data))
    """)),)),
    Submission("zero-grad-breadth-first", (
        Edit("value", "import math\n", "import math\nfrom collections import deque\n"),
        Edit("value", ZERO_GRAD, body("""
            seen = {self}
            queue = deque([self])
            while queue:
                node = queue.popleft()
                node.grad = 0.0
                for parent in node._prev:
                    if parent not in seen:
                        seen.add(parent)
                        queue.append(parent)
        """)),
    )),
    Submission("unbroadcast-sum-then-reshape", (Edit("tensor", UNBROADCAST, body("""
        grad = np.asarray(grad)
        aligned = (1,) * (grad.ndim - len(shape)) + tuple(shape)
        return np.sum(grad, axis=tuple(i for i, size in enumerate(aligned) if size == 1)).reshape(shape)
    """, indent=4)),)),
    Submission("dual-with-slots", (Edit(
        "dual",
        '    """A number val + der * eps with eps**2 = 0: a value and its derivative, together."""\n',
        '    """A number val + der * eps with eps**2 = 0: a value and its derivative, together."""\n\n'
        '    __slots__ = ("val", "der")\n'),)),
)


# -- single bugs: each loses exactly the parts it breaks, and is named ---------------------------------

MUL_AND_TRAINING = frozenset({"value.mul", "value.training"})


def bug(name: str, *edits: Edit, loses: set[str], names: set[str]) -> Submission:
    return Submission(name, edits, frozenset(loses), frozenset(names))


BUGS = (
    # The moons run multiplies every weight by a plain number and reuses the weights.
    bug("mul-assigns-instead-of-adding", *OVERWRITE_IN_MUL,
        loses=MUL_AND_TRAINING, names={"overwrites-gradient"}),
    bug("mul-assigns-instead-of-adding-with-set-parents", SET_PARENTS, *OVERWRITE_IN_MUL,
        loses=MUL_AND_TRAINING, names={"overwrites-gradient"}),
    # The moons run multiplies each weight by a computed activation, which drops out of the graph.
    # A set of parents of Values compared by data keeps one of two distinct parents of equal data.
    bug("values-compared-by-data-in-a-set-of-parents", SET_PARENTS,
        Edit("value", "    def __repr__(self) -> str:",
             "    def __eq__(self, other):\n"
             "        return isinstance(other, Value) and self.data == other.data\n\n"
             "    def __hash__(self):\n        return hash(self.data)\n\n    def __repr__(self) -> str:"),
        loses={"value.mul", "value.relu", "value.backward", "value.training"},
        names={"equal-data-merged"}),
    bug("mul-names-the-wrong-parents",
        Edit("value", 'out = Value(self.data * other.data, (self, other), "*")',
             'out = Value(self.data * other.data, (self, self), "*")'),
        loses=MUL_AND_TRAINING, names={"rule-on-the-wrong-node"}),
    bug("mul-ignores-upstream",
        Edit("value", "self.grad += other.data * out.grad", "self.grad += other.data"),
        Edit("value", "other.grad += self.data * out.grad", "other.grad += self.data"),
        loses=MUL_AND_TRAINING, names={"ignores-upstream"}),
    bug("mul-number-not-wrapped",
        Edit("value", 'a plain number\n        other = other if isinstance(other, Value) else Value(other)\n',
             'a plain number\n'),
        loses=MUL_AND_TRAINING, names={"number-not-wrapped"}),
    # The gradient at x = 400 comes out 1 - 400**2 instead of 0, so value.stability goes too.
    bug("tanh-derivative-of-input",
        Edit("value", "(1.0 - t * t) * out.grad", "(1.0 - self.data * self.data) * out.grad"),
        loses={"value.tanh", "value.stability"}, names={"tanh-derivative-of-input"}),
    bug("tanh-through-exp-2x",
        Edit("value", "t = math.tanh(self.data)",
             "t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)"),
        loses={"value.stability"}, names={"tanh-overflow"}),
    bug("tanh-ignores-upstream",
        Edit("value", "(1.0 - t * t) * out.grad", "(1.0 - t * t)"),
        loses={"value.tanh"}, names={"ignores-upstream"}),
    bug("tanh-assigns-instead-of-adding",
        Edit("value", "self.grad += (1.0 - t * t) * out.grad", "self.grad = (1.0 - t * t) * out.grad"),
        loses={"value.tanh"}, names={"overwrites-gradient"}),
    # Attached to its input, tanh's rule writes into that input; at x = 400 it adds nothing there.
    # Far from 0 the misplaced rule passes 1 - t*t = 0 whatever gradient it reads: value.stability's
    # answers are right, and a rule is judged by what it does.
    bug("tanh-rule-attached-to-the-input",
        Edit("value", "(1.0 - t * t) * out.grad\n\n        out._backward = _backward",
             "(1.0 - t * t) * out.grad\n\n        self._backward = _backward"),
        loses={"value.tanh"}, names={"rule-on-the-wrong-node"}),
    bug("sigmoid-rule-attached-to-the-input",
        Edit("value", "s * (1.0 - s) * out.grad\n\n        out._backward = _backward",
             "s * (1.0 - s) * out.grad\n\n        self._backward = _backward"),
        loses={"value.sigmoid"}, names={"rule-on-the-wrong-node"}),
    # A relu that returns its input when open and a constant when shut: every number of one pass right.
    bug("relu-cuts-the-unit-out-of-the-graph",
        Edit("value", 'out = Value(max(0.0, self.data), (self,), "relu")',
             'if self.data > 0:\n            return self\n        out = Value(0.0)'),
        loses={"value.relu"}, names={"relu-cuts-graph"}),
    bug("relu-gate-on-the-wrong-side",
        Edit("value", "(self.data > 0) * out.grad", "(self.data < 0) * out.grad"),
        loses={"value.relu", "value.training"}, names={"relu-gate"}),
    bug("relu-ignores-upstream",
        Edit("value", "self.grad += (self.data > 0) * out.grad", "self.grad += float(self.data > 0)"),
        loses={"value.relu", "value.training"}, names={"ignores-upstream"}),
    # In the moons run relu's input is a fresh sum used once, so `=` changes nothing there.
    bug("relu-assigns-instead-of-adding",
        Edit("value", "self.grad += (self.data > 0) * out.grad", "self.grad = (self.data > 0) * out.grad"),
        loses={"value.relu"}, names={"overwrites-gradient"}),
    bug("quotient-rule-sign",
        Edit("value", "other.grad += -self.data / other.data**2 * out.grad",
             "other.grad += self.data / other.data**2 * out.grad"),
        loses={"value.truediv"}, names={"quotient-rule"}),
    bug("truediv-ignores-upstream",
        Edit("value", "self.grad += out.grad / other.data", "self.grad += 1 / other.data"),
        Edit("value", "other.grad += -self.data / other.data**2 * out.grad",
             "other.grad += -self.data / other.data**2"),
        loses={"value.truediv"}, names={"ignores-upstream"}),
    bug("truediv-assigns-instead-of-adding",
        Edit("value", "self.grad += out.grad / other.data", "self.grad = out.grad / other.data"),
        Edit("value", "other.grad += -self.data / other.data**2 * out.grad",
             "other.grad = -self.data / other.data**2 * out.grad"),
        loses={"value.truediv"}, names={"overwrites-gradient"}),
    bug("truediv-assigns-to-the-denominator",
        Edit("value", "other.grad += -self.data / other.data**2 * out.grad",
             "other.grad = -self.data / other.data**2 * out.grad"),
        loses={"value.truediv"}, names={"overwrites-gradient"}),
    bug("truediv-number-not-wrapped",
        Edit("value", 'quotient rule\n        other = other if isinstance(other, Value) else Value(other)\n',
             'quotient rule\n'),
        loses={"value.truediv"}, names={"number-not-wrapped"}),
    bug("backward-in-forward-order",
        Edit("value", "for node in reversed(order):", "for node in order:"),
        loses={"value.backward", "value.training"}, names={"no-topological-order"}),
    bug("backward-recursive-without-sort", Edit("value", TOPOLOGICAL_SORT, body("""
            self.grad = 1.0
            self._push_back()

        def _push_back(self) -> None:
            self._backward()
            for parent in self._prev:
                parent._push_back()
        """, indent=4)),
        loses={"value.backward", "value.training"}, names={"no-topological-order"}),
    # A visited set but no topological order: each rule runs as soon as its node is reached.
    bug("backward-pre-order-with-a-visited-set", Edit("value", TOPOLOGICAL_SORT, body("""
        self.grad = 1.0
        seen: set[Value] = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                node._backward()
                stack.extend(node._prev)
    """)), loses={"value.backward", "value.training"}, names={"backward-pre-order"}),
    bug("backward-runs-no-rule", Edit("value", TOPOLOGICAL_SORT, body("""
        self.grad = 1.0
    """)), loses={"value.backward", "value.training"}, names={"backward-runs-no-rule"}),
    # The moons run calls zero_grad before every backward, so a backward that clears changes nothing.
    bug("backward-clears-first",
        Edit("value", "        self.grad = 1.0\n        for node in reversed(order):\n", body("""
            for node in order:
                node.grad = 0.0
            self.grad = 1.0
            for node in reversed(order):
        """)),
        loses={"value.backward"}, names={"backward-clears"}),
    bug("backward-does-not-seed-the-root",
        Edit("value", "self.grad = 1.0", "pass"),
        loses={"value.backward", "value.training"}, names={"root-not-seeded"}),
    bug("backward-adds-one-to-the-root",
        Edit("value", "self.grad = 1.0", "self.grad += 1.0"),
        loses={"value.backward"}, names={"root-accumulates"}),
    # The weights keep their gradients from step to step, so the moons run drifts.
    bug("zero-grad-on-self-only",
        Edit("value", ZERO_GRAD, body("""
            self.grad = 0.0
        """)),
        loses={"value.zero_grad", "value.training"}, names={"zero-grad-self-only"}),
    # The weights lie deeper than the loss's parents, so the moons run drifts.
    bug("zero-grad-one-level-deep",
        Edit("value", ZERO_GRAD, body("""
            self.grad = 0.0
            for parent in self._prev:
                parent.grad = 0.0
        """)),
        loses={"value.zero_grad", "value.training"}, names={"zero-grad-one-level"}),
    # Every step of the moons run builds fresh intermediates, so only the leaves matter there.
    bug("zero-grad-on-leaves-only",
        Edit("value", "                node.grad = 0.0\n", body("""
            if not node._prev:
                node.grad = 0.0
        """, indent=16)),
        loses={"value.zero_grad"}, names={"zero-grad-leaves-only"}),
    # The digits run's biases, (128,) and (10,), have no size-1 axis to keep.
    bug("unbroadcast-drops-keepdims",
        Edit("tensor", "grad.sum(axis=stretched, keepdims=True)", "grad.sum(axis=stretched)"),
        loses={"tensor.unbroadcast"}, names={"unbroadcast-no-keepdims"}),
    # A bias (128,) added to a batch (32, 128) needs the leading axis summed away.
    bug("unbroadcast-keeps-leading-axes",
        Edit("tensor", body("""
            added = grad.ndim - len(shape)
            if added > 0:
                grad = grad.sum(axis=tuple(range(added)))
        """, indent=4), ""),
        loses={"tensor.unbroadcast", "tensor.training"}, names={"unbroadcast-leading-axes"}),
    # The last axes summed away instead of the leading ones: (32, 128) -> (32,) for a (128,) bias.
    bug("unbroadcast-sums-the-trailing-axes",
        Edit("tensor", "grad = grad.sum(axis=tuple(range(added)))",
             "grad = grad.sum(axis=tuple(range(grad.ndim - added, grad.ndim)))"),
        loses={"tensor.unbroadcast", "tensor.training"}, names={"unbroadcast-wrong-axis"}),
    bug("dual-product-rule",
        Edit("dual", "self.der * other.val + self.val * other.der", "self.der * other.der"),
        loses={"dual"}, names={"dual-product-rule"}),
    bug("dual-sin-sign",
        Edit("dual", "math.cos(self.val) * self.der", "-math.cos(self.val) * self.der"),
        loses={"dual"}, names={"dual-sin-sign"}),
    bug("dual-default-derivative-one",
        Edit("dual", "der: float = 0.0", "der: float = 1.0"),
        loses={"dual"}, names={"dual-constant-derivative"}),
    bug("dual-number-not-wrapped",
        Edit("dual", "other = other if isinstance(other, Dual) else Dual(other)\n"
                     "        return Dual(self.val * other.val", "return Dual(self.val * other.val"),
        loses={"dual"}, names={"dual-number-not-wrapped"}),
)

CORPUS: tuple[Submission, ...] = CORRECT + BUGS

# Bugs confined to one sign or one size of an operand: each must cost its parts at every seed,
# and the same points at each, since every test asks every operand at both signs and both sizes
# (a rule written with abs() or a threshold). No misconception names them; their messages do.
CONFINED: tuple[Submission, ...] = (
    Submission("mul-wrong-for-a-negative-factor", (
        Edit("value", "self.grad += other.data * out.grad", "self.grad += abs(other.data) * out.grad"),),
        MUL_AND_TRAINING),
    Submission("mul-wrong-for-a-large-factor", (
        Edit("value", "self.grad += other.data * out.grad",
             "self.grad += (other.data if abs(other.data) < 1 else 1.0) * out.grad"),), MUL_AND_TRAINING),
    Submission("truediv-wrong-for-a-negative-divisor", (
        Edit("value", "other.grad += -self.data / other.data**2 * out.grad",
             "other.grad += -self.data / (other.data * abs(other.data)) * out.grad"),),
        frozenset({"value.truediv"})),
    Submission("truediv-wrong-for-a-negative-numerator", (
        Edit("value", "other.grad += -self.data / other.data**2 * out.grad",
             "other.grad += -abs(self.data) / other.data**2 * out.grad"),), frozenset({"value.truediv"})),
    Submission("truediv-wrong-for-a-small-divisor", (
        Edit("value", "self.grad += out.grad / other.data",
             "self.grad += out.grad / (other.data if abs(other.data) >= 1 else 1.0)"),),
        frozenset({"value.truediv"})),
    Submission("tanh-wrong-below-zero", (
        Edit("value", "self.grad += (1.0 - t * t) * out.grad",
             "self.grad += (1.0 - t * t if self.data > 0 else 1.0 + t * t) * out.grad"),),
        frozenset({"value.tanh", "value.stability"})),
    Submission("tanh-wrong-for-a-large-input", (
        Edit("value", "self.grad += (1.0 - t * t) * out.grad",
             "self.grad += (1.0 - t * t) * (1.0 if abs(self.data) < 1 else 0.5) * out.grad"),),
        frozenset({"value.tanh"})),
    Submission("relu-wrong-for-a-large-input", (
        Edit("value", "self.grad += (self.data > 0) * out.grad",
             "self.grad += (0 < self.data < 1) * out.grad"),),
        frozenset({"value.relu", "value.training"})),
    Submission("sigmoid-wrong-below-zero", (
        Edit("value", "self.grad += s * (1.0 - s) * out.grad",
             "self.grad += (s * (1.0 - s) if self.data > 0 else s * s) * out.grad"),),
        frozenset({"value.sigmoid"})),
    Submission("dual-sin-wrong-for-a-negative-tangent", (
        Edit("dual", "math.cos(self.val) * self.der", "math.cos(abs(self.val)) * abs(self.der)"),),
        frozenset({"dual"})),
    Submission("dual-product-wrong-for-a-negative-value", (
        Edit("dual", "self.der * other.val + self.val * other.der",
             "self.der * abs(other.val) + self.val * other.der"),), frozenset({"dual"})),
)


# -- changes to the given code: value.given names each, and every message of a check that uses it -----

# By the name the messages give the operation ("+ numbers" is `+` refusing a plain number).
GIVEN_CHANGES = {
    "+": Submission("add-assigns", (Edit("value", "self.grad += out.grad\n            other.grad += out.grad",
                                         "self.grad = out.grad\n            other.grad = out.grad"),)),
    "-": Submission("sub-adds-to-the-subtracted", (Edit("value", "other.grad += -out.grad",
                                                        "other.grad += out.grad"),)),
    "**": Submission("pow-with-the-exponent-as-a-parent", (Edit(
        "value", 'out = Value(self.data**k, (self,), f"**{k}")\n\n        def _backward() -> None:\n'
                 "            self.grad += k * self.data ** (k - 1) * out.grad\n",
        'exponent = Value(k)\n        out = Value(self.data**k, (self, exponent), f"**{k}")\n\n'
        "        def _backward() -> None:\n            self.grad += k * self.data ** (k - 1) * out.grad\n"
        "            exponent.grad += math.log(self.data) * out.data * out.grad\n"),)),
}
GIVEN_CHANGES["+ numbers"] = Submission("add-refuses-numbers", (Edit(
    "value", '        other = other if isinstance(other, Value) else Value(other)\n'
             '        out = Value(self.data + other.data, (self, other), "+")',
    '        out = Value(self.data + other.data, (self, other), "+")'),))


def bug_folders(scratch: Path, reference: Path) -> dict[str, Path]:
    """The single bugs, and the changes to the given code, each built into a folder of
    `scratch`: name -> folder."""
    folders = {}
    for n, submission in enumerate([*BUGS, *GIVEN_CHANGES.values()]):
        folders[submission.name] = scratch / f"bug-{n}"
        build(submission, reference, folders[submission.name])
    return folders
