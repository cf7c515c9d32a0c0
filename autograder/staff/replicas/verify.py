"""`autograder replicas`: hold every replica against the live reference, and record those that agree.

For the public seed and N more, the kit's suites grade solutions/ with the reference live
(`--seal-reference`, which answers every scenario call from the reference's worker and keeps
the answers); every call of a replicated scenario is then answered by its replica too, and the
two compared (`disagreement`). A replica that agrees at every seed gets its key recorded in
verified.json, so that bulk grading may use it; one that disagrees anywhere loses its entry,
and each place where it differs is said.

    autograder replicas [--seeds N] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ...config import KIT_ROOT, load
from ...junit_properties import distinct_calls
from ...runner import SealedReference, scenario_key
from ...worker import read_files
from . import VERIFIED, answer, disagreement, key, replicated, tolerance_of

SOLUTIONS = KIT_ROOT / "solutions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=12, help="seeds beside the public one (default 12)")
    parser.add_argument("--jobs", type=int, default=2, help="seeds graded at once (default 2)")


def live_answers(seed: str, folder: Path) -> tuple[list[tuple[str, dict]], SealedReference]:
    """The suites' scenario calls at `seed`, and the live reference's answers to them."""
    sealed, junit = folder / "reference.json", folder / "junit.xml"
    command = [sys.executable, "-m", "pytest", str(KIT_ROOT / "autograder"), "-q", "-p", "no:cacheprovider",
               f"--submission={SOLUTIONS}", f"--reference={SOLUTIONS}", f"--seal-reference={sealed}",
               f"--junitxml={junit}", "--grading-seed", seed]
    done = subprocess.run(command, cwd=KIT_ROOT, capture_output=True, text=True, check=False)
    if not sealed.is_file():
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        raise SystemExit(f"autograder replicas: grading solutions/ at seed {seed} answered no scenario "
                         f"(pytest exited with {done.returncode}):\n" + "\n".join(tail))
    return distinct_calls(junit), SealedReference(sealed)


def compare(seed: str, folder: Path, ids: list[str]) -> dict[str, list[str]]:
    """For each replicated scenario, where its replica differs from the live answer at `seed`."""
    tolerances = load().tolerances
    calls, reference = live_answers(seed, folder)
    problems: dict[str, list[str]] = {scenario_id: [] for scenario_id in ids}
    asked = {scenario_id for scenario_id, _ in calls}
    for scenario_id in ids:
        if scenario_id not in asked:
            problems[scenario_id].append(f"seed {seed}: no suite asks it")
    for scenario_id, kwargs in calls:
        if scenario_id not in problems:
            continue
        tolerance = tolerances.named(tolerance_of(scenario_id))
        expected = reference.answers[scenario_key(scenario_id, kwargs)].observations
        try:
            found = disagreement(expected, answer(scenario_id, kwargs), tolerance)
        except Exception as error:  # noqa: BLE001 - a replica that fails disagrees
            found = f"the replica raised {type(error).__name__}: {error}"
        if found:
            problems[scenario_id].append(f"seed {seed}: {found}")
    return problems


def run(args: argparse.Namespace) -> int:
    ids = replicated()
    seeds = ["public", *(secrets.token_hex(4) for _ in range(args.seeds))]
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        folders = [Path(scratch) / seed for seed in seeds]
        for folder in folders:
            folder.mkdir()
        results = list(pool.map(lambda pair: compare(*pair, ids), zip(seeds, folders)))
    reference = read_files(SOLUTIONS)[0]
    recorded = {}
    for scenario_id in ids:
        problems = [problem for result in results for problem in result[scenario_id]]
        if problems:
            print(f"{scenario_id}: disagrees with solutions/, so it is answered live:")
            for problem in problems[:5]:
                print(f"  {problem}")
        else:
            recorded[scenario_id] = key(scenario_id, reference)
            print(f"{scenario_id}: agrees with solutions/ at {len(seeds)} seeds")
    VERIFIED.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {len(recorded)} of {len(ids)} replicas in {VERIFIED.relative_to(KIT_ROOT)}")
    return 0 if len(recorded) == len(ids) else 1
