"""How long the whole hidden suite takes on one submission, as a ratio to starting Python.

Runs `pytest autograder --submission solutions` as a whole process: as a student runs it
(reference answered live), with the reference's answers sealed, and exactly as
`autograder bulk` starts it for each submission (sealed answers, lean pytest); and
`python -c "import numpy"`; each a few times in this one run. Prints the medians and their
ratios. Target: at most 1.0 s of wall time per submission on a 2-core machine.

    python bench/suite.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.staff.bulk import pytest_command, pytest_env

KIT = Path(__file__).resolve().parent.parent
PYTEST = [sys.executable, "-m", "pytest", str(KIT / "autograder"), "-q", "-p", "no:cacheprovider",
          "--submission", str(KIT / "solutions")]


def wall(command: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """The median wall time of `command` over `repeat` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=KIT, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as folder:
        sealed = Path(folder) / "reference.json"
        subprocess.run([*PYTEST, "--seal-reference", str(sealed)], cwd=KIT, check=True,
                       capture_output=True)
        python = wall([sys.executable, "-c", "import numpy"], repeat)
        live = wall(PYTEST, repeat)
        from_sealed = wall([*PYTEST, "--reference", str(sealed)], repeat)
        as_bulk = wall(pytest_command("--submission", str(KIT / "solutions"), "--reference", str(sealed)),
                       repeat, pytest_env())
    print(f"python -c 'import numpy'        {python:6.3f} s")
    print(f"suite, reference live           {live:6.3f} s   {live / python:5.1f} x python")
    print(f"suite, reference sealed         {from_sealed:6.3f} s   {from_sealed / python:5.1f} x python")
    print(f"suite, as bulk grading runs it  {as_bulk:6.3f} s   {as_bulk / python:5.1f} x python")
    print(f"target: at most 1.0 s per submission -> {'met' if as_bulk <= 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
