"""The lock that lets the kit's tests run in parallel (tests/support/machine.py): tests share the
machine, a test marked alone has it to itself, and one that waits for it is not passed."""

from __future__ import annotations

import threading
import time

from support import machine


def test_a_test_alone_waits_for_the_shared_ones_and_keeps_the_next_ones_out(tmp_path):
    events: list[str] = []
    first_in, alone_waits = threading.Event(), threading.Event()

    def shared(name: str, entered: threading.Event | None = None, wait: threading.Event | None = None):
        if wait:
            wait.wait()
            time.sleep(0.2)  # asks after the one alone asked
        with machine.held(tmp_path, alone=False):
            events.append(f"{name} in")
            if entered:
                entered.set()
            time.sleep(0.3)
            events.append(f"{name} out")

    def alone():
        first_in.wait()
        alone_waits.set()
        with machine.held(tmp_path, alone=True):
            events.append("alone in")
            time.sleep(0.3)
            events.append("alone out")

    threads = [threading.Thread(target=shared, args=("first", first_in)), threading.Thread(target=alone),
               threading.Thread(target=shared, args=("later", None, alone_waits))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert events == ["first in", "first out", "alone in", "alone out", "later in", "later out"], events


def test_shared_tests_run_side_by_side(tmp_path):
    inside = threading.Barrier(2, timeout=10)

    def shared():
        with machine.held(tmp_path, alone=False):
            inside.wait()  # both in at once, or the barrier breaks

    threads = [threading.Thread(target=shared) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not inside.broken


def test_a_run_of_one_process_takes_no_lock():
    done = threading.Event()

    def twice_alone():
        with machine.held(None, alone=True), machine.held(None, alone=True):
            done.set()  # a lock taken twice by one test would wait for ever

    threading.Thread(target=twice_alone, daemon=True).start()
    assert done.wait(10)
