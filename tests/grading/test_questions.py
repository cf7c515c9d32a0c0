"""The questions a grading asks: public where the student grades their own work, drawn from a
secret in an official grading, the same for the same files, and of the same kinds at every seed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.inside.scenarios.common import uniform
from autograder.questions import (
    Questions,
    SecretError,
    Seed,
    make_secret,
    official_seed,
    read_secret,
)

FILES = {"value": b"class Value: ...\n", "dual": b"class Dual: ...\n"}
SECRET = bytes(range(32))


def test_the_public_seed_asks_the_public_values():
    ask = Questions(Seed(), "test_x.py::test_y")
    assert (ask.number(3.0, 1.5, 4.5), ask.whole(2, 2, 9), ask.seed(11)) == (3.0, 2, 11)
    assert type(ask.number(3, 1, 4)) is float


def test_a_seed_draws_within_the_ranges_and_the_same_every_time():
    def draws(seed: str, test: str) -> list:
        ask = Questions(Seed(seed), test)
        return [ask.number(3.0, 1.5, 4.5), ask.whole(2, 2, 9), ask.seed(11), ask.number(-0.5, -2.5, -0.1)]

    first = draws("ab12", "test_x.py::test_y")
    assert first == draws("ab12", "test_x.py::test_y")
    assert first != draws("ab13", "test_x.py::test_y") and first != draws("ab12", "test_x.py::test_z")
    for seed in range(300):
        number, whole, _, negative = draws(f"{seed:x}", "t")
        assert 1.5 <= number <= 4.5 and 2 <= whole <= 9 and -2.5 <= negative <= -0.1
        assert round(number, 4) == number


def test_a_public_value_outside_its_range_is_refused():
    with pytest.raises(ValueError, match="outside its range"):
        Questions(Seed("ab"), "t").number(5.0, 1.5, 4.5)
    with pytest.raises(ValueError, match="outside its range"):
        Questions(Seed(), "t").whole(1, 2, 9)


def test_a_seed_on_the_command_line_is_public_or_hex():
    assert Seed.parse(" Public ").public and Seed.parse("C0FFEE") == Seed("c0ffee")
    for wrong in ("", "xyz", "12 34"):
        with pytest.raises(ValueError):
            Seed.parse(wrong)


def test_the_official_seed_follows_the_files_the_context_and_the_secret():
    seed = official_seed(SECRET, FILES, "v1")
    assert seed == official_seed(SECRET, dict(reversed(FILES.items())), "v1")  # order does not matter
    assert not seed.public and len(seed.value) == 32
    changed = {**FILES, "value": FILES["value"] + b"# a comment\n"}
    others = [official_seed(SECRET, changed, "v1"), official_seed(SECRET, FILES, "v2"),
              official_seed(bytes(32), FILES, "v1"), official_seed(SECRET, {"value": FILES["value"]}, "v1")]
    assert seed not in others and len(set(others)) == len(others)


def test_a_secret_is_made_once_and_read_only_when_closed_to_others(tmp_path: Path):
    path = tmp_path / "grading.secret"
    assert make_secret(path) and not make_secret(path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    secret = read_secret(path)
    assert len(secret) >= 32 and read_secret(path) == secret
    path.chmod(0o644)
    with pytest.raises(SecretError, match="chmod 600"):
        read_secret(path)
    with pytest.raises(SecretError, match="no such file"):
        read_secret(tmp_path / "missing")
    short = tmp_path / "short"
    short.write_text("abc")
    short.chmod(0o600)
    with pytest.raises(SecretError, match="too short"):
        read_secret(short)


@pytest.mark.parametrize("count", [1, 2, 10, 20, 120])
def test_every_seed_covers_the_whole_range(count):
    """uniform's numbers fall one in each equal slice of the range, whatever the seed: both
    signs, small and large sizes, and never within the margin of a kink."""
    width = 6.0 / count
    for seed in range(200):
        numbers = uniform(seed, count, -3.0, 3.0, avoid=0.0, margin=0.05)
        assert len(numbers) == count and all(abs(x) >= 0.05 and -3.0 <= x <= 3.0 for x in numbers)
        for index, x in enumerate(sorted(numbers)):  # the i-th smallest comes from the i-th slice
            low, high = -3.0 + index * width, -3.0 + (index + 1) * width
            # a slice wholly within the margin gives the margin's edge on its own side of the kink
            edge = -0.05 if high <= 1e-9 else 0.05
            within_margin = low >= -0.05 - 1e-9 and high <= 0.05 + 1e-9
            assert (x == edge) if within_margin else low - 1e-6 <= x <= high + 1e-6, (seed, index, x)
        if count >= 2:
            assert min(numbers) < 0 < max(numbers)


def test_an_official_grading_never_asks_a_public_question():
    """The handout's table answers the public questions: an official draw is never one of them,
    even from a range of two."""
    for seed in range(500):
        ask = Questions(Seed(f"{seed:x}"), "t")
        assert ask.whole(2, 2, 3) == 3 and ask.number(0.5, 0.5, 0.5001) == 0.5001
        assert ask.seed(11) != 11 and ask.whole(5, 5, 5) == 5


def test_a_test_that_asks_too_few_questions_is_named():
    ask = Questions(Seed(), "test_x.py::test_y")
    ask.whole(-4, -9, -2)
    assert "test_x.py::test_y can ask only 7 different questions" in ask.too_few(1000)
    ask.number(1.0, 0.5, 2.0)
    assert ask.too_few(1000) is None
