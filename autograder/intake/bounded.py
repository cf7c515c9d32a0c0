"""Parsing a submission's text in a process of its own, under a memory and a CPU limit.

Python's parser takes about 0.4 GB per MB of some sources (`x = [(a+b)*c, (a+b)*c, ...]`), and
a notebook's JSON up to 25 bytes per byte (`[{}, {}, ...]`); a notebook of 20 MB could take the
grader's own process, and the whole class with it, past the machine's memory. So intake never
parses a submission's notebook or module itself: a parsing process does, limited to
PARSE_MEMORY of address space and PARSE_SECONDS of CPU time a request, and answers with plain
text and names (the engines a module defines; a notebook's modules and notes), whose size is
that of the input. A request the process cannot answer within its limits costs that file
alone, with a note; the process is started again for the next.
"""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

PARSE_MEMORY = 768 * 1024 * 1024  # address space of the parsing process: a module or cell of ~1.5 MB
PARSE_SECONDS = 30  # CPU time of one request
DEADLINE = 120.0  # wall-clock seconds one request may take, however busy the machine
PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
# The parsing process's program (parser_process.py): the limits first, then intake's own parsers.
PROGRAM = ("import sys; sys.path.insert(0, sys.argv[1]); from autograder.intake.parser_process import serve; "
           "serve(int(sys.argv[2]), int(sys.argv[3]))")
HEADER = struct.Struct("<Q")


class OverLimits(Exception):
    """The parsing process could not answer within its limits (or died); the message says which."""


def limit_self(memory: int) -> None:
    """Limit this process's address space, where the platform allows it."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):  # no such limit here: the deadline still holds
        pass


def arm_cpu(seconds: int) -> None:
    """Let this process spend at most `seconds` more CPU time (then SIGXCPU ends it)."""
    try:
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime) + 1
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = spent + seconds if hard == resource.RLIM_INFINITY else min(spent + seconds, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ImportError, ValueError, OSError):
        pass


def read_message(stream) -> object:
    """One length-prefixed JSON message; None at the end of the stream."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    return json.loads(stream.read(HEADER.unpack(head)[0]).decode("utf-8", errors="surrogatepass"))


def write_message(stream, message: object) -> None:
    """One length-prefixed JSON message."""
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", errors="surrogatepass")
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


class Parser:
    """The client of one parsing process, started when first asked and again after a failure."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def ask(self, request: dict) -> dict:
        """The reply to one request; raises OverLimits."""
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                command = [sys.executable, "-I", "-c", PROGRAM, str(PACKAGE_ROOT), str(PARSE_MEMORY),
                           str(PARSE_SECONDS)]
                self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, close_fds=True)
            try:
                write_message(self.process.stdin, request)
                reply = self.reply(self.process)
            except (OSError, ValueError) as error:
                self.stop()
                raise OverLimits(f"the parsing process ended ({type(error).__name__})") from None
            if reply is None or "over" in reply:
                self.stop()
                raise OverLimits(f"too large or too deeply nested to parse within the grader's limits "
                                 f"({PARSE_MEMORY // 2**20} MB, {PARSE_SECONDS} s of CPU)")
            return reply

    def reply(self, process: subprocess.Popen) -> dict | None:
        """The process's reply, or None if it ends or passes the deadline first."""
        stdout = process.stdout
        deadline = time.monotonic() + DEADLINE
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([stdout], [], [], left)
            if ready:
                return read_message(stdout)

    def stop(self) -> None:
        """End the parsing process, if there is one."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None


PARSER = Parser()


def defines(text: str) -> set[str] | None:
    """The engines a module defines at its top level (by its tree, or by its `class`/`def`
    lines where it has none); None when it cannot be parsed within the limits."""
    try:
        return set(PARSER.ask({"op": "defines", "text": text})["engines"])
    except OverLimits:
        return None


def notebook_modules(text: str, where: str) -> tuple[dict[str, str], list[str]]:
    """A notebook's engine modules and the notes on its cells; raises OverLimits."""
    reply = PARSER.ask({"op": "notebook", "text": text, "where": where})
    return reply["modules"], reply["notes"]


def stop_at_exit() -> None:
    """End the parsing process with this one."""
    PARSER.stop()


if os.name == "posix":
    import atexit

    atexit.register(stop_at_exit)
