"""The program of the parsing process that bounded.py starts: its limits first, then intake's own
parsers (python.py, ipynb.py), one request at a time, each answered with plain text and names."""

from __future__ import annotations

import sys

from .bounded import arm_cpu, limit_self, read_message, write_message
from .ipynb import modules_here
from .python import defined_here


def serve(memory: int, seconds: int) -> None:
    """The parsing process: answer requests from stdin until it closes."""
    limit_self(memory)
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    while (request := read_message(requests)) is not None:
        arm_cpu(seconds)
        try:
            if request["op"] == "defines":
                reply: object = {"engines": sorted(defined_here(request["text"]))}
            else:
                modules, notes = modules_here(request["text"], request["where"])
                reply = {"modules": modules, "notes": notes}
        except MemoryError:
            reply = {"over": "memory"}
        except Exception as error:  # noqa: BLE001 - a parser's own failure costs the one request
            reply = {"over": type(error).__name__}
        write_message(replies, reply)
