"""The grading data that ships in autograder/data/ is what scikit-learn makes, and has the right form."""

import json

import pytest

from autograder import datasets


def test_the_shipped_files_are_what_scikit_learn_makes(tmp_path):
    pytest.importorskip("sklearn", reason="scikit-learn makes the grading data: pip install -e '.[staff]'")
    for path in datasets.write_grading_data(tmp_path):
        shipped = datasets.DATA / path.name
        assert json.loads(path.read_text()) == json.loads(shipped.read_text()), (
            f"{shipped} is out of date: rewrite it with `python -m autograder.datasets`")


def test_moons_has_two_coordinates_and_two_classes():
    moons = datasets.grading_data("moons")
    assert len(moons["X"]) == len(moons["y"]) == datasets.MOONS_SAMPLES
    assert all(len(point) == 2 for point in moons["X"])
    assert set(moons["y"]) == {0, 1}


def test_digits_has_64_pixels_in_0_1_and_ten_classes():
    digits = datasets.grading_data("digits")
    for part, rows in (("train", datasets.DIGITS_TRAIN_ROWS), ("test", datasets.DIGITS_TEST_ROWS)):
        X, y = digits[f"X_{part}"], digits[f"y_{part}"]
        assert len(X) == len(y) == rows
        assert all(len(row) == 64 and all(0.0 <= pixel <= 1.0 for pixel in row) for row in X)
        assert set(y) == set(range(10))


def test_a_missing_file_names_the_command_that_rebuilds_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m autograder.datasets"):
        datasets.grading_data("moons", tmp_path)
