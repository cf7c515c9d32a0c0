"""Grade one Gradescope submission: run_autograder's Python half.

    python grade_submission.py SUBMISSION RESULTS

The submission folder goes through the same intake as `autograder bulk` (wrong-case names, a
byte-order mark, Windows line endings, files a folder or more down, a notebook or a zip), its
engine files are staged in a folder of root's own, the suites grade them, and what intake
noticed ("value.py: taken from my-work/Value.py") becomes results.json's top-level output,
which students see. The questions are drawn from the files and Gradescope's submission id
under the bundle's own secret, and the reference in solutions/ answers them live: no answer a
student has seen, in a handout or in an earlier submission's feedback, answers them. The exit
status is pytest's when it left no results.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import intake
from autograder.escape import printable

KIT = Path(__file__).resolve().parent


def submission_id(submission_folder: Path) -> str:
    """Gradescope's id of this submission, from the metadata beside the submission folder ("" if
    there is none): a rerun of one submission asks its questions again, another upload new ones."""
    try:
        path = submission_folder.parent / "submission_metadata.json"
        metadata = json.loads(path.read_text(encoding="utf-8"))
        return str(metadata.get("id", "")) if isinstance(metadata, dict) else ""
    except (OSError, ValueError):
        return ""


def main(submission_folder: Path, results: Path) -> int:
    """Grade the submission in `submission_folder` into Gradescope's `results` file; returns 0,
    or pytest's exit status (else 1) when pytest wrote no results."""
    # The bundle's secret and reference are root's alone, however the zip was unpacked.
    os.chmod(KIT / "grading.secret", 0o600)
    for path in [KIT / "solutions", *(KIT / "solutions").iterdir()]:
        os.chmod(path, 0o700 if path.is_dir() else 0o600)
    submission = intake.read_folder(submission_folder, "submission", "gradescope")
    # A note quotes the submission's names: kept on one line, none can pass for a note of the grader's.
    notes = [printable(note) for note in submission.notes]
    for note in notes:
        print(f"intake: {note}")
    with tempfile.TemporaryDirectory(prefix="autograder-submission-") as scratch:
        staged = Path(scratch) / "submission"
        intake.stage(submission, staged)
        written = Path(scratch) / "results.json"
        code = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-p", "no:cacheprovider",
                               f"--submission={staged}", f"--results-json={written}",
                               "--reference=" + str(KIT / "solutions"),
                               "--grading-secret=" + str(KIT / "grading.secret"), "--grading-context",
                               f"gradescope {submission_id(submission_folder)}"],
                              cwd=KIT, check=False).returncode
        if not written.is_file():
            return code or 1
        graded = json.loads(written.read_text(encoding="utf-8"))
    if notes:  # after what the grading said, if it said anything (why it could not be made)
        about = "About your files:\n" + "\n".join(f"- {note}" for note in notes)
        graded["output"] = "\n\n".join(text for text in (graded.get("output"), about) if text)
    partial = results.with_name(results.name + ".partial")
    partial.write_text(json.dumps(graded, indent=2), encoding="utf-8")
    os.replace(partial, results)  # all or nothing, should the time limit strike now
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
