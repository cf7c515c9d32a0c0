"""The program inside a worker process: load a submission, run scenarios, answer in JSON.

It runs in a Python of its own, in a folder that is its alone: forked from the sandbox's
zygote, which imported it and calls `main`, or exec'd afresh (`worker.BOOT` reads this source
from its standard input). It imports nothing from the kit. Its first message brings the
submission's files, which it writes into its folder, and the scenario modules' sources; every
later message asks for one module to be imported or one scenario to be run (with
`"draw": true`, also for the graphs it draws, sent beside its observations).
Every answer is plain JSON made here, so no object the submission made leaves this process.
A request may carry a limit in seconds of CPU time: a timer interrupts the scenario when it is
spent, so that a hang costs its limit and this worker goes on to the next request. (The
trusted side measures the CPU time itself and kills a worker that does not answer in time.)
The timer is the kernel's CPU-time timer where Python has one (`signal.setitimer`), else a
watchdog thread that reads this process's CPU clock (Windows). A worker started by the
portable runner (`autograder/portable.py`: the student's own check where the Linux sandbox
cannot be had) is told so in its first message: it then adds the CPU time each request took
to its answer, and writes a mark to its output before each answer, so that the runner knows
what was printed before it.
"""

import builtins
import contextlib
import gc
import json
import os
import re
import signal
import sys
import time
import types

# A private copy of the builtins, taken before the submission runs: patching `abs` or `sum`
# in the submission's module changes its own code, never this program or the scenarios.
BUILTINS = dict(vars(builtins))
__builtins__ = BUILTINS

MAX_DEPTH = 20
MAX_ITEMS = 100_000
FORKED = []  # not empty in a process the submission forked from this one
SHIFTED = []  # objects kept where the grader asks to move the submission's to other addresses


class Shift:
    """An object of the size of a submission's own small objects."""

    def __init__(self):
        self.value = 0.0


COMPILED = {}  # (module name, source) -> code: a worker forked from a zygote finds them compiled


class Unplain(Exception):
    """An observation that is not plain data."""


class TimeUp(BaseException):
    """The request's CPU time is spent."""


ARMED = []  # not empty while a request's timer runs


def time_up(signum, frame):
    if ARMED:
        raise TimeUp


class Watchdog:
    """A CPU-time timer for a Python without `signal.setitimer` (Windows): a thread that reads the
    process's CPU clock and interrupts the main thread (as SIGINT would, `_thread.interrupt_main`)
    once the request's limit is spent."""

    EVERY = 0.005  # seconds between two looks at the clock

    def __init__(self):
        import _thread
        import threading  # here: only a Python without setitimer needs a thread

        self.interrupt = _thread.interrupt_main
        self.deadline = None  # CPU seconds of this process at which the request is interrupted
        self.lock = threading.Lock()  # once set() returns, no interrupt of the last request comes
        self.wake = threading.Event()
        threading.Thread(target=self.watch, daemon=True).start()

    def set(self, limit):
        with self.lock:
            self.deadline = time.process_time() + limit if limit else None
        self.wake.set()

    def watch(self):
        while True:
            self.wake.wait()
            with self.lock:
                if self.deadline is None:
                    self.wake.clear()
                elif time.process_time() >= self.deadline:
                    self.deadline = None
                    self.interrupt()
            time.sleep(self.EVERY)


TIMERS = []  # the watchdog, once started, where there is no setitimer


def set_timer(limit):
    """Interrupt the request once it has used `limit` seconds of CPU time (0: no longer)."""
    if hasattr(signal, "setitimer"):
        if limit:
            signal.signal(signal.SIGPROF, time_up)  # again: the submission may have changed it
        signal.setitimer(signal.ITIMER_PROF, limit)
        return
    if not TIMERS:
        TIMERS.append(Watchdog())
    if limit:
        signal.signal(signal.SIGINT, time_up)  # what interrupt_main runs; again, as above
    TIMERS[0].set(limit)


def plain(x, depth=0):
    """Copy an observation into plain JSON types, using only the base types' own methods."""
    kind = type(x)
    if depth > MAX_DEPTH:
        raise Unplain("nested too deeply")
    if x is None or kind is bool:
        return x
    if issubclass(kind, bool):
        return bool.__bool__(x)
    if issubclass(kind, int):
        return int.__index__(x)
    if issubclass(kind, float):
        return float.__float__(x)
    if issubclass(kind, str):
        return str.__str__(x)[:10_000]
    if kind.__module__ == "numpy":
        import numpy

        if isinstance(x, numpy.ndarray):
            if x.size > MAX_ITEMS:
                raise Unplain(f"an array of {x.size} numbers")
            if x.dtype.kind not in "biuf":
                return {"object": f"ndarray of {x.dtype}"}
            array = numpy.array(x, dtype=numpy.float64, subok=False)
            return {"ndarray": array.ravel().tolist(), "shape": list(array.shape)}
        if isinstance(x, (numpy.floating, numpy.integer, numpy.bool_)):
            return float(x)
    if kind in (list, tuple):
        if len(x) > MAX_ITEMS:
            raise Unplain(f"a list of {len(x)} items")
        return [plain(item, depth + 1) for item in x]
    if kind is dict:
        return {str(key): plain(value, depth + 1) for key, value in x.items()}
    return {"object": kind.__name__}


def install_scenarios(sources):
    """Make the scenario modules importable as the package `scenarios`: each compiled once (a
    worker forked from the zygote finds them compiled) and run afresh, every module after the
    ones it imports from."""
    package = types.ModuleType("scenarios")
    package.__path__ = []
    sys.modules["scenarios"] = package
    for name in sources:
        module = types.ModuleType(f"scenarios.{name}")
        module.__package__ = "scenarios"
        module.__builtins__ = BUILTINS
        sys.modules[module.__name__] = module
        setattr(package, name, module)
    for name in import_order(sources):
        source = sources[name]
        code = COMPILED.get((name, source))
        if code is None:
            code = COMPILED[name, source] = compile(source, f"<scenarios/{name}.py>", "exec")
        exec(code, sys.modules[f"scenarios.{name}"].__dict__)


RELATIVE_IMPORT = re.compile(r"^from \.(\w+) import", re.MULTILINE)


def import_order(sources):
    """The module names of `sources`, each after those it imports from (`from .name import`).
    No closure and no cycle: garbage the zygote keeps would move every forked worker's objects."""
    needs = {name: [n for n in RELATIVE_IMPORT.findall(source) if n in sources]
             for name, source in sources.items()}
    order = []
    while len(order) < len(needs):
        ready = [name for name in needs if name not in order and all(n in order for n in needs[name])]
        order += ready or [name for name in needs if name not in order]  # a cycle: the rest as they come
    return order


def where(error):
    """The last line of the submission's own code that the error passed through, as the
    scenarios' cases name it (scenarios/common.py), or "" before they are installed."""
    common = sys.modules.get("scenarios.common")
    return common.where(error) if common is not None else ""


def message(error):
    try:
        return str.__str__(str(error))[:2000]
    except BaseException:  # noqa: BLE001 - a submission's exception may fail to print
        return ""


def handle(request, engines):
    if "load" in request:
        name = request["load"]
        __import__(name)
        engines[name] = sys.modules[name]
        return None
    module_name, function_name = request["scenario"].split(":")
    function = getattr(sys.modules[f"scenarios.{module_name}"], function_name)
    engine = engines[function.engine]  # its @scenario declaration
    return plain(function(engine, **request.get("kwargs", {})))


def draw_graphs(on):
    """Tell the scenarios whether this request draws its graphs (scenarios/common.py)."""
    with contextlib.suppress(BaseException):  # then there are no graphs; the answer stands
        sys.modules["scenarios.common"].draw_graphs(on)


def drawings():
    """The graphs the scenario drew beside its answer, as plain data, or None. They only
    explain an answer: if they cannot be had, there are none."""
    try:
        found = sys.modules["scenarios.common"].drawings()
        return plain(found) if type(found) is list and found else None
    except BaseException:  # noqa: BLE001 - whatever went wrong, the answer stands without them
        return None


def reap():
    """Collect the children the request left (the grader kills them once it has the answer).
    Windows has no zombies to collect."""
    if not hasattr(os, "WNOHANG"):
        return
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def write_files(files):
    """The submission's files, as the grader read them (bytes as Latin-1 text), into this folder."""
    for name, text in files.items():
        with open(f"{name}.py", "wb") as file:
            file.write(text.encode("latin-1"))


def serve(requests, answers):
    boot = json.loads(requests.readline())
    portable = boot.get("portable") is True
    mark = str(boot.get("mark", "")).encode()
    write_files(boot["files"])
    install_scenarios(boot["scenarios"])
    shift = boot.get("shift", 0)
    if shift:  # pages mapped first move every arena that comes after; freed objects leave holes
        SHIFTED.append(bytearray(shift * 4096))
        made = [Shift() for _ in range(2 * shift)]
        SHIFTED.extend(made[::2])
        del made
    sys.path.insert(0, os.getcwd())
    if portable:  # its runner waits for this before it asks anything: a start is not a request's time
        answers.write('{"ready": true}\n')
        answers.flush()
    engines = {}
    for line in requests:
        request = json.loads(line)
        draw = request.get("draw") is True
        if draw:
            draw_graphs(True)
        collecting = gc.isenabled()
        started = time.process_time()
        ARMED.append(True)
        set_timer(request.get("limit", 0))
        try:
            try:
                answer = {"observations": handle(request, engines)}
            finally:
                ARMED.clear()  # a late tick must not land below
                set_timer(0)
        except TimeUp:
            answer = {"timeout": True}
        except Unplain as error:
            answer = {"unplain": str(error)}
        except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
            answer = {"raised": type(error).__name__, "message": message(error),
                      "where": where(error)}
        if FORKED:  # an exception brought a forked child back here: it has nothing to say
            os._exit(0)
        if collecting:
            gc.enable()  # a scenario interrupted between gc.disable() and its finally
        reap()
        if draw:
            if (graphs := drawings()) is not None:
                answer["graphs"] = graphs
            draw_graphs(False)
        if portable:
            answer["seconds"] = time.process_time() - started
            printed_before(mark)
        answers.write(json.dumps(answer, allow_nan=True) + "\n")
        answers.flush()


def printed_before(mark):
    """Write `mark` on the output after everything printed so far: the portable runner reads the
    output on a channel of its own, and takes what came before the mark as this request's."""
    for stream in (sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(BaseException):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, mark)


def main(request_fd, answer_fd):
    """Serve the requests of descriptor `request_fd`, answering on `answer_fd`, until it ends."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # in place of what the worker's source came on
    os.close(null)
    for fd in (request_fd, answer_fd):
        os.set_inheritable(fd, False)  # no program the submission starts gets them

    def forked():
        # A process the submission forks never talks to the grader: it cannot take a request
        # or answer one (which would mix up the answers of its own worker).
        FORKED.append(True)
        for fd in (request_fd, answer_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    if hasattr(os, "register_at_fork"):  # where a process can fork (not Windows)
        os.register_at_fork(after_in_child=forked)
    sys.setrecursionlimit(20_000)
    sys.stdin = open(os.devnull)
    serve(os.fdopen(request_fd, "r", encoding="utf-8"),
          os.fdopen(answer_fd, "w", encoding="utf-8", newline="\n"))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
