"""assignments/ is what solutions/ makes of itself: one source for the student files.

solutions/ marks each stub's body (autograder/stubs.py); assignments/ is the same files with
those regions replaced by a `TODO` line and a `raise`, and nothing else changed, so that a diff
between the two shows exactly a student's work. The stubs name their parts when called, and
the given operations run with every stub unwritten.
"""

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import KIT
from support.shape import GRADED, SAMPLE

from autograder.parts import declared
from autograder.stubs import StubError, stale_student_files, stubs_by_part, student_source


def test_the_student_files_are_what_the_reference_makes_of_them(tmp_path):
    assert stale_student_files(KIT) == []
    kit = tmp_path / "kit"  # a student file edited by hand is named, with the fix
    for folder in ("solutions", "assignments"):
        shutil.copytree(KIT / folder, kit / folder, ignore=shutil.ignore_patterns("__pycache__"))
    edited = kit / "assignments" / f"{SAMPLE}.py"
    edited.write_text("# a hint\n" + edited.read_text())
    assert stale_student_files(kit) == [f"{edited}: not what {kit}/solutions/{SAMPLE}.py makes of it; write "
                                        "it again with `autograder stubs`"]


def test_every_stub_counts_for_a_declared_part():
    parts = declared()
    found = stubs_by_part(KIT / "solutions")
    assert set(found) <= set(parts), "a stub names a part no suite declares"
    assert found["value.mul"] == [("value", "Value.__mul__")]


@pytest.mark.engine("dual")
def test_the_dual_part_is_the_whole_class():
    found = stubs_by_part(KIT / "solutions")
    assert sorted(function for _, function in found["dual"]) == sorted(
        f"Dual.{name}" for name in ("__init__", "__add__", "__radd__", "__mul__", "__rmul__", "sin", "exp"))


def test_markers_that_do_not_pair_up_are_refused():
    good = "def f():\n    # BEGIN SOLUTION p.q: do it\n    return 1\n    # END SOLUTION\n"
    assert student_source(good, Path("f.py")) == (
        "def f():\n    # TODO(p.q): do it\n    raise NotImplementedError(\"p.q: implement f\")\n")
    broken = [(good.replace("    # END SOLUTION\n", ""), "with no # END SOLUTION after it"),
              (good.replace("    # BEGIN SOLUTION p.q: do it\n", ""), "with no BEGIN SOLUTION"),
              ("# BEGIN SOLUTION p.q: do it\nx = 1\n# END SOLUTION\n", "outside any function"),
              (good.replace("BEGIN SOLUTION p.q: do it", "BEGIN SOLUTION p.q"), "write the marker")]
    for text, said in broken:
        with pytest.raises(StubError, match=said):
            student_source(text, Path("f.py"))


def test_the_stub_files_import_cleanly():
    """In a fresh interpreter, from the assignments folder, with warnings as errors."""
    program = "import sys; sys.path.insert(0, ''); import " + ", ".join(GRADED)
    result = subprocess.run(
        [sys.executable, "-I", "-W", "error", "-c", program],
        cwd=KIT / "assignments", capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""


def value_stub_calls(Value):
    """One call per stub of value.py, and the part its error must name."""
    return [
        (lambda: Value(2.0) * Value(3.0), "value.mul"),
        (lambda: Value(2.0) * 3.0, "value.mul"),
        (lambda: 3.0 * Value(2.0), "value.mul"),
        (lambda: Value(2.0) / Value(3.0), "value.truediv"),
        (lambda: Value(0.5).tanh(), "value.tanh"),
        (lambda: Value(0.5).relu(), "value.relu"),
        (lambda: Value(0.5).sigmoid(), "value.sigmoid"),
        (lambda: Value(0.5).backward(), "value.backward"),
        (lambda: Value(0.5).zero_grad(), "value.zero_grad"),
    ]


def test_calling_a_value_stub_names_its_part(stubs):
    for call, part in value_stub_calls(stubs.value.Value):
        with pytest.raises(NotImplementedError, match=f"^{part}: "):
            call()


def test_calling_unbroadcast_names_its_part(stubs):
    with pytest.raises(NotImplementedError, match="^tensor.unbroadcast: "):
        stubs.tensor.unbroadcast(np.ones((2, 3)), (3,))
    with pytest.raises(NotImplementedError, match="^tensor.unbroadcast: "):
        (stubs.tensor.Tensor(np.ones((2, 3))) + stubs.tensor.Tensor(np.ones(3))).sum().backward()


@pytest.mark.engine("dual")
def test_calling_a_dual_stub_names_its_part(stubs):
    Dual = stubs.dual.Dual
    with pytest.raises(NotImplementedError, match="^dual: implement Dual.__init__"):
        Dual(1.0)
    blank = object.__new__(Dual)  # an instance that skipped the stubbed __init__
    calls = {
        "__add__": lambda: blank + 1.0,
        "__radd__": lambda: 1.0 + blank,
        "__mul__": lambda: blank * 2.0,
        "__rmul__": lambda: 2.0 * blank,
        "sin": blank.sin,
        "exp": blank.exp,
    }
    for method, call in calls.items():
        with pytest.raises(NotImplementedError, match=f"^dual: implement Dual.{method}"):
            call()


# The given scalar operations, each with the local derivatives it must pass back.
GIVEN_VALUE_OPS = [
    ("a + b", lambda a, b: a + b, 2.0, -3.0, [1.0, 1.0]),
    ("a - b", lambda a, b: a - b, 2.0, -3.0, [1.0, -1.0]),
    ("-a", lambda a, b: -a, 2.0, -3.0, [-1.0, 0.0]),
    ("a ** 3", lambda a, b: a**3, 2.0, -3.0, [12.0, 0.0]),
    ("a.exp()", lambda a, b: a.exp(), 2.0, -3.0, [math.exp(2.0), 0.0]),
    ("a.log()", lambda a, b: a.log(), 2.0, -3.0, [0.5, 0.0]),
    ("1.5 + a", lambda a, b: 1.5 + a, 2.0, -3.0, [1.0, 0.0]),
    ("1.5 - a", lambda a, b: 1.5 - a, 2.0, -3.0, [-1.0, 0.0]),
]


@pytest.mark.parametrize(("name", "op", "a0", "b0", "grads"), GIVEN_VALUE_OPS,
                         ids=[case[0] for case in GIVEN_VALUE_OPS])
def test_given_value_ops_need_no_stub(stubs, name, op, a0, b0, grads):
    """Forward and local backward of every given operation run with all stubs unwritten."""
    Value = stubs.value.Value
    a, b = Value(a0), Value(b0)
    out = op(a, b)
    out.grad = 1.0
    out._backward()
    assert [a.grad, b.grad] == pytest.approx(grads, rel=1e-15)


def test_given_tensor_ops_need_no_unbroadcast(stubs, reference):
    """The operations that do not broadcast train end to end with unbroadcast unwritten."""
    rng = np.random.default_rng(0)
    X, W, labels = rng.normal(size=(5, 4)), rng.normal(size=(4, 3)), np.array([0, 2, 1, 1, 0])
    grads = []
    for engine in (stubs.tensor, reference.tensor):
        x, w = engine.Tensor(X), engine.Tensor(W)
        # Two losses, since adding them would already call unbroadcast; their gradients add up.
        # Each backward() runs back only its own graph.
        engine.cross_entropy(-((x @ w).relu().exp().log()), labels).backward()
        (x @ w).sum(axis=0).mean().backward()
        grads.append((x.grad, w.grad))
    for stub_grad, reference_grad in zip(*grads):
        np.testing.assert_array_equal(stub_grad, reference_grad)
    assert grads[0][0].any() and grads[0][1].any()


def test_a_tensor_graph_is_kept_by_backward(reference):
    """A second backward() of one graph passes the same gradients on again, and the leaves add
    them up, as in PyTorch; a tensor in between gets its gradient afresh."""
    Tensor = reference.tensor.Tensor
    x = Tensor([1.0, 2.0])
    square = x * x
    loss = square.sum()
    loss.backward()
    first = x.grad.copy()
    np.testing.assert_array_equal(first, [2.0, 4.0])
    loss.backward()
    np.testing.assert_array_equal(x.grad, 2 * first)
    np.testing.assert_array_equal(square.grad, [1.0, 1.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, 3 * first)
