"""The training scenarios: the reference trains as the lesson says, and the contract holds.

The contract of autograder/inside/scenarios/training.py: it runs inside the worker, so it imports
only the standard library and NumPy, uses no private name of an engine, takes the engine
module as its first parameter (named after the file), and returns plain numbers and lists.
"""

import ast
import importlib.util
import inspect
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from support import KIT

from autograder import config
from autograder.datasets import grading_data

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

TRAINING = KIT / "autograder" / "inside" / "scenarios" / "training.py"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"kit_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def training() -> ModuleType:
    return importlib.import_module("autograder.inside.scenarios.training")  # in its package, as in the worker


@pytest.fixture(scope="module")
def datasets() -> ModuleType:
    return load(KIT / "autograder" / "datasets.py")


def is_plain_float_list(values) -> bool:
    return type(values) is list and all(type(x) is float and math.isfinite(x) for x in values)


# --- The contract ------------------------------------------------------------------------------


def test_training_imports_only_the_standard_library_and_numpy():
    tree = ast.parse(TRAINING.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:  # a module of the worker's scenarios package
            assert node.level == 1 and (TRAINING.parent / f"{node.module}.py").is_file(), ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported - set(sys.stdlib_module_names) == {"numpy"}


def test_training_uses_no_private_name():
    tree = ast.parse(TRAINING.read_text(encoding="utf-8"))
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not [name for name in attributes if name.startswith("_")]


@pytest.mark.parametrize(("function", "engine"), [("train_moons", "value"), ("train_digits", "tensor")])
def test_the_first_parameter_names_the_engine(training, function, engine):
    assert next(iter(inspect.signature(getattr(training, function)).parameters)) == engine


# --- Moons on the scalar engine ------------------------------------------------------------------


def test_moons_as_in_the_lesson(reference, training, datasets):
    X, y = datasets.moons()
    result = training.train_moons(reference.value, X, y, steps=100, lr=1.0)
    print(f"moons: final accuracy {result['accuracy']:.2f}, final loss {result['losses'][-1]:.4f}")
    assert result["parameters"] == 105
    assert is_plain_float_list(result["losses"]) and len(result["losses"]) == 100
    # The lesson printed the loss of step 0 and of step 99 to four decimals.
    assert result["losses"][0] == pytest.approx(0.7159, abs=5e-5)
    assert result["losses"][-1] == pytest.approx(0.0154, abs=5e-5)
    assert type(result["accuracy"]) is float and result["accuracy"] >= 0.95


def test_moons_cut_down(reference, training, datasets):
    X, y = datasets.moons(n_samples=30)
    result = training.train_moons(reference.value, X, y, steps=5)  # as the suites grade it
    assert result["parameters"] == 105
    assert is_plain_float_list(result["losses"]) and len(result["losses"]) == 5
    assert result["losses"][-1] < result["losses"][0]
    assert type(result["accuracy"]) is float and 0.0 <= result["accuracy"] <= 1.0


def test_moons_is_deterministic(reference, training, datasets):
    X, y = datasets.moons(n_samples=30)
    runs = [training.train_moons(reference.value, X, y, steps=5, seed=3) for _ in range(2)]
    assert runs[0] == runs[1]
    other_seed = training.train_moons(reference.value, X, y, steps=5, seed=4)
    assert other_seed["losses"] != runs[0]["losses"]


def units_shut_after_open(training, value: ModuleType, X: list, y: list, seed: int) -> int:
    """How many hidden units of the graded moons run (the reference's engine) are open for some
    point at one step and shut for every point at a later one."""
    model = training.MLP(value, [2, 8, 8, 1], np.random.default_rng(seed))
    params, targets = model.parameters(), [2.0 * label - 1.0 for label in y]
    opened, shut_later = set(), set()
    for _ in range(5):
        inputs = [[float(v) for v in point] for point in X]
        for index, layer in enumerate(model.layers[:-1]):
            sums = [[float(n.bias.data) + sum(float(w.data) * v for w, v in zip(n.weights, row))
                     for n in layer] for row in inputs]
            for unit in range(len(layer)):
                if any(row[unit] > 0 for row in sums):
                    opened.add((index, unit))
                elif (index, unit) in opened:
                    shut_later.add((index, unit))
            inputs = [[max(v, 0.0) for v in row] for row in sums]
        training._logistic_step(value, model, params, X, targets, 1.0)
    return len(shut_later)


def test_a_relu_that_cuts_shut_units_out_trains_as_the_reference(reference, training):
    """An engine whose relu returns its input where it is open and a fresh constant where it is
    shut has every value and gradient right, so the moons run is the reference's at every seed,
    also where a unit opened at one step is shut for the whole batch at a later one: zero_grad()
    then reaches its weights only through the run's own term. value.relu grades that engine."""
    cuts = load(KIT / "tests" / "engines" / "value" / "bug_relu_cuts_shut_units.py")
    data = grading_data("moons")
    seeds = (13, 38)  # of seeds 0 to 39, where a run without the term departed from the reference
    assert all(units_shut_after_open(training, reference.value, **data, seed=seed) for seed in seeds)
    tolerance = config.load().tolerances.named("training")
    for seed in seeds:
        expected = training.train_moons(reference.value, **data, steps=5, lr=1.0, seed=seed, hidden=8)
        got = training.train_moons(cuts, **data, steps=5, lr=1.0, seed=seed, hidden=8)
        assert got["accuracy"] == expected["accuracy"] and all(
            tolerance.close(g, e) for g, e in zip(got["losses"], expected["losses"], strict=True)), (
            f"seed {seed}: {got} != {expected}")


# --- Digits on the tensor engine -----------------------------------------------------------------


def test_digits_as_in_the_lesson(reference, training, datasets):
    data = datasets.digits()
    assert (len(data["X_train"]), len(data["X_test"])) == (1077, 360)  # 60% and 20% of 1797
    result = training.train_digits(reference.tensor, **data, epochs=40, lr=0.2, batch_size=32)
    print(f"digits: test accuracy {result['test_accuracy']:.3f}")
    assert is_plain_float_list(result["losses"]) and len(result["losses"]) == 40
    assert result["losses"][-1] < result["losses"][0]
    assert type(result["test_accuracy"]) is float and result["test_accuracy"] >= 0.95


def test_digits_cut_down(reference, training, datasets):
    data = datasets.digits(train_size=300)
    assert len(data["X_train"]) == len(data["y_train"]) == 300
    result = training.train_digits(reference.tensor, **data, epochs=3)
    assert is_plain_float_list(result["losses"]) and len(result["losses"]) == 3
    assert result["losses"][0] > result["losses"][1] > result["losses"][2]
    assert result["test_accuracy"] > 0.3  # ten classes: chance is 0.1


def test_digits_is_deterministic(reference, training, datasets):
    data = datasets.digits(train_size=300)
    runs = [training.train_digits(reference.tensor, **data, epochs=2, seed=3) for _ in range(2)]
    assert runs[0] == runs[1]
    assert training.train_digits(reference.tensor, **data, epochs=2, seed=4) != runs[0]


def test_the_datasets_are_plain_lists(datasets):
    X, y = datasets.moons(n_samples=10)
    assert type(X) is list and all(type(v) is float for point in X for v in point)
    assert type(y) is list and set(y) <= {0, 1} and all(type(label) is int for label in y)
    data = datasets.digits(train_size=5)
    assert all(type(data[key]) is list for key in ("X_train", "y_train", "X_test", "y_test"))
    assert all(type(v) is float and 0.0 <= v <= 1.0 for row in data["X_test"] for v in row)
