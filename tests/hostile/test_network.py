"""No worker reaches the network, at any level: the forgery of a full grade from empty stubs.

A submission's hook sends every scenario it is asked to a correct engine listening on
127.0.0.1 (a program of this test, running the reference), and answers with what comes back;
where that fails it runs its own code. Where a worker could connect, it scored every point of
`value.mul`, whose stub it never wrote. The same submission also tries UDP, TCP over IPv6, a
Unix socket in the abstract namespace that a process of the host listens on, raw packets,
netlink, io_uring and a program of its own (a Python it starts), in its `__mul__`, and says
what each gave.

At every level (isolated: root with namespaces; unprivileged: a container without
CAP_SYS_ADMIN, as test_isolation.py makes one; limits: the grader as an account that is not
root; of the two root levels, one a run, as test_isolation.py's tests of both levels) it must
score exactly the honest base's points, nothing it tried may reach a listener, and each try must
be refused. The seccomp filter itself is checked in a process of this test.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.hostile import TOOLS, at_a_level, make_submission, opening, run_grading, scores

from autograder import sandbox
from autograder.sandbox import seccomp
from hostile import test_isolation

KIT = Path(__file__).resolve().parents[2]
ROOT_WITH_NAMESPACES = sandbox.level() == "isolated"
NOBODY = 65534
GRADES_AT_EVERY_LEVEL = [pytest.mark.slow, pytest.mark.skipif(
    not (ROOT_WITH_NAMESPACES and TOOLS),
    reason="the three levels are made here from root with CAP_SYS_ADMIN, unshare and setpriv")]
GRADING_SECONDS = 600
# test_isolation.py's fixtures: a sealed reference, fast limits and the honest base's scores;
# and no worker process or identity left after each test.
place, nothing_left = test_isolation.place, test_isolation.nothing_left


def grades_at_every_level(test):
    for mark in GRADES_AT_EVERY_LEVEL:
        test = mark(test)
    return test

# The correct engine elsewhere: the worker's own inside, run by this test on the reference's
# files, answering one scenario request per connection.
ENGINE = r"""
import json, os, socket, sys
from pathlib import Path
kit, solutions, port_file, count_file = sys.argv[1:5]
package = Path(kit, "autograder")
inside = package / "inside" / "serve.py"
folder = next(f for f in (package / "scenarios", package / "inside" / "scenarios")
              if (f / "value.py").is_file())
namespace = {"__name__": "engine"}
exec(compile(inside.read_text(), str(inside), "exec"), namespace)
sources = {p.stem: p.read_text() for p in sorted(folder.glob("*.py")) if p.stem != "__init__"}
namespace["install_scenarios"](sources)
sys.path.insert(0, solutions)
engines = {}
for name in ("value", "tensor", "dual"):
    namespace["handle"]({"load": name}, engines)
server = socket.create_server(("127.0.0.1", 0))
Path(port_file).write_text(str(server.getsockname()[1]))
count = 0
while True:
    connection, _ = server.accept()
    count += 1
    Path(count_file).write_text(str(count))
    with connection:
        try:
            request = json.loads(connection.makefile("rb").readline())
            reply = {"observations": namespace["handle"](request, engines)}
        except BaseException as error:
            reply = {"raised": type(error).__name__, "message": str(error)[:2000]}
        connection.sendall((json.dumps(reply) + "\n").encode())
"""

# At the end of value.py: every scenario request goes to the engine on 127.0.0.1 first.
RELAY = """
import json as _json, socket as _socket, sys as _sys

_inside = _sys.modules["__main__"]
_handle = _inside.handle


def _relay(request, engines):
    if "scenario" not in request:
        return _handle(request, engines)
    try:
        with _socket.create_connection(("127.0.0.1", PORT), timeout=5) as _connection:
            _connection.sendall(_json.dumps(request).encode() + b"\\n")
            _reply = _json.loads(_connection.makefile("rb").readline())
    except OSError:
        return _handle(request, engines)  # no way out: its own engine answers
    if "raised" in _reply:
        raise type(_reply["raised"], (Exception,), {})(_reply["message"])
    return _reply["observations"]


_inside.handle = _relay
_EXEC_D = []


def _probe_network():
    import ctypes

    def udp():
        _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM).sendto(b"out", ("127.0.0.1", UDP_PORT))

    def unix():
        _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM).connect(UNIX_NAME)

    def io_uring():  # in a child of its own: the filter kills a process that tries it
        import os
        import signal
        child = os.fork()
        if child == 0:
            libc = ctypes.CDLL(None, use_errno=True)
            os._exit(0 if libc.syscall(425, 1, ctypes.create_string_buffer(120)) >= 0  # io_uring_setup
                     else ctypes.get_errno())
        status = os.waitpid(child, 0)[1]
        if os.WIFSIGNALED(status):
            raise OSError(f"killed by {signal.Signals(os.WTERMSIG(status)).name}")
        if os.waitstatus_to_exitcode(status):
            raise OSError(os.waitstatus_to_exitcode(status), "io_uring_setup")

    def exec_d():  # a program the worker starts, a Python of its own (run once: it is slow)
        if not _EXEC_D:
            import subprocess
            done = subprocess.run([_sys.executable, "-c", "import socket; socket.create_connection("
                                   "('127.0.0.1', PORT), timeout=2)"], capture_output=True)
            _EXEC_D.append(None if done.returncode == 0 else 1 if b"PermissionError" in done.stderr else 0)
        if _EXEC_D[0] is not None:
            raise OSError(_EXEC_D[0], "the program it started did not connect")

    tries = {
        "tcp": lambda: _socket.create_connection(("127.0.0.1", PORT), timeout=2),
        "udp": udp,
        "tcp6": lambda: _socket.create_connection(("::1", TCP6_PORT), timeout=2),
        "unix": unix,
        "packet": lambda: _socket.socket(_socket.AF_PACKET, _socket.SOCK_RAW),
        "netlink": lambda: _socket.socket(_socket.AF_NETLINK, _socket.SOCK_RAW, 0),
        "io_uring": io_uring,
        "exec": exec_d,
    }
    for _what, _attempt in tries.items():
        try:
            _attempt()
            print("NET", _what, "OPEN")
        except OSError as _error:
            print("NET", _what, "refused", _error.errno if _error.errno is not None else _error.args[0])
"""
PROBES = ("tcp", "udp", "tcp6", "unix", "packet", "netlink", "io_uring", "exec")


class Listeners:
    """The engine on 127.0.0.1, and a UDP, a TCP-over-IPv6 and an abstract Unix listener that
    count what reaches them."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.count_file = folder / "connections"
        port_file = folder / "port"
        self.engine = subprocess.Popen([sys.executable, "-c", ENGINE, str(KIT), str(KIT / "solutions"),
                                        str(port_file), str(self.count_file)], cwd=KIT)
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text()) and time.monotonic() < deadline:
            assert self.engine.poll() is None, "the engine did not start"
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.tcp6 = socket.create_server(("::1", 0), family=socket.AF_INET6)
        self.unix_name = f"\0autograder-test-{secrets.token_hex(6)}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_name)
        self.unix.listen()

    def code(self) -> str:
        return (RELAY.replace("UDP_PORT", str(self.udp.getsockname()[1]))
                .replace("TCP6_PORT", str(self.tcp6.getsockname()[1]))
                .replace("UNIX_NAME", repr(self.unix_name)).replace("PORT", str(self.port)))

    def reached(self) -> dict[str, int]:
        """What reached each listener."""
        found = {"engine": int(self.count_file.read_text()) if self.count_file.is_file() else 0}
        for name, listener in (("udp", self.udp), ("tcp6", self.tcp6), ("unix", self.unix)):
            found[name] = int(bool(select.select([listener], [], [], 0)[0]))
        return found

    def close(self) -> None:
        self.engine.kill()
        self.engine.wait()
        for listener in (self.udp, self.tcp6, self.unix):
            listener.close()


@pytest.fixture
def listeners(tmp_path):
    made = Listeners(tmp_path / "listeners")
    yield made
    made.close()


def relaying(folder: Path, listeners: Listeners) -> Path:
    return make_submission(folder, "relays", at_import=listeners.code(), in_mul="_probe_network()")


def tries(results: dict) -> dict[str, str]:
    """What the submission said of each way out it tried: `refused <errno>` or `OPEN`."""
    lines = (line.strip().split(maxsplit=2) for line in results["value.mul"]["output"].splitlines())
    return {words[1]: words[2] for words in lines if len(words) == 3 and words[0] == "NET"}


def assert_nothing_reached(results: dict, listeners: Listeners, honest: dict,
                           errno: int | None = None) -> None:
    """Nothing reached a listener, the scores are the honest base's, and every way out was tried
    and refused (with `errno`, where given)."""
    assert scores(results) == honest
    assert listeners.reached() == {"engine": 0, "udp": 0, "tcp6": 0, "unix": 0}
    tried = tries(results)
    assert set(tried) == set(PROBES), results["value.mul"]["output"][-3000:]
    assert all(said.startswith("refused") for said in tried.values()), tried
    if errno is not None:  # io_uring kills the process that tries it
        assert tried.pop("io_uring") == "refused killed by SIGSYS"
        assert set(tried.values()) == {f"refused {errno}"}, tried


@grades_at_every_level
@at_a_level
def test_no_worker_reaches_the_network(place, listeners, level):
    submission = relaying(place["folder"] / f"network-{level}", listeners)
    done = run_grading(level, submission, place["folder"], f"network-{level}",
                       "--grading=" + str(place["grading"]), "--reference=" + str(place["sealed"]))
    assert done.results is not None, done.output[-3000:]
    # In the container, with no namespace of its own, the filter refused every socket (EPERM).
    assert_nothing_reached(done.results, listeners, place["honest"], None if level == "isolated" else 1)


@grades_at_every_level
def test_no_worker_of_a_grader_that_is_not_root_reaches_the_network(place, listeners, tmp_path):
    """The limits level: the grader runs as an account that is not root (nobody here), and so
    do its workers; the filter closes the network to them all the same."""
    base = Path(tempfile.mkdtemp(prefix="autograder-limits-"))
    try:
        base.chmod(0o755)
        submission = relaying(base, listeners)
        sealed, grading = base / "reference.json", base / "grading.toml"
        shutil.copy(place["sealed"], sealed)
        shutil.copy(place["grading"], grading)
        done = grade_as_nobody(base, submission, f"--grading={grading}", f"--reference={sealed}")
        assert done["code"] in (0, 1) and done["results"] is not None, done["output"][-3000:]
        assert_nothing_reached(done["results"], listeners, place["honest"], errno=1)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def grade_as_nobody(base: Path, submission: Path, *options: str) -> dict:
    """`pytest autograder` on `submission` as the account nobody (the limits level), with this
    Python opened to it as in test_isolation.py's container. `base` is a folder every account
    may enter; what the grading writes goes into a folder of nobody's in it."""
    out = base / "out"
    for folder in (out, out / "tmp", base / "view"):
        folder.mkdir()
    for path in [base, *base.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
        else:
            path.chmod(0o644)
    for path in [out, out / "tmp", *(p for p in base.glob("*.json"))]:
        os.chown(path, NOBODY, NOBODY)
    results = out / "results.json"
    script = (f"set -e\n{opening(base / 'view')}\nexec setpriv --reuid {NOBODY} --regid {NOBODY} "
              "--clear-groups \"$@\"\n")
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "nobody",
               sys.executable, "-m", "pytest", "autograder", f"--submission={submission}",
               f"--results-json={results}", "-q", "-p", "no:cacheprovider", *options]
    env = {**os.environ, "TMPDIR": str(out / "tmp"), "HOME": str(out)}
    run = subprocess.run(command, cwd=KIT, env=env, capture_output=True, text=True, timeout=GRADING_SECONDS)
    entries = ({t["tags"][0]: t for t in json.loads(results.read_text())["tests"]}
               if results.is_file() else None)
    return {"code": run.returncode, "output": run.stdout + run.stderr, "results": entries}


# -- the filter itself, in a process of this test -----------------------------------------------------

TRIES = """
import ctypes, json, os, socket, sys
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import seccomp
seccomp.install(bytes.fromhex(sys.stdin.read()))
libc = ctypes.CDLL(None, use_errno=True)
said = {}

def attempt(name, call):
    result = call()
    said[name] = "allowed" if result >= 0 else os.strerror(ctypes.get_errno())

for family in ("AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK", "AF_PACKET", "AF_VSOCK"):
    attempt("socket " + family, lambda: libc.socket(getattr(socket, family), socket.SOCK_STREAM, 0))
pair = (ctypes.c_int * 2)()
attempt("socketpair AF_UNIX", lambda: libc.socketpair(socket.AF_UNIX, socket.SOCK_STREAM, 0, pair))
attempt("socketpair AF_INET", lambda: libc.socketpair(socket.AF_INET, socket.SOCK_STREAM, 0, pair))
attempt("pipe", lambda: libc.pipe(pair))
child = os.fork()
if child == 0:  # what the worker forks holds the filter too, and no exec takes it off
    os.execv(sys.executable, [sys.executable, "-c", "import socket\\ntry:\\n    socket.socket()\\n"
             "except PermissionError:\\n    raise SystemExit(7)"])
said["a child's exec"] = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
print(json.dumps(said))
"""


@pytest.mark.skipif(not seccomp.works(), reason="this machine cannot install a seccomp filter")
def test_the_filter_refuses_every_socket_and_whatever_makes_one():
    run = subprocess.run([sys.executable, "-c", TRIES, str(KIT)], input=seccomp.program().hex(),
                         capture_output=True, text=True, timeout=60)
    said = json.loads(run.stdout.splitlines()[-1])
    refused = os.strerror(1)
    assert said == {"socket AF_INET": refused, "socket AF_INET6": refused, "socket AF_UNIX": refused,
                    "socket AF_NETLINK": refused, "socket AF_PACKET": refused, "socket AF_VSOCK": refused,
                    "socketpair AF_UNIX": "allowed", "socketpair AF_INET": refused,
                    "pipe": "allowed", "a child's exec": 7}


def test_where_the_network_is_open_an_official_grading_is_told_why(monkeypatch):
    monkeypatch.setattr(seccomp, "works", lambda: False)
    monkeypatch.setattr(sandbox.levels, "_level", "unprivileged")
    said = sandbox.open_network()
    assert said and "can reach the network, kernel keyrings" in said and "no official grading" in said
    monkeypatch.setattr(sandbox.levels, "_level", "isolated")  # its own network namespace, but keyrings
    said = sandbox.open_network()
    assert said and "can reach kernel keyrings" in said and "no official grading" in said
    monkeypatch.setattr(seccomp, "works", lambda: True)
    monkeypatch.setattr(sandbox.levels, "_level", "limits")
    assert sandbox.open_network() is None
