"""The kit's tests in parallel: tests that share a module's fixture run in one process, so that
it is built once (support/shared_work.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from support import KIT, shared_work

MODULE = '''
import os
import time

import pytest


@pytest.fixture(scope="module")
def built():
    with open(os.environ["BUILT"], "a") as log:
        log.write(f"{os.getpid()}\\n")


@pytest.mark.parametrize("n", range(12))
def test_shares(built, n):
    pass


@pytest.mark.parametrize("n", range(12))
def test_on_its_own(n):
    time.sleep(0.1)  # long enough that both processes take some
    with open(os.environ["RAN"], "a") as log:
        log.write(f"{os.getpid()}\\n")
'''


def test_a_module_fixture_is_built_once_by_two_processes(tmp_path: Path):
    (tmp_path / "test_shared.py").write_text(MODULE, encoding="utf-8")
    built, ran = tmp_path / "built.txt", tmp_path / "ran.txt"
    env = {**os.environ, "PYTHONPATH": str(KIT / "tests"), "BUILT": str(built), "RAN": str(ran)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-n", "2", "--dist", "loadgroup",
                           "-q", "-p", "no:cacheprovider", "test_shared.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "24 passed" in done.stdout, done.stdout[-3000:]
    assert len(built.read_text().split()) == 1, "the module's fixture was built in more than one process"
    assert len(set(ran.read_text().split())) == 2, "the tests on their own ran in one process"


def test_tests_that_share_work_through_others_are_one_group(monkeypatch):
    """A test that uses the corpus and a module's fixture joins the tests of each: the corpus and
    the fixture are then each built once, in one process."""
    uses = {"a": {"corpus_grades"}, "b": {"corpus_grades", "m.py::x"}, "c": {"m.py::x"}, "d": {"n.py::y"},
            "e": set()}
    monkeypatch.setattr(shared_work, "shared", lambda item: uses[item.nodeid])
    found = shared_work.groups([SimpleNamespace(nodeid=name) for name in uses])
    assert found["a"] == found["b"] == found["c"] != found["d"]
    assert "e" not in found


def test_a_release_or_a_course_made_for_the_session_groups_the_tests_that_use_it():
    """The session fixtures that build what a few modules use join their users into one group;
    the sealed reference, which nearly every grading test uses, groups nobody."""
    uses = {"gradescope": ["bundle", "tmp_path"], "replay": ["bundle", "sealed_reference"],
            "nbgrader": ["nbgrader_course"], "grading": ["sealed_reference", "autograde"]}
    items = [SimpleNamespace(nodeid=name, fixturenames=names) for name, names in uses.items()]
    assert shared_work.shared(items[1]) == {"bundle"}
    found = shared_work.groups(items)
    assert found["gradescope"] == found["replay"] != found["nbgrader"]
    assert "grading" not in found
