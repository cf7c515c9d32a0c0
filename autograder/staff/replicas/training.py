"""Replicas of the training scenarios (inside/scenarios/training.py) on the reference's engines.

Each computes what the reference answers, the same numbers within the training tolerance,
with whole-array NumPy instead of a graph of nodes: `train_moons` runs the 2-hidden-hidden-1
network on every point at once where the scalar engine builds some 20,000 Values a step, and
`train_digits` runs the tensor engine's own array operations without its graph.
"""

from __future__ import annotations

import math

import numpy as np

TOLERANCE = "training"  # the suites judge these runs with grading.toml's training tolerance


def train_moons(X: list, y: list, steps: int = 100, lr: float = 1.0, seed: int = 0, hidden: int = 8) -> dict:
    points = np.asarray(X, dtype=np.float64)
    rng = np.random.default_rng(seed)
    sizes = [points.shape[1], hidden, hidden, 1]
    # One draw per weight, neuron by neuron, as the scalar MLP makes them; biases start at 0.
    weights = [rng.normal(0.0, math.sqrt(2.0 / n_in), size=(n_out, n_in))
               for n_in, n_out in zip(sizes, sizes[1:])]
    biases = [np.zeros(n_out) for n_out in sizes[1:]]
    targets = 2.0 * np.asarray(y, dtype=np.float64) - 1.0
    losses = []
    for _ in range(steps):
        inputs, before_relu = _forward(points, weights, biases)
        scores = inputs[-1][:, 0]
        exps = [math.exp(-s * t) for s, t in zip(scores.tolist(), targets.tolist())]
        total = 0.0
        for e in exps:  # added up in order, as the scalar run's running total
            total = total + math.log(1.0 + e)
        losses.append(total * (1.0 / len(points)))
        # d loss / d score of each point: (1/n) / (1 + e) through log, e through exp, -t through -s * t
        upstream = (1.0 / len(points)) / (1.0 + np.array(exps)) * np.array(exps) * -targets
        grads = _backward(upstream[:, None], inputs, before_relu, weights)
        weights = [w - lr * g for w, (g, _) in zip(weights, grads)]
        biases = [b - lr * g for b, (_, g) in zip(biases, grads)]
    final = _forward(points, weights, biases)[0][-1][:, 0]
    accuracy = sum((score > 0) == (label == 1) for score, label in zip(final.tolist(), y)) / len(points)
    count = sum(w.size + b.size for w, b in zip(weights, biases))
    return {"losses": losses, "accuracy": accuracy, "parameters": count}


def _forward(points: np.ndarray, weights: list, biases: list) -> tuple[list, list]:
    """Every layer's input (the last: the scores) and every hidden layer's sum before ReLU. Each
    sum is the bias plus one product at a time, in order, as a scalar neuron adds them."""
    inputs, before_relu = [points], []
    for index, (w, b) in enumerate(zip(weights, biases)):
        x = inputs[-1]
        total = np.broadcast_to(b, (len(x), len(b))).copy()
        for i in range(w.shape[1]):
            total = total + w[:, i] * x[:, i:i + 1]
        if index < len(weights) - 1:
            before_relu.append(total)
            total = np.maximum(total, 0.0)
        inputs.append(total)
    return inputs, before_relu


def _backward(upstream: np.ndarray, inputs: list, before_relu: list, weights: list) -> list:
    """Each layer's (weight gradient, bias gradient), from the gradient of the scores."""
    grads = []
    for index in reversed(range(len(weights))):
        grads.append((upstream.T @ inputs[index], upstream.sum(axis=0)))
        if index:
            upstream = (upstream @ weights[index]) * (before_relu[index - 1] > 0)
    return grads[::-1]


def train_digits(X_train: list, y_train: list, X_test: list, y_test: list, epochs: int = 40, lr: float = 0.2,
                 batch_size: int = 32, seed: int = 0, hidden: int = 128) -> dict:
    rng = np.random.default_rng(seed)
    X_train = np.asarray(X_train, dtype=np.float64)
    y_train = np.asarray(y_train, dtype=np.intp)
    n_in, n_hidden, n_out = X_train.shape[1], hidden, 10
    W1 = rng.normal(0.0, math.sqrt(2.0 / n_in), size=(n_in, n_hidden))
    b1 = np.zeros(n_hidden)
    W2 = rng.normal(0.0, math.sqrt(2.0 / n_hidden), size=(n_hidden, n_out))
    b2 = np.zeros(n_out)
    losses, every_row = [], np.arange(batch_size)
    for _ in range(epochs):
        order = rng.permutation(len(X_train))
        total = 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            x, labels, rows = X_train[batch], y_train[batch], every_row[:len(batch)]
            before_relu = x @ W1 + b1
            activations = np.maximum(before_relu, 0.0)
            logits = activations @ W2 + b2
            # The fused cross-entropy: its value, and (softmax - one-hot) / n for the logits.
            shifted = logits - logits.max(axis=1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            total += float(-log_probs[rows, labels].mean()) * len(batch)
            d_logits = np.exp(log_probs)
            d_logits[rows, labels] -= 1.0
            d_logits /= len(labels)
            d_before = d_logits @ W2.T
            d_before *= before_relu > 0
            W2 -= lr * (activations.T @ d_logits)  # each parameter's own array: changed in place
            b2 -= lr * d_logits.sum(axis=0)
            W1 -= lr * (x.T @ d_before)
            b1 -= lr * d_before.sum(axis=0)
        losses.append(total / len(X_train))
    scores = np.maximum(np.asarray(X_test, dtype=np.float64) @ W1 + b1, 0.0) @ W2 + b2
    correct = scores.argmax(axis=1) == np.asarray(y_test)
    return {"losses": losses, "test_accuracy": float(correct.mean())}
