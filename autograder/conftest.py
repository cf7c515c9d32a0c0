"""The pytest plugin that turns the suites into a grade.

`pytest autograder` grades `assignments/`; `--submission PATH` grades another folder;
`--results-json PATH` also writes Gradescope's results.json. After pytest's own summary
it prints the score table of grading.toml's parts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder import judge, scoring
from autograder.config import GRADING_TOML, KIT_ROOT, Grading, load
from autograder.runner import LiveReference, Runner, SealedReference, SealError, seal
from autograder.worker import scenario_function

SEALED_REFERENCE = Path(__file__).parent / "reference.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder")
    group.addoption("--submission", type=Path, default=KIT_ROOT / "assignments",
                    help="folder holding value.py, tensor.py, dual.py (default: assignments/)")
    group.addoption("--reference", type=Path, default=None,
                    help="solutions folder, or a sealed reference.json (default: solutions/ if present)")
    group.addoption("--results-json", type=Path, default=None,
                    help="also write Gradescope's results.json here")
    group.addoption("--grading", type=Path, default=GRADING_TOML,
                    help="the grading.toml to use")
    group.addoption("--seal-reference", type=Path, default=None,
                    help="write the reference's answers (and timings) to this sealed file")
    group.addoption("--reference-sha256", default=None, metavar="HEX",
                    help="refuse a sealed --reference whose SHA-256 is not this one")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "part(id): the grading.toml part a test belongs to")
    config.stash[OUTCOMES] = []


OUTCOMES = pytest.StashKey[list]()


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


def reference_source(config: pytest.Config, grading: Grading):
    chosen = config.getoption("--reference")
    if chosen is None:
        solutions = KIT_ROOT / "solutions"
        chosen = solutions if solutions.is_dir() else SEALED_REFERENCE
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
    if not submission.is_dir():
        raise pytest.UsageError(f"--submission {submission}: not a folder; point it at the folder "
                                "holding value.py, tensor.py and dual.py")
    runner = Runner(submission, reference_source(pytestconfig, grading), grading)
    yield runner
    if path := pytestconfig.getoption("--seal-reference"):
        seal(runner.reference.answers, path)
    runner.close()


@pytest.fixture
def grade(runner: Runner, request: pytest.FixtureRequest):
    """grade(scenario_id, suspects={...}, tolerance="default", provided=None, **kwargs).

    Judges one scenario, and fails the test with the judge's message. `provided` is a
    (scenario id, what it shows) pair: when the submission fails that scenario, this test is
    not judged (it cannot be, fairly) and does not count for its part.
    """
    tolerances = runner.grading.tolerances

    part = request.node.get_closest_marker("part").args[0]

    def verdict(scenario_id: str, kwargs: dict, suspects: dict, tolerance: str) -> judge.Verdict:
        expected, got, limit = runner.run(scenario_id, kwargs, part)
        loose = tolerance == "training"
        return judge.judge(
            situation=request.node.function.__doc__ or request.node.name,
            snippet=scenario_function(scenario_id).__doc__ or "",
            kwargs=kwargs, expected=expected, got=got,
            tolerance=judge.Tolerance(tolerances.training_rel if loose else tolerances.rel,
                                      tolerances.training_abs if loose else tolerances.abs),
            fd_tolerance=judge.Tolerance(tolerances.fd_rel, tolerances.fd_abs),
            suspects=suspects, timeout=limit)

    def check(scenario_id: str, *, suspects: dict | None = None, tolerance: str = "default",
              provided: tuple[str, str] | None = None, **kwargs) -> None:
        if provided and not verdict(provided[0], {}, {}, "default").passed:
            pytest.skip(f"not judged: it needs {provided[1]}, which is not there yet")
        outcome = request.node.stash[VERDICT] = verdict(scenario_id, kwargs, suspects or {}, tolerance)
        if not outcome.passed:
            if runner.unsteady(scenario_id, kwargs):
                outcome.message += "\n\n" + judge.UNSTEADY
            pytest.fail(outcome.message, pytrace=False)

    return check


VERDICT = pytest.StashKey[judge.Verdict]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call" or (report.when == "setup" and report.failed):
        verdict = item.stash.get(VERDICT, None)
        if report.skipped:
            message = report.longrepr[2].removeprefix("Skipped: ")
        else:
            message = verdict.message if verdict else str(report.longrepr or "")
        item.config.stash[OUTCOMES].append(scoring.Outcome(
            test=item.name, part=item.get_closest_marker("part").args[0], passed=report.passed,
            excused=report.skipped, message="" if report.passed else message,
            misconception=verdict.misconception if verdict else None))
    return report


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    outcomes = config.stash.get(OUTCOMES, None)
    if not outcomes:
        return
    scores = scoring.score(outcomes, grading_of(config))
    terminalreporter.section("score")
    terminalreporter.write_line(scoring.table(scores))
    if path := config.getoption("--results-json"):
        scoring.results_json(scores, path)
        terminalreporter.write_line(f"results written to {path}")
