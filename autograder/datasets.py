"""The training data: the lesson's datasets from scikit-learn, and the small copies that ship.

`moons` and `digits` need scikit-learn, which course staff have; `python -m autograder.datasets`
writes the cut-down copies the training parts are graded on to `autograder/data/` as JSON, and
`grading_data` reads them back with json alone. All of it is plain lists, ready for a worker.
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parent / "data"
MOONS_SAMPLES = 30
DIGITS_TRAIN_ROWS = 300
DIGITS_TEST_ROWS = 120


def moons(n_samples: int = 100) -> tuple[list[list[float]], list[int]]:
    """Two interleaving half circles: points (n_samples, 2) and labels in {0, 1}."""
    from sklearn.datasets import make_moons  # imported here: grading from the JSON copies needs none

    X, y = make_moons(n_samples=n_samples, noise=0.1, random_state=0)
    return X.tolist(), y.tolist()


def digits(train_size: int | None = None) -> dict[str, list]:
    """The 8x8 digits scaled to [0, 1], split as the lesson does: 20% test, a quarter of the rest
    validation (left out), 60% train; `train_size` keeps only the first training rows."""
    from sklearn.datasets import load_digits  # imported here: grading from the JSON copies needs none
    from sklearn.model_selection import train_test_split

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


def cut_down() -> dict[str, dict[str, list]]:
    """The grading copies, by file name: MOONS_SAMPLES points, and the first rows of digits."""
    X, y = moons(MOONS_SAMPLES)
    split = digits(DIGITS_TRAIN_ROWS)
    split["X_test"], split["y_test"] = split["X_test"][:DIGITS_TEST_ROWS], split["y_test"][:DIGITS_TEST_ROWS]
    return {"moons": {"X": X, "y": y}, "digits": split}


def write_grading_data(folder: Path = DATA) -> list[Path]:
    """Write the grading copies as `<name>.json` in `folder`; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in cut_down().items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
        written.append(path)
    return written


def grading_data(name: str, folder: Path = DATA) -> dict[str, list]:
    """One grading copy, `moons` or `digits`, read with json alone; raises FileNotFoundError."""
    path = folder / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: rebuild the grading data with scikit-learn "
                                "installed, by running `python -m autograder.datasets`")
    return json.loads(path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    for written in write_grading_data():
        print(written)
