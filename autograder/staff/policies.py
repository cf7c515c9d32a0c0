"""How a grade becomes the number an LMS gets: the bonus policy of each LMS, the late policy,
and zeros for what could not be graded. Every choice is said in the summary.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

BONUS_POLICIES = ("cap", "scale", "keep")
# What each LMS takes by default: Canvas takes a score above the points possible (extra credit,
# GradebookImporter parses any number); Moodle skips a grade above the grade item's maximum
# (assign_feedback_offline::process_import_grades) or stops the import (grade/import/csv's
# gradevaluetoobig), so the bonus is capped there.
DEFAULT_BONUS = {"canvas": "keep", "moodle": "cap"}
LMS_NAMES = {"canvas": "Canvas", "moodle": "Moodle"}


class PolicyError(Exception):
    """An option of a policy cannot be read; the message says what to give."""


@dataclass(frozen=True)
class Late:
    """Points taken off per day late (a day begun counts), at most `cap`, from the due time."""

    per_day: float
    cap: float | None = None
    due: datetime | None = None
    extended: bool = False  # `due` is the student's own, an extension (adjustments.py)

    def penalty(self, late: bool, submitted_at: str) -> tuple[float, str]:
        """The points taken off a submission, and how they were counted, in words."""
        days, how = self.days_late(late, submitted_at)
        if not days:
            return 0.0, how
        taken = days * self.per_day
        if self.cap is not None:
            taken = min(taken, self.cap)
        return round(taken, 2), how

    def due_words(self) -> str:
        """`due time`, or for an extension `extended due time 2026-12-03T23:59+00:00`."""
        return f"extended due time {self.due.isoformat(timespec='minutes')}" if self.extended else "due time"

    def days_late(self, late: bool, submitted_at: str) -> tuple[int, str]:
        """Whole days late (a day begun counts), and how that is known."""
        when = parse_time(submitted_at) if submitted_at else None
        if when is not None and self.due is not None:
            if (when.tzinfo is None) != (self.due.tzinfo is None):
                when = when.replace(tzinfo=self.due.tzinfo)  # the LMS's local time, as the due time's
            seconds = (when - self.due).total_seconds()
            if seconds <= 0:
                return 0, f"handed in {submitted_at}, by the {self.due_words()}"
            days = math.ceil(seconds / timedelta(days=1).total_seconds())
            how = f"handed in {submitted_at}, {days} day{'s' if days > 1 else ''} late"
            return days, how + (f", after the {self.due_words()}" if self.extended else "")
        if late and self.extended:  # the LMS marks it against the class's due time, which the extension moved
            return 0, f"marked late by the LMS, which does not say when: on time by the {self.due_words()}"
        if late:
            return 1, "marked late by the LMS, which does not say by how much: counted as 1 day"
        return 0, ""


@dataclass(frozen=True)
class Policy:
    """The choices of one run that turn grades into the LMS's numbers."""

    zeros: bool = False  # a submission that could not be graded, or a student with several, gets 0
    bonus: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_BONUS))
    moodle_max: float | None = None  # the Moodle grade item's maximum, where the TA gives it
    late: Late | None = None

    def late_for(self, due: str) -> Late | None:
        """The late policy of a student whose own due time (an extension, ISO 8601) is `due`, if any."""
        if self.late is None or not due:
            return self.late
        return dataclasses.replace(self.late, due=parse_time(due), extended=True)

    def for_lms(self, lms: str, total: float, maximum: float, best: float) -> float:
        """A total as the LMS gets it: capped at `maximum`, scaled so that `best` (every point,
        bonus included) is `maximum`, or kept."""
        policy = self.bonus.get(lms, "keep")
        if policy == "cap":
            return round(min(total, maximum), 2)
        if policy == "scale" and best > 0:
            return round(total * maximum / best, 2)
        return total

    def bonus_sentence(self, lms: str, maximum: float, best: float) -> str:
        """What the bonus policy of an LMS does, in one sentence."""
        policy = self.bonus.get(lms, "keep")
        default = " (the default: what it accepts)" if policy == DEFAULT_BONUS.get(lms) else ""
        name = LMS_NAMES.get(lms, lms)
        if policy == "cap":
            return f"{name}: totals above {maximum:g} are capped at {maximum:g}{default}."
        if policy == "scale":
            return f"{name}: every total is scaled by {maximum:g} / {best:g}, so full marks with the bonus " \
                   f"are {maximum:g}{default}."
        return f"{name}: totals are kept as they are, the bonus above {maximum:g} included{default}."


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time ("2026-12-01T23:59", with or without a zone), or None."""
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def bonus_option(text: str) -> tuple[str, str]:
    """--bonus LMS=POLICY; raises PolicyError."""
    lms, _, policy = text.partition("=")
    lms, policy = lms.strip().lower(), policy.strip().lower()
    if lms not in LMS_NAMES or policy not in BONUS_POLICIES:
        raise PolicyError(f"--bonus {text!r}: give LMS=POLICY, the LMS canvas or moodle and the policy "
                          f"{', '.join(BONUS_POLICIES)} (e.g. --bonus moodle=scale)")
    return lms, policy


def make_policy(zeros: bool, bonus: list[str], moodle_max: float | None, late_per_day: float | None,
                late_cap: float | None, due: str | None) -> Policy:
    """The run's policy from its options; raises PolicyError."""
    chosen = dict(DEFAULT_BONUS)
    chosen.update(bonus_option(text) for text in bonus)
    late = None
    if late_per_day is not None:
        when = parse_time(due) if due else None
        if due and when is None:
            raise PolicyError(f"--due {due!r}: give a time as 2026-12-01T23:59 (the LMS's local time) or "
                              "2026-12-01T23:59+01:00")
        if late_per_day < 0 or (late_cap is not None and late_cap < 0):
            raise PolicyError("--late-per-day and --late-cap: give points of 0 or more")
        late = Late(late_per_day, late_cap, when)
    elif late_cap is not None or due:
        raise PolicyError("--late-cap and --due go with --late-per-day POINTS, the points a day late costs")
    if moodle_max is not None and moodle_max <= 0:
        raise PolicyError("--moodle-max: give the Moodle grade item's maximum grade, a number above 0")
    return Policy(zeros, chosen, moodle_max, late)
