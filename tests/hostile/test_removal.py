"""Removing what a worker left cannot fail, and what cannot be removed is reachable by no one.

A tree 1,200 folders deep made `shutil.rmtree` raise RecursionError (Python 3.12 and older,
`ignore_errors` or not), inside a check: the grading became a fault of the grader and was held
back, and the tree, with an engine at its bottom, was loaded by a classmate graded later.
`sweeps.remove_tree` flattens such a tree through descriptors and never raises; what it cannot
remove is closed to every account and removed when the next grader starts (`folders`).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox import folders, sweeps


def deep_tree(top: Path, depth: int, outside: Path) -> None:
    """`depth` folders of long names under `top`, a file in each, a link to `outside` every 100
    levels, and a folder of mode 0 near the bottom."""
    top.mkdir()
    folder = os.open(top, os.O_RDONLY)
    for level in range(depth):
        name = f"{level:05d}" + "x" * 50  # paths far past PATH_MAX
        os.mkdir(name, dir_fd=folder)
        os.close(os.open("file", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=folder))
        if level % 100 == 0:
            os.symlink(outside, "link", dir_fd=folder)
        inner = os.open(name, os.O_RDONLY, dir_fd=folder)
        if level == depth - 2:
            os.chmod(name, 0, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(folder)


def test_a_tree_deeper_than_rmtree_can_remove_is_removed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("the grader's own")
    deep_tree(tmp_path / "deep", 1100, outside)
    if sys.version_info < (3, 13):
        with pytest.raises(RecursionError):
            shutil.rmtree(tmp_path / "deep", ignore_errors=True)
    assert sweeps.remove_tree(tmp_path / "deep") is True
    assert not (tmp_path / "deep").exists() and (outside / "kept").read_text() == "the grader's own"
    assert sweeps.remove_tree(tmp_path / "never-there") is True


def test_a_file_and_a_link_are_removed_and_a_link_is_never_followed(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("x")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "file").write_text("x")
    assert sweeps.remove_tree(tmp_path / "link") and sweeps.remove_tree(tmp_path / "file")
    assert (target / "kept").exists() and not (tmp_path / "link").is_symlink()


def test_what_cannot_be_removed_is_closed_and_removed_at_the_next_start(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir(mode=0o711)
    monkeypatch.setattr(folders, "state_folder", lambda: state)
    left = tmp_path / "home"
    left.mkdir(mode=0o755)
    (left / "engine.py").write_text("a classmate's answers")
    monkeypatch.setattr(folders, "remove_tree", lambda path: False)  # a removal that fails
    folders.remove(left)  # raises nothing
    assert left.exists() and stat.S_IMODE(left.stat().st_mode) == 0
    assert left.stat().st_uid == os.geteuid()
    assert (state / "left").read_text() == f"{left}\n"
    monkeypatch.undo()
    monkeypatch.setattr(folders, "state_folder", lambda: state)
    assert folders.remove_left() == []
    assert not left.exists() and not (state / "left").exists()


NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming another account needs root")
def test_a_folder_closed_to_writing_is_removed_by_its_owner():
    """At the limits level the grader is the worker's own account, not root: a folder of mode 500
    with a file in it (made by the worker, whose account it is) once stopped the removal of its
    home for good, at the end of the worker and at every later start."""
    base = Path(tempfile.mkdtemp(prefix="autograder-removal-"))  # the grader's temporary folder
    home = base / "home"
    (home / "closed" / "deeper").mkdir(parents=True)
    (home / "closed" / "engine.py").write_text("a classmate's answers")
    for path in (base, home, home / "closed", home / "closed" / "deeper", home / "closed" / "engine.py"):
        os.chown(path, NOBODY, NOBODY)
    (home / "closed").chmod(0o500)
    try:
        os.seteuid(NOBODY)
        try:
            removed = sweeps.remove_tree(home)
        finally:
            os.seteuid(0)
        assert removed and not home.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
