"""The worker's cgroup on a host with cgroup v2 only: its clock, its share, its end.

A host with v2 only is made here as it is: in a mount namespace of its own, the v1 hierarchies
are hidden under a tmpfs on /sys/fs/cgroup and the unified hierarchy is mounted there (`V2_ONLY`).
Nothing else changes, and nothing a worker can reach decides it. In such a namespace:

- a busy child that the submission detached (its own session, twice removed) is counted in
  the worker's CPU time, at once;
- sixty busy loops get one worker's share of the CPU where `cpu.max` can be set, and where it
  cannot (this machine's v2 has no cpu controller: it is bound to v1), their CPU time is
  counted against one worker's limit at once, so their request ends at that limit;
- nothing of a worker is left when it ends, its cgroup included;
- the kit's own tests of the boundary (hostile/test_submissions.py, test_isolation.py) that
  meet the cgroup in a whole grading pass as they do with v1, each at the level this run grades
  it at: the isolated level, or a container without CAP_SYS_ADMIN whose cgroup hierarchy is
  writable (one whose hierarchy is hidden meets no cgroup, on any host);

and, at the limits level, as an account that is not root, in a cgroup delegated to it, a
worker has a cgroup of its own too. `cgroups.kill` is also tried on a cgroup of the real
unified hierarchy, with `cgroup.kill` and with the freezer.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import support
from support.hostile import TOOLS, make_submission, opening

from autograder import sandbox
from autograder.config import load
from autograder.sandbox import cgroups, spawn, zygote
from autograder.worker import Worker

KIT = Path(__file__).resolve().parents[2]
NOBODY = 65534
V2_ONLY = """
set -e
mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup
exec "$@"
"""
UNIFIED = cgroups._v2()  # this machine's unified hierarchy, where this process may make cgroups
pytestmark = [pytest.mark.slow, pytest.mark.skipif(  # slow: it starts workers on a host of its own
    not (os.geteuid() == 0 and sandbox.level() == "isolated" and TOOLS and UNIFIED),
    reason="making a host with cgroup v2 only needs root with CAP_SYS_ADMIN, unshare, setpriv "
           "and a writable unified hierarchy")]


def v2_only(*command: str) -> list[str]:
    """`command`, run on this machine as a host with cgroup v2 only would run it."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", V2_ONLY, "v2", *command]


# Run on the v2-only host: one request of a worker of this machine's level on a submission
# whose __mul__ does what is tried, and what the trusted side saw of it.
ONE_REQUEST = """
import json, os, sys, time
from pathlib import Path
from autograder import sandbox
from autograder.config import load
from autograder.sandbox import cgroups
from autograder.worker import Worker
folder, limit = Path(sys.argv[1]), float(sys.argv[2])
worker = Worker(folder, load().limits)
assert worker.load("value") is None
uid = worker.process.identity.uid if worker.process.identity else None
groups = [str(group) for group in worker.process.clock.groups]
settings = {name: Path(groups[0], name).read_text().strip() for name in ("cpu.max", "pids.max")
            if groups and Path(groups[0], name).exists()}
started = time.monotonic()
answer = worker.run("arithmetic:square", {"points": [2.0]}, limit)
wall = time.monotonic() - started
worker.close()
left = list(sandbox.processes_of(uid)) if uid is not None else []
print("SAW", json.dumps({"hierarchy": cgroups.found().version, "level": sandbox.level(),
                         "groups": groups, "settings": settings, "outcome": answer.ending.value,
                         "failure": answer.failure, "seconds": answer.seconds, "wall": wall,
                         "groups_left": [g for g in groups if os.path.exists(g)], "left": left}))
"""
DETACHED_BUSY_CHILD = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            pass
    os._exit(0)
time.sleep(1.0)
"""
SIXTY_BUSY_LOOPS = """
import os
for _ in range(60):
    if os.fork() == 0:
        while True:
            pass
while True:
    pass
"""


def one_request(tmp_path: Path, name: str, in_mul: str, limit: float, wrap: list[str] | None = None) -> dict:
    submission = make_submission(tmp_path, name, in_mul=in_mul)
    command = [*(wrap if wrap is not None else v2_only()), sys.executable, "-c", ONE_REQUEST,
               str(submission), str(limit)]
    run = subprocess.run(command, cwd=KIT, capture_output=True, text=True, timeout=300)
    said = [line for line in run.stdout.splitlines() if line.startswith("SAW ")]
    assert said, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(said[-1][4:])


def test_a_detached_busy_child_is_counted_in_the_worker_s_time(tmp_path):
    """It burns the CPU while the worker sleeps a second: its time is the worker's, at once
    (the process clock alone saw none of it, and the sweep of the uid comes only after twice the
    limit)."""
    saw = one_request(tmp_path, "detaches_a_busy_child", DETACHED_BUSY_CHILD, limit=5.0)
    assert saw["hierarchy"] == 2 and len(saw["groups"]) == 1, saw
    assert saw["outcome"] == "answered" and saw["seconds"] > 0.2, saw
    assert saw["groups_left"] == [] and saw["left"] == [], saw


def unified_controllers() -> list[str]:
    return (Path("/sys/fs/cgroup/unified") / "cgroup.controllers").read_text().split() \
        if Path("/sys/fs/cgroup/unified/cgroup.controllers").exists() else []


def test_sixty_busy_loops_get_one_worker_s_share(tmp_path):
    """Where cpu.max can be set, sixty loops have one CPU between them: their request takes at
    least its limit in wall-clock time to spend its CPU time."""
    probe = subprocess.run(v2_only(sys.executable, "-c", "from autograder.sandbox import cgroups; "
                                   "print(cgroups.found().cpu_max)"), cwd=KIT, capture_output=True, text=True)
    if probe.stdout.strip() != "True":
        pytest.skip("the unified hierarchy here has no cpu controller to enable (it offers "
                    f"{unified_controllers() or 'none'}; cpu is bound to v1): see the next test")
    saw = one_request(tmp_path, "sixty_loops_shared", SIXTY_BUSY_LOOPS, limit=1.0)
    assert saw["settings"]["cpu.max"] == cgroups.CPU_MAX
    assert saw["outcome"] == "timed out" and saw["wall"] >= 0.9, saw
    assert saw["groups_left"] == [] and saw["left"] == [], saw


def test_sixty_busy_loops_are_counted_against_one_worker_s_limit(tmp_path):
    """The guarantee that holds with or without cpu.max: their CPU time together is the worker's,
    read from its cgroup, so the request ends at its CPU limit (how soon in wall-clock time
    depends on how busy the machine is: not asserted); and none of the sixty outlives it."""
    saw = one_request(tmp_path, "sixty_loops", SIXTY_BUSY_LOOPS, limit=1.0)
    assert saw["hierarchy"] == 2 and len(saw["groups"]) == 1, saw
    assert saw["outcome"] == "timed out" and saw["failure"].startswith("timed out after 1.00 s of CPU"), saw
    assert saw["seconds"] >= 1.0, saw
    assert saw["groups_left"] == [] and saw["left"] == [], saw
    if "pids" in saw["settings"]:
        assert saw["settings"]["pids.max"] == "64"


def test_v2_limits_are_set_where_the_parent_enables_them(tmp_path, monkeypatch):
    """cpu.max (one CPU) and pids.max (the processes limit of grading.toml) of a worker's v2
    cgroup, where its parent's subtree_control enables cpu and pids (not on this machine: a
    folder stands for the parent here), and none where it does not."""
    for cpu_max, pids_max in ((True, True), (False, False)):
        parent = tmp_path / f"parent-{cpu_max}"
        parent.mkdir()
        hierarchy = cgroups.Hierarchy(2, (parent,), cpu_max, pids_max)
        monkeypatch.setattr(cgroups, "found", lambda h=hierarchy: h)
        group, = cgroups.make_cgroups(1_900_000_123, 64)
        assert group == parent / "autograder-worker-1900000123"
        files = {path.name: path.read_text() for path in group.iterdir()}
        assert files == ({"cpu.max": cgroups.CPU_MAX, "pids.max": "64"} if cpu_max else {})


def test_the_hierarchy_is_what_the_host_mounts():
    """v1 on this machine as it is; v2 where v1 is hidden and the unified hierarchy is mounted on
    /sys/fs/cgroup; none where nothing writable is mounted (as in a default container)."""
    found = "from autograder.sandbox import cgroups; print(cgroups.found().version)"
    assert cgroups.found().version == 1
    assert subprocess.run(v2_only(sys.executable, "-c", found), cwd=KIT, capture_output=True,
                          text=True).stdout.strip() == "2"
    hidden = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
              "mount -t tmpfs tmpfs /sys/fs/cgroup && exec \"$@\"", "none"]
    assert subprocess.run([*hidden, sys.executable, "-c", found], cwd=KIT, capture_output=True,
                          text=True).stdout.strip() == "0"


def test_a_v1_clock_reads_cpuacct_usage_and_never_the_cpu_controller_s_cpu_stat():
    """v1's cpu controller has a cpu.stat of its own (throttling, no usage): the clock of a worker
    with v1 cgroups reads cpuacct.usage, and counts."""
    uid = 199_998  # outside the worker pool
    groups = [parent / f"autograder-worker-{uid}" for parent in cgroups._v1().parents]
    for group in groups:
        group.mkdir(exist_ok=True)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for group in groups:
            (group / "cgroup.procs").write_text(f"{busy.pid}\n")
        clock = cgroups.CpuClock(busy.pid, os.getpid(), groups, uid)
        assert not clock.unified
        deadline = time.monotonic() + 30
        while clock.seconds() < 0.05 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert clock.seconds() >= 0.05
        clock.close()
    finally:
        busy.kill()
        busy.wait()
        cgroups.remove(groups)


@pytest.mark.alone  # counts every worker's cgroup on the machine
def test_a_worker_that_never_started_leaves_no_cgroup(monkeypatch):
    """A zygote that takes a plan and never forks: the worker it was to start is started again,
    and the cgroup made for it, which no keeper will ever remove, is removed."""
    monkeypatch.setattr(cgroups, "found", lambda: UNIFIED)
    monkeypatch.setattr(spawn, "KEEPER_SECONDS", 3.0)
    parent = UNIFIED.parents[0]
    before = set(parent.glob("autograder-worker-*"))
    worker = Worker(KIT / "solutions", load(KIT / "grading.toml").limits)
    try:
        assert worker.load("value") is None
        os.kill(zygote.HERE.zygote.process.pid, signal.SIGSTOP)
        worker.stop()
        assert worker.load("value") is None
        assert len(set(parent.glob("autograder-worker-*")) - before) == 1  # the running worker's
    finally:
        worker.close()
    assert set(parent.glob("autograder-worker-*")) - before == set()


# -- cgroups.kill on the real unified hierarchy ----------------------------------------------------

DAEMONS = """
import os, signal, sys, time
pids = []
for _ in range(5):
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:  # twice removed, in a session of its own, deaf to all it can ignore
            for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(number, signal.SIG_IGN)
            os.write(write, str(os.getpid()).encode())
            while True:
                time.sleep(1)
        os._exit(0)
    os.close(write)
    pids.append(int(os.read(read, 32)))
print(" ".join(map(str, pids)), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("how", ["cgroup.kill", "the freezer"])
def test_everything_in_a_worker_s_cgroup_ends_with_it(how, monkeypatch):
    group = UNIFIED.parents[0] / f"autograder-test-{secrets.token_hex(4)}"
    group.mkdir()
    if how == "the freezer":  # as before Linux 5.14, which has no cgroup.kill
        real = cgroups._set
        monkeypatch.setattr(cgroups, "_set",
                            lambda path, value: path.name != "cgroup.kill" and real(path, value))
    tree = subprocess.Popen(["sh", "-c", f"echo $$ > {group}/cgroup.procs && exec {sys.executable} -c \"$0\"",
                             DAEMONS], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        pids = [int(pid) for pid in tree.stdout.readline().split()]
        assert len(pids) == 5
        cgroups.kill([group])
        assert tree.wait(10) == -signal.SIGKILL
        assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()
                    and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]]
        assert b"populated 0" in (group / "cgroup.events").read_bytes()
        assert (group / "cgroup.freeze").read_text().strip() == "0"  # thawed, for whatever comes next
        cgroups.remove([group])
        assert not group.exists()
    finally:
        tree.kill()
        with contextlib.suppress(OSError):
            group.rmdir()


def test_a_worker_clock_outlives_its_v2_cgroup():
    """As test_isolation.py's test of the v1 clock: once the cgroup is gone, the last reading."""
    group = UNIFIED.parents[0] / f"autograder-test-{secrets.token_hex(4)}"
    group.mkdir()
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        (group / "cgroup.procs").write_text(f"{busy.pid}\n")
        clock = cgroups.CpuClock(busy.pid, os.getpid(), [group], None)
        assert clock.unified
        while clock.seconds() < 0.05:
            time.sleep(0.01)
    finally:
        busy.kill()
        busy.wait()
    last = clock.seconds()
    cgroups.remove([group])
    assert not group.exists() and clock.seconds() == last > 0
    clock.close()


# -- the kit's own tests on the v2 path ---------------------------------------------------------------

# Loaded into each pytest run on the v2-only host: it is one (or the run stops), and
# support/hostile.py's container keeps a writable unified hierarchy of its own (root without
# CAP_SYS_ADMIN, in a cgroup it may write: v2 at the unprivileged level). With the hierarchy
# hidden, as CONTAINER has it (a tmpfs over /sys/fs/cgroup), the container level meets no cgroup
# on any host; the isolated level uses no container.
ON_V2 = """
import pytest
from autograder.sandbox import cgroups


def pytest_configure(config):
    if cgroups.found().version != 2:
        raise pytest.UsageError(f"not on the v2 path: {cgroups.found()}")
    from support import hostile
    hostile.CONTAINER = hostile.CONTAINER.replace(
        "mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup\\n",
        "mount -t tmpfs -o mode=0755 tmpfs /sys/fs/cgroup\\nmount -t cgroup2 cgroup2 /sys/fs/cgroup\\n")
    assert "cgroup2" in hostile.CONTAINER
"""
# What meets a worker's cgroup in a whole grading (its time, its end, its leftovers), beyond the
# tests above of the clock, the share and cgroups.kill: of test_submissions.py, a process left
# running and a worker that sleeps; of test_isolation.py, a fork storm, a grader killed with its
# workers running, and a worker that starves itself, each at the level this run grades it at.
SELECTED = {
    "tests/hostile/test_submissions.py": "no_process_outlives or sleeping",
    "tests/hostile/test_isolation.py": "fork_storm or killed_grader or starves_itself",
}


def run_kit_tests(tmp_path: Path, tests: str) -> None:
    """`tests`, those SELECTED of them, on the v2-only host: at this run's drawn seed, so at the
    levels this run grades them at (at both with --exhaustive)."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "on_v2.py").write_text(ON_V2)
    env = {**os.environ, "PYTHONPATH": f"{plugin}{os.pathsep}{KIT / 'tests'}"}
    seeds = ["--drawn-seed", support.SEEDS[0], *(["--exhaustive"] if support.EXHAUSTIVE else [])]
    run = subprocess.run(v2_only(sys.executable, "-m", "pytest", tests, "-k", SELECTED[tests], *seeds,
                                 "-p", "on_v2", "-p", "no:cacheprovider", "-q"), cwd=KIT, env=env,
                         capture_output=True, text=True, timeout=3600)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0 and "passed" in summary and "failed" not in summary, \
        run.stdout[-6000:] + run.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("tests", SELECTED)
def test_the_kit_s_boundary_tests_pass_on_v2(tmp_path, tests):
    run_kit_tests(tmp_path, tests)


# -- the limits level, in a cgroup delegated to the grader's account -------------------------------

@pytest.mark.slow
def test_a_grader_that_is_not_root_makes_its_workers_cgroups_where_it_was_delegated_one(tmp_path):
    """The grader runs as nobody in a cgroup of the unified hierarchy delegated to that account
    (the directory and its cgroup.procs, cgroup.subtree_control and cgroup.threads are its own,
    as systemd's Delegate=yes does): each worker gets a cgroup of its own under it, which counts
    its detached child and is removed when it ends."""
    delegated = UNIFIED.parents[0] / f"autograder-test-delegated-{secrets.token_hex(4)}"
    delegated.mkdir()
    base = Path(tempfile.mkdtemp(prefix="autograder-delegated-"))
    try:
        for name in ("", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"):
            os.chown(delegated / name, NOBODY, NOBODY)
        submission = make_submission(base, "detaches_a_busy_child", in_mul=DETACHED_BUSY_CHILD)
        (base / "view").mkdir()
        for path in [base, *base.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        tmp = base / "tmp"
        tmp.mkdir()
        os.chown(tmp, NOBODY, NOBODY)
        script = (f"set -e\necho $$ > {delegated}/cgroup.procs\n{opening(base / 'view')}\n"
                  f"exec setpriv --reuid {NOBODY} --regid {NOBODY} --clear-groups \"$@\"\n")
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "delegated",
                   sys.executable, "-c", ONE_REQUEST, str(submission), "5.0"]
        run = subprocess.run(command, cwd=KIT, env={**os.environ, "TMPDIR": str(tmp), "HOME": str(tmp)},
                             capture_output=True, text=True, timeout=300)
        said = [line for line in run.stdout.splitlines() if line.startswith("SAW ")]
        assert said, run.stdout[-3000:] + run.stderr[-3000:]
        saw = json.loads(said[-1][4:])
        assert saw["level"] == "limits" and saw["hierarchy"] == 2, saw
        assert [Path(group).parent for group in saw["groups"]] == [delegated], saw
        assert saw["outcome"] == "answered" and saw["seconds"] > 0.2, saw
        assert saw["groups_left"] == [], saw
        assert sorted(p.name for p in delegated.iterdir() if p.is_dir()) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)
        for _ in range(100):
            try:
                delegated.rmdir()
                break
            except OSError:
                time.sleep(0.05)
