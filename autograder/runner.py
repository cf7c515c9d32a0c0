"""Run one scenario on the submission and on the reference, with the reference's time as the yardstick.

The reference answers either live, from `solutions/` in a worker of its own, or from a
sealed file of answers made earlier from `solutions/` (where the solutions must not ship).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from .config import Grading
from .worker import Answer, Worker


def scenario_key(scenario_id: str, kwargs: dict) -> str:
    text = json.dumps([scenario_id, kwargs], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class LiveReference:
    """The reference implementation, run in its own worker."""

    def __init__(self, folder: Path, grading: Grading) -> None:
        self.worker = Worker(folder, grading.limits)
        self.answers: dict[str, Answer] = {}
        self.timeout = grading.limits.test_timeout_seconds

    def answer(self, scenario_id: str, kwargs: dict) -> Answer:
        key = scenario_key(scenario_id, kwargs)
        if key not in self.answers:
            self.answers[key] = self.worker.run(scenario_id, kwargs, self.timeout)
        return self.answers[key]

    def close(self) -> None:
        self.worker.close()


class SealedReference:
    """Answers recorded from the reference, for a kit that ships without `solutions/`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers = {key: Answer(**value)
                        for key, value in json.loads(path.read_text(encoding="utf-8")).items()}

    def answer(self, scenario_id: str, kwargs: dict) -> Answer:
        try:
            return self.answers[scenario_key(scenario_id, kwargs)]
        except KeyError:
            raise LookupError(f"{self.path} holds no answer for scenario {scenario_id}; "
                              "rebuild the sealed file from solutions/") from None

    def close(self) -> None:
        pass


def seal(answers: dict[str, Answer], path: Path) -> None:
    """Write reference answers to a sealed file (output is dropped: it is not needed)."""
    records = {key: {**asdict(answer), "output": ""} for key, answer in sorted(answers.items())}
    path.write_text(json.dumps(records, sort_keys=True), encoding="utf-8")


class Runner:
    """A submission and a reference, side by side."""

    def __init__(self, submission: Path, reference: LiveReference | SealedReference,
                 grading: Grading) -> None:
        self.grading = grading
        self.submission = Worker(submission, grading.limits)
        self.reference = reference
        self.answers: dict[str, tuple[Answer, Answer, float]] = {}
        self.second: Worker | None = None

    def time_limit(self, reference: Answer) -> float:
        limits = self.grading.limits
        return max(limits.time_floor_seconds, limits.time_multiplier * reference.seconds)

    def run(self, scenario_id: str, kwargs: dict) -> tuple[Answer, Answer, float]:
        """The reference's answer, the submission's answer, and the time limit it had."""
        key = scenario_key(scenario_id, kwargs)
        if key not in self.answers:
            expected = self.reference.answer(scenario_id, kwargs)
            limit = self.time_limit(expected)
            self.answers[key] = expected, self.submission.run(scenario_id, kwargs, limit), limit
        return self.answers[key]

    def unsteady(self, scenario_id: str, kwargs: dict) -> bool:
        """Does the submission answer differently in another process (with another history)?

        An engine that visits a set of parents, ordered by memory addresses, can do that.
        """
        expected, got, limit = self.run(scenario_id, kwargs)
        if got.observations is None:
            return False
        if self.second is None:
            self.second = Worker(self.submission.folder, self.grading.limits)
        again = self.second.run(scenario_id, kwargs, limit)
        return again.observations is not None and again.observations != got.observations

    def close(self) -> None:
        self.submission.close()
        self.reference.close()
        if self.second is not None:
            self.second.close()
