"""A question is a fact of differentiation, never of how the reference builds what it gives.

The reference with every given operation composed as public engines compose them (micrograd's
`-` as `a + (-b)`, unary `-` as `b * -1`, `k - v` as `k + (-v)`, `k / v` as `k * v**-1`; the
Tensor engine's `-` and `mean` built the same way; Dual's reflected forms with their arguments
swapped) gets the reference's grade, every test passed, at the public seed and at every seed of
SEEDS. A question whose answer depended on the number of nodes a given operation makes (three
backward() calls without zero_grad, which pile gradient into every intermediate node) fails it.
"""

from __future__ import annotations

import pytest
from support import EVERY_SEED, KIT
from support.corpus import Edit, Submission, build

pytestmark = pytest.mark.slow  # grades in processes of its own

VALUE_NEG = '''        out = Value(-self.data, (self,), "neg")

        def _backward() -> None:
            self.grad += -out.grad

        out._backward = _backward
        return out
'''
VALUE_SUB = '''        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += -out.grad

        out._backward = _backward
        return out
'''
TENSOR_SUB = '''        other = other if isinstance(other, Tensor) else Tensor(other)
        out = Tensor(self.data - other.data, (self, other), "-")

        def _backward() -> None:
            self.grad += unbroadcast(out.grad, self.shape)
            other.grad += unbroadcast(-out.grad, other.shape)

        out._backward = _backward
        return out
'''
TENSOR_NEG = '''        out = Tensor(-self.data, (self,), "neg")

        def _backward() -> None:
            self.grad += -out.grad

        out._backward = _backward
        return out
'''
TENSOR_MEAN = '''        out = Tensor(self.data.mean(), (self,), "mean")

        def _backward() -> None:
            self.grad += out.grad / self.data.size

        out._backward = _backward
        return out
'''
COMPOSED = Submission("given-operations-composed", (
    Edit("value", VALUE_NEG, "        return self * -1\n"),
    Edit("value", VALUE_SUB, "        return self + (-other)\n"),
    Edit("value", "        return Value(other) - self\n", "        return other + (-self)\n"),
    Edit("value", "        return Value(other) / self\n", "        return other * self**-1\n"),
    Edit("tensor", TENSOR_SUB, "        other = other if isinstance(other, Tensor) else Tensor(other)\n"
                               "        return self + (-other)\n"),
    Edit("tensor", TENSOR_NEG, "        return self * -1.0\n"),
    Edit("tensor", "        return Tensor(other) - self\n", "        return -self + other\n"),
    Edit("tensor", TENSOR_MEAN, "        return self.sum() * (1.0 / self.data.size)\n"),
    Edit("dual", "return self + other\n        # END", "return Dual(other) + self\n        # END"),
    Edit("dual", "return self * other\n        # END", "return Dual(other) * self\n        # END"),
))


@pytest.mark.parametrize("seed", EVERY_SEED)
def test_the_reference_with_its_given_operations_composed_loses_nothing(seed, autograde, tmp_path):
    build(COMPOSED, KIT / "solutions", tmp_path / "composed")
    parts = autograde(tmp_path / "composed", seed=seed)
    lost = {part: f"{entry['score']:g} / {entry['max_score']:g}\n{entry['output'][:2000]}"
            for part, entry in parts.items() if entry["status"] != "passed"}
    assert not lost, lost
