"""What the kit's own tests share: where the kit is, and the seeds its questions are asked at."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent.parent

# The seeds beside the public one that `--exhaustive` adds: whatever a test proves of the suites
# (fairness, diagnoses, mutation, the numbers a message states) it then proves at each as well.
FIXED_SEEDS = ("5eed0001", "c0ffee42", "0ddba115")
# The seeds a run asks at beside the public one: an official seed drawn for this run (see
# tests/conftest.py), and with --exhaustive FIXED_SEEDS too. configure() sets them before pytest
# imports a test module; these are what a module imported outside pytest sees.
SEEDS: tuple[str, ...] = FIXED_SEEDS
EVERY_SEED: tuple[str, ...] = ("public", *SEEDS)
EXHAUSTIVE = False  # every seed and every Python, not only the public seed, one drawn, and two Pythons
CORES = os.cpu_count() or 2


def configure(drawn: str, exhaustive: bool) -> None:
    """Ask this run's questions at the public seed and `drawn`, and with `exhaustive` at
    FIXED_SEEDS as well."""
    global SEEDS, EVERY_SEED, EXHAUSTIVE
    SEEDS = (drawn, *(FIXED_SEEDS if exhaustive else ()))
    EVERY_SEED = ("public", *SEEDS)
    EXHAUSTIVE = exhaustive


def in_turn(items, choices: tuple) -> list[tuple]:
    """Each of `items` with one of `choices`, the choices taken in turn from a start this run's
    drawn seed picks (another at every run); with --exhaustive, each item with every choice."""
    if EXHAUSTIVE:
        return [(item, choice) for item in items for choice in choices]
    return [(item, choices[(_start() + index) % len(choices)]) for index, item in enumerate(items)]


def by_name(name: str, choices: tuple) -> tuple:
    """The choices a test known by `name` runs with: every one with --exhaustive, else one, which
    its name and a start the drawn seed picks choose (a run whose seed starts the other way takes
    the other; --drawn-seed takes the same again)."""
    if EXHAUSTIVE:
        return choices
    return (choices[(_start() + zlib.crc32(name.encode())) % len(choices)],)


def _start() -> int:
    """The drawn seed as a number: where this run's choices start, modulo their count."""
    return int(SEEDS[0], 16)
