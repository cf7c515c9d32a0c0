"""The gradebook: one SQLite file holding every submission's grade, written one submission at a time.

Each finished submission is one transaction (its row and its part scores together), in WAL
mode, so a run stopped at any moment leaves every submission either fully recorded or absent.
A submission is known by its `source` (its entry in the class folder); grading it again
replaces its row. A row whose grading failed by the grader's doing (`fault`) counts as not
graded yet, so the next run grades it again.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS students (
    id TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a regraded submission gets a new id
    student TEXT NOT NULL REFERENCES students(id),
    source TEXT NOT NULL UNIQUE,
    format TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    grader_version TEXT NOT NULL,
    graded_at TEXT NOT NULL,
    seconds REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('graded', 'failed')),
    reason TEXT NOT NULL,
    notes TEXT NOT NULL,
    lms TEXT NOT NULL DEFAULT '',
    lms_id TEXT NOT NULL DEFAULT '',
    lms_name TEXT NOT NULL DEFAULT '',
    late TEXT NOT NULL DEFAULT '',
    submitted_at TEXT NOT NULL DEFAULT '',
    lms_files TEXT NOT NULL DEFAULT '',
    fault TEXT NOT NULL DEFAULT ''  -- 'grader' where it failed by the grader's doing: graded again next run
);
CREATE TABLE IF NOT EXISTS scores (
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    part TEXT NOT NULL,
    points REAL NOT NULL,
    max REAL NOT NULL,
    messages TEXT NOT NULL,  -- empty exactly when every check of the part passed
    misconceptions TEXT NOT NULL,
    PRIMARY KEY (submission, part)
);
-- The adjustments and extensions (adjustments.py) of the last run given each file, which replaces
-- that table whole: the grades above stay as graded, and each run's reports apply these to them.
CREATE TABLE IF NOT EXISTS adjustments (
    student TEXT NOT NULL,
    part TEXT NOT NULL,  -- a part id, or 'total'
    points TEXT NOT NULL,  -- as the file writes it: '+2', '=0', '+5!'
    reason TEXT NOT NULL,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    source TEXT NOT NULL,  -- the submission it was applied to; '' where it was not (note says why)
    content_hash TEXT NOT NULL,
    before REAL,  -- the part's (or the total's) points as graded, and after the adjustment
    after REAL,
    note TEXT NOT NULL,
    applied_at TEXT NOT NULL,  -- when a run first applied this row as it stands; '' where not applied
    PRIMARY KEY (student, part)
);
CREATE TABLE IF NOT EXISTS extensions (
    student TEXT PRIMARY KEY,
    due TEXT NOT NULL,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    source TEXT NOT NULL,  -- the submission it was applied to; '' where it was not (note says why)
    note TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
"""
# Columns added since the first gradebooks; an older row holds '' in each.
ADDED_COLUMNS = ("lms", "lms_id", "lms_name", "late", "submitted_at", "lms_files", "fault")


@dataclass
class Score:
    """One part of one submission; `messages` is empty exactly when every check of it passed."""

    part: str
    points: float
    max: float
    messages: str = ""
    misconceptions: list[str] = field(default_factory=list)


@dataclass
class Entry:
    """One submission's row: who, what was graded, by which grader, and how it went."""

    source: str
    student: str
    format: str
    content_hash: str
    grader_version: str
    graded_at: str
    seconds: float
    status: str
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    lms: str = ""  # from an LMS download: which one, the id it gave the student, the name it wrote
    lms_id: str = ""
    lms_name: str = ""
    late: bool = False  # the LMS marked it late
    submitted_at: str = ""  # when it was handed in (ISO 8601), where the download or the roster says
    lms_files: list[str] = field(default_factory=list)  # its files' names in a Canvas download
    fault: bool = False  # it failed by the grader's doing (a fault, a crash, the machine), not its own
    # The TA's hand, applied afresh on each run (adjustments.py) and never kept in this row:
    by_hand: list[str] = field(default_factory=list)  # each adjustment applied, as the student reads it
    total_change: float = 0.0  # the change to the total of a `total` adjustment, before the late policy
    due: str = ""  # the student's own due time (an extension), ISO 8601

    @property
    def total(self) -> float:
        """The points of every part, bonus included."""
        return round(sum(s.points for s in self.scores), 2)


class Gradebook:
    """The gradebook at `path`, made (or brought up to the current schema) when opened."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Autocommit; each write below opens its own transaction explicitly.
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self.db.executescript(SCHEMA)
        present = {row[1] for row in self.db.execute("PRAGMA table_info(submissions)")}
        for column in ADDED_COLUMNS:
            if column not in present:
                self.db.execute(f"ALTER TABLE submissions ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")

    def graded_with(self, source: str) -> tuple[str, str] | None:
        """The content hash and grader version a source was last graded with, if it was; None
        also where its grading failed by the grader's doing, so that the next run grades it."""
        row = self.db.execute("SELECT content_hash, grader_version FROM submissions WHERE source = ? "
                              "AND fault = ''", (source,)).fetchone()
        return tuple(row) if row else None

    def record(self, entry: Entry) -> None:
        """Replace the source's row and scores with this entry, all or nothing."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("DELETE FROM submissions WHERE source = ?", (entry.source,))
            self.db.execute("INSERT OR IGNORE INTO students (id) VALUES (?)", (entry.student,))
            cursor = self.db.execute(
                "INSERT INTO submissions (student, source, format, content_hash, grader_version, "
                "graded_at, seconds, status, reason, notes, lms, lms_id, lms_name, late, submitted_at, "
                "lms_files, fault) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.student, entry.source, entry.format, entry.content_hash, entry.grader_version,
                 entry.graded_at, entry.seconds, entry.status, entry.reason, json.dumps(entry.notes),
                 entry.lms, entry.lms_id, entry.lms_name, "late" if entry.late else "", entry.submitted_at,
                 json.dumps(entry.lms_files) if entry.lms_files else "", "grader" if entry.fault else ""))
            self.db.executemany(
                "INSERT INTO scores (submission, part, points, max, messages, misconceptions) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(cursor.lastrowid, s.part, s.points, s.max, s.messages, json.dumps(s.misconceptions))
                 for s in entry.scores])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def forget_all_but(self, sources: set[str]) -> list[str]:
        """Remove the rows of sources no longer in the class folder; return them."""
        gone = sorted(row[0] for row in self.db.execute("SELECT source FROM submissions")
                      if row[0] not in sources)
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany("DELETE FROM submissions WHERE source = ?", [(s,) for s in gone])
        self.db.execute("DELETE FROM students WHERE id NOT IN (SELECT student FROM submissions)")
        self.db.execute("COMMIT")
        return gone

    def entries(self) -> list[Entry]:
        """Every submission with its scores, by source."""
        scores: dict[int, list[Score]] = {}
        for row in self.db.execute("SELECT submission, part, points, max, messages, misconceptions "
                                   "FROM scores ORDER BY submission, rowid"):
            scores.setdefault(row[0], []).append(Score(row[1], row[2], row[3], row[4], json.loads(row[5])))
        return [Entry(source=row[1], student=row[2], format=row[3], content_hash=row[4],
                      grader_version=row[5], graded_at=row[6], seconds=row[7], status=row[8],
                      reason=row[9], notes=json.loads(row[10]), scores=scores.get(row[0], []),
                      lms=row[11], lms_id=row[12], lms_name=row[13], late=row[14] == "late",
                      submitted_at=row[15], lms_files=json.loads(row[16]) if row[16] else [],
                      fault=row[17] != "")
                for row in self.db.execute(
                    "SELECT id, source, student, format, content_hash, grader_version, graded_at, seconds, "
                    "status, reason, notes, lms, lms_id, lms_name, late, submitted_at, lms_files, fault "
                    "FROM submissions ORDER BY source")]

    def record_by_hand(self, tables: dict[str, list[tuple]], now: str) -> None:
        """Replace the rows of each table given (adjustments.ByHand.records) with this run's, all
        or nothing; a row applied before, unchanged, keeps the time it was first applied."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if "adjustments" in tables:
                first = {row[:4]: row[4] for row in self.db.execute(
                    "SELECT student, part, points, reason, applied_at FROM adjustments")}
                self.db.execute("DELETE FROM adjustments")
                self.db.executemany(
                    "INSERT INTO adjustments (student, part, points, reason, file, line, source, "
                    "content_hash, before, after, note, applied_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(*row, (first.get(row[:4]) or now) if row[6] else "") for row in tables["adjustments"]])
            if "extensions" in tables:
                first = {row[:2]: row[2]
                         for row in self.db.execute("SELECT student, due, applied_at FROM extensions")}
                self.db.execute("DELETE FROM extensions")
                self.db.executemany(
                    "INSERT INTO extensions (student, due, file, line, source, note, applied_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(*row, (first.get(row[:2]) or now) if row[4] else "") for row in tables["extensions"]])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the database."""
        self.db.close()
