"""The GitHub Classroom workflow of the student release: it parses, it gives every visible part
one command-grader step worth the part's points, and each step's command works in the release
with nothing but numpy and pytest installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import KIT
from support.releases import VISIBLE
from support.shape import GRADED

from autograder.config import load

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

yaml = pytest.importorskip("yaml", reason="pyyaml reads the workflow: pip install pyyaml")

GRADER = "education/autograding-command-grader@v1"
REPORTER = "education/autograding-grading-reporter@v1"


def grading_steps(workflow: dict) -> list[dict]:
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    return [step for step in steps if step.get("uses") == GRADER]


def test_the_workflow_names_the_command_that_makes_it(classroom_release):
    text = (classroom_release / ".github" / "workflows" / "classroom.yml").read_text(encoding="utf-8")
    assert "# Made by `autograder release classroom`;" in text and "release student" not in text


def test_one_step_per_visible_part_with_its_points(workflow, classroom_release):
    kept = load(classroom_release / "grading.toml")
    steps = grading_steps(workflow)
    assert [step["name"] for step in steps] == [part for part in kept.parts if part in VISIBLE]
    for step in steps:
        part = kept.parts[step["name"]]
        assert step["with"]["test-name"] == part.title
        assert step["with"]["max-score"] == part.points
        assert step["with"]["command"].startswith("python -m pytest ")


def test_the_reporter_adds_up_every_step(workflow):
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    reporter = steps[-1]
    ids = [step["id"] for step in grading_steps(workflow)]
    assert reporter["uses"] == REPORTER
    assert reporter["with"]["runners"].split(",") == ids
    assert reporter["env"] == {f"{ident.upper()}_RESULTS": f"${{{{steps.{ident}.outputs.result}}}}"
                               for ident in ids}
    assert set(workflow["on"]) >= {"push"} and workflow["permissions"]["checks"] == "write"


def test_it_installs_numpy_and_pytest_only(workflow, classroom_release):
    runs = [step["run"] for step in workflow["jobs"]["run-autograding-tests"]["steps"] if "run" in step]
    assert runs == ["python -m pip install -r requirements.txt"]
    required = (classroom_release / "requirements.txt").read_text(encoding="utf-8").splitlines()
    # tomli only where Python is older than 3.11, which has the same reader built in
    assert sorted(line.split(">=")[0] for line in required) == ["numpy", "pytest", "tomli"]
    assert next(line for line in required if line.startswith("tomli")).endswith("python_version < '3.11'")


@pytest.mark.parametrize("files", ["solutions", "assignments"])
def test_every_step_command_works_in_the_release(workflow, classroom_release, student_env, tmp_path, files):
    handout = tmp_path / "repository"
    shutil.copytree(classroom_release, handout)
    for engine in GRADED:
        shutil.copyfile(KIT / files / f"{engine}.py", handout / "assignments" / f"{engine}.py")
    # The command grader passes on only PATH and HOME, and runs the command through a shell.
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(tmp_path), **student_env}
    for step in grading_steps(workflow):
        done = subprocess.run(step["with"]["command"], shell=True, cwd=handout, env=env,
                              capture_output=True, text=True, check=False)
        collected = "no tests ran" not in done.stdout and done.returncode != 5
        assert collected, f"{step['name']}: {done.stdout[-2000:]}"
        if files == "solutions":
            assert done.returncode == 0, f"{step['name']}: {done.stdout[-3000:]}"
        elif step["with"]["max-score"]:  # a part worth nothing (the given code's check) may pass
            assert done.returncode == 1, f"{step['name']}: {done.stdout[-3000:]}"
