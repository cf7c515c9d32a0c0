"""The pytest plugin that turns the suites into a grade.

`pytest autograder` grades `assignments/`; `--submission PATH` grades another folder;
`--results-json PATH` also writes Gradescope's results.json. The score table of
grading.toml's parts is the last thing it prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder import judge, sandbox, scenarios, scoring
from autograder.config import GRADING_TOML, KIT_ROOT, Grading, load
from autograder.runner import LiveReference, Runner, SealedReference, SealError, seal

SEALED_REFERENCE = Path(__file__).parent / "reference.json"
GIVEN_CHECK = "value:given_operations"
BACKWARD_PART = "value.backward"
# Said in the messages of a part whose reverse pass the kit runs, when backward() lost points too.
KIT_REVERSE_NOTE = (
    "Note: your backward() lost points as well (see value.backward). This check runs your "
    "rules itself, each node's once, newest node first, so that a bug in backward() costs "
    "only that part; the snippet, which calls your backward(), may print other numbers.")


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
                    help="refuse a sealed --reference whose SHA-256 is not this one")
    group.addoption("--sandbox-level", default=None, metavar="LEVEL",
                    help="isolate the workers less than this machine allows: unprivileged (or, not "
                         "as root, limits); see the README's threat model")


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


def pytest_sessionstart(session: pytest.Session) -> None:
    sandbox.warm()  # the workers' zygote imports NumPy while pytest collects, before any secret is read
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and session.config.getoption("reportchars") == "fE":
        reporter.reportchars = "w"  # a line per failure would scroll the score table away; it says more


def grading_of(config: pytest.Config) -> Grading:
    return load(config.getoption("--grading").resolve())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    grading = grading_of(config)
    guarded = any(config.pluginmanager.hasplugin(name) for name in ("timeout", "pytest_timeout"))
    for item in items:
        marker = item.get_closest_marker("part")
        if marker is None or marker.args[0] not in grading.parts:
            raise pytest.UsageError(f"{item.nodeid}: mark it with @pytest.mark.part(<id>) naming a "
                                    f"part of {grading.source}")
        if guarded:  # the last resort; workers have their own time limits
            item.add_marker(pytest.mark.timeout(grading.limits.test_timeout_seconds))


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[DESELECTED] += len(items)


def reference_source(config: pytest.Config, grading: Grading):
    chosen = config.getoption("--reference")
    if chosen is None:
        # A release grades against the answers it ships sealed, never a solutions/ folder that
        # someone added beside it (it would agree with whatever it holds); the kit ships no seal.
        chosen = SEALED_REFERENCE if SEALED_REFERENCE.is_file() else KIT_ROOT / "solutions"
    if chosen.is_dir():
        return LiveReference(chosen, grading)
    if chosen.is_file():
        try:
            return SealedReference(chosen, config.getoption("--reference-sha256"))
        except SealError as error:
            pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)
    raise pytest.UsageError(f"no reference at {chosen}: pass --reference with a solutions folder "
                            "or a sealed reference.json")


@pytest.fixture(scope="session")
def runner(pytestconfig: pytest.Config):
    grading = grading_of(pytestconfig)
    submission = pytestconfig.getoption("--submission")
    runner = pytestconfig.stash[RUNNER] = Runner(submission, reference_source(pytestconfig, grading), grading)
    yield runner
    runner.close()


def given_changes(runner: Runner, names: frozenset[str] | None = None) -> list[str]:
    """A sentence for each given operation (of `names`, or all) that no longer behaves as the
    handout's; empty when the check of them could not run at all (its own message says why)."""
    expected, got, _ = runner.run(GIVEN_CHECK, {}, "value.given")
    if got.failure or got.raised or judge.malformed(expected.observations, got.observations):
        return []
    tolerance = judge.Tolerance(runner.grading.tolerances.rel, runner.grading.tolerances.abs)
    return [f"Your `{name}` is not the given one: {scenarios.GIVEN[name]} give "
            f"{judge.show(got.observations[name])} where {judge.show(expected.observations[name])} is "
            "expected. Restore it from the handout."
            for name in expected.observations if (names is None or name in names)
            and judge.first_mismatch(expected.observations[name], got.observations[name], tolerance)]


@pytest.fixture
def grade(runner: Runner, request: pytest.FixtureRequest):
    """grade(scenario_id, suspects={...}, tolerance="default", **kwargs).

    Judges one scenario, and fails the test with the judge's message.
    """
    tolerances = runner.grading.tolerances
    part = request.node.get_closest_marker("part").args[0]

    def check(scenario_id: str, *, suspects: dict | None = None, tolerance: str = "default",
              **kwargs) -> None:
        scenario = scenarios.scenario(scenario_id)
        # What the test asked, for pytest's own reports (--junitxml): the kit checks its suites with it.
        request.node.user_properties.append(("scenario", json.dumps([scenario_id, kwargs], sort_keys=True)))
        expected, got, limit = runner.run(scenario_id, kwargs, part)
        loose = tolerance == "training"
        strict = judge.Tolerance(tolerances.rel, tolerances.abs)
        loose_tolerance = judge.Tolerance(tolerances.training_rel, tolerances.training_abs)
        try:
            outcome = judge.judge(
                situation=request.node.function.__doc__ or request.node.name, snippet=scenario.snippet,
                kwargs=kwargs, expected=expected, got=got,
                tolerance=loose_tolerance if loose else strict,
                fd_tolerance=judge.Tolerance(tolerances.fd_rel, tolerances.fd_abs),
                suspects=suspects or {}, timeout=limit,
                drawings=lambda: runner.drawings(scenario_id, kwargs),
                given_rules=part == BACKWARD_PART)  # its graphs hold only given operations
        except judge.StaffError as error:
            outcome = judge.Verdict(False, f"Not checked, a fault of the grader: {error} in scenario "
                                    f"{scenario_id}. Tell the course staff.")
        if not outcome.passed and not outcome.message.startswith("Not checked"):
            if got.unloaded:
                outcome.message = judge.quoted(got.failure)
            elif scenario_id == GIVEN_CHECK and (changed := given_changes(runner)):
                outcome.message = "\n".join(changed)
            else:
                if scenario.given and (changed := given_changes(runner, scenario.given)):
                    # The given code is the first suspect: no stub's misconception is named.
                    outcome.message = "\n".join(changed) + " This check uses it.\n\n" + outcome.message
                    outcome.misconception = None
                if runner.unsteady(scenario_id, kwargs):
                    outcome.message += "\n\n" + judge.UNSTEADY
                outcome.kit_reverse = scenario.kit_reverse
        request.node.stash[VERDICT] = outcome
        if not outcome.passed:
            pytest.fail(outcome.message, pytrace=False)

    return check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call" or (report.when == "setup" and report.failed):
        verdict = item.stash.get(VERDICT, None)
        message = verdict.message if verdict else crash_message(call)
        item.config.stash[OUTCOMES].append(scoring.Outcome(
            test=item.name, part=item.get_closest_marker("part").args[0], passed=report.passed,
            message="" if report.passed else message,
            misconception=verdict.misconception if verdict else None,
            kit_reverse=bool(verdict and verdict.kit_reverse)))
    return report


def crash_message(call: pytest.CallInfo) -> str:
    """A check that failed without a verdict crashed: say so in one line, never with its
    traceback, which would quote the suite's code."""
    if call.excinfo is None:
        return ""
    return (f"Not checked, a fault of the grader: the check stopped with {call.excinfo.typename}: "
            f"{str(call.excinfo.value)[:300]}. Tell the course staff.")


def outcomes_with_notes(outcomes: list[scoring.Outcome]) -> list[scoring.Outcome]:
    """The outcomes, with a note on every failure the kit's own reverse pass judged when the
    submission's backward() failed too (its snippet may then print other numbers)."""
    if not any(o.part == BACKWARD_PART and not o.passed for o in outcomes):
        return outcomes
    for outcome in outcomes:
        if outcome.kit_reverse and not outcome.passed and KIT_REVERSE_NOTE not in outcome.message:
            outcome.message += "\n\n" + KIT_REVERSE_NOTE
    return outcomes


SCORES = pytest.StashKey[list]()
NOT_SEALED = pytest.StashKey[str]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    runner = config.stash.get(RUNNER, None)
    if runner is not None and (path := config.getoption("--seal-reference")):
        failed = seal(runner.reference, path) if isinstance(runner.reference, LiveReference) \
            else ["all of them: --seal-reference needs --reference to be a solutions folder"]
        if failed:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
            config.stash[SCORES] = []
            config.stash[NOT_SEALED] = (f"not sealed: the reference failed {', '.join(failed)}; fix "
                                        "solutions/ or the suite that asks for it")
            return
    outcomes = config.stash.get(OUTCOMES, None)
    if not outcomes:
        return
    grading = grading_of(config)
    scores = scoring.score(outcomes_with_notes(outcomes), grading)
    config.stash[SCORES] = scores
    if path := config.getoption("--results-json"):
        scoring.results_json(scores, path)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The score table, last, after everything pytest prints."""
    scores = config.stash.get(SCORES, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and NOT_SEALED in config.stash:
        reporter.write_line(config.stash[NOT_SEALED], red=True)
    if not scores or reporter is None:
        return
    partial = config.stash.get(DESELECTED, 0) > 0 or any(s.total == 0 for s in scores)
    reporter.write_sep("=", "score")
    reporter.write_line(scoring.table(scores, partial=partial, left_out=config.stash.get(DESELECTED, 0)))
    if path := config.getoption("--results-json"):
        reporter.write_line(f"results written to {path}")
