"""What the kit costs to run, estimated from the reference's own CPU time: `autograder check`'s report.

Every scenario call of a grading of the reference at the public seed has its CPU time, as the
worker measured it (the sealed answers keep it). From those: each part's time, the limits they
imply (grading.toml [limits]: a multiple of the reference's time, never under the floor), and
estimates of a whole grading, of `autograder mutate` (each mutant graded against the sealed
reference by the suites of its own part and of the parts it may also cost, one of each stub by
every suite) and of `autograder bulk` for a class of 100 (every submission graded officially,
with the reference live beside it), on this machine's cores.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

from ..config import Grading
from ..runner import time_limit

# The time of one grading beyond its scenarios' CPU time (pytest, the judge, the messages and the
# results): a start, and a share for each scenario call. `autograder mutate value.mul --jobs 2`
# graded 44 mutants by every suite in 14.5 s on 2 cores, 0.66 s each with 0.22 s of scenarios
# (0.44 s of its own, 83 calls); graded by the value.relu suite alone (6 calls, its module alone
# collected), the reference costs its grading process 0.25 times what every suite does.
GRADING_START = 0.085
CALL_OVERHEAD = 0.0043  # 0.085 s + 83 calls of it: the 0.44 s of a grading by every suite
CLASS = 100  # the class the estimate of `autograder bulk` is for
DOMINANT = 10.0  # a part that costs more than this many times all the others together is warned of


@dataclass(frozen=True)
class PartCost:
    """One part's share of a grading: its scenario calls' CPU time, and their limits."""

    part: str
    calls: int
    seconds: float  # the reference's CPU time for all of them
    limits: tuple[float, ...]  # each call's limit, in seconds of CPU time


def part_costs(grading: Grading, seconds_by_part: dict[str, list[float]]) -> list[PartCost]:
    """Each part of grading.toml with its calls' CPU times, in grading.toml's order."""
    return [PartCost(part, len(times), sum(times), tuple(time_limit(grading.limits, t) for t in times))
            for part in grading.parts if (times := seconds_by_part.get(part, []))]


def grading_overhead(calls: int) -> float:
    """A grading's own CPU time, beyond its scenarios', when it makes `calls` scenario calls."""
    return GRADING_START + CALL_OVERHEAD * calls


def mutate_seconds(costs: list[PartCost], part: str, mutants: int, stubs: int,
                   also: tuple[str, ...]) -> float:
    """The CPU time of grading `part`'s mutants: `stubs` of them by every suite, the others by
    the suites of `part` and of the parts in `also`."""
    graded = [cost for cost in costs if cost.part == part or cost.part in also]
    alone = grading_overhead(sum(c.calls for c in graded)) + sum(c.seconds for c in graded)
    every = grading_overhead(sum(c.calls for c in costs)) + sum(c.seconds for c in costs)
    whole = min(stubs, mutants)
    return (mutants - whole) * alone + whole * every


def minutes(seconds: float) -> str:
    """A duration as a reader wants it: seconds under two minutes, else minutes."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@dataclass(frozen=True)
class CostReport:
    """The report's lines, and its warnings (said by check, never refused)."""

    lines: list[str]
    warnings: list[str]


def cost_report(grading: Grading, seconds_by_part: dict[str, list[float]], mutants: dict[str, int],
                cores: int | None = None, stubs: dict[str, int] | None = None,
                also_costs: dict[str, tuple[str, ...]] | None = None) -> CostReport:
    """The cost report of a kit: a row per part (its reference CPU time and the limits it implies,
    its mutants, of its `stubs` stub functions, graded with the parts it `also_costs`), then the
    estimates of a grading, of `autograder mutate` and of a class of 100; a warning for a part
    that costs more than DOMINANT times all the others together, and one where the class would
    take longer than grading.toml's [budget]."""
    cores = cores or os.cpu_count() or 1
    costs = part_costs(grading, seconds_by_part)
    total = sum(cost.seconds for cost in costs)
    lines = ["cost report (the reference's CPU time at the public seed; limits from [limits] of "
             f"{grading.source.name}):",
             f"  {'part':20} {'calls':>5} {'reference':>10} {'limit per call':>16} {'mutants':>8} "
             f"{'mutate':>9}"]
    everything = 0.0
    for cost in costs:
        low, high = min(cost.limits), max(cost.limits)
        limit = f"{low:.2f} s" if high - low < 0.005 else f"{low:.2f}-{high:.2f} s"
        count = mutants.get(cost.part, 0)
        seconds = mutate_seconds(costs, cost.part, count, (stubs or {}).get(cost.part, 1),
                                 (also_costs or {}).get(cost.part, ())) / cores
        everything += seconds
        mutate = minutes(seconds) if count else "-"
        lines.append(f"  {cost.part:20} {cost.calls:5} {cost.seconds:8.3f} s {limit:>16} {count or '-':>8} "
                     f"{mutate:>9}")
    own = grading_overhead(sum(c.calls for c in costs))
    official = own + 2 * total  # the submission's calls and the live reference's
    whole_class = CLASS * official / cores
    lines += [f"  {'all':20} {sum(c.calls for c in costs):5} {total:8.3f} s "
              f"{'longest ' + format(max((max(c.limits) for c in costs), default=0), '.2f') + ' s':>16} "
              f"{sum(mutants.values()):8} {minutes(everything):>9}",
              f"  a grading takes about {official:.2f} s ({own:.2f} s of its own, and the "
              f"scenarios of the submission and of the reference, {total:.3f} s each); on {cores} "
              f"core{'s' if cores > 1 else ''}, `autograder mutate` about {minutes(everything)}, "
              f"`autograder bulk` on a class of {CLASS} about {minutes(whole_class)}"]
    warnings = []
    for cost in costs:
        others = total - cost.seconds
        if len(costs) > 1 and cost.seconds > DOMINANT * others:
            warnings.append(f"part {cost.part!r} costs {cost.seconds:.2f} s of the reference's CPU time, "
                            f"{cost.seconds / max(others, 1e-9):.0f} times all the other parts together "
                            f"({others:.2f} s): every grading, mutant and release pays it; if that is not "
                            "what you mean, make its scenario smaller (its suite passes the task's numbers)")
    limit = max((max(cost.limits) for cost in costs), default=0.0)
    if limit > grading.limits.cpu_seconds:
        slowest = max(costs, key=lambda cost: max(cost.limits))
        warnings.append(f"a call of {slowest.part!r} may take {limit:.0f} s of CPU time by [limits], more "
                        f"than the cpu_seconds = {grading.limits.cpu_seconds} a worker may use in all: a "
                        "correct engine slower than the reference is stopped before its limit; make the "
                        "scenario smaller, or raise cpu_seconds")
    budget = grading.budget.class_of_100_minutes
    if whole_class > 60 * budget:
        costliest = max(costs, key=lambda cost: cost.seconds)
        warnings.append(f"a class of {CLASS} would take about {minutes(whole_class)} of `autograder bulk` on "
                        f"{cores} cores, past the budget of {budget:g} minutes in [budget] of "
                        f"{grading.source.name}; {costliest.part!r} costs the most "
                        f"({costliest.seconds:.2f} s a grading): make its scenario smaller, or raise "
                        "class_of_100_minutes")
    return CostReport(lines, warnings)


def seconds_by_part(calls: list, part_of: dict[str, str]) -> dict[str, list[float]]:
    """Part -> the reference's CPU time of each of its calls (check's Calls, by their test)."""
    found: dict[str, list[float]] = defaultdict(list)
    for call in calls:
        found[part_of[call.test]].append(call.seconds)
    return found
