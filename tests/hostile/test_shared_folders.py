"""What a worker writes, no concurrent classmate's worker reads, and nothing of it outlives it.

Two workers run at once, as in a bulk run of two jobs. The writer leaves a file, open to every
account, in every folder it can write to (the whole file system walked, /proc and /sys aside,
five folders deep, and its own folder opened to every account); while it still runs, a
reader in another worker walks the same folders for any such file and reads what it finds.
At the unprivileged level the reader used to read the writer's files in /tmp, /var/tmp,
/dev/shm and /run/lock until the writer ended (the sweep came only then); at the limits level
(a grader that is not root) they were never removed at all. Landlock now keeps a worker's
writes beneath its own folder, at both levels; the isolated level's private root always did.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support import KIT
from support.hostile import at_a_level, opening, prefix

from autograder.sandbox import landlock, levels
from hostile import test_isolation
from hostile.test_cgroups import NOBODY

SANDBOXED = [*test_isolation.pytestmark, pytest.mark.skipif(
    not landlock.abi(), reason="keeping a worker's writes to its folder needs Landlock (Linux 5.13 on)")]
MARK = "autograder-planted"
WALK = """
import os as _os


def _walk(depth=5):
    folders, stack = [], [("/", 0)]
    while stack:
        folder, level = stack.pop()
        try:
            entries = list(_os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.path in ("/proc", "/sys") or not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            folders.append(entry.path)
            if level < depth:
                stack.append((entry.path, level + 1))
    return folders
"""
# The writer's value.py: a file in every folder it can write to, its own included.
WRITER = WALK + """

for _folder in dict.fromkeys([_os.getcwd(), *_walk()]):
    try:
        _path = _os.path.join(_folder, "MARK-TOKEN")
        with open(_path, "w") as _file:
            _file.write("answers of TOKEN")
        _os.chmod(_path, 0o666)
        print("PLANTED", _folder, flush=True)
    except OSError:
        pass
_os.chmod(_os.getcwd(), 0o777)
"""
# The reader's value.py: every such file it can find, and what it holds.
READER = WALK + """

for _folder in _walk():
    try:
        _names = _os.listdir(_folder)
    except OSError:
        continue
    for _name in _names:
        if _name.startswith("MARK-"):
            try:
                with open(_os.path.join(_folder, _name)) as _file:
                    print("FOUND", _folder, _file.read(), flush=True)
            except OSError:
                pass
"""
# Two workers at once, the writer still running while the reader looks; then what is left.
TWO_WORKERS = WALK + """
import json, sys
from pathlib import Path
from autograder import sandbox
from autograder.config import load
from autograder.worker import Worker
writer = Worker(Path(sys.argv[1]), load().limits)
reader = Worker(Path(sys.argv[2]), load().limits)
problems = [writer.load("value"), reader.load("value")]
home = writer.process and writer.process.home and str(writer.process.home)
writer.close()
reader.close()
left = []
for folder in _walk():
    try:
        left += [folder for name in _os.listdir(folder) if name.startswith(sys.argv[3])]
    except OSError:
        continue
said = {"writer": writer.import_output.splitlines(), "reader": reader.import_output.splitlines()}
print("SAW", json.dumps({"level": sandbox.level(), "home": home, "left": left,
                         "problems": [p and (p.failure or str(p.raised)) for p in problems],
                         "planted": [l.split(" ", 1)[1] for l in said["writer"] if l.startswith("PLANTED ")],
                         "found": [l for l in said["reader"] if l.startswith("FOUND ")]}))
"""


def two_workers(tmp_path: Path, wrap: list[str], env: dict[str, str]) -> dict:
    """Run the writer and the reader at once under `wrap`; what the script saw."""
    token = secrets.token_hex(6)
    for name, source in (("writer", WRITER), ("reader", READER)):
        folder = tmp_path / name
        folder.mkdir(parents=True)
        (folder / "value.py").write_text(source.replace("MARK", MARK).replace("TOKEN", token))
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    run = subprocess.run([*wrap, sys.executable, "-c", TWO_WORKERS, str(tmp_path / "writer"),
                          str(tmp_path / "reader"), f"{MARK}-{token}"],
                         cwd=KIT, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    said = [line for line in run.stdout.splitlines() if line.startswith("SAW ")]
    assert said, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(said[-1][4:])


def sandboxed(test):  # noqa: ANN001, ANN201 - a test function
    for mark in SANDBOXED:
        test = mark(test)
    return test


@sandboxed
@at_a_level
def test_a_concurrent_classmate_reads_nothing_a_worker_wrote(tmp_path, level):
    wrap, env = prefix(level, tmp_path / "container")
    saw = two_workers(tmp_path / "workers", wrap, env)
    assert saw["level"] == ("isolated" if level == "isolated" else "unprivileged"), saw
    assert saw["problems"] == [None, None], saw
    here = "/submission" if level == "isolated" else saw["home"]
    assert saw["found"] == [], saw
    assert saw["planted"] == [here] and saw["left"] == [], saw  # its own folder alone, gone with it


@sandboxed
def test_at_the_limits_level_nothing_a_worker_wrote_outlives_it():
    """The grader runs as nobody: its workers share its uid, so there is no uid to sweep; what a
    worker may write is its own folder, removed with it."""
    base = Path(tempfile.mkdtemp(prefix="autograder-limits-"))  # where nobody may enter
    base.chmod(0o755)
    (base / "view").mkdir()
    tmp = base / "tmp"
    tmp.mkdir()
    os.chown(tmp, NOBODY, NOBODY)
    script = (f"set -e\n{opening(base / 'view')}\n"
              f"exec setpriv --reuid {NOBODY} --regid {NOBODY} --clear-groups \"$@\"\n")
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "limits"]
    try:
        saw = two_workers(base / "workers", wrap, {"TMPDIR": str(tmp), "HOME": str(tmp)})
        assert saw["level"] == "limits" and saw["problems"] == [None, None], saw
        assert saw["planted"] == [saw["home"]], saw
        assert saw["left"] == [] and list(tmp.iterdir()) == [], saw
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("level", ["unprivileged", "limits"])
def test_without_landlock_the_run_says_what_a_worker_may_leave(monkeypatch, level):
    monkeypatch.setattr(levels, "_level", level)
    monkeypatch.setattr(landlock, "abi", lambda: 7)
    assert levels.shared_writes() is None
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    said = levels.shared_writes()
    assert f"at the {level} level" in said and "/tmp" in said
    assert ("removed only when it ends" if level == "unprivileged" else "never removed") in said
    monkeypatch.setattr(levels, "_level", "isolated")
    assert levels.shared_writes() is None
