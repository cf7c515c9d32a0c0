"""The worker boundary, attacked at each root level the grader meets.

`isolated` is this machine as it is (root with CAP_SYS_ADMIN). `container` is what a default
container gives: root without CAP_SYS_ADMIN (setpriv drops it) and no writable cgroups, with
the reference's folder closed to other accounts, and a Python that other accounts can run.
`closed` is the same container with a Python under a folder other accounts cannot enter: the
grader must refuse to run submissions there, since it would have to run them as root.

Every hostile submission is the honest base of test_hostile.py (the reference with `__mul__`
stubbed) plus a trick, and must score exactly the base's points; nothing a worker starts may
outlive it, and nothing may be left behind in the temporary folder or the identity locks.

A test of both root levels grades at one of them a run, which its name and the drawn seed pick
(support/hostile.py's `at_a_level`): a run meets both levels, each test meets the other at a run
whose seed starts the other way, and --exhaustive grades each at both.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import KIT
from support.hostile import (
    BULK,
    ROOT_WITH_NAMESPACES,
    TOOLS,
    a_busy_core,
    at_a_level,
    closed_steps,
    fast_grading,
    graded,
    make_submission,
    prefix,
    run_grading,
    scores,
)

from autograder import runner, sandbox, worker

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (ROOT_WITH_NAMESPACES and TOOLS),
    reason="simulating the root levels needs root with CAP_SYS_ADMIN, unshare and setpriv")]
@pytest.fixture(scope="module")
def place(tmp_path_factory) -> dict:
    """A sealed reference, fast limits, the honest base's scores, and a private TMPDIR."""
    folder = tmp_path_factory.mktemp("isolation")
    grading = fast_grading(folder)
    sealed = folder / "reference.json"
    done = run_grading("isolated", KIT / "solutions", folder, "reference", f"--grading={grading}",
                       f"--seal-reference={sealed}")
    assert done.results and all(e["score"] == e["max_score"] for e in done.results.values())
    honest = make_submission(folder, "honest")
    base = run_grading("isolated", honest, folder, "honest", f"--grading={grading}",
                       f"--reference={sealed}")
    return {"folder": folder, "grading": grading, "sealed": sealed, "honest": scores(base.results)}


def status(pid: int | str) -> dict[str, str] | None:
    """The fields of a process's /proc status, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {key: value.strip() for key, value in pairs}


def alive(fields: dict[str, str] | None) -> bool:
    """Is a process running or sleeping? (A zombie holds nothing.)"""
    return fields is not None and not fields["State"].startswith("Z")


def worker_processes() -> list[tuple[int, int]]:
    """(pid, uid) of every live process with a worker identity."""
    pool = sandbox.uid_pool()
    found = []
    for folder in Path("/proc").glob("[0-9]*"):
        fields = status(folder.name)
        if alive(fields) and (uid := int(fields["Uid"].split()[0])) in pool:
            found.append((int(folder.name), uid))
    return found


def locks() -> set[str]:
    folder = sandbox.state_folder() / "uids"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def holders() -> dict[str, int]:
    """Each identity lock and the pid its file names as its holder."""
    folder = sandbox.state_folder() / "uids"
    found = {}
    for path in folder.iterdir() if folder.is_dir() else ():
        try:
            found[path.name] = int(path.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            continue
    return found


def descendants() -> set[int]:
    """The pids of every live process that descends from this one."""
    parents = {}
    for folder in Path("/proc").glob("[0-9]*"):
        fields = status(folder.name)
        if fields is not None:
            parents[int(folder.name)] = int(fields["PPid"])
    mine, grew = {os.getpid()}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return mine - {os.getpid()}


class Watch(threading.Thread):
    """The processes that descended from this one while a test ran, sampled, so that an identity
    lock left by one of them after it died is known to be this test's, and one left by another
    grader on this machine (whose holder died meanwhile) is not."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: set[int] = set()
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.1):
            self.seen |= descendants()


@pytest.fixture(autouse=True)
def nothing_left():
    """Every test: no worker process and no identity lock of its own outlives it. (Those of
    another grader running on this machine at the same time are its own business.)"""
    before = locks()
    watch = Watch()
    watch.start()

    def left() -> tuple[list[tuple[int, int]], set[str]]:
        ours = watch.seen | descendants() | {os.getpid()}
        held = {uid for uid, holder in holders().items() if holder in ours}
        return ([(pid, uid) for pid, uid in worker_processes() if pid in ours or str(uid) in held],
                held - before)

    yield
    watch.seen |= descendants()
    deadline = time.monotonic() + 10  # a keeper whose grader was killed cleans up on its own
    try:
        while any(left()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left() == ([], set())
    finally:
        watch.done.set()



# -- 3. links, FIFOs and devices in a submission ---------------------------------------------------

@at_a_level
def test_a_link_to_the_answers_costs_only_its_file(place, level):
    folder = place["folder"] / level / "links"
    shutil.copytree(KIT / "solutions", folder)
    (folder / "tensor.py").unlink()
    (folder / "tensor.py").symlink_to(place["sealed"])  # the sealed answers, as in the bundle
    (folder / "dual.py").unlink()
    (folder / "dual.py").symlink_to(KIT / "solutions" / "dual.py")
    done = run_grading(level, folder, place["folder"], f"links-{level}",
                       "--grading=" + str(place["grading"]), "--reference=" + str(place["sealed"]))
    for part, entry in done.results.items():
        lost = part.startswith(("tensor.", "dual"))
        assert entry["score"] == (0 if lost else entry["max_score"]), part
    assert "tensor.py: a symbolic link, not a regular file" in done.results["tensor.unbroadcast"]["output"]
    assert "dual.py: a symbolic link" in done.results["dual"]["output"]
    assert done.tmp_left == []


@at_a_level
def test_a_fifo_a_device_and_a_folder_cost_only_their_files(place, level):
    folder = place["folder"] / level / "odd-files"
    shutil.copytree(KIT / "solutions", folder)
    for name in ("value.py", "tensor.py", "dual.py"):
        (folder / name).unlink()
    os.mkfifo(folder / "value.py")  # a reader that opens it blocks forever
    os.mknod(folder / "tensor.py", 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    (folder / "dual.py").mkdir()
    done = run_grading(level, folder, place["folder"], f"odd-{level}", "--grading=" + str(place["grading"]),
                       "--reference=" + str(place["sealed"]))
    assert all(entry["score"] == 0 for entry in done.results.values())
    assert "value.py: a named pipe (FIFO)" in done.results["value.backward"]["output"]
    assert "tensor.py: a character device" in done.results["tensor.unbroadcast"]["output"]
    assert "dual.py: a folder" in done.results["dual"]["output"]


# -- 4. one identity per worker -----------------------------------------------------------------------

# Only this test's own answers count: another grader on a shared machine is not ours to judge.
SABOTAGE = """
import glob as _glob, os as _os, time as _time

def _sabotage():
    stolen = []
    # The grader's command lines name the sealed answers and every submission's folder.
    for _cmdline in _glob.glob("/proc/[0-9]*/cmdline"):
        try:
            _words = open(_cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        for _word in _words:
            _path = _word.decode(errors="replace")
            if _path.startswith(PREFIX) and _path.endswith(".json") and _os.path.isfile(_path):
                try:
                    open(_path).read(1)
                    stolen.append(_path)
                except OSError:
                    pass
    # Other workers' folders: read their engines, overwrite them with a broken one.
    for _pattern in ("/run/autograder/homes/*/*.py", "/tmp/autograder-state/homes/*/*.py",
                     "/tmp/autograder-worker-*/*.py", "/tmp/*/*/autograder-worker-*/*.py"):
        for _path in _glob.glob(_pattern):
            if _path.startswith(_os.getcwd()):
                continue
            try:
                open(_path).read(1)
                stolen.append(_path)
            except OSError:
                pass
            try:
                with open(_path, "w") as _file:
                    _file.write("raise SystemExit('overwritten')\\n")
                stolen.append("wrote " + _path)
            except OSError:
                pass
    return stolen

_deadline = _time.monotonic() + 1.5
_stolen = []
while _time.monotonic() < _deadline:
    _stolen += _sabotage()
    _time.sleep(0.05)
if _stolen:  # anything read or written gives the theft away: the honest __mul__ test breaks
    Value.__add__ = lambda self, other: None
"""


def sabotage(mine: Path) -> str:
    return SABOTAGE.replace("PREFIX", repr(str(mine.parent)))


@at_a_level
def test_workers_cannot_reach_each_other_or_the_answers(place, level, tmp_path):
    """A bulk run: four correct students beside one who reads the sealed answers and the
    other workers' folders, and overwrites what it can, all through its grading."""
    klass = tmp_path / "class"
    for index in range(4):
        shutil.copytree(KIT / "solutions", klass / f"correct{index}")
    make_submission(klass, "saboteur", at_import=sabotage(tmp_path))
    out = tmp_path / "out"
    done = run_grading(level, klass, tmp_path, "bulk", command=[
        sys.executable, "-c", BULK,
        "bulk", str(klass), "-o", str(out), "--jobs", "2"])
    assert done.code == 0, done.output[-3000:]
    rows = (out / "grades.csv").read_text().splitlines()
    header = rows[0].split(",")
    totals = {row.split(",")[0]: float(row.split(",")[header.index("total")]) for row in rows[1:]}
    honest_total = sum(place["honest"].values())
    assert totals == {**{f"correct{i}": 102.0 for i in range(4)}, "saboteur": honest_total}
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (out / "reference").glob("*.json"))


@at_a_level
def test_the_live_reference_worker_is_out_of_reach(place, level):
    """Graded beside a live reference: its worker's copy of solutions/ can be neither read nor
    overwritten (82 became 97 when it could)."""
    closed = place["folder"] / level / "closed-solutions"
    closed.mkdir(mode=0o700, parents=True)
    shutil.copytree(KIT / "solutions", closed / "solutions")
    done = graded(place, level, "reads_the_reference", "--reference=" + str(closed / "solutions"),
                  at_import=sabotage(place["folder"]))
    assert scores(done.results) == place["honest"]


def test_identities_are_distinct_across_graders(tmp_path):
    """Graders allocating at once never share an identity; a released one leaves no lock."""
    program = ("import json, sys, time\nfrom autograder import sandbox\n"
               "held = [sandbox.allocate() for _ in range(40)]\n"
               "print(json.dumps([i.uid for i in held]), flush=True)\ntime.sleep(1)\n"
               "[sandbox.release(i, True) for i in held]\n")
    graders = [subprocess.Popen([sys.executable, "-c", program], cwd=KIT, stdout=subprocess.PIPE, text=True)
               for _ in range(4)]
    uids = [uid for grader in graders for uid in json.loads(grader.stdout.readline())]
    for grader in graders:
        assert grader.wait(60) == 0
    assert len(set(uids)) == len(uids) == 160
    assert not set(map(str, uids)) & locks()


def test_an_identity_left_dirty_is_cleared_before_it_is_given_again():
    """A grader killed with its worker's process still alive: the next holder kills it first."""
    folder = sandbox.state_folder() / "uids"
    uid = sandbox.uid_pool()[-1]
    child = os.fork()
    if child == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            time.sleep(60)
        finally:
            os._exit(0)
    time.sleep(0.2)  # let it take its uid
    (folder / str(uid)).write_text("held by a grader that died\n")
    identity = sandbox.take(folder, uid)
    assert os.waitpid(child, 0)[1] == signal.SIGKILL and identity is not None
    sandbox.release(identity, True)


# -- 5 and 6. nothing outlives its worker, or a killed grader ---------------------------------------

STORM = """
import ctypes, os, time
print("UID", os.getuid())
ctypes.CDLL(None).prctl(36, 1)  # a subreaper of its own, to keep its orphans
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.setsid()
        if os.fork() == 0:  # a daemon, twice removed
            while True:
                pass
        os._exit(0)
"""


@at_a_level
def test_a_fork_storm_under_a_subreaper_dies_with_its_worker(place, level):
    done = graded(place, level, "storms", in_mul=STORM)
    assert scores(done.results) == place["honest"]
    assert "UID" in done.results["value.mul"]["output"]
    assert done.tmp_left == []


HANG = """
import os
if os.fork() == 0:
    while True:
        pass
while True:
    pass
"""


@at_a_level
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_grader_takes_its_workers_with_it(place, level, how):
    submission = make_submission(place["folder"] / level, f"hangs-{how.name}", in_backward=HANG)
    work = place["folder"] / f"killed-{level}-{how.name}"
    wrap, extra = prefix(level, work)
    work.mkdir(parents=True, exist_ok=True)
    log = work / "grading.log"
    with log.open("wb") as output:
        grading = subprocess.Popen(
            [*wrap, sys.executable, "-m", "pytest", "autograder", f"--submission={submission}", "-q",
             "-p", "no:cacheprovider", "--grading=" + str(place["grading"]),
             "--reference=" + str(place["sealed"])],
            cwd=KIT, env={**os.environ, **extra}, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True)
    def its_workers() -> list[tuple[int, int]]:  # not those of another grader on this machine
        mine = descendants()
        return [(pid, uid) for pid, uid in worker_processes() if pid in mine]

    deadline = time.monotonic() + 60
    while len(its_workers()) < 2 and time.monotonic() < deadline and grading.poll() is None:
        time.sleep(0.05)  # a hanging worker and its child
    state = "still runs" if grading.poll() is None else f"ended with exit status {grading.returncode}"
    assert its_workers(), f"no worker started; the grading {state}, and printed:\n{log.read_text()[-3000:]}"
    os.killpg(grading.pid, how)  # the grader and its launchers; the keepers are in sessions of their own
    grading.wait(30)


# -- 7. bounded scratch space, and nothing left in shared folders -----------------------------------

FILLS = """
import os
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(os.path.join(folder, f"left-by-{os.getuid()}"), "wb") as file:
            file.write(b"y" * 4096)
    except OSError:
        pass
print("UID", os.getuid())
chunk, written = b"x" * (1 << 20), 0
try:
    for index in range(40):
        with open(f"fill{index}", "wb") as file:
            for _ in range(8):
                file.write(chunk)
                written += 1
        print("WROTE", written)
except OSError as error:
    print("STOPPED", type(error).__name__, written)
"""


@at_a_level
def test_scratch_space_is_bounded_and_nothing_is_left(place, level):
    done = graded(place, level, "fills_the_disk", in_mul=FILLS)
    assert scores(done.results) == place["honest"]
    lines = [line.strip() for line in done.results["value.mul"]["output"].splitlines()]
    # Whole lines only: a scenario stopped at its time limit may end in the middle of a print
    # (an unbuffered print writes its words one by one).
    whole = r"(?:WROTE|STOPPED \w+) (\d+)"
    written = [int(found[1]) for line in lines if (found := re.fullmatch(whole, line))]
    uids = {int(found[1]) for line in lines if (found := re.fullmatch(r"UID (\d+)", line))}
    assert written and uids, done.results["value.mul"]["output"][-2000:]
    if level == "isolated":
        assert max(written) <= 64 and any(line.startswith("STOPPED OSError") for line in lines)
    for folder in sandbox.WORLD_WRITABLE:
        for uid in uids:
            assert not Path(folder, f"left-by-{uid}").exists()
    assert done.tmp_left == []


# -- 8. a busy machine costs no one a point -----------------------------------------------------------

def test_a_busy_machine_costs_no_points(place, tmp_path):
    """Two correct students graded on a CPU that a busy loop shares: both get every point.
    (Thirty loops proved no more, nor three per core: with one, a worker already waits for the
    CPU, and a wait is not its time.)"""
    klass = tmp_path / "class"
    for index in range(2):
        shutil.copytree(KIT / "solutions", klass / f"correct{index}")
    out = tmp_path / "out"
    with a_busy_core():
        done = run_grading("isolated", klass, tmp_path, "busy", command=[
            sys.executable, "-c", BULK,
            "bulk", str(klass), "-o", str(out), "--jobs", "2"])
    assert done.code == 0, done.output[-3000:]
    with (out / "grades.csv").open(newline="", encoding="utf-8") as grades:
        assert [row["total"] for row in csv.DictReader(grades)] == ["102", "102"]


def test_time_is_judged_by_cpu_and_starvation_is_not_a_timeout():
    def verdict(cpu, idle, wall):
        return worker.judge_time(limit=0.1, grace=0.06, idle_limit=1.2, cap=60, cpu=cpu, idle=idle, wall=wall)

    assert verdict(cpu=0.05, idle=0.0, wall=30) is None  # slow only because the machine is busy
    assert verdict(cpu=0.2, idle=0.0, wall=0.2).failure.startswith("timed out after 0.10 s of CPU")
    assert "slept or waited" in verdict(cpu=0.0, idle=1.5, wall=1.5).failure
    busy = verdict(cpu=0.01, idle=0.0, wall=61)
    assert busy.ending is worker.Ending.BUSY and "too busy" in busy.failure
    assert verdict(cpu=0.01, idle=None, wall=30) is None  # no scheduler statistics: wall cap only


def test_a_starved_scenario_is_tried_three_times_then_stops_the_grading():
    runs = []

    class Starved:
        def run(self, *args, **kwargs):
            runs.append(args)
            return worker.Reply(failure="the machine was too busy", ending=worker.Ending.BUSY)

    with pytest.raises(runner.MachineBusy, match="too busy.*3 times; grade this submission again"):
        runner.run_unless_busy(Starved(), "value:product", {}, 0.1)
    assert len(runs) == 3


STARVED_THEN_FED = """
import json, sys
import pytest
from autograder import worker
real = worker.Worker.run
def starved(self, *args, **kwargs):
    return worker.Reply(failure="the machine was too busy", ending=worker.Ending.BUSY)
kit, folder = sys.argv[1], sys.argv[2]
codes = []
for name, run in (("starved", starved), ("fed", real)):
    worker.Worker.run = run
    codes.append(int(pytest.main([kit + "/autograder", "-q", "-p", "no:cacheprovider",
                                  "--submission=" + kit + "/solutions",
                                  "--results-json=" + folder + "/" + name + ".json"])))
print(json.dumps(codes))
"""


def test_a_starved_grading_ends_without_a_score_and_the_process_grades_the_next(tmp_path):
    """No score at all (exit status 75), never a silent zero; and a grading process that stays
    (as `autograder bulk` keeps them) goes on to grade the next submission."""
    run = subprocess.run([sys.executable, "-c", STARVED_THEN_FED, str(KIT), str(tmp_path)], cwd=KIT,
                         capture_output=True, text=True, timeout=600)
    assert json.loads(run.stdout.splitlines()[-1]) == [runner.BUSY_EXIT, 0], run.stdout[-3000:] + run.stderr
    assert not (tmp_path / "starved.json").exists()
    assert "autograder: " in run.stderr and "grade this submission again" in run.stderr
    fed = json.loads((tmp_path / "fed.json").read_text())
    assert fed["tests"] and all(test["score"] == test["max_score"] for test in fed["tests"])


# -- 9. a tampered seal ------------------------------------------------------------------------------

def test_a_seal_that_changed_is_refused(place, tmp_path):
    tampered = tmp_path / "reference.json"
    sealed = place["sealed"].read_bytes()
    digest = __import__("hashlib").sha256(sealed).hexdigest()
    tampered.write_bytes(sealed.replace(b'"observations": ', b'"observations": null, "x": ', 1))
    done = run_grading("isolated", KIT / "solutions", tmp_path, "tampered",
                       "--grading=" + str(place["grading"]), f"--reference={tampered}", "--reference-sha256",
                       digest)
    assert done.code == pytest.ExitCode.USAGE_ERROR and done.results is None
    assert "SHA-256 differs" in done.output and "Traceback" not in done.output
    same = run_grading("isolated", KIT / "solutions", tmp_path, "intact",
                       "--grading=" + str(place["grading"]),
                       "--reference=" + str(place["sealed"]), "--reference-sha256", digest)
    assert same.results and all(e["score"] == e["max_score"] for e in same.results.values())


# -- never as root ---------------------------------------------------------------------------------

def test_no_account_can_run_the_python_so_nothing_runs(place):
    """Root without CAP_SYS_ADMIN and a Python that other accounts cannot reach: one message
    that says what to do, no results, and the submission never ran (least of all as root)."""
    marker = place["folder"] / "ran-as-root"
    submission = make_submission(place["folder"] / "closed", "would_run", at_import=f"""
        open({str(marker)!r}, "w").write("ran")
        """)
    done = run_grading("closed", submission, place["folder"], "closed", "--grading=" + str(place["grading"]),
                       "--reference=" + str(place["sealed"]))
    assert done.code == pytest.ExitCode.USAGE_ERROR and done.results is None
    assert "refuses to run submissions" in done.output and "Fix:" in done.output
    assert "Traceback" not in done.output and not marker.exists()


REPORTS_WHERE_IT_RUNS = f"""
import os
print("UID", os.getuid(), "SEES-THE-KIT", os.path.exists({str(KIT / "grading.toml")!r}))
"""


def test_a_level_lowered_by_name_is_the_level_used(place):
    """--sandbox-level unprivileged on a machine that gives isolated: the worker runs as a uid of
    its own, and sees the machine's files (a worker of the isolated level would not); where
    the machine cannot give that level (this Python closed to other accounts), it is refused."""
    done = graded(place, "opened", "lowered", "--sandbox-level", "unprivileged", in_mul=REPORTS_WHERE_IT_RUNS)
    assert scores(done.results) == place["honest"]
    said = done.results["value.mul"]["output"]
    uids = {int(uid) for uid in re.findall(r"UID (\d+)", said)}
    assert uids and uids <= set(sandbox.uid_pool()) and "SEES-THE-KIT True" in said
    kept = graded(place, "isolated", "kept", in_mul=REPORTS_WHERE_IT_RUNS)
    assert "SEES-THE-KIT False" in kept.results["value.mul"]["output"]
    if closed_steps():
        submission = make_submission(place["folder"] / "refused", "refused")
        refused = run_grading("isolated", submission, place["folder"], "refused",
                              "--grading=" + str(place["grading"]), "--reference=" + str(place["sealed"]),
                              "--sandbox-level", "unprivileged")
        assert refused.code == pytest.ExitCode.USAGE_ERROR and refused.results is None
        assert "cannot give that level" in refused.output and "Traceback" not in refused.output


LOWERS_ITSELF = """
import os
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
os.nice(19)
while True:
    pass
"""


@at_a_level
def test_a_worker_that_starves_itself_times_out_and_is_not_excused(place, level):
    """SCHED_IDLE and nice 19 make a worker wait for the CPU on a busy machine: that wait is its
    own, so its hang times out like any other, never passes for a busy machine."""
    with a_busy_core():
        done = graded(place, level, "starves_itself", in_backward=LOWERS_ITSELF)
    assert done.code == 1
    for part, entry in done.results.items():  # only value.backward's scenarios call backward()
        assert entry["score"] == (0 if part == "value.backward" else place["honest"][part]), part
    assert "timed out" in done.results["value.backward"]["output"]


def test_a_reference_or_class_open_to_every_account_is_refused(place, tmp_path):
    """As a default container: a live reference, or a class folder, that every account can
    reach would be read by the submissions; the grader says so and grades nothing."""
    import tempfile

    open_folder = Path(tempfile.mkdtemp(prefix="open-"))
    try:
        open_folder.chmod(0o755)
        shutil.copytree(KIT / "solutions", open_folder / "solutions")
        shutil.copytree(KIT / "solutions", open_folder / "class" / "alice")
        done = run_grading("container", KIT / "solutions", tmp_path, "open-reference",
                           "--grading=" + str(place["grading"]),
                           "--reference=" + str(open_folder / "solutions"))
        assert done.code == pytest.ExitCode.USAGE_ERROR and done.results is None
        assert "the reference is open to every account" in done.output and "chmod 700" in done.output
        bulk = run_grading("container", open_folder / "class", tmp_path, "open-class", command=[
            sys.executable, "-c", BULK, "bulk", str(open_folder / "class"), "-o", str(tmp_path / "out")])
        assert bulk.code == 2 and "the class folder is open to every account" in " ".join(bulk.output.split())
    finally:
        shutil.rmtree(open_folder)


def test_a_worker_clock_outlives_its_cgroup(tmp_path):
    """A dead worker's keeper may remove its cgroup before the grader sees the answer channel
    close: the clock then gives the worker's last, final reading, never an error."""
    uid = 199_999  # outside the worker pool
    groups = sandbox.make_cgroups(uid)
    if not any((g / "cpuacct.usage").exists() for g in groups):
        pytest.skip("no cpuacct cgroup to make here")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for group in groups:
            (group / "cgroup.procs").write_text(f"{busy.pid}\n")
        clock = sandbox.CpuClock(busy.pid, os.getpid(), groups, uid)
        while clock.seconds() < 0.05:
            time.sleep(0.01)
    finally:
        busy.kill()
        busy.wait()
    last = clock.seconds()
    for group in groups:
        os.rmdir(group)
    assert clock.seconds() == last > 0
    clock.close()


def test_a_run_as_root_that_cannot_isolate_fails_and_says_why(tmp_path):
    """Root without CAP_SYS_ADMIN (a default container): the sandbox tests cannot run at the
    isolated level, and the run fails, naming why, where it would have passed with them skipped."""
    run = subprocess.run(["setpriv", "--bounding-set", "-sys_admin", sys.executable, "-m", "pytest",
                          "tests/hostile/test_isolation.py::test_identities_are_distinct_across_graders",
                          "tests/hostile/test_seccomp.py::test_every_call_gets_its_verdict",
                          "-p", "no:cacheprovider", "-q"],
                         cwd=KIT, capture_output=True, text=True, timeout=300)
    said = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, said[-3000:]
    assert "1 passed, 1 error" in said and "this machine cannot isolate: its level is " in said
