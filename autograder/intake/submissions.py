"""What intake makes of one entry of the class: a Submission, and the student id it is known by."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field

from ..escape import clean
from ..parts import engines, listed

MAX_FILE_BYTES = 2 * 1024 * 1024  # a .py file
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024  # a notebook, whose outputs (plots) are thrown away
MAX_SUBMISSION_BYTES = 50 * 1024 * 1024  # a zip, what it unpacks to, and all of one submission
MAX_FILES = 2000  # files read from one submission
MAX_ENTRIES = 20000  # names looked at in one submission's folders
MAX_DEPTH = 12  # folders inside a submission
MAX_NOTES = 40
MAX_ID = 80  # characters of a student id


class IntakeError(Exception):
    """The class folder itself cannot be read (not one submission: all of them)."""


@dataclass
class Submission:
    """One entry of the class: who it is, where it came from, and its normalised files."""

    source: str
    student: str
    format: str
    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # From an LMS download: "canvas" or "moodle", the id it gave the student (Canvas's user id,
    # Moodle's participant id) and the name it wrote ("smithjane", "Jane Smith").
    lms: str = ""
    lms_id: str = ""
    lms_name: str = ""
    resubmissions: list[str] = field(default_factory=list)  # an earlier upload left out, a line each
    late: bool = False  # the LMS marked it late (Canvas's `LATE_`)
    submitted_at: str = ""  # when it was handed in, ISO 8601, where the download says (nbgrader's timestamp)
    lms_files: list[str] = field(default_factory=list)  # the names its files had in a Canvas download

    def note(self, text: str) -> None:
        """Add a note for the TA and the student; past MAX_NOTES, one line says the rest are left out."""
        if len(self.notes) < MAX_NOTES:
            self.notes.append(clean(text))
        elif len(self.notes) == MAX_NOTES:
            self.notes.append(f"more than {MAX_NOTES} notes; the rest are left out")

    @property
    def reason(self) -> str:
        """Why nothing can be graded, or "" when something can."""
        if self.files:
            return ""
        files = [f"{engine}.py" for engine in engines()]
        return "; ".join(self.notes) or f"no {listed(files, 'or')} was found"

    @property
    def content_hash(self) -> str:
        """SHA-256 of everything intake found for the entry; a new hash means a new grading."""
        found = {"files": self.files, "notes": self.notes, "student": self.student, "lms": self.lms,
                 "lms_id": self.lms_id, "lms_name": self.lms_name}
        # Kept out where they say nothing, so that an entry's hash is what it was before they were read.
        found.update({key: value for key, value in (("late", self.late), ("submitted_at", self.submitted_at),
                                                    ("lms_files", self.lms_files)) if value})
        text = json.dumps(found, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def student_id(name: str) -> str:
    """A name safe as a file name and a CSV cell: letters and marks of any script (`प्रिया` keeps
    its vowel signs), digits, `.`, `_` and `-`. A name with nothing safe in it, or a very long one,
    keeps a hash of itself, so that two students never share an id by accident."""
    name = unicodedata.normalize("NFC", clean(name))
    marked = "".join(char if safe_in_id(char) else "/" for char in name)  # `/` is never safe
    safe = re.sub("/+", "_", marked).strip("._")
    if not safe or len(safe) > MAX_ID:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        safe = f"{safe[:MAX_ID - 9].rstrip('._') or 'unnamed'}-{digest}"
    return safe


def safe_in_id(char: str) -> bool:
    """A letter, mark or number of any script, `_` or another connector, `.` or `-`."""
    category = unicodedata.category(char)
    return char in ".-" or category[0] in "LMN" or category == "Pc"
