"""The questions a grading asks: every number a test hands a scenario, drawn from one seed.

A test asks for a number with its public value and range, `ask.number(3.0, 1.5, 4.5)`. The
public seed (a student's own run, the handout's sealed answers) asks the public values; an
official grading's seed is an HMAC of the submission's files under the course's secret
(`official_seed`): the same files always get the same questions, a changed file new ones.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

PUBLIC = "public"
SECRET_BYTES = 32
DIGITS = 4  # decimals of a drawn number: short enough to read in a snippet
MIN_QUESTIONS = 1000  # the fewest different questions a test may ask officially (Questions.too_few)


class SecretError(Exception):
    """The course's secret cannot be read or made; the message names the file and the fix."""


@dataclass(frozen=True)
class Seed:
    """What a grading's questions are drawn from: "public", or the hex digest of an HMAC."""

    value: str = PUBLIC

    @property
    def public(self) -> bool:
        """Is this the public seed?"""
        return self.value == PUBLIC

    @classmethod
    def parse(cls, text: str) -> Seed:
        """A seed as written on a command line: `public`, or hex digits. Raises ValueError."""
        text = text.strip().lower()
        if text != PUBLIC and not (text and all(c in "0123456789abcdef" for c in text)):
            raise ValueError(f"{text!r}: give `public` or a seed of hex digits")
        return cls(text)


def official_seed(secret: bytes, files: Mapping[str, bytes], context: str = "") -> Seed:
    """The seed of an official grading of `files` (engine name -> bytes): an HMAC-SHA256 of
    their contents and of `context` (what else the grading depends on, such as the grader's
    version) under the course's `secret`."""
    mac = hmac.new(secret, b"autograder questions\0" + context.encode() + b"\0", hashlib.sha256)
    for name in sorted(files):
        mac.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return Seed(mac.hexdigest()[:32])


def read_secret(path: Path) -> bytes:
    """The secret in `path`, which only its owner may read. Raises SecretError."""
    try:
        info = os.stat(path)
        data = path.read_bytes()
    except FileNotFoundError:
        raise SecretError(f"{path}: no such file; make one with `autograder secret {path}` "
                          "(keep it: the same submission gets the same questions only with it)") from None
    except OSError as error:
        raise SecretError(f"{path}: cannot be read ({error.strerror})") from None
    if info.st_mode & 0o077:
        raise SecretError(f"{path}: other accounts may read it (mode {stat.S_IMODE(info.st_mode):o}); "
                          f"`chmod 600 {path}`, then make a new one if it may have been read")
    secret = data.strip()
    if len(secret) < 32:
        raise SecretError(f"{path}: holds {len(secret)} bytes, too short to be a secret; make a new one "
                          f"with `autograder secret {path}`")
    return secret


def make_secret(path: Path) -> bool:
    """Write a new random secret to `path`, readable by its owner alone, unless one is there.
    True when it was made now. Raises SecretError."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    except OSError as error:
        raise SecretError(f"{path}: cannot be made ({error.strerror})") from None
    with os.fdopen(descriptor, "w") as file:
        file.write(os.urandom(SECRET_BYTES).hex() + "\n")
    return True


class Questions:
    """The numbers one test asks, in the order it asks them: public values at the public seed,
    else drawn from the seed and the test's own name, so that no test's draws move another's.

    An official draw is never the public value, so no answer the handout's table holds is ever
    asked. `space` counts the different questions the test can ask officially (the product of
    each draw's choices): where it is small, a student could collect every answer from feedback
    over a few resubmissions, and the `ask` fixture refuses the test (`too_few`).
    """

    def __init__(self, seed: Seed, test: str) -> None:
        self.rng = None if seed.public else random.Random(f"{seed.value}:{test}")
        self.test = test
        self.space = 1

    def number(self, public: float, low: float, high: float) -> float:
        """A float in [low, high] (public: `public`), to DIGITS decimals; raises ValueError when
        `public` is outside the range."""
        _check_range(public, low, high)
        self.space *= max(1, round((high - low) * 10**DIGITS))
        if self.rng is None:
            return float(public)
        def draw() -> float:
            return min(max(round(self.rng.uniform(low, high), DIGITS), low), high)

        return self._other_than(public, draw, choices=low < high)

    def whole(self, public: int, low: int, high: int) -> int:
        """An int in [low, high] (public: `public`); raises ValueError when `public` is outside it."""
        _check_range(public, low, high)
        self.space *= max(1, high - low)
        if self.rng is None:
            return public
        return self._other_than(public, lambda: self.rng.randint(low, high), choices=low < high)

    def seed(self, public: int) -> int:
        """The seed of a scenario's own generator (public: `public`)."""
        self.space *= 2**31 - 2
        if self.rng is None:
            return public
        return self._other_than(public, lambda: self.rng.randrange(1, 2**31))

    @staticmethod
    def _other_than(public: float, draw: Callable[[], float], choices: bool = True) -> float:
        """`draw()`, drawn again while it gives the public value (where the range holds another)."""
        while (drawn := draw()) == public and choices:
            pass
        return drawn

    def too_few(self, at_least: int) -> str | None:
        """Why this test's questions could be collected by resubmitting (fewer than `at_least`
        different official ones), or None."""
        if self.space >= at_least:
            return None
        return (f"{self.test} can ask only {self.space} different questions in an official grading (fewer "
                f"than {at_least:,}): a student could collect every answer from feedback by resubmitting. "
                "Widen the ranges it asks with ask.number/ask.whole, or draw ask.seed for its scenario.")


def _check_range(public: float, low: float, high: float) -> None:
    """Raises ValueError when the public value lies outside its range."""
    if not low <= public <= high:
        raise ValueError(f"the public value {public} lies outside its range [{low}, {high}]")
