"""The training data, loaded with scikit-learn on the trusted side of the grader.

Everything is returned as plain lists, ready to be sent as JSON to a worker process that
runs the scenarios of `autograder/scenarios/training.py`.
"""

from sklearn.datasets import load_digits, make_moons
from sklearn.model_selection import train_test_split


def moons(n_samples: int = 100) -> tuple[list[list[float]], list[int]]:
    """Two interleaving half circles: points (n_samples, 2) and labels in {0, 1}."""
    X, y = make_moons(n_samples=n_samples, noise=0.1, random_state=0)
    return X.tolist(), y.tolist()


def digits(train_size: int | None = None) -> dict[str, list]:
    """The 8x8 digits scaled to [0, 1], split as in the lesson: 60% train, 20% test.

    The lesson holds out 20% for testing, then a quarter of the rest for validation; the
    validation rows are not used here. `train_size` keeps only the first rows of the
    training part, for a quick run.
    """
    data = load_digits()
    X, y = data.data / 16.0, data.target
    X_rest, X_test, y_rest, y_test = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0
    )
    X_train, _, y_train, _ = train_test_split(
        X_rest, y_rest, test_size=0.25, stratify=y_rest, random_state=0
    )
    if train_size is not None:
        X_train, y_train = X_train[:train_size], y_train[:train_size]
    return {
        "X_train": X_train.tolist(),
        "y_train": y_train.tolist(),
        "X_test": X_test.tolist(),
        "y_test": y_test.tolist(),
    }
