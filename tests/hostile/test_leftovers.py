"""Nothing a worker leaves is reachable by another, at the isolated and the unprivileged level.

Two ways round the filter that once scored 102 from stubs:

- a keyring: another account (this test) leaves a correct `__mul__` in a key every account may
  read, and the submission's import-time hook reads it (`keyctl`) and adds a key of its own to
  its uid's keyring, for later gradings: the filter refuses both, it scores what it wrote,
  and no key of a worker's uid is left;
- a deep tree: one student's hook plants a tree 1,200 folders deep in /tmp, /dev/shm and its
  home (`shutil.rmtree` raises RecursionError on it) with the reference's engine at the bottom,
  and a classmate graded after it in the same bulk run loads whatever it finds there: both
  score what they wrote, no grading is held back, and nothing of the tree is left.

Each runs at the isolated level (root with CAP_SYS_ADMIN) or in test_isolation.py's container
(root without it: the unprivileged level), as that module's tests of both levels do.
"""

from __future__ import annotations

import csv
import ctypes
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support import KIT
from support.hostile import BULK, at_a_level, graded, make_submission, run_grading, scores

from autograder import sandbox
from hostile import test_isolation

pytestmark = [*test_isolation.pytestmark, pytest.mark.skipif(
    os.uname().machine != "x86_64", reason="the hooks make x86_64's keyring calls by number")]
place, nothing_left = test_isolation.place, test_isolation.nothing_left
ADD_KEY, KEYCTL = 248, 250  # x86_64
KEYCTL_SETPERM, KEYCTL_READ, KEYCTL_UNLINK, SESSION_KEYRING = 5, 11, 9, -3



def correct_mul() -> str:
    """The reference's product, as another account's engine would answer it."""
    source = (KIT / "solutions" / "value.py").read_text(encoding="utf-8")
    start = source.index("    def __mul__")
    method = textwrap.dedent(source[start:source.index("\n    def ", start + 1)])
    return f"from __future__ import annotations\n{method}\nValue.__mul__ = __mul__\n"


# At the end of value.py: read the key another account left, and leave one for later gradings.
READS_THE_KEYRING = """
import ctypes as _ctypes
import os as _os

_SAID = [f"UID {_os.getuid()}"]


def _relay():
    libc = _ctypes.CDLL(None, use_errno=True)
    left = libc.syscall(ADD_KEY, b"user", b"autograder-relay-left", b"answers", 7, -4)
    _SAID.append(f"KEYRING add_key {left} {_ctypes.get_errno()}")
    buffer = _ctypes.create_string_buffer(1 << 16)
    size = libc.syscall(KEYCTL, KEYCTL_READ, SERIAL, buffer, 1 << 16)
    _SAID.append(f"KEYRING keyctl {size} {_ctypes.get_errno()}")
    if size > 0:
        exec(buffer.raw[:size].decode(), globals())


_relay()
"""


SAYS = "print(*_SAID, sep='\\n', flush=True)"  # in __mul__, whose failing tests show what it printed


def keys_held() -> dict[int, int]:
    """How many keys each uid holds (/proc/key-users lists every user's, whoever reads it)."""
    lines = Path("/proc/key-users").read_text().splitlines()
    pairs = (line.split(":", 1) for line in lines)
    return {int(uid): int(fields.split()[1].split("/")[0]) for uid, fields in pairs}


@pytest.fixture
def relay_key():
    """A key every account may read, holding a correct __mul__, in this process's session keyring."""
    libc = ctypes.CDLL(None, use_errno=True)
    payload = correct_mul().encode()
    serial = libc.syscall(ADD_KEY, b"user", b"autograder-relay", payload, len(payload), SESSION_KEYRING)
    if serial < 0:
        pytest.skip(f"no key can be made here: {os.strerror(ctypes.get_errno())}")
    assert libc.syscall(KEYCTL, KEYCTL_SETPERM, serial, 0x3F3F3F3F) == 0
    yield serial
    libc.syscall(KEYCTL, KEYCTL_UNLINK, serial, SESSION_KEYRING)


@at_a_level
def test_a_keyring_relay_scores_what_the_submission_wrote(place, level, relay_key):
    hook = (READS_THE_KEYRING.replace("ADD_KEY", str(ADD_KEY)).replace("KEYCTL_READ", str(KEYCTL_READ))
            .replace("KEYCTL", str(KEYCTL)).replace("SERIAL", str(relay_key)))
    before = keys_held()
    done = graded(place, level, f"keyring-{level}", at_import=hook, in_mul=SAYS)
    assert scores(done.results) == place["honest"], done.results["value.mul"]["output"][-2000:]
    said = done.results["value.mul"]["output"]
    assert "KEYRING add_key -1 1" in said and "KEYRING keyctl -1 1" in said, said[-2000:]  # EPERM
    uids = {int(uid) for uid in re.findall(r"UID (\d+)", said)}
    assert uids and all(keys_held().get(uid) == before.get(uid) for uid in uids)  # no key left


# At the end of value.py: a tree 1,200 folders deep in each shared place and the home, with the
# reference's engine at the bottom, every folder open to every account.
PLANTS = """
import os as _os


_SAID = []


def _plant(source):
    for top in ("/tmp", "/dev/shm", _os.getcwd()):
        try:
            folder = _os.open(top, _os.O_RDONLY)
            name = f"autograder-deep-{_os.getuid()}"
            for _ in range(1200):
                _os.mkdir(name, 0o777, dir_fd=folder)
                _os.chmod(name, 0o777, dir_fd=folder)
                inner = _os.open(name, _os.O_RDONLY, dir_fd=folder)
                _os.close(folder)
                folder, name = inner, "d"
            engine = _os.open("engine.py", _os.O_WRONLY | _os.O_CREAT, 0o644, dir_fd=folder)
            _os.write(engine, source)
            _os.fchmod(engine, 0o644)
            _os.close(engine)
            _os.close(folder)
            _SAID.append(f"PLANTED {top}")
        except OSError as error:
            _SAID.append(f"NOT PLANTED {top} {error.errno}")


_plant(SOURCE)
"""
# At the end of a classmate's value.py: whatever engine such a tree holds replaces its own.
READS_THE_TREE = """
import glob as _glob
import os as _os


_SAID = []


def _read():
    tops = ["/tmp", "/dev/shm", *_glob.glob("/run/autograder/homes/*"),
            *_glob.glob("/tmp/autograder-state/homes/*")]
    for top in tops:
        for start in _glob.glob(top + "/autograder-deep-*"):
            try:
                folder = _os.open(start, _os.O_RDONLY)
                for _ in range(1199):
                    inner = _os.open("d", _os.O_RDONLY, dir_fd=folder)
                    _os.close(folder)
                    folder = inner
                engine = _os.open("engine.py", _os.O_RDONLY, dir_fd=folder)
                source = _os.read(engine, 1 << 20)
                _SAID.append(f"READ {start}")
                exec(source.decode(), globals())
                return
            except OSError:
                continue
    _SAID.append("FOUND NOTHING")


_read()
"""


@at_a_level
def test_a_deep_tree_is_removed_and_no_classmate_reads_it(place, level, tmp_path):
    """A bulk run of one job: the planter, then the classmate who reads its tree: each scores the
    honest base's points, no grading is held back, and nothing of the trees is left."""
    reference = (KIT / "solutions" / "value.py").read_text(encoding="utf-8")
    klass = tmp_path / "class"
    make_submission(klass, "a_planter", at_import=PLANTS.replace("SOURCE", repr(reference.encode())),
                    in_mul=SAYS)
    make_submission(klass, "b_reader", at_import=READS_THE_TREE, in_mul=SAYS)
    shutil.copytree(KIT / "solutions", klass / "c_correct")
    out = tmp_path / "out"
    left_before = _trees()
    done = run_grading(level, klass, tmp_path, f"deep-{level}", command=[
        sys.executable, "-c", BULK, "bulk", str(klass), "-o", str(out), "--jobs", "1"])
    assert done.code == 0, done.output[-3000:]
    with (out / "grades.csv").open(newline="", encoding="utf-8") as grades:
        totals = {next(iter(row.values())): row["total"] for row in csv.DictReader(grades)}
    honest = sum(place["honest"].values())
    assert list(totals.values()) == [f"{honest:g}", f"{honest:g}", "102"], totals
    assert (out / "failures.jsonl").read_text() == ""
    deadline = time.monotonic() + 60  # a worker's keeper removes its home as the worker ends: on a busy
    while _trees() != left_before and time.monotonic() < deadline:  # machine, after bulk has ended
        time.sleep(0.2)
    assert _trees() == left_before and done.tmp_left == []


def _trees() -> list[str]:
    """Every tree of a worker's uid in the shared folders and the workers' homes."""
    homes = sandbox.state_folder() / "homes"
    found = [str(path) for top in ("/tmp", "/dev/shm") for path in Path(top).glob("autograder-deep-*")]
    return sorted(found + [str(path) for path in homes.glob("*/autograder-deep-*")])


# In a mount namespace of its own, with a state folder of its own: a leftover no removal can
# take (a mount point) listed as a worker's, a bulk run, then the leftover freed and another run.
LEFTOVER_RUNS = """
set -e
mount -t tmpfs -o mode=0711 tmpfs "$STATE"
mkdir -p "$LEFT"
mount -t tmpfs tmpfs "$LEFT"
echo "$LEFT" > "$STATE/left"
"$@" -o "$OUT/first"
umount "$LEFT"
"$@" -o "$OUT/second"
echo "LEFT AFTER: $(test -e "$LEFT" && echo there || echo gone) $(cat "$STATE/left" 2>/dev/null || echo none)"
"""


def test_a_leftover_that_cannot_be_removed_is_reported_and_removed_by_the_next_start(tmp_path):
    """The grades stand, the bulk run's console and summary name the leftover, and the next run
    (once it can be removed) removes it and names nothing."""
    klass = tmp_path / "class"
    shutil.copytree(KIT / "solutions", klass / "correct")
    left, out = tmp_path / "worker-left", tmp_path / "out"
    env = {**os.environ, "STATE": str(sandbox.state_folder()), "LEFT": str(left), "OUT": str(out)}
    run = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", LEFTOVER_RUNS,
                          "runs", sys.executable, "-c", BULK, "bulk", str(klass), "--jobs", "1"],
                         cwd=KIT, env=env, capture_output=True, text=True, timeout=600)
    said = run.stdout + run.stderr
    assert run.returncode == 0 and "LEFT AFTER: gone none" in said, said[-3000:]
    for folder in ("first", "second"):
        with (out / folder / "grades.csv").open(newline="", encoding="utf-8") as grades:
            assert [row["total"] for row in csv.DictReader(grades)] == ["102"]
    first, second = ((out / folder / "summary.html").read_text() for folder in ("first", "second"))
    assert str(left) in first and "left by a worker and could not be removed" in first
    assert str(left) not in second and "left by a worker" not in second
    assert said.count(f"{left}: left by a worker and could not be removed") == 1, said[-3000:]
