"""Training scenarios: an engine earns its keep by training a small network.

They use the engines' public API alone: the first parameter is the module of the file a run
needs (`value` or `tensor`), the rest plain data. Every number read from the engine goes
through float() (or a float64 copy), and a run is deterministic given its seed.
"""

import gc
import math
from types import ModuleType

import numpy as np

from .common import scenario


class Neuron:
    """One unit of a scalar-engine MLP: a weighted sum plus a bias, optionally through ReLU."""

    def __init__(self, value: ModuleType, n_inputs: int, rng: np.random.Generator, use_relu: bool) -> None:
        scale = math.sqrt(2.0 / n_inputs)  # He-normal: keeps ReLU activations at a steady scale
        self.weights = [value.Value(float(rng.normal(0.0, scale))) for _ in range(n_inputs)]
        self.bias = value.Value(0.0)
        self.use_relu = use_relu

    def __call__(self, inputs: list) -> object:
        total = self.bias
        for weight, x in zip(self.weights, inputs):
            total = total + weight * x
        return total.relu() if self.use_relu else total

    def parameters(self) -> list:
        """The neuron's weights, then its bias."""
        return [*self.weights, self.bias]


class MLP:
    """Fully connected layers of neurons: ReLU in every layer but the last, which is linear."""

    def __init__(self, value: ModuleType, sizes: list[int], rng: np.random.Generator) -> None:
        last = len(sizes) - 2
        self.layers = [
            [Neuron(value, n_in, rng, use_relu=index < last) for _ in range(n_out)]
            for index, (n_in, n_out) in enumerate(zip(sizes, sizes[1:]))
        ]

    def __call__(self, inputs: list) -> list:
        for layer in self.layers:
            inputs = [neuron(inputs) for neuron in layer]
        return inputs

    def parameters(self) -> list:
        """Every neuron's parameters, layer by layer."""
        return [p for layer in self.layers for neuron in layer for p in neuron.parameters()]


def _logistic_step(value: ModuleType, model: MLP, params: list, X: list, targets: list,
                   lr: float) -> float:
    """One full-batch SGD step; returns the loss before the update."""
    total = value.Value(0.0)
    for point, t in zip(X, targets):
        score = model(point)[0]
        total = total + (1.0 + (-score * t).exp()).log()
    # Every parameter joins the graph times zero: the loss keeps its value, and zero_grad() reaches
    # the weights of a unit that ReLU shut for the whole batch. Whether a relu keeps its unit in the
    # graph is value.relu's question; without this term, the run asked it at some seeds only.
    for p in params:
        total = total + p * 0.0
    loss = total * (1.0 / len(X))  # multiply rather than divide: the run needs no __truediv__
    loss.zero_grad()
    loss.backward()
    for p in params:
        p.data = float(p.data) - lr * float(p.grad)
    return float(loss.data)


@scenario("value", reverse="backward")
def train_moons(
    value: ModuleType,
    X: list[list[float]],
    y: list[int],
    steps: int = 100,
    lr: float = 1.0,
    seed: int = 0,
    hidden: int = 8,
) -> dict[str, object]:
    """
    import sys
    sys.path.append("..")   # the kit's folder, which holds autograder/
    import value
    from autograder.datasets import grading_data  # the 30 moons the grader trains on
    from autograder.inside.scenarios.training import train_moons
    run = train_moons(value, steps={steps}, lr={lr}, seed={seed}, hidden={hidden}, **grading_data("moons"))
    print(run["losses"], run["accuracy"], run["parameters"])
    """
    # A 2-hidden-hidden-1 ReLU MLP, full-batch SGD on the mean logistic loss
    # log(1 + exp(-t * s)) for targets t in {-1, +1}: forward, zero_grad, backward, step.
    # Returns each step's loss (before its update), the accuracy on X, the parameter count.
    model = MLP(value, [len(X[0]), hidden, hidden, 1], np.random.default_rng(seed))
    params = model.parameters()
    targets = [2.0 * label - 1.0 for label in y]
    losses = []
    # Each step's graph is all reference cycles (a node's closure refers to it): collecting the
    # youngest generation after each step is far cheaper than automatic collection's rescans.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(steps):
            losses.append(_logistic_step(value, model, params, X, targets, lr))
            gc.collect(0)
        correct = sum((float(model(p)[0].data) > 0) == (label == 1) for p, label in zip(X, y))
    finally:
        if collecting:
            gc.enable()
    return {"losses": losses, "accuracy": correct / len(X), "parameters": len(params)}


@scenario("tensor", reverse="backward")
def train_digits(
    tensor: ModuleType,
    X_train: list[list[float]],
    y_train: list[int],
    X_test: list[list[float]],
    y_test: list[int],
    epochs: int = 40,
    lr: float = 0.2,
    batch_size: int = 32,
    seed: int = 0,
    hidden: int = 128,
) -> dict[str, object]:
    """
    import sys
    sys.path.append("..")   # the kit's folder, which holds autograder/
    import tensor
    from autograder.datasets import grading_data  # the digits the grader trains on
    from autograder.inside.scenarios.training import train_digits
    run = train_digits(tensor, epochs={epochs}, lr={lr}, batch_size={batch_size}, seed={seed},
                       hidden={hidden}, **grading_data("digits"))
    print(run["losses"], run["test_accuracy"])
    """
    # A 64-hidden-10 ReLU network, minibatch SGD with the fused cross-entropy. One generator
    # seeds the He-normal weights (zero biases), then shuffles the rows every epoch.
    # Returns the mean training loss of every epoch and the accuracy on the test rows.
    rng = np.random.default_rng(seed)
    X_train = np.asarray(X_train, dtype=np.float64)
    y_train = np.asarray(y_train, dtype=np.intp)
    n_in, n_hidden, n_out = X_train.shape[1], hidden, 10
    W1 = tensor.Tensor(rng.normal(0.0, math.sqrt(2.0 / n_in), size=(n_in, n_hidden)))
    b1 = tensor.Tensor(np.zeros(n_hidden))
    W2 = tensor.Tensor(rng.normal(0.0, math.sqrt(2.0 / n_hidden), size=(n_hidden, n_out)))
    b2 = tensor.Tensor(np.zeros(n_out))
    params = [W1, b1, W2, b2]

    def logits(X: np.ndarray) -> object:
        hidden = (tensor.Tensor(X) @ W1 + b1).relu()
        return hidden @ W2 + b2

    losses = []
    for _ in range(epochs):
        order = rng.permutation(len(X_train))
        total = 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            loss = tensor.cross_entropy(logits(X_train[batch]), y_train[batch])
            for p in params:  # the new graph's gradients start at 0; the parameters' are zeroed here
                p.grad = np.zeros_like(np.asarray(p.data, dtype=np.float64))
            loss.backward()
            for p in params:
                p.data = np.array(p.data, dtype=np.float64) - lr * np.array(p.grad, dtype=np.float64)
            total += float(loss.data) * len(batch)
        losses.append(total / len(X_train))
    scores = np.array(logits(np.asarray(X_test, dtype=np.float64)).data, dtype=np.float64)
    correct = scores.argmax(axis=1) == np.asarray(y_test)
    return {"losses": losses, "test_accuracy": float(correct.mean())}
