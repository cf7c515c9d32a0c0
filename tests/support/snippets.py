"""Snippets run as a student pastes them: each in a Python of its own, in the submission's folder.

A fresh interpreter per snippet spends most of its time importing numpy. A `Snippets` keeps a few
Pythons that have imported numpy and nothing of the kit's, and forks one for each snippet: the
child is as fresh as `python -c CODE` started in the folder (that folder its working directory
and first on sys.path, no module of the submission loaded, its own stdout and stderr), at a
fraction of the cost, but for its hash seed and the addresses of its objects, which every fork
shares: an answer that follows those is the same in each fork, and is told apart only by
Pythons started afresh.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

SECONDS = 300  # a snippet that takes longer is stuck

RUNNER = r"""
import json, os, sys, traceback
import numpy  # what nearly every snippet imports first

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.chdir(job["cwd"])
        sys.path[0] = ""  # as `python -c` has it: the working directory
        for fd, path in ((1, job["stdout"]), (2, job["stderr"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        status = 0
        try:
            exec(compile(job["code"], "<string>", "exec"), {"__name__": "__main__"})
        except SystemExit as end:
            status = end.code if isinstance(end.code, int) else 1
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    os.waitpid(pid, 0)
    print(flush=True)  # done
"""


class Snippets:
    """`run(code, folder)`: what the snippet prints, to stdout and to stderr. Safe to call from as
    many threads at once as it has Pythons."""

    def __init__(self, pythons: int) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="kit-snippets-"))
        self.idle: queue.Queue[subprocess.Popen] = queue.Queue()
        for _ in range(pythons):
            self.idle.put(self._start())

    @staticmethod
    def _start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, start_new_session=True,
                                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})

    def run(self, code: str, folder: Path) -> tuple[str, str]:
        python = self.idle.get()
        out = self.scratch / f"{python.pid}.out"
        err = out.with_suffix(".err")
        python.stdin.write(json.dumps({"code": code, "cwd": str(folder), "stdout": str(out),
                                       "stderr": str(err)}) + "\n")
        python.stdin.flush()
        if not select.select([python.stdout], [], [], SECONDS)[0] or not python.stdout.readline():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(python.pid, signal.SIGKILL)  # the Python and the snippet's fork
            python.wait()
            self.idle.put(self._start())  # the next snippet gets a Python of its own
            raise TimeoutError(f"a snippet ran over {SECONDS} s, or its Python died, in {folder}:\n{code}")
        self.idle.put(python)
        return tuple(path.read_text(encoding="utf-8", errors="replace") for path in (out, err))

    def close(self) -> None:
        while not self.idle.empty():
            python = self.idle.get()
            python.stdin.close()
            python.wait()
        shutil.rmtree(self.scratch)
