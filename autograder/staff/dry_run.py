"""What `autograder check` tries before any release or mutation run does, so that neither stops later.

Each release format is built into a scratch folder as `autograder release` builds it, but for
the sealing (check has graded the reference already); every stub's mutants are made, and the
first few of each probed until one changes what the probe sees (`autograder mutate` would
score nothing for a stub whose mutants none does); and every scenario call of the suites is
run on the reference with its stubs made to say when they run, so that a part whose
scenarios reach another part's stub is named, whatever engine and given code it went through.
The last two run the kit's own mutation testing (mutants/, beside the grader).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..parts import Part
from .cli import raised_at
from .release import ReleaseError, SuiteTest, WholePointsError, build_gradescope, build_student

TARGETS = ("student", "classroom", "gradescope", "nbgrader")


def unforeseen(what: str, error: BaseException) -> str:
    """A line for an error the kit has no message of its own for: what stopped, with what, and
    the line of the kit's code that raised it."""
    return (f"{what} would stop with {type(error).__name__}: {error}{raised_at(error)}, which the kit has no "
            "message for; the other lines of `autograder check` may say why, and this one is worth reporting")


def build(target: str, kit: Path, out: Path, tests: list[SuiteTest]) -> None:
    """Build the release `target` into `out` as `autograder release` does, without sealing."""
    if target == "nbgrader":
        from .nbgrader_release import write_notebooks  # nbformat is an extra: load it only here

        out.mkdir(parents=True)
        write_notebooks(kit, out)
    elif target == "gradescope":
        build_gradescope(kit, out / "autograder.zip", tests, sealed=False)
    else:
        build_student(kit, out, classroom=target == "classroom", tests=tests, sealed=False)


def refusals() -> tuple[type[Exception], ...]:
    """The errors a release build refuses with, a message naming the file and the fix: the
    notebooks' too where nbformat, which they need, is installed."""
    try:
        from ..notebook import NotebookError
    except ImportError:
        return (ReleaseError,)
    return (ReleaseError, NotebookError)


def release_problems(kit: Path, tests: list[SuiteTest]) -> tuple[list[str], list[str]]:
    """Errors and warnings of every release format, each built in a scratch folder: whatever
    would stop `autograder release`, as one line with its fix. A course need not use GitHub
    Classroom, so its whole points are a warning; so is a format whose extra is not installed."""
    errors, warnings = [], []
    refused = refusals()
    with tempfile.TemporaryDirectory(prefix="autograder-check-releases-") as scratch:
        for target in TARGETS:
            try:
                build(target, kit, Path(scratch) / target, tests)
            except WholePointsError as error:
                warnings.append(f"`autograder release {target}` would refuse: {error}")
            except refused as error:
                errors.append(f"`autograder release {target}` would refuse: {error}")
            except ImportError as error:
                warnings.append(f"`autograder release {target}` cannot be tried here: it needs {error.name}, "
                                "which comes with the kit's nbgrader extra: pip install -e '.[nbgrader]'")
            except Exception as error:  # noqa: BLE001 - one line for whatever a build meets, never a traceback
                errors.append(unforeseen(f"`autograder release {target}`", error))
    return errors, warnings


QUICK = 8  # the mutants of each stub the quick probe tries before it tries them all


def mutation_problems(kit: Path, calls: list) -> tuple[list[str], dict[str, int]]:
    """A line for each stub whose mutants cannot be made, or none of which the probe tells from
    the reference (its part's tests never run it: `autograder mutate` would score nothing); and
    about how many mutants each part has. The first QUICK mutants of each stub are probed, and
    all of them only where none of those changes anything. `calls` are mutants.replay.Calls."""
    from mutants.generate import MutantError, edits_per_part, generate
    from mutants.probe import Probe

    try:
        first = generate(kit, per_stub=QUICK)
    except MutantError as error:
        return [f"solutions/: {error}; `autograder mutate` would stop there"], {}
    by_stub: dict[tuple[str, str, str], list] = {}
    for mutant in first:
        by_stub.setdefault((mutant.engine, mutant.stub, mutant.part), []).append(mutant)
    probe = Probe(kit, calls)
    problems = []
    for (engine, stub, part), found in by_stub.items():
        if any(probe(mutant).changes for mutant in found):  # the first that changes ends the search
            continue
        every = [mutant for mutant in generate(kit, [part]) if mutant.stub == stub]
        if not any(probe(mutant).changes for mutant in every[len(found):]):
            problems.append(f"solutions/{engine}.py: none of the {len(every)} mutants of {stub} (part "
                            f"{part}) changes what the probe sees, the seeded programs of the engine and the "
                            f"scenario calls of {part}'s tests: those tests never run the stub, so "
                            "`autograder mutate` would score nothing; write a test in the part's suite that "
                            "runs it")
    return problems, edits_per_part(kit)


def borrowed_stubs(kit: Path, parts: dict[str, Part], calls: list) -> list[str]:
    """A line for each part whose scenario calls run another part's stub, unless that part declares
    that a bug in it may cost this one: the stub, the given code it was reached through, and the
    two ways out. `calls` are mutants.replay.Calls."""
    from mutants.replay import reached

    problems = set()
    for call, reaches in zip(calls, reached(kit, calls)):
        for reach in reaches:
            owner = parts.get(reach.region.part)
            if owner is None or reach.region.part == call.part or call.part in owner.also_costs:
                continue  # a stub of no part is named by another check
            through = f" through {reach.via}" if reach.via else ""
            problems.add(f"autograder/suites/{parts[call.part].suite}: {call.scenario} runs "
                         f"{reach.region.function} of solutions/{reach.engine}.py{through}, the stub of "
                         f"{reach.region.part}, so a bug "
                         f"there would cost {call.part}: build the scenario from given operations, or add "
                         f"{call.part!r} to also_costs in {owner.suite}")
    return sorted(problems)


def stub_checks(kit: Path, parts: dict[str, Part], calls: list, owner: dict[str, str]
                ) -> tuple[list[str], dict[str, int], list[str]]:
    """The borrowed stubs and the mutation probe's problems, the number of mutants of each part,
    and a warning where the kit's mutation testing (mutants/) is not installed. `calls` are
    check's Calls, `owner` the part of each of their tests."""
    try:
        from mutants.replay import SuiteCall
    except ModuleNotFoundError:
        return [], {}, ["the stubs each scenario reaches and the mutation probe are not checked: they need "
                        "the kit's mutants/ package; install the kit with its dev extra: pip install -e "
                        "'.[dev]'"]
    replays = [SuiteCall(call.test, owner[call.test], call.scenario, call.kwargs, call.seconds)
               for call in calls]
    probed, mutants = mutation_problems(kit, replays)
    return borrowed_stubs(kit, parts, replays) + probed, mutants, []
