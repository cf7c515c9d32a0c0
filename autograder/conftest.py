"""The pytest plugin that turns the suites into a grade.

`pytest autograder` grades `assignments/`; `--submission PATH` grades another folder;
`--results-json PATH` also writes Gradescope's results.json. The score table of
grading.toml's parts is the last thing it prints. A run asks the public questions unless it is
given the course's secret (`--grading-secret`, an official grading: questions.py) or a seed.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import textwrap
from pathlib import Path

import pytest

from autograder import judge, parts, sandbox, scenarios, scoring
from autograder.config import GRADING_TOML, KIT_ROOT, Grading, load
from autograder.misconceptions import CATALOGUE
from autograder.parts import Part
from autograder.questions import MIN_QUESTIONS, Questions, SecretError, Seed, official_seed, read_secret
from autograder.runner import BUSY_EXIT, LiveReference, MachineBusy, Runner, SealedReference, SealError, seal
from autograder.worker import Outcome

SEALED_REFERENCE = Path(__file__).parent / "reference.json"
GIVEN_CHECK = "value:given_operations"
BACKWARD = "value.py Value.backward"  # the stub whose part the note below is about
# Said in the messages of a part whose reverse pass the kit runs, when backward() lost points too.
KIT_REVERSE_NOTE = textwrap.fill(
    "Note: your backward() does not pass its own checks yet (see value.backward). This check "
    "runs your rules itself, each node's once, newest node first, so that a bug in backward() "
    "costs only that part; the snippet above does the same with the kit's Tape, so that you can "
    "run it now.", 88)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder")
    group.addoption("--submission", type=Path, default=KIT_ROOT / "assignments",
                    help="folder holding value.py, tensor.py, dual.py (default: assignments/)")
    group.addoption("--reference", type=Path, default=None,
                    help="solutions folder, or a sealed reference.json (default: the sealed "
                         "autograder/reference.json a release ships, else solutions/)")
    group.addoption("--results-json", type=Path, default=None,
                    help="also write Gradescope's results.json here")
    group.addoption("--grading", type=Path, default=GRADING_TOML,
                    help="the grading.toml to use")
    group.addoption("--seal-reference", type=Path, default=None,
                    help="write the reference's answers (and timings) to this sealed file")
    group.addoption("--reference-sha256", default=None, metavar="HEX",
                    help="refuse a --reference whose SHA-256 is not this one (a sealed file's, or "
                         "a folder's engine files')")
    group.addoption("--grading-secret", type=Path, default=None, metavar="FILE",
                    help="an official grading: draw the questions from the submission's files "
                         "under the course's secret in FILE (the reference then runs live)")
    group.addoption("--grading-context", default="", metavar="TEXT",
                    help="with --grading-secret: what else the questions depend on (the "
                         "grader's version, a platform's submission id)")
    group.addoption("--grading-seed", type=seed_option, default=None, metavar="SEED",
                    help="ask the questions of this seed (`public`, the default, or hex digits)")
    group.addoption("--sandbox-level", default=None, metavar="LEVEL",
                    help=sandbox.CHOOSE_HELP)


def seed_option(text: str) -> Seed:
    try:
        return Seed.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


OUTCOMES = pytest.StashKey[list]()
RUNNER = pytest.StashKey[Runner]()
DESELECTED = pytest.StashKey[int]()
VERDICT = pytest.StashKey[judge.Verdict]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "part(id): the grading.toml part a test belongs to")
    config.stash[OUTCOMES] = []
    config.stash[DESELECTED] = 0
    if (level := config.getoption("--sandbox-level")) is not None:
        try:
            sandbox.choose(level)
        except sandbox.SandboxError as error:
            raise pytest.UsageError(str(error)) from None
    submission = config.getoption("--submission")
    if not submission.is_dir():  # checked once here, not once per test
        raise pytest.UsageError(f"--submission {submission}: not a folder; point it at the folder "
                                "holding value.py, tensor.py and dual.py")
    if config.getoption("--grading-secret") and config.getoption("--grading-seed"):
        raise pytest.UsageError("--grading-secret and --grading-seed both choose the questions; give one")


def pytest_sessionstart(session: pytest.Session) -> None:
    sandbox.warm()  # the workers' zygote imports NumPy while pytest collects, before any secret is read
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and session.config.getoption("reportchars") == "fE":
        reporter.reportchars = "w"  # a line per failure would scroll the score table away; it says more


def grading_of(config: pytest.Config) -> Grading:
    return load(config.getoption("--grading").resolve())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test counts for the part its suite declares (`PART = Part(...)`, parts.py)."""
    grading = grading_of(config)
    guarded = any(config.pluginmanager.hasplugin(name) for name in ("timeout", "pytest_timeout"))
    for item in items:
        part = getattr(getattr(item, "module", None), "PART", None)
        if not isinstance(part, Part):
            raise pytest.UsageError(f"{item.path}: declare the part its tests count for at the top, as "
                                    'PART = Part("<part id>") (autograder/parts.py)')
        if part.id not in grading.parts:
            raise pytest.UsageError(f"{item.path}: part {part.id!r} has no [parts.\"{part.id}\"] table in "
                                    f"{grading.source}; add one with its title and points")
        item.add_marker(pytest.mark.part(part.id))
        if guarded:  # the last resort; workers have their own time limits
            item.add_marker(pytest.mark.timeout(grading.limits.test_timeout_seconds))


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[DESELECTED] += len(items)


def reference_source(config: pytest.Config, grading: Grading, official: bool):
    """The reference: a solutions folder, run live, or a sealed file of answers. An official
    grading's questions are new, so only a live reference can answer them."""
    chosen = config.getoption("--reference")
    if chosen is None:
        # A release grades against the answers it ships sealed, never a solutions/ folder that
        # someone added beside it (it would agree with whatever it holds); the kit ships no seal.
        use_seal = SEALED_REFERENCE.is_file() and not official
        chosen = SEALED_REFERENCE if use_seal else KIT_ROOT / "solutions"
    if chosen.is_dir():
        return LiveReference(chosen, grading, draw=config.getoption("--seal-reference") is not None,
                             sha256=config.getoption("--reference-sha256"))
    if chosen.is_file():
        try:
            return SealedReference(chosen, config.getoption("--reference-sha256"))
        except SealError as error:
            pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)
    raise pytest.UsageError(f"no reference at {chosen}: pass --reference with a solutions folder "
                            "or a sealed reference.json")


def grading_seed(config: pytest.Config, files: dict[str, bytes]) -> Seed:
    """The seed this run's questions come from: the submission's files under the course's secret
    (an official grading), the seed given, or the public one."""
    secret = config.getoption("--grading-secret")
    if secret is None:
        return config.getoption("--grading-seed") or Seed()
    try:
        return official_seed(read_secret(secret), files, config.getoption("--grading-context"))
    except SecretError as error:
        pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)


@pytest.fixture(scope="session")
def runner(pytestconfig: pytest.Config):
    grading = grading_of(pytestconfig)
    submission = pytestconfig.getoption("--submission")
    chosen = pytestconfig.getoption("--grading-seed")
    official = pytestconfig.getoption("--grading-secret") is not None or bool(chosen and not chosen.public)
    reference = reference_source(pytestconfig, grading, official)
    runner = pytestconfig.stash[RUNNER] = Runner(submission, reference, grading)
    seed = grading_seed(pytestconfig, runner.submission.files)
    if isinstance(reference, SealedReference) and reference.seed != seed:
        runner.close()
        pytest.exit(f"{reference.path} holds the answers to the {reference.seed.value} questions, and this "
                    f"grading asks {'the public ones' if seed.public else 'others'}: pass --reference "
                    "with the kit's solutions/ folder", returncode=pytest.ExitCode.USAGE_ERROR)
    runner.seed = seed
    yield runner
    runner.close()


@pytest.fixture
def ask(runner: Runner, request: pytest.FixtureRequest) -> Questions:
    """The numbers this test asks its scenarios, drawn from the grading's seed (questions.py)."""
    return Questions(runner.seed, f"{request.node.path.name}::{request.node.name}")


def given_check(runner: Runner) -> dict:
    """The arguments of the check of the given operations: two leaves drawn from the grading's
    seed (the check itself, and every message whose scenario uses a given operation, ask the
    same) and the expressions it tries for every operation the reference's files give."""
    ask = Questions(runner.seed, GIVEN_CHECK)
    leaves = {"a": ask.number(1.5, 0.5, 2.5), "b": ask.number(0.7, 0.3, 2.0)}  # above 0: b.log()
    return {**leaves, "checks": scenarios.given_checks(runner.reference.handout.given)}


@pytest.fixture
def given(runner: Runner) -> dict:
    """The arguments of the check of the given operations, at this grading's seed."""
    return given_check(runner)


def given_changes(runner: Runner, names: frozenset[str] | None = None) -> list[str]:
    """A sentence for each given operation (of `names`, or all) that no longer behaves as the
    handout's; empty when the check of them could not run at all (its own message says why)."""
    arguments = given_check(runner)
    expected, got, _ = runner.run(GIVEN_CHECK, arguments, "value.given")
    if got.failure or got.raised or judge.malformed(expected.observations, got.observations):
        return []
    tolerance = judge.Tolerance(runner.grading.tolerances.rel, runner.grading.tolerances.abs)
    return [judge.changed_given(name, arguments["checks"][name], arguments, expected.observations[name],
                                got.observations[name])
            for name in expected.observations if (names is None or name in names)
            and judge.first_mismatch(expected.observations[name], got.observations[name], tolerance)]


@pytest.fixture
def grade(runner: Runner, request: pytest.FixtureRequest):
    """grade(scenario_id, suspects={...}, tolerance="default", series=None, **kwargs).

    Judges one scenario, and fails the test with the judge's message.
    """
    tolerances = runner.grading.tolerances
    part = request.node.get_closest_marker("part").args[0]

    def check(scenario_id: str, *, suspects: dict | None = None, tolerance: str = "default",
              series: judge.Series | None = None, **kwargs) -> None:
        scenario = scenarios.scenario(scenario_id)
        # What the test asked, for pytest's own reports (--junitxml): the kit checks its suites with it.
        request.node.user_properties.append(("suspects", json.dumps(sorted(suspects or {}))))
        if unknown := sorted(set(suspects or {}) - CATALOGUE.keys()):
            pytest.fail(f"Not checked, a fault of the grader: this check names misconception {unknown[0]!r}, "
                        "which autograder/misconceptions.py does not list. Tell the course staff.",
                        pytrace=False)
        asked = request.getfixturevalue("ask") if "ask" in request.fixturenames else None
        if asked is not None and (problem := asked.too_few(MIN_QUESTIONS)):  # at every seed, public too
            pytest.fail(f"Not checked, a fault of the grader: {problem} Tell the course staff.",
                        pytrace=False)
        request.node.user_properties.append(("scenario", json.dumps([scenario_id, kwargs], sort_keys=True)))
        expected, got, limit = runner.run(scenario_id, kwargs, part)
        loose = tolerance == "training"
        strict = judge.Tolerance(tolerances.rel, tolerances.abs)
        loose_tolerance = judge.Tolerance(tolerances.training_rel, tolerances.training_abs)
        try:
            outcome = judge.judge(
                situation=inspect.cleandoc(request.node.function.__doc__ or request.node.name),
                snippet=scenario.snippet,
                kwargs=kwargs, expected=expected, got=got,
                tolerance=loose_tolerance if loose else strict,
                fd_tolerance=judge.Tolerance(tolerances.fd_rel, tolerances.fd_abs),
                suspects=suspects or {}, timeout=limit,
                drawings=lambda: runner.drawings(scenario_id, kwargs),
                given_rules=given_rules(runner, scenario),
                kit_snippet=scenarios.kit_reverse_snippet(scenario.snippet) if scenario.kit_reverse else None,
                series=series)
        except judge.StaffError as error:
            outcome = judge.Verdict(False, f"Not checked, a fault of the grader: {error} in scenario "
                                    f"{scenario_id}. Tell the course staff.")
        if not outcome.passed and not outcome.message.startswith("Not checked"):
            if got.outcome is Outcome.UNLOADED:
                outcome.message, outcome.unloaded = judge.quoted(got.failure), True
            elif scenario_id == GIVEN_CHECK and (changed := given_changes(runner)):
                outcome.message = "\n".join(textwrap.fill(sentence, 88) for sentence in changed)
            else:
                used = scenario.operations & set(runner.reference.handout.given)
                if used and (changed := given_changes(runner, used)):
                    # The given code is the first suspect: no stub's misconception is named.
                    changed[-1] += " This check uses it."
                    said = "\n".join(textwrap.fill(sentence, 88) for sentence in changed)
                    outcome.message = said + "\n\n" + outcome.message
                    outcome.misconception = None
                if runner.answers_differently_again(scenario_id, kwargs):
                    outcome.message += "\n\n" + judge.UNSTEADY
                outcome.kit_reverse = scenario.kit_reverse
        request.node.stash[VERDICT] = outcome
        if not outcome.passed:  # in pytest's report, the part the test counts for comes first
            pytest.fail(f"[counts for {part}]\n{outcome.message}", pytrace=False)

    return check


BUSY = pytest.StashKey[str]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """A machine too busy to run a scenario ends the grading, with no score and exit status
    BUSY_EXIT, so that it is graded again later: never a silent zero."""
    try:
        return (yield)
    except MachineBusy as error:
        item.config.stash[BUSY] = str(error)
        pytest.exit(str(error), returncode=BUSY_EXIT)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call" or (report.when == "setup" and report.failed):
        verdict = item.stash.get(VERDICT, None)
        message = verdict.message if verdict else crash_message(call)
        if verdict and not report.passed and verdict.waiting_for:
            report.waiting_for = (item.get_closest_marker("part").args[0], verdict.waiting_for)
        item.config.stash[OUTCOMES].append(scoring.Outcome(
            test=item.name, part=item.get_closest_marker("part").args[0], passed=report.passed,
            message="" if report.passed else message,
            misconception=verdict.misconception if verdict else None,
            kit_reverse=bool(verdict and verdict.kit_reverse), unloaded=bool(verdict and verdict.unloaded),
            kit_snippet=verdict.kit_snippet if verdict and not report.passed else None))
    return report


def crash_message(call: pytest.CallInfo) -> str:
    """A check that failed without a verdict crashed: say so in one line, never with its
    traceback, which would quote the suite's code."""
    if call.excinfo is None:
        return ""
    return (f"Not checked, a fault of the grader: the check stopped with {call.excinfo.typename}: "
            f"{str(call.excinfo.value)[:300]}. Tell the course staff.")


def given_rules(runner: Runner, scenario: scenarios.Scenario) -> bool:
    """Is every operation the scenario's graphs hold a given one (so that a wrong gradient there
    can only come from how backward() runs the rules)?"""
    handout = runner.reference.handout
    used = scenario.operations & set(handout.operations)
    return bool(used) and used <= set(handout.given)


def needs(outcomes: list[scoring.Outcome]) -> list[scoring.Outcome]:
    """The outcomes, with a note on every failure of a part that other parts' stubs may cost
    (training, tanh far from zero): which parts it needs, and which of them lost points too."""
    lost = {o.part for o in outcomes if not o.passed}
    needs_of: dict[str, list[str]] = {}  # a part -> the parts whose stubs it may lose points to
    for part in parts.declared().values():
        for cost in part.also_costs:
            needs_of.setdefault(cost, []).append(part.id)
    for outcome in outcomes:
        needed = needs_of.get(outcome.part, [])
        if outcome.passed or outcome.unloaded or not needed:
            continue
        failing = [part for part in needed if part in lost]
        one = len(needed) == 1
        said = (f"This check needs {judge.listed(needed)}: a bug in {'it' if one else 'any of them'} "
                "may cost it. "
                + (f"{'' if one else 'Of those, '}{judge.listed(failing)} lost points too: start with "
                   f"{'its' if len(failing) == 1 else 'their'} messages." if failing else
                   f"{'It passes' if one else 'They pass'} {'its' if one else 'their'} own checks."))
        outcome.message += "\n\n" + textwrap.fill(said, 88)
    return outcomes


def outcomes_with_notes(outcomes: list[scoring.Outcome], runner: Runner) -> list[scoring.Outcome]:
    """The outcomes, with a note on every failure the kit's own reverse pass judged when the
    submission's backward() failed too (its snippet may then print other numbers), and on every
    failure of a part that others may cost."""
    outcomes = needs(outcomes)
    backward = runner.reference.handout.part_of(BACKWARD)
    if not any(o.part == backward and not o.passed for o in outcomes):
        return outcomes
    for outcome in outcomes:
        if outcome.kit_reverse and not outcome.passed and KIT_REVERSE_NOTE not in outcome.message:
            if outcome.kit_snippet:  # a snippet the student can run now: the rules run as here
                outcome.message = outcome.message.replace(*outcome.kit_snippet, 1)
            outcome.message += "\n\n" + KIT_REVERSE_NOTE
    return outcomes


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """A check whose only answer was a stub's NotImplementedError is no page of the summary: a
    line per part says which stubs its checks wait for (a student's first run fits a screen)."""
    failed = terminalreporter.stats.get("failed", [])
    waiting = [report for report in failed if getattr(report, "waiting_for", None)]
    if waiting:
        terminalreporter.stats["failed"] = [report for report in failed if report not in waiting]
        terminalreporter.stats["waiting"] = waiting
        stubs: dict[str, list[str]] = {}  # a part -> the stub each of its waiting checks waits for
        for report in waiting:
            part, stub = report.waiting_for
            stubs.setdefault(part, []).append(stub)
        terminalreporter.write_sep("=", "waiting for stubs")
        for part, names in stubs.items():
            count = len(names)
            terminalreporter.write_line(f"{part}: {count} check{'s wait' if count > 1 else ' waits'} for "
                                        f"{', '.join(dict.fromkeys(names))}, still a stub")
    return (yield)


SCORES = pytest.StashKey[list]()
NOT_SEALED = pytest.StashKey[str]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    runner = config.stash.get(RUNNER, None)
    if runner is not None and (path := config.getoption("--seal-reference")):
        failed = seal(runner.reference, path, runner.seed) if isinstance(runner.reference, LiveReference) \
            else ["all of them: --seal-reference needs --reference to be a solutions folder"]
        if failed:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            config.stash[SCORES] = []
            config.stash[NOT_SEALED] = (f"not sealed: the reference failed {', '.join(failed)}; fix "
                                        "solutions/ or the suite that asks for it")
            return
    outcomes = config.stash.get(OUTCOMES, None)
    if not outcomes or BUSY in config.stash:
        return
    grading = grading_of(config)
    scores = scoring.score(outcomes_with_notes(outcomes, runner), grading)
    config.stash[SCORES] = scores
    if path := config.getoption("--results-json"):
        scoring.results_json(scores, path)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The score table, last, after everything pytest prints."""
    scores = config.stash.get(SCORES, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and NOT_SEALED in config.stash:
        reporter.write_line(config.stash[NOT_SEALED], red=True)
    if BUSY in config.stash:  # no score: said on stderr, where `autograder bulk` reads the reason
        sys.stderr.write(f"autograder: {config.stash[BUSY]}\n")
    if not scores or reporter is None:
        return
    partial = config.stash.get(DESELECTED, 0) > 0 or any(s.total == 0 for s in scores)
    reporter.write_sep("=", "score")
    reporter.write_line(scoring.table(scores, partial=partial, left_out=config.stash.get(DESELECTED, 0)))
    if path := config.getoption("--results-json"):
        reporter.write_line(f"results written to {path}")
