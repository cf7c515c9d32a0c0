"""Intake: find the gradable files of every submission, in whatever shape the class came.

`collect` turns a class folder (folders, zips, notebooks, .py files, a Canvas or Moodle
download grouped by student, an nbgrader `submitted/` tree) into one `Submission` per entry:
the normalised text of its engine files, and notes on what was chosen, rejected or missing.
It only reads; `stage` writes a submission's files into a folder of the grader's own. No
entry can stop the others: every read is bounded and never follows a link, and an entry that
still cannot be read is a Submission with no files and the reason.

One module per thing it reads: class_folder.py (the class folder, and a folder per student),
reader.py (one submission's files, within its limits), zips.py, ipynb.py, lms.py (the
downloads of Canvas and Moodle), python.py (what a module defines) and engines.py (which
file is which engine); bounded.py parses in a process of its own, under limits, whose program
is parser_process.py.
"""

from .class_folder import collect, read_folder, stage
from .ipynb import split_notebook
from .submissions import (
                          MAX_DEPTH,
                          MAX_FILES,
                          MAX_ID,
                          MAX_NOTEBOOK_BYTES,
                          MAX_NOTES,
                          MAX_SUBMISSION_BYTES,
                          IntakeError,
                          Submission,
                          student_id,
)

__all__ = ["MAX_DEPTH", "MAX_FILES", "MAX_ID", "MAX_NOTEBOOK_BYTES", "MAX_NOTES",
           "MAX_SUBMISSION_BYTES", "IntakeError", "Submission", "collect", "read_folder", "split_notebook",
           "stage", "student_id"]
