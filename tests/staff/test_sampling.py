"""The kit's tests that take one choice a run (support: `in_turn`, `by_name`): a run meets every
choice, each item meets the others at runs whose drawn seeds start elsewhere, --exhaustive takes
them all, and the same drawn seed takes the same again."""

from __future__ import annotations

import pytest
import support

NAMES = [f"test_{n}" for n in range(12)]
LEVELS = ("isolated", "container")


def at(monkeypatch: pytest.MonkeyPatch, drawn: str, exhaustive: bool = False) -> None:
    monkeypatch.setattr(support, "SEEDS", (drawn,))
    monkeypatch.setattr(support, "EXHAUSTIVE", exhaustive)


@pytest.mark.parametrize("take", [
    lambda: [(name, level) for name in NAMES for level in support.by_name(name, LEVELS)],
    lambda: support.in_turn(NAMES, LEVELS),
], ids=["by_name", "in_turn"])
def test_two_starts_take_every_pair_once_and_exhaustive_takes_them_all(monkeypatch, take):
    at(monkeypatch, "1b8b6ded3d38a561599ee0ad21581e8e")
    even = take()
    assert take() == even  # the same seed, the same choices
    at(monkeypatch, "1b8b6ded3d38a561599ee0ad21581e8f")
    odd = take()
    assert sorted(n for n, _ in even) == sorted(n for n, _ in odd) == sorted(NAMES)  # one choice each
    assert {level for _, level in even} == {level for _, level in odd} == set(LEVELS)  # a run meets both
    every = {(name, level) for name in NAMES for level in LEVELS}
    assert set(even) | set(odd) == every and not set(even) & set(odd)
    at(monkeypatch, "1b8b6ded3d38a561599ee0ad21581e8e", exhaustive=True)
    assert sorted(take()) == sorted(every)
