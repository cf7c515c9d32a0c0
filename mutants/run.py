"""A whole mutation run: generate, probe, grade; and its score.

`mutation_run()` generates every mutant of the parts asked for, probes each, and grades the
behaviour-changing ones; `MutationRun.report()` gives the score per part, the survivors with
their diffs, the mutants that cost another part, and the equivalent ones.

A mutant edits one stub, so it can change only what runs that stub: its own part's tests, and
those of the parts that declare they may pay for a bug in it (`also_costs`, which `autograder
check` proves complete from the stubs each scenario call reaches). Each is graded by those
suites alone; one mutant of each stub (drawn by `whole_seed`) by every suite, so that a part it
costs and does not declare still shows.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.config import KIT_ROOT as KIT
from autograder.parts import declared

from .generate import Mutant, generate
from .grading import GradedFolder, grade_all
from .probe import Probe, Verdict
from .replay import SuiteCall, suite_calls


def may_also_cost(part: str, kit: Path = KIT) -> frozenset[str]:
    """The parts besides its own that a bug in `part`'s stub may cost by their nature, as the
    part declares them (`also_costs` of its suite's PART)."""
    found = declared(kit / "autograder" / "suites").get(part)
    return frozenset(found.also_costs if found else ())


@dataclass
class MutationRun:
    """Every mutant generated, the probe's verdict on each, and the behaviour-changing ones graded."""

    mutants: list[Mutant]
    verdicts: dict[str, Verdict]
    grades: dict[str, GradedFolder]
    generate_seconds: float
    probe_seconds: float
    grading_seconds: float
    parts: list[str] = field(default_factory=list)
    kit: Path = KIT
    whole: set[str] = field(default_factory=set)  # the mutants graded by every suite

    @property
    def changing(self) -> list[Mutant]:
        """The mutants the probe found to change behaviour."""
        return [m for m in self.mutants if self.verdicts[m.id].changes]

    @property
    def equivalent(self) -> list[Mutant]:
        """The mutants the probe could not tell from the reference."""
        return [m for m in self.mutants if not self.verdicts[m.id].changes]

    @property
    def survivors(self) -> list[Mutant]:
        """Behaviour-changing mutants that kept full marks on their own part."""
        return [m for m in self.changing if m.part not in self.grades[m.id].lost]

    def asked(self, mutant: Mutant) -> tuple[str, ...]:
        """The parts whose suites graded `mutant`; () for every suite."""
        return () if mutant.id in self.whole else (mutant.part, *sorted(may_also_cost(mutant.part, self.kit)))

    def costs_others(self) -> dict[str, list[str]]:
        """Mutant id -> the parts it cost besides its own (and those it may cost by nature)."""
        costs = {m.id: sorted(self.grades[m.id].lost - {m.part} - may_also_cost(m.part, self.kit))
                 for m in self.changing}
        return {mutant: parts for mutant, parts in costs.items() if parts}

    def unprobed(self) -> list[str]:
        """Each part asked for that has stubs none of whose mutants changes what the probe sees:
        the part's tests never run its stubs, so its score would count nothing."""
        return [part for part in self.parts or sorted({m.part for m in self.mutants})
                if any(m.part == part for m in self.mutants)
                and not any(m.part == part for m in self.changing)]

    def other_costs(self) -> list[str]:
        """Each mutant that cost another part, the parts, and what came out in the first of them."""
        lines = []
        for mutant, parts in self.costs_others().items():
            own = next(m.part for m in self.mutants if m.id == mutant)
            lines.append(f"  {mutant} (part {own}): also {', '.join(parts)}")
            lines.append(f"    {parts[0]}: {_came_out(self.grades[mutant].messages[parts[0]])}")
        return lines

    def report(self) -> str:
        """The mutation score per part, the survivors with their diffs, and what else was found."""
        changing, survivors = self.changing, {m.id for m in self.survivors}
        killed = len(changing) - len(survivors)
        lines = [f"mutation score: {killed} of {len(changing)} behaviour-changing mutants killed "
                 f"({100 * killed / max(1, len(changing)):.1f} %); {len(self.mutants)} generated, "
                 f"{len(self.equivalent)} equivalent",
                 f"generating {self.generate_seconds:.1f} s, probing {self.probe_seconds:.1f} s, "
                 f"grading {self.grading_seconds:.1f} s ({len(self.grades)} gradings: "
                 f"{len(self.grades) - len(self.whole)} by the suites of the mutant's own part and of "
                 f"the parts it may also cost, {len(self.whole)} by every suite"
                 f"{', one of each stub' if len(self.whole) < len(self.grades) else ''})", "",
                 f"{'part':20} {'mutants':>8} {'equivalent':>11} {'changing':>9} {'killed':>7} "
                 f"{'survived':>9}"]
        for part in self.parts or sorted({m.part for m in self.mutants}):
            own = [m for m in self.mutants if m.part == part]
            moving = [m for m in own if self.verdicts[m.id].changes]
            lost = sum(m.id in survivors for m in moving)
            lines.append(f"{part:20} {len(own):8} {len(own) - len(moving):11} {len(moving):9} "
                         f"{len(moving) - lost:7} {lost:9}")
        lines += [f"{part}: none of its mutants changes what the probe sees (the seeded programs and the "
                  "scenario calls of its tests): its tests never run its stubs; write one that does"
                  for part in self.unprobed()]
        lines += [f"{part}: no stub of its own (no region of solutions/ is marked for it), so nothing to "
                  "mutate" for part in self.parts if not any(m.part == part for m in self.mutants)]
        lines += ["", f"survivors ({len(survivors)}): full marks on their own part"]
        lines += [f"  {m.id}\n    probe: {self.verdicts[m.id].evidence}\n" + _indent(m.diff, 4)
                  for m in self.survivors]
        lines += ["", f"mutants that cost a part other than their own ({len(self.costs_others())}):"]
        lines += self.other_costs()
        lines += ["", f"equivalent mutants, left out ({len(self.equivalent)}):"]
        lines += [f"  {m.id}" for m in self.equivalent]
        return "\n".join(lines)


def _came_out(message: str) -> str:
    """What a grader's message says came out (or, failing that, how it begins)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("Came out")][:1] or lines[:3]
    return " / ".join(said)[:300]


def _indent(text: str, spaces: int) -> str:
    """`text` with every line indented by `spaces`."""
    return "".join(" " * spaces + line for line in text.splitlines(keepends=True))


def drawn_from_each(mutants: list[Mutant], group: Callable[[Mutant], object], how_many: Callable[[int], int],
                    seed: str) -> list[Mutant]:
    """`how_many(n)` of the n mutants of each group (`group(mutant)` names it), drawn by `seed`."""
    groups: dict[object, list[Mutant]] = {}
    for mutant in mutants:
        groups.setdefault(group(mutant), []).append(mutant)
    draw = random.Random(seed)
    return [mutant for found in groups.values() for mutant in draw.sample(found, how_many(len(found)))]


def whole_of_each_stub(changing: list[Mutant], seed: str | None) -> set[str]:
    """One behaviour-changing mutant of each stub, drawn by `seed` (None: every one): those
    graded by every suite."""
    if seed is None:
        return {mutant.id for mutant in changing}
    return {m.id for m in drawn_from_each(changing, lambda m: (m.engine, m.stub), lambda n: 1, seed)}


def mutation_run(sealed: Path, scratch: Path, workers: int, kit: Path = KIT,
                 parts: list[str] | None = None, calls: list[SuiteCall] | None = None,
                 whole_seed: str | None = "") -> MutationRun:
    """Generate, probe (in this process, main thread), then grade every behaviour-changing
    mutant; with `parts`, of those parts' stubs only. The probe replays `calls`, the scenario
    calls of the suites (by default those of a grading of the reference made here). A mutant is
    graded by its own part's suites and those of the parts it may also cost; one of each stub,
    drawn by `whole_seed`, by every suite (every mutant, with None)."""
    start = time.perf_counter()
    mutants = generate(kit, parts)
    if calls is None:
        calls = suite_calls(kit, scratch / "calls")[1]
    generated = time.perf_counter()
    probe = Probe(kit, calls)
    verdicts = {m.id: probe(m) for m in mutants}
    probed = time.perf_counter()
    changing = [m for m in mutants if verdicts[m.id].changes]
    run = MutationRun(mutants, verdicts, {}, generated - start, probed - generated, 0.0, parts or [], kit,
                      whole_of_each_stub(changing, whole_seed))
    folders = {m.id: m.write(scratch / f"mutant-{n}", kit / "solutions") for n, m in enumerate(changing)}
    run.grades = grade_all(folders, sealed, scratch, workers, parts={m.id: run.asked(m) for m in changing},
                           kit=kit)
    run.grading_seconds = time.perf_counter() - probed
    return run


def killed_at(run: MutationRun, sealed: Path, seed: str, scratch: Path, workers: int,
              kit: Path = KIT, mutants: list[Mutant] | None = None) -> dict[str, GradedFolder]:
    """Every behaviour-changing mutant of `run` (or those of `mutants`) graded at `seed` by the
    suites of its own part only (what killing it takes): mutant id -> grade."""
    changing = run.changing if mutants is None else mutants
    folders = {m.id: m.write(scratch / f"mutant-{n}", kit / "solutions") for n, m in enumerate(changing)}
    return grade_all(folders, sealed, scratch, workers, seed, {m.id: (m.part,) for m in changing}, kit)
