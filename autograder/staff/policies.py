"""How a grade becomes the number an LMS gets: the item's points and the bonus policy of each LMS
(Scale), the late policy, and zeros for what could not be graded. Every choice is said in the
summary.
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
# As each LMS stores a grade: Moodle's grade_grades.finalgrade is DECIMAL(10,5); Canvas's
# gradebook shows a score to 2 decimals, the kit's own totals' precision.
DECIMALS = {"canvas": 2, "moodle": 5}


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
    lms_points: dict[str, float] = field(default_factory=dict)  # by LMS: the item's points (--lms-points)

    def late_for(self, due: str) -> Late | None:
        """The late policy of a student whose own due time (an extension, ISO 8601) is `due`, if any."""
        if self.late is None or not due:
            return self.late
        return dataclasses.replace(self.late, due=parse_time(due), extended=True)

    def scale(self, lms: str, kit: float, best: float, roster: float | None = None, said: str = "") -> Scale:
        """The scale of one LMS's files. `roster` is what the roster says of the item (`said`:
        where): Canvas's Points Possible, Moodle's maximum grade. Canvas: the roster's points,
        else --lms-points, else the kit's. Moodle: its ceiling is --moodle-max, else the roster's
        maximum grade; its points --lms-points, else the roster's maximum grade, else the ceiling,
        else the kit's (a ceiling above the points leaves room for the bonus). Raises PolicyError
        where the two cannot both hold."""
        mine = self.lms_points.get(lms)
        if lms == "canvas":
            if roster is not None and mine not in (None, roster):
                raise PolicyError(f"--lms-points {mine:g}: {said} says {roster:g}; give the "
                                  "item's own points, or change them in Canvas and export the roster again")
            if roster is not None:
                return Scale(lms, kit, roster, best, self.bonus["canvas"], None, said)
            if mine is not None:
                return Scale(lms, kit, mine, best, self.bonus["canvas"], None, "--lms-points")
            return Scale(lms, kit, kit, best, self.bonus["canvas"])
        ceiling, top = (self.moodle_max, "--moodle-max") if self.moodle_max else (roster, said)
        if mine is not None and ceiling is not None and mine > ceiling:
            raise PolicyError(f"--lms-points {mine:g}: above the Moodle item's maximum grade "
                              f"{ceiling:g} ({top}), which Moodle would refuse; give at most {ceiling:g}")
        given = ((mine, "--lms-points"), (roster, said), (ceiling, top), (kit, ""))
        points, where = next((value, name) for value, name in given if value is not None)
        top_grade = points if ceiling is None else ceiling
        return Scale(lms, kit, points, best, self.bonus["moodle"], top_grade, where)


@dataclass(frozen=True)
class Scale:
    """How a final total out of the kit's points becomes the grade one LMS's files post: the same
    fraction of the item's points, the bonus kept, capped or scaled in; rounded as the LMS stores
    grades. The one place a total changes on its way to an LMS."""

    lms: str
    kit: float  # the kit's points possible, bonus left out
    points: float  # the LMS item's points: what the kit's full marks become
    best: float  # every point of the kit, bonus included
    bonus: str  # cap, scale or keep
    ceiling: float | None = None  # the most the item takes (Moodle's maximum grade); None: no limit
    said: str = ""  # where the points come from ("" : the kit's own, no item named them)

    def post(self, total: float) -> float:
        """A final total (after every adjustment and the late penalty) as this LMS gets it."""
        grade = total * self.points / (self.best if self.bonus == "scale" and self.best > 0 else self.kit)
        if self.bonus == "cap":
            grade = min(grade, self.points if self.ceiling is None else self.ceiling)
        return round(grade, DECIMALS[self.lms])

    def sentence(self) -> str:
        """The scale in one line, for the summary, the console and the pre-flight."""
        name = LMS_NAMES.get(self.lms, self.lms)
        where = f" ({self.said})" if self.said else " (no roster or --lms-points named the item's)"
        factor = "" if self.points == self.kit else f", each × {self.points / self.kit:.6g}"
        head = f"{name}: totals out of {self.kit:g} are posted out of {self.points:g} points{where}{factor}"
        top = self.points if self.ceiling is None else self.ceiling
        default = " (the default: what it accepts)" if self.bonus == DEFAULT_BONUS.get(self.lms) else ""
        if self.bonus == "cap":
            bonus = f"a grade above {top:g} is capped at {top:g}{default}"
        elif self.bonus == "scale":
            bonus = f"scaled so that full marks with the bonus ({self.best:g}) are {self.points:g}{default}"
        else:
            bonus = f"the bonus is kept above {self.points:g}{default}"
        return f"{head}; {bonus}."


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
                late_cap: float | None, due: str | None, lms_points: list[str] | None = None) -> Policy:
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
    points: dict[str, float] = {}
    for text in lms_points or []:
        points.update(points_option(text))
    return Policy(zeros, chosen, moodle_max, late, points)


def points_option(text: str) -> dict[str, float]:
    """--lms-points [LMS=]POINTS: the item's points in one LMS, or in both; raises PolicyError."""
    lms, _, value = text.rpartition("=")
    lms = lms.strip().lower()
    try:
        points = float(value.replace(",", "."))
    except ValueError:
        points = 0.0
    if (lms and lms not in LMS_NAMES) or not points > 0:
        raise PolicyError(f"--lms-points {text!r}: give the LMS item's points, a number above 0, for both "
                          "LMSs or one (e.g. --lms-points 40, --lms-points canvas=40 --lms-points moodle=10)")
    return {lms: points} if lms else dict.fromkeys(LMS_NAMES, points)
