"""PyTorch's answers to the expressions of expressions.py, kept in data/torch_answers.json so
that the engines are checked against PyTorch where PyTorch is not installed.

    cd tests && python -m support.torch_answers           records them afresh (with torch): new inputs
    cd tests && python -m support.torch_answers --check   says whether the file is PyTorch's own

Each answer holds its inputs, PyTorch's output and the gradient of every input, in float64.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from support.expressions import VALUE_OPS, draw, tensor_ops, two_losses

RECORD = Path(__file__).parent.parent / "data" / "torch_answers.json"
SCALAR_FOR_MANY = "grad can be implicitly created only for scalar outputs"  # PyTorch's words


class Torch:
    """A float64 torch tensor behind this kit's engine API, so one expression runs on both."""

    def __init__(self, t):
        self.t = t

    @staticmethod
    def unwrap(x):
        return x.t if isinstance(x, Torch) else x

    def __add__(self, other):
        return Torch(self.t + Torch.unwrap(other))

    def __radd__(self, other):
        return Torch(other + self.t)

    def __sub__(self, other):
        return Torch(self.t - Torch.unwrap(other))

    def __rsub__(self, other):
        return Torch(other - self.t)

    def __mul__(self, other):
        return Torch(self.t * Torch.unwrap(other))

    def __rmul__(self, other):
        return Torch(other * self.t)

    def __truediv__(self, other):
        return Torch(self.t / Torch.unwrap(other))

    def __rtruediv__(self, other):
        return Torch(other / self.t)

    def __pow__(self, k):
        return Torch(self.t**k)

    def __neg__(self):
        return Torch(-self.t)

    def __matmul__(self, other):
        return Torch(self.t @ Torch.unwrap(other))

    def sum(self, axis=None, keepdims=False):
        return Torch(self.t.sum() if axis is None else self.t.sum(dim=axis, keepdim=keepdims))

    def mean(self):
        return Torch(self.t.mean())

    def exp(self):
        return Torch(self.t.exp())

    def log(self):
        return Torch(self.t.log())

    def tanh(self):
        return Torch(self.t.tanh())

    def relu(self):
        return Torch(self.t.relu())

    def sigmoid(self):
        return Torch(self.t.sigmoid())


def scalar_answer(torch, op, inputs: list[float]) -> dict:
    """PyTorch's output and gradients of `op(a, b)` at `inputs`."""
    leaves = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
    out = op(*(Torch(t) for t in leaves)).t
    out.backward()
    grads = [0.0 if leaf.grad is None else leaf.grad.item() for leaf in leaves]
    return {"inputs": inputs, "out": out.item(), "grads": grads}


def tensor_answer(torch, op, arrays: list, weights: list) -> dict:
    """PyTorch's output of `op` at `arrays`, and the gradients of (output * weights).sum()."""
    leaves = [torch.tensor(np.asarray(a, dtype=float), requires_grad=True) for a in arrays]
    out = op(*(Torch(t) for t in leaves)).t
    (out * torch.tensor(np.asarray(weights, dtype=float))).sum().backward()
    grads = [leaf.grad.numpy().tolist() for leaf in leaves]
    return {"inputs": arrays, "weights": weights, "out": out.detach().numpy().tolist(), "grads": grads}


def torch_ops(torch) -> list:
    """expressions.tensor_ops with PyTorch's cross entropy."""
    return tensor_ops(lambda logits, labels: Torch(torch.nn.functional.cross_entropy(
        logits.t, torch.as_tensor(labels))))


def answers(torch, inputs: dict | None = None) -> dict:
    """PyTorch's answers at `inputs` (a record's), or at inputs drawn afresh."""
    rng = np.random.default_rng(2024)
    scalar = {}
    for name, op, kind in VALUE_OPS:
        at = inputs["scalar"][name]["inputs"] if inputs else [float(draw(rng, kind)), float(draw(rng, kind))]
        scalar[name] = scalar_answer(torch, op, at)
    tensor = {}
    for name, op, shapes, kind in torch_ops(torch):
        if inputs:
            arrays, weights = inputs["tensor"][name]["inputs"], inputs["tensor"][name]["weights"]
        else:
            arrays = [np.asarray(draw(rng, kind, size=shape)).tolist() for shape in shapes]
            shape = op(*(Torch(torch.tensor(np.asarray(a, dtype=float))) for a in arrays)).t.shape
            weights = rng.normal(size=tuple(shape)).tolist()
        tensor[name] = tensor_answer(torch, op, arrays, weights)
    start = inputs["two_losses"]["inputs"] if inputs else \
        [rng.normal(size=shape).tolist() for shape in ((3, 4), (2, 3), (4,))]
    grads = two_losses(lambda a: torch.tensor(np.asarray(a, dtype=float), requires_grad=True),
                       lambda loss: loss.backward(retain_graph=True), *start)
    try:
        (torch.ones(3, requires_grad=True) * 2.0).backward()
        refused = ""
    except RuntimeError as error:
        refused = str(error)
    return {"torch": torch.__version__, "scalar": scalar, "tensor": tensor,
            "two_losses": {"inputs": start, "grads": [g.numpy().tolist() for g in grads]},
            "backward_of_many": refused}


def recorded() -> dict:
    """The answers kept in RECORD."""
    return json.loads(RECORD.read_text(encoding="utf-8"))


def differences(old: dict, new: dict) -> list[str]:
    """The names of the answers that differ between two records (beyond 1e-12)."""
    found = []
    for group in ("scalar", "tensor"):
        for name in sorted(old[group].keys() | new[group].keys()):
            a, b = old[group].get(name), new[group].get(name)
            if a is None or b is None or not close(a["out"], b["out"]) or \
                    any(not close(x, y) for x, y in zip(a["grads"], b["grads"])):
                found.append(f"{group}: {name}")
    if any(not close(x, y) for x, y in zip(old["two_losses"]["grads"], new["two_losses"]["grads"])):
        found.append("two_losses")
    if SCALAR_FOR_MANY not in new["backward_of_many"]:
        found.append("backward_of_many")
    return found


def close(a, b) -> bool:
    """Whether two nested lists of numbers agree to 1e-12."""
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare the file with PyTorch, write nothing")
    args = parser.parse_args()
    import torch

    if args.check:
        found = differences(recorded(), answers(torch, recorded()))
        print("\n".join(found) or f"{RECORD} holds PyTorch {torch.__version__}'s answers")
        return 1 if found else 0
    RECORD.write_text(json.dumps(answers(torch), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RECORD} with PyTorch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
