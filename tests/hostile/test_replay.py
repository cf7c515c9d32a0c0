"""Answers replayed: a submission with no engine that answers every question from a table.

Nothing that runs in a worker can be kept from the code it imports, so a submission can take
over the worker's request handler and answer each scenario by its key from a table it was
given: the handout's sealed answers, or the "Expected:" values of an earlier grading's
feedback. It is worth nothing in an official grading, whose questions are drawn from the
submission's own files under a secret: no table made before it was graded holds them. It still
scores full marks where the questions are the public ones, as a student's own run asks them
(that score is the student's own: they can forge it any way they like).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import KIT
from support.autograding import autograde_folder
from support.gradescope import run_autograder, submit

from autograder.questions import make_secret, official_seed, read_secret
from autograder.runner import folder_digest
from autograder.worker import read_files

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

CLI = [sys.executable, "-m", "autograder.staff.cli"]
FULL = 102.0  # the reference's total: every point and the bonus


def replaying(table: dict[str, object]) -> str:
    """Code that, imported into a worker, answers every scenario whose key is in `table` from it."""
    return textwrap.dedent(f"""

        # -- a replay: no engine, only answers -----------------------------------------------
        import hashlib as _hashlib, json as _json, sys as _sys

        _TABLE = _json.loads({json.dumps(json.dumps(table))})

        def _take_over():
            for _module in list(_sys.modules.values()):
                _handle = getattr(_module, "handle", None)
                if callable(_handle) and hasattr(_module, "serve") and not hasattr(_handle, "replays"):
                    def handle(request, engines, _original=_handle):
                        if "scenario" in request:
                            text = _json.dumps([request["scenario"], request.get("kwargs", {{}})],
                                               sort_keys=True, separators=(",", ":"))
                            key = _hashlib.sha256(text.encode()).hexdigest()[:24]
                            if key in _TABLE:
                                return _TABLE[key]
                        return _original(request, engines)
                    handle.replays = True
                    _module.handle = handle

        _take_over()
        """)


def replay_submission(folder: Path, sealed: Path) -> Path:
    """The stubs, each file carrying the table of every answer sealed in `sealed`."""
    answers = json.loads(sealed.read_text(encoding="utf-8"))["answers"]
    table = {key: answer["observations"] for key, answer in answers.items()}
    shutil.copytree(KIT / "assignments", folder)
    for path in folder.glob("*.py"):
        path.write_text(path.read_text(encoding="utf-8") + replaying(table), encoding="utf-8")
    return folder


def total(parts: dict[str, dict]) -> float:
    return round(sum(entry["score"] for entry in parts.values()), 2)


@pytest.fixture(scope="module")
def secret(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("course") / "grading.secret"
    make_secret(path)
    return path


def official(folder: Path, results: Path, secret: Path, context: str = "v1") -> dict[str, dict]:
    return autograde_folder(folder, results, f"--grading-secret={secret}", "--grading-context", context,
                            "--reference=" + str(KIT / "solutions"))


def test_the_handouts_answers_replayed_score_only_where_the_questions_are_public(
        sealed_reference, secret, tmp_path):
    attack = replay_submission(tmp_path / "replay", sealed_reference.path)
    own_run = autograde_folder(attack, tmp_path / "public.json", f"--reference={sealed_reference.path}")
    assert total(own_run) == FULL  # the public questions: the table holds every answer
    stubs = official(KIT / "assignments", tmp_path / "stubs.json", secret)
    graded = official(attack, tmp_path / "official.json", secret)
    assert total(graded) == total(stubs) == 0.0, {p: e["score"] for p, e in graded.items() if e["score"]}


def test_feedback_replayed_in_a_second_submission_earns_nothing(secret, tmp_path):
    """The first submission (the stubs) is graded officially; every answer to its questions,
    more than its feedback shows, goes into the second. The second is a change of files, so it
    is asked new questions."""
    first_seed = official_seed(read_secret(secret), read_files(KIT / "assignments")[0], "v1")
    sealed = tmp_path / "first.json"
    autograde_folder(KIT / "solutions", tmp_path / "reference.json", "--grading-seed", first_seed.value,
                     f"--seal-reference={sealed}")
    attack = replay_submission(tmp_path / "second", sealed)
    asked_again = autograde_folder(attack, tmp_path / "again.json", "--grading-seed", first_seed.value,
                                   f"--reference={sealed}")
    assert total(asked_again) == FULL  # the table answers the first grading's questions, every one
    assert total(official(attack, tmp_path / "second.json", secret)) == 0.0


def test_bulk_asks_the_replay_its_own_questions(sealed_reference, tmp_path):
    """autograder bulk: the honest reference scores full marks, the replay what its stubs earn."""
    klass = tmp_path / "class"
    shutil.copytree(KIT / "solutions", klass / "honest")
    replay_submission(klass / "replay", sealed_reference.path)
    out, secret = tmp_path / "out", tmp_path / "grading.secret"
    done = subprocess.run(CLI + ["bulk", str(klass), "-o", str(out), "--jobs", "2", "--secret", str(secret)],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    with (out / "grades.csv").open(encoding="utf-8") as grades:
        totals = {row["student"]: float(row["total"]) for row in csv.DictReader(grades)}
    assert totals == {"honest": FULL, "replay": 0.0}


def test_the_gradescope_bundle_asks_the_replay_its_own_questions(
        sealed_reference, layout, image_env, tmp_path):  # noqa: F811
    submit(layout, replay_submission(tmp_path / "replay", sealed_reference.path))
    results, _ = run_autograder(layout, image_env)
    assert results["score"] == 0.0, [(t["name"], t["score"]) for t in results["tests"] if t["score"]]


def test_the_reference_digest_guards_a_live_reference(tmp_path):
    """A grading given the digest of solutions/ refuses a reference whose files changed since."""
    copy = tmp_path / "solutions"
    shutil.copytree(KIT / "solutions", copy)
    digest = folder_digest(copy)
    (copy / "dual.py").write_text((copy / "dual.py").read_text(encoding="utf-8") + "\n# changed\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                           "--submission=" + str(KIT / "solutions"), f"--reference={copy}",
                           "--reference-sha256", digest, "--grading-seed", "ab"],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "its files changed since the grading began" in done.stdout + done.stderr
