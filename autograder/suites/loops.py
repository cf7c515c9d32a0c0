"""The lesson's training loop, modelled: what w comes to after three steps of each body.

prediction = w + w, loss = (prediction - target) ** 2, so dloss/dw = 4 * (2w - target), summed
exactly as an engine sums it. The suites use it to tell one wrong loop from another.
"""

from __future__ import annotations

# Said where a training run, or a deep graph, times out: a correct engine can still be too slow,
# for the time limit is a multiple of the reference's.
SLOW_BACKWARD = ("A correct engine is this slow when its backward() or zero_grad() keeps the nodes it "
                 "has visited in a list (each `in` then scans it: the square of the graph's size), or "
                 "sorts the graph again for every node: keep them in a set (of ids, where values are "
                 "compared by data).")


def lesson_loop(ask) -> dict[str, float]:
    """The numbers of one loop: where w starts, the target, the learning rate (public: 0.5, and
    the lesson's 4 and 0.1; the rate stays below 0.125, where one step would land on the target).
    w starts above 0 at every seed, never at the lesson's 0, where w and w + w hold equal data: an
    engine that compares values by data would take them for one node there and nowhere else."""
    return {"w0": ask.number(0.5, 0.2, 1.0), "target": ask.number(4.0, 2.5, 6.0),
            "lr": ask.number(0.1, 0.05, 0.11)}


def trained(w0: float, target: float, lr: float, body: str = "correct", steps: int = 3) -> float:
    """w after `steps` steps of a loop `body`: "correct" (zero_grad, then backward: each step
    sees its own gradient), "no_zero_grad" (the gradients pile up) or "after_backward"
    (zero_grad after backward: each step sees 0)."""
    w, grad = w0, 0.0
    for _ in range(steps):
        fresh = 2 * (w + w - target) + 2 * (w + w - target)
        grad = {"correct": fresh, "no_zero_grad": grad + fresh, "after_backward": 0.0}[body]
        w -= lr * grad
    return w
