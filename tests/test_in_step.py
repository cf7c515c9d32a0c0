"""assignments/ and solutions/ stay in step: one API, one given code, stubs that say so.

A diff between a stub file and its reference must show exactly the student's work: the
`TODO` and `raise` lines of each stub, replaced by the reference's body.
"""

import ast
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

KIT = Path(__file__).resolve().parent.parent
ENGINES = ("value", "tensor", "dual")

# Every stub of the handout and the part of grading.toml it belongs to.
STUBS = {
    "value": {
        "Value.__mul__": "value.mul",
        "Value.__truediv__": "value.truediv",
        "Value.tanh": "value.tanh",
        "Value.relu": "value.relu",
        "Value.sigmoid": "value.sigmoid",
        "Value.backward": "value.backward",
        "Value.zero_grad": "value.zero_grad",
    },
    "tensor": {"unbroadcast": "tensor.unbroadcast"},
    "dual": {
        f"Dual.{name}": "dual"
        for name in ("__init__", "__add__", "__radd__", "__mul__", "__rmul__", "sin", "exp")
    },
}


def source(folder: str, name: str) -> str:
    return (KIT / folder / f"{name}.py").read_text(encoding="utf-8")


def definitions(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level classes and functions, and the methods of those classes, by dotted name."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            found[node.name] = node
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def is_public(qualname: str) -> bool:
    last = qualname.rsplit(".", 1)[-1]
    return not last.startswith("_") or (last.startswith("__") and last.endswith("__"))


def signature(node: ast.FunctionDef) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"({ast.unparse(node.args)}){returns}"


def is_stub(node: ast.AST) -> bool:
    """A function whose last statement raises NotImplementedError."""
    if not isinstance(node, ast.FunctionDef):
        return False
    last = node.body[-1]
    return (
        isinstance(last, ast.Raise)
        and isinstance(last.exc, ast.Call)
        and getattr(last.exc.func, "id", None) == "NotImplementedError"
    )


def body_lines(node: ast.FunctionDef) -> tuple[int, int]:
    """The 0-based line range of a function's body after its docstring, comments included."""
    assert ast.get_docstring(node) is not None, f"{node.name} has no docstring"
    return node.body[0].end_lineno, node.end_lineno


@pytest.mark.parametrize("name", ENGINES)
def test_the_stubs_are_the_listed_ones(name):
    stubs = {q for q, node in definitions(ast.parse(source("assignments", name))).items() if is_stub(node)}
    assert stubs == set(STUBS[name])
    reference = definitions(ast.parse(source("solutions", name)))
    assert not [q for q, node in reference.items() if is_stub(node)], "the reference has a stub left"


@pytest.mark.parametrize("name", ENGINES)
def test_same_api_signatures_and_docstrings(name):
    stub_tree, reference_tree = ast.parse(source("assignments", name)), ast.parse(source("solutions", name))
    assert ast.get_docstring(stub_tree) == ast.get_docstring(reference_tree)
    stub_defs, reference_defs = definitions(stub_tree), definitions(reference_tree)
    assert sorted(q for q in stub_defs if is_public(q)) == sorted(q for q in reference_defs if is_public(q))
    for qualname, node in stub_defs.items():
        twin = reference_defs[qualname]
        assert ast.get_docstring(node) == ast.get_docstring(twin), qualname
        if isinstance(node, ast.FunctionDef):
            assert signature(node) == signature(twin), qualname


@pytest.mark.parametrize("name", ENGINES)
def test_given_functions_are_identical(name):
    stub_text, reference_text = source("assignments", name), source("solutions", name)
    stub_defs = definitions(ast.parse(stub_text))
    reference_defs = definitions(ast.parse(reference_text))
    for qualname, node in stub_defs.items():
        if isinstance(node, ast.FunctionDef) and not is_stub(node):
            assert ast.get_source_segment(stub_text, node) == ast.get_source_segment(
                reference_text, reference_defs[qualname]
            ), f"{qualname} differs between assignments/ and solutions/"


def without_noqa(line: str) -> str:
    """A line without its `# noqa` marker: a stub may leave an import unused until it is done."""
    return line.split("  # noqa", 1)[0].rstrip() + "\n" if "  # noqa" in line else line


@pytest.mark.parametrize("name", ENGINES)
def test_the_diff_is_only_the_stub_bodies(name):
    """Put the reference's bodies into the stubs: the result must be the reference, line for line."""
    stub_lines = source("assignments", name).splitlines(keepends=True)
    reference_text = source("solutions", name)
    reference_lines = reference_text.splitlines(keepends=True)
    stub_defs = definitions(ast.parse("".join(stub_lines)))
    reference_defs = definitions(ast.parse(reference_text))
    stubs = [(q, node) for q, node in stub_defs.items() if is_stub(node)]
    for qualname, node in sorted(stubs, key=lambda item: -item[1].lineno):  # bottom up
        start, end = body_lines(node)
        reference_start, reference_end = body_lines(reference_defs[qualname])
        stub_lines[start:end] = reference_lines[reference_start:reference_end]
    assert [without_noqa(line) for line in stub_lines] == [without_noqa(line) for line in reference_lines]


@pytest.mark.parametrize("name", ENGINES)
def test_each_stub_is_marked_with_its_part(name):
    """A `# TODO(part): ...` line, then `raise NotImplementedError("part: ...")`."""
    text = source("assignments", name)
    lines = text.splitlines()
    for qualname, node in definitions(ast.parse(text)).items():
        if not is_stub(node):
            continue
        part = STUBS[name][qualname]
        start, end = body_lines(node)
        assert end - start == 2, f"{qualname}: the stub body is more than the TODO and the raise"
        assert lines[start].strip().startswith(f"# TODO({part}): "), qualname
        message = node.body[-1].exc.args[0].value
        assert message.startswith(f"{part}: implement "), qualname


def test_the_stub_files_import_cleanly():
    """In a fresh interpreter, from the assignments folder, with warnings as errors."""
    program = "import sys; sys.path.insert(0, ''); import value, tensor, dual"
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
