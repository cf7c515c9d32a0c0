"""The reverse pass of the given Tensor engine: the root's own graph, newest tensor first.

backward() runs only the rules of the graph that ends at its root, keeps the graph, and
gives PyTorch's gradients for several losses over one graph, reuse after a backward, and
leaves that add up across calls. Nothing of a graph outlives its use, threads that train
separate models do not meet, and the kit's own tensor scenarios give the same answers
whatever ran before them in the worker.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from support import KIT, torch_answers
from support.expressions import two_losses

from autograder import scenario_sources
from autograder.junit_properties import recorded_calls


@pytest.fixture
def Tensor(reference):  # noqa: N802 - the class, named as the lessons name it
    return reference.tensor.Tensor


def count_rules(tensors: list) -> dict[int, int]:
    """Wrap each tensor's rule so that it counts its runs; returns the counts by position."""
    counts = dict.fromkeys(range(len(tensors)), 0)
    for index, tensor in enumerate(tensors):
        rule = tensor._backward

        def counted(index=index, rule=rule):
            counts[index] += 1
            rule()

        tensor._backward = counted
    return counts


# -- several losses, reuse, accumulation ---------------------------------------------------------


def test_two_losses_over_one_graph(Tensor):
    """The first backward() runs only its own graph; the second still finds its own."""
    w, x = Tensor([1, 2, 3]), Tensor([1, 1, 1])
    h = w * x
    L1 = h.sum()
    L2 = (h * 10.0).sum()
    L1.backward()
    L2.backward()
    np.testing.assert_array_equal(w.grad, [11, 11, 11])
    L3 = (h * h).sum()  # made after both backward() calls, from the same h
    L3.backward()
    np.testing.assert_array_equal(w.grad, [13, 15, 17])  # + 2 * h * x
    np.testing.assert_array_equal(x.grad, [1 + 10 + 2, 2 + 20 + 8, 3 + 30 + 18])


def test_an_intermediate_reused_after_a_backward(Tensor):
    w = Tensor([1.0, 2.0, 3.0])
    h = w * 2.0
    h.sum().backward()
    np.testing.assert_array_equal(w.grad, [2, 2, 2])
    (h * h).sum().backward()  # d(sum 4 w^2)/dw = 8 w, on top
    np.testing.assert_array_equal(w.grad, [2 + 8, 2 + 16, 2 + 24])


def test_leaves_add_up_across_calls_and_tensors_in_between_do_not(Tensor):
    """Three backward() calls of one loss: the leaves add up three gradients; h, a tensor in
    between, holds one call's gradient after each call, not their sum."""
    w, x = Tensor([1.0, -2.0]), Tensor([3.0, 0.5])
    h = w * x
    loss = (h * h).sum()
    for call in range(1, 4):
        loss.backward()
        np.testing.assert_array_equal(h.grad, 2 * h.data)
        np.testing.assert_array_equal(w.grad, call * 2 * h.data * x.data)
        np.testing.assert_array_equal(x.grad, call * 2 * h.data * w.data)
    np.testing.assert_array_equal(loss.grad, 1.0)


def test_a_leaf_as_root_adds_up(Tensor):
    """backward() on a leaf of one entry adds 1 to its gradient, as PyTorch does."""
    x = Tensor(2.0)
    x.backward()
    x.backward()
    assert float(x.grad) == 2.0


# -- only the root's own graph runs --------------------------------------------------------------


def test_the_root_runs_only_its_own_rules(Tensor):
    """Tensors made later on the same tape, and graphs merged into it later, run no rule of
    theirs when an earlier root calls backward(); a merged root runs both graphs, once each."""
    w, x, y = Tensor([1.0, 2.0]), Tensor([3.0, 4.0]), Tensor([0.5, -1.0])
    elsewhere = (y * y).exp()  # an older graph of its own
    h = w * x                               # 0
    loss = (h * 3.0).sum()                  # 1, 2
    later = (h * h).relu()                  # 3, 4: after loss, on h's tape
    other = (y + x).sum()                   # 5, 6: a graph of its own
    both = (later.sum() + other) * loss     # 7, 8, 9: the tapes merged
    tensors = [h, loss._prev[0], loss, later._prev[0], later, other._prev[0], other,
               both._prev[0]._prev[0], both._prev[0], both, elsewhere]
    counts = count_rules(tensors)
    loss.backward()
    assert counts == {0: 1, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 0, 9: 0, 10: 0}
    np.testing.assert_array_equal(w.grad, 3 * x.data)
    both.backward()
    assert counts == {0: 2, 1: 2, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 0}


def test_graphs_built_side_by_side_merge_in_the_order_made(Tensor):
    """Two graphs built in turns, then joined: every rule runs after all of its consumers', and
    a tensor of one graph from before they were joined still runs back its own graph."""
    x, y = Tensor([1.0, 2.0]), Tensor([3.0, -1.0])
    a = x * y        # graph 1
    b = y * y        # graph 2
    c = a * a        # graph 1, made after b
    d = b + x        # graph 2, made after c
    e = (c * d + a * b).sum()  # the sum of x^2 y^4 + x^3 y^2 + x y^3
    X, Y = x.data, y.data
    de_dx, de_dy = 2 * X * Y**4 + 3 * X**2 * Y**2 + Y**3, 4 * X**2 * Y**3 + 2 * X**3 * Y + 3 * X * Y**2
    e.backward()
    np.testing.assert_allclose(x.grad, de_dx, rtol=1e-15)
    np.testing.assert_allclose(y.grad, de_dy, rtol=1e-15)
    c.sum().backward()  # the sum of x^2 y^2
    np.testing.assert_allclose(x.grad, de_dx + 2 * X * Y**2, rtol=1e-15)
    np.testing.assert_allclose(y.grad, de_dy + 2 * X**2 * Y, rtol=1e-15)


def test_a_running_total_holds_each_loss_once(Tensor):
    """total = total + loss over many small graphs, with a backward() of the total halfway and
    at the end: each gives the share of every step so far, each rule running once, however deep
    the chain of sums (deeper than Python's recursion goes at the end)."""
    w = Tensor([1.0, 2.0])
    total = Tensor(0.0)
    losses = []
    for step in range(2000):
        losses.append((w * float(step)).sum())
        total = total + losses[-1]
        if step in (999, 1999):
            counts = count_rules([total, *losses])
            total.backward()
            assert set(counts.values()) == {1}, "a rule ran more than once, or never"
    np.testing.assert_array_equal(w.grad, [sum(range(1000)) + sum(range(2000))] * 2)


# -- nothing outlives its use ----------------------------------------------------------------------


def test_an_evaluation_pass_leaves_nothing_alive(Tensor):
    W, b = Tensor(np.ones((3, 4))), Tensor(np.zeros(4))
    made = []
    for _ in range(50):
        hidden = Tensor(np.ones((2, 3))) @ W
        out = (hidden + b).relu()
        made += [weakref.ref(hidden), weakref.ref(out)]
    del hidden, out
    gc.collect()
    assert sum(ref() is not None for ref in made) == 0
    loss = (Tensor(np.ones((2, 3))) @ W).sum()
    counts = count_rules([loss._prev[0], loss])
    loss.backward()  # runs its own two rules, nothing of the passes before
    assert counts == {0: 1, 1: 1}


STEPS = 20


def tensors_alive(Tensor) -> int:  # noqa: N803 - the class, named as the lessons name it
    gc.collect()
    return sum(isinstance(thing, Tensor) for thing in gc.get_objects())


def test_a_kept_tensor_keeps_nothing_made_from_it_alive(Tensor):
    """Inputs scaled once before training (a tensor in between, kept) take part in every step:
    each step's graph is freed with the step, and nothing piles up step by step."""
    before = tensors_alive(Tensor)
    raw = Tensor(np.arange(6.0).reshape(2, 3))
    inputs = raw * 0.5
    W = Tensor(np.ones((3, 1)))
    made = []
    for _ in range(STEPS):
        loss = (inputs @ W).relu().sum()
        made.append(weakref.ref(loss))
        loss.backward()
    # Alive: raw, the 0.5 it was scaled by, inputs, W, and the last step's three tensors,
    # whatever the number of steps.
    assert tensors_alive(Tensor) - before <= 4 + 3
    assert sum(ref() is not None for ref in made) == 1  # the last loss, still named
    np.testing.assert_array_equal(raw.grad, STEPS * 0.5 * np.ones((2, 3)))  # every step reached raw
    np.testing.assert_array_equal(W.grad, STEPS * inputs.data.sum(axis=0, keepdims=True).T)


# -- threads ------------------------------------------------------------------------------------------


def train(Tensor, seed: int, steps: int, shared) -> list[list[float]]:  # noqa: N803
    """A small linear model trained on its own seeded data; every step's gradients, and the
    output of a forward pass through `shared`, a leaf that other threads use as well."""
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(16, 5)), rng.normal(size=(16, 1))
    W, b = Tensor(rng.normal(size=(5, 1))), Tensor(np.zeros(1))
    seen = []
    for _ in range(steps):
        error = Tensor(X) @ W + b - y
        loss = (error * error).mean()
        W.grad, b.grad = np.zeros((5, 1)), np.zeros(1)
        loss.backward()
        evaluated = (Tensor(X) @ shared).relu().sum()
        seen.append([*W.grad.ravel().tolist(), *b.grad.tolist(), float(evaluated.data)])
        W.data = W.data - 0.05 * W.grad
        b.data = b.data - 0.05 * b.grad
    return seen


def test_threads_training_separate_models_at_once(Tensor):
    """Four threads train a model each, at once, and evaluate one shared leaf: every step gives
    what it gives in one thread alone."""
    seeds, steps = range(4), 300
    shared = Tensor(np.linspace(-1.0, 1.0, 10).reshape(5, 2))
    alone = [train(Tensor, seed, steps, shared) for seed in seeds]
    together: dict[int, list] = {}
    start = threading.Barrier(len(seeds))

    def run(seed: int) -> None:
        start.wait()
        together[seed] = train(Tensor, seed, steps, shared)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so that their steps interleave
    try:
        threads = [threading.Thread(target=run, args=(seed,)) for seed in seeds]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    wrong = sum(a != b for seed in seeds for a, b in zip(alone[seed], together[seed]))
    assert wrong == 0, f"{wrong} of {len(seeds) * steps} steps got other gradients than alone"


# -- what cannot be right -------------------------------------------------------------------------


def test_backward_without_a_gradient_needs_one_entry(Tensor):
    x = Tensor([1.0, 2.0, 3.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match=r"only for scalar outputs.*call \.sum\(\) or \.mean\(\)"):
        y.backward()
    assert not x.grad.any()
    y.backward(np.array([1.0, 0.0, -1.0]))
    np.testing.assert_array_equal(x.grad, [2.0, 0.0, -2.0])
    with pytest.raises(RuntimeError, match=r"shape \(3,\), not \(2,\)"):
        y.backward([1.0, 1.0])
    (Tensor([4.0]) * x.sum()).backward()  # one entry, whatever its shape
    np.testing.assert_array_equal(x.grad, [6.0, 4.0, 2.0])


# -- PyTorch's answers (tests/support/torch_answers.py) ----------------------------------------------------


def test_the_same_gradients_as_pytorch(Tensor):
    """Two losses over one graph, reuse after backward and repeated calls, as PyTorch does them
    with retain_graph=True."""
    answer = torch_answers.recorded()["two_losses"]
    start = [np.asarray(array, dtype=float) for array in answer["inputs"]]
    ours = two_losses(Tensor, lambda loss: loss.backward(), *start)
    for mine, theirs in zip(ours, answer["grads"]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_the_call_pytorch_refuses_is_refused_in_its_words(Tensor):
    assert torch_answers.SCALAR_FOR_MANY in torch_answers.recorded()["backward_of_many"]
    with pytest.raises(RuntimeError, match=torch_answers.SCALAR_FOR_MANY):
        (Tensor([1.0, 1.0, 1.0]) * 2.0).backward()


# -- the kit's scenarios, alone and after each other -------------------------------------------------

# Runs scenario calls on the tensor.py of a folder: `together`, in order in one interpreter,
# or `alone`, each in a process of its own, forked before the engine is imported. Prints each
# call's answer (or the exception it raised) and how many tensors are alive after it.
DRIVER = """
import gc, importlib, json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])

def run(scenario_id, kwargs):
    import tensor
    module, name = scenario_id.split(":")
    function = getattr(importlib.import_module("autograder.inside.scenarios." + module), name)
    try:
        answer = function(tensor, **kwargs)
    except Exception as error:
        answer = {"raised": type(error).__name__, "message": str(error)}
    gc.collect()
    alive = sum(isinstance(thing, tensor.Tensor) for thing in gc.get_objects())
    print(json.dumps([answer, alive], default=lambda x: np.asarray(x).tolist()), flush=True)

importlib.import_module("autograder.inside.scenarios.training")
for scenario_id, kwargs in json.load(sys.stdin):
    if sys.argv[2] == "together":
        run(scenario_id, kwargs)
    elif os.fork() == 0:
        try:
            run(scenario_id, kwargs)
        finally:
            os._exit(0)
    else:
        os.wait()
"""


def run_calls(folder: Path, calls: list, how: str) -> list[tuple[str, int]]:
    """Each call's answer (as JSON text) and the tensors alive after it, run `together` or `alone`."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(folder), how], input=json.dumps(calls),
                          cwd=KIT, env=env, capture_output=True, text=True, check=True, timeout=300)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(lines) == len(calls), done.stderr
    return [(json.dumps(answer), alive) for answer, alive in lines]


@pytest.fixture(scope="module")
def tensor_calls(sealed_reference) -> list:
    """Every call of a tensor scenario that the suites make, with the suites' own kwargs."""
    calls = {call.recorded: [call.scenario, call.kwargs] for call in recorded_calls(sealed_reference.junit)
             if scenario_sources.scenario(call.scenario).engine == "tensor"}
    found = list(calls.values())
    assert {call[0] for call in found} >= {"tensor:all_operands", "training:train_digits"}
    return found


def test_tensor_scenarios_do_not_depend_on_what_ran_before(tensor_calls):
    """Each scenario alone in a fresh process, and after every other one in one interpreter (all
    of them run once, then each again), gives the same answer, and leaves no tensor alive:
    nothing of one scenario is there for the next one's backward() to run. The reference never
    raises: an answer that is an exception in every run would agree with itself."""
    folder = KIT / "solutions"
    alone = run_calls(folder, tensor_calls, "alone")
    together = run_calls(folder, tensor_calls + tensor_calls, "together")
    count = len(tensor_calls)
    raised = [f"{call[0]} {call[1]}: {answer}" for call, (answer, _) in zip(tensor_calls, alone)
              if '"raised"' in answer]
    assert not raised, "the reference raised, so nothing was compared: " + "; ".join(raised)
    differ = [f"{scenario_id} {kwargs}" for index, (scenario_id, kwargs) in enumerate(tensor_calls)
              if not alone[index][0] == together[index][0] == together[count + index][0]]
    assert not differ, "answers otherwise after other scenarios than alone: " + "; ".join(differ)
    left = [alive for _, alive in alone + together]
    assert not any(left), f"tensors alive after each scenario: {left}"
