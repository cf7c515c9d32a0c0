"""The tensor engine's cost: a digits training step, and a running total of many losses.

The digits run is the lesson's (`train_digits`: 1,077 digits, a 64-128-10 network, batches
of 32), on the reference's engine and, with `--against`, on another tensor.py: a file, or the
reference at a git revision of the kit (`--against main`), the runs interleaved so that both
see the same machine. Prints
each one's median CPU time per step and their ratio. NumPy runs on one thread, as in the
grader's workers.

The running total is `total = total + loss` over n small graphs and over 4n, then one
backward(), with Python's cyclic garbage collector paused (its cost grows with everything
alive, whatever the engine): a time ratio near 4 is linear in the number of losses, near 16
quadratic.

    python bench/tensor.py [--against FILE|REVISION] [--repeat 15]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from types import ModuleType

for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = "1"  # before NumPy loads: one thread, as the workers have

import numpy as np  # noqa: E402

from autograder.datasets import digits  # noqa: E402
from autograder.inside.scenarios.training import train_digits  # noqa: E402

KIT = Path(__file__).resolve().parent.parent
EPOCHS = 2
RUNNING_TOTAL = 2_000


def engine(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def other_engine(against: str, folder: Path) -> ModuleType:
    """The tensor.py at `against`: a file, else the reference's at that git revision."""
    path = Path(against)
    if not path.is_file():
        path = folder / "tensor.py"
        shown = subprocess.run(["git", "show", f"{against}:solutions/tensor.py"], cwd=KIT,
                               capture_output=True, text=True, check=False)
        if shown.returncode != 0:
            raise SystemExit(f"bench/tensor.py: --against {against} is neither a file nor a git revision "
                             f"of the kit with solutions/tensor.py ({shown.stderr.strip()})")
        path.write_text(shown.stdout, encoding="utf-8")
    return engine(path, "other_tensor")


def seconds_per_step(tensor: ModuleType, data: dict) -> float:
    steps = EPOCHS * -(-len(data["X_train"]) // 32)
    start = time.process_time()
    train_digits(tensor, **data, epochs=EPOCHS, lr=0.2, batch_size=32)
    return (time.process_time() - start) / steps


def running_total(tensor: ModuleType, count: int) -> float:
    """Seconds to add up `count` losses of small graphs of their own, then run backward once."""
    w = tensor.Tensor(np.ones(4))
    gc.disable()
    try:
        start = time.process_time()
        total = tensor.Tensor(0.0)
        for step in range(count):
            total = total + ((w * float(step % 7)).relu() * w).sum()
        total.backward()
        return time.process_time() - start
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", help="another tensor.py, or a git revision of the kit")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    engines = {"solutions/tensor.py": engine(KIT / "solutions" / "tensor.py", "reference_tensor")}
    if args.against:
        with tempfile.TemporaryDirectory() as folder:
            engines[args.against] = other_engine(args.against, Path(folder))
    data = {name: np.asarray(rows) for name, rows in digits().items()}  # converted once, not per run
    times: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(args.repeat):
        for name, tensor in engines.items():
            times[name].append(seconds_per_step(tensor, data))
    medians = {name: statistics.median(found) for name, found in times.items()}
    print(f"digits, {EPOCHS} epochs of {len(data['X_train'])} rows, batches of 32, median of {args.repeat}:")
    for name, median in medians.items():
        print(f"  {name:40} {1e6 * median:8.1f} us a step")
    if args.against:
        mine, other = medians["solutions/tensor.py"], medians[args.against]
        print(f"  solutions/tensor.py / {args.against}: {mine / other:.3f}")
    reference = engines["solutions/tensor.py"]
    short = statistics.median(running_total(reference, RUNNING_TOTAL) for _ in range(args.repeat))
    long = statistics.median(running_total(reference, 4 * RUNNING_TOTAL) for _ in range(args.repeat))
    print(f"running total of {RUNNING_TOTAL} losses {short:.3f} s, of {4 * RUNNING_TOTAL} {long:.3f} s: "
          f"ratio {long / short:.2f} (4 is linear, 16 quadratic)")


if __name__ == "__main__":
    main()
