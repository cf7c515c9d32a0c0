"""The pytest plugin that turns the suites into a grade.

`pytest autograder` grades `assignments/`; `--submission=PATH` grades another folder;
`--results-json=PATH` also writes Gradescope's results.json. The score table of
grading.toml's parts is the last thing it prints. A run asks the public questions unless it is
given the course's secret (`--grading-secret`, an official grading: questions.py) or a seed.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

from autograder import check_results, isolation, judge, parts, scenario_sources, scoring
from autograder.answers import Tolerance, first_mismatch, malformed
from autograder.check_results import Check, Status
from autograder.config import GRADING_TOML, KIT_ROOT, Grading, load
from autograder.junit_properties import scenario_property, suspects_property
from autograder.misconceptions import CATALOGUE
from autograder.parts import Part, engines, listed
from autograder.questions import MIN_QUESTIONS, Questions, SecretError, Seed, official_seed, read_secret
from autograder.runner import (
    BUSY_EXIT,
    REPLICAS,
    FastReference,
    LiveReference,
    MachineBusy,
    Runner,
    SealedReference,
    Unusable,
    seal,
)

SEALED_REFERENCE = Path(__file__).parent / "reference.json"
GIVEN_CHECK = "value:given_operations"


def engine_files() -> str:
    """The student files, as a message names them: `value.py, tensor.py and dual.py`."""
    return listed([f"{engine}.py" for engine in engines()])


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograder")
    group.addoption("--submission", type=Path, default=KIT_ROOT / "assignments",
                    help=f"folder holding {engine_files()} (default: assignments/)")
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
                    help=f"{isolation.CHOOSE_HELP}. On this machine: {how_workers_run()}")
    group.addoption("--part", action="append", default=[], metavar="PART",
                    help="grade this part alone (a part of grading.toml, such as value.mul); again for more")
    group.addoption("--messages", choices=("short", "full"), default=None,
                    help="a line for each lost check (short), or its whole message (full); the "
                         "default is full when one part is graded, else short")
    group.addoption("--repro", action="store_true",
                    help="also write each failed check's snippet to repro/<test>.py in the "
                         "submission's folder, to run with python")


def how_workers_run() -> str:
    """One line on how this machine runs the workers, for --help."""
    if isolation.linux_sandbox() is not None:
        return "the Linux sandbox, at the strongest level it allows"
    return f"plain child processes ({isolation.platform_name()}): {isolation.PORTABLE_LIMITS}"


def seed_option(text: str) -> Seed:
    try:
        return Seed.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


CHECKS = pytest.StashKey[list]()  # every check's Check, in the order run
RUNNER = pytest.StashKey[Runner]()
DESELECTED = pytest.StashKey[int]()
CHECK = pytest.StashKey[Check]()  # a test's own Check


def foreign_conftests(config: pytest.Config) -> list[Path]:
    """The conftest.py files pytest loaded that are not on the way to this folder. pytest takes
    an option's value given after a space (`--submission DIR`) for a folder to test while it
    does not yet know the kit's options, and imports the conftest.py files in and above it:
    a submission's own code, run in the grading process."""
    here = Path(__file__).resolve().parent
    loaded = [Path(plugin.__file__).resolve() for plugin in config.pluginmanager.get_plugins()
              if getattr(plugin, "__file__", None) and Path(plugin.__file__).name == "conftest.py"]
    return [path for path in loaded if path.parent != here and path.parent not in here.parents]


def pytest_configure(config: pytest.Config) -> None:
    parts.use(config.getoption("--grading").resolve())  # its engines are the files a worker reads
    config.addinivalue_line("markers", "part(id): the grading.toml part a test belongs to")
    if foreign := foreign_conftests(config):
        raise pytest.UsageError(
            f"{foreign[0]}: pytest loaded this conftest.py into the grader, because a folder was "
            "given after a space (`--submission DIR`), before pytest knew the kit's options; give "
            "every path with `=` (`--submission=DIR`, `--reference=DIR`, `--results-json=FILE`)")
    config.stash[CHECKS] = []
    config.stash[DESELECTED] = 0
    if (level := config.getoption("--sandbox-level")) is not None:
        try:
            isolation.choose(level)
        except isolation.IsolationError as error:
            raise pytest.UsageError(str(error)) from None
    submission = config.getoption("--submission")
    if not submission.is_dir():  # checked once here, not once per test
        raise pytest.UsageError(f"--submission {submission}: not a folder; point it at the folder "
                                f"holding {engine_files()}")
    if config.getoption("--grading-secret") and config.getoption("--grading-seed"):
        raise pytest.UsageError("--grading-secret and --grading-seed both choose the questions; give one")


def pytest_sessionstart(session: pytest.Session) -> None:
    isolation.warm()  # the workers' zygote imports NumPy while pytest collects, before any secret is read
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and session.config.getoption("reportchars") == "fE":
        reporter.reportchars = "w"  # a line per failure would scroll the score table away; it says more


def grading_of(config: pytest.Config) -> Grading:
    return load(config.getoption("--grading").resolve())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test counts for the part its suite declares (`PART = Part(...)`, parts.py)."""
    grading = grading_of(config)
    guarded = any(config.pluginmanager.hasplugin(name) for name in ("timeout", "pytest_timeout"))
    if unknown := [part for part in config.getoption("--part") if part not in grading.parts]:
        raise pytest.UsageError(f"--part {unknown[0]}: no such part in {grading.source}; the parts are "
                                f"{', '.join(grading.parts)}")
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
    if chosen := config.getoption("--part"):
        kept = [item for item in items if item.get_closest_marker("part").args[0] in chosen]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


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
        sealing = config.getoption("--seal-reference") is not None
        replicas = None if sealing else config.stash.get(REPLICAS, None)  # a plugin's: bulk grading's
        live = LiveReference(chosen, grading, draw=sealing, sha256=config.getoption("--reference-sha256"),
                             keep=replicas is not None)
        return live if replicas is None else FastReference(live, replicas, grading.tolerances)
    if chosen.is_file():
        return SealedReference(chosen, config.getoption("--reference-sha256"))
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
    if pytestconfig.getoption("--grading-secret") is not None and (why := isolation.unofficial()):
        pytest.exit(why, returncode=pytest.ExitCode.USAGE_ERROR)
    try:
        reference = reference_source(pytestconfig, grading, official)
        runner = pytestconfig.stash[RUNNER] = Runner(submission, reference, grading)
    except Unusable as error:
        pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)
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
    return {**leaves, "checks": scenario_sources.given_checks(runner.reference.handout.given)}


@pytest.fixture
def given(runner: Runner) -> dict:
    """The arguments of the check of the given operations, at this grading's seed."""
    return given_check(runner)


def given_changes(runner: Runner, names: frozenset[str] | None = None) -> list[str]:
    """A sentence for each given operation (of `names`, or all) that no longer behaves as the
    handout's; empty when the check of them could not run at all (its own message says why)."""
    arguments = given_check(runner)
    expected, got, _ = runner.run(GIVEN_CHECK, arguments, "value.given")
    if got.failure or got.raised or malformed(expected.observations, got.observations):
        return []
    tolerance = runner.grading.tolerances.named("default")
    return [judge.changed_given(name, arguments["checks"][name], arguments, expected.observations[name],
                                got.observations[name])
            for name in expected.observations if (names is None or name in names)
            and first_mismatch(expected.observations[name], got.observations[name], tolerance)]


@pytest.fixture
def grade(runner: Runner, request: pytest.FixtureRequest):
    """grade(scenario_id, suspects={...}, tolerance="default", series=None, slow="", **kwargs):
    judge one scenario (`decide`), and fail the test with its message. `series` reads a list of
    the answer as a run's steps; `slow` says what most often makes a correct engine too slow."""
    def check(scenario_id: str, *, suspects: dict | None = None, tolerance: str = "default",
              series: judge.Series | None = None, slow: str = "", **kwargs) -> None:
        result = decide(runner, request, scenario_id, suspects or {}, tolerance, (series, slow), kwargs)
        request.node.stash[CHECK] = result
        if not result.passed:
            pytest.fail(f"[counts for {result.part}]\n{check_results.message(result)}", pytrace=False)

    return check


def decide(runner: Runner, request: pytest.FixtureRequest, scenario_id: str, suspects: dict, tolerance: str,
           run: tuple[judge.Series | None, str], kwargs: dict) -> Check:
    """The Check of one test's scenario: asked of both sides, judged, and told with what only
    this grading knows (a changed given operation, an answer that changes between runs)."""
    test, part = request.node.name, request.node.get_closest_marker("part").args[0]
    scenario = scenario_sources.scenario(scenario_id)
    # What the test asked, for pytest's own report (--junitxml): the kit checks its suites with it.
    reported = getattr(request.config.option, "xmlpath", None) is not None
    if reported:
        request.node.user_properties.append(suspects_property(suspects))
    if fault := asked_wrongly(request, suspects):
        return Check.fault(test, part, fault)
    if reported:
        request.node.user_properties.append(scenario_property(scenario_id, kwargs))
    expected, got, limit = runner.run(scenario_id, kwargs, part)
    tolerances = runner.grading.tolerances
    try:
        result = judge.judge(
            test=test, part=part, situation=inspect.cleandoc(request.node.function.__doc__ or test),
            snippet=scenario.snippet, kwargs=kwargs, expected=expected, got=got,
            tolerance=tolerances.named(tolerance),
            fd_tolerance=Tolerance(tolerances.fd_rel, tolerances.fd_abs),
            suspects=suspects, timeout=limit, drawings=lambda: runner.drawings(scenario_id, kwargs),
            given_rules=given_rules(runner, scenario), series=run[0], slow=run[1])
    except judge.StaffError as error:
        return Check.fault(test, part, f"{error} in scenario {scenario_id}")
    if result.passed:
        return result
    result.files = snippet_files(request.config)
    if result.status is Status.UNLOADED:
        result.came_out = check_results.quoted(got.failure)
    elif scenario_id == GIVEN_CHECK and (changed := given_changes(runner)):
        result.status, result.came_out = Status.UNLOADED, "\n".join(textwrap.fill(s, 88) for s in changed)
    else:
        used = scenario.operations & set(runner.reference.handout.given)
        if used and (changed := given_changes(runner, used)):
            # The given code is the first suspect: no stub's misconception is named.
            changed[-1] += " This check uses it."
            result.preface = ["\n".join(textwrap.fill(sentence, 88) for sentence in changed)]
            result.misconception = None
        if runner.answers_differently_again(scenario_id, kwargs):
            result.notes.append(judge.UNSTEADY)
    return result


def snippet_files(config: pytest.Config) -> str:
    """The folder a snippet imports the submission from: none in an official grading, whose
    student runs it in the folder of their files; else the folder graded, unless pytest runs in
    it, so that a snippet runs where the student ran pytest (or anywhere)."""
    folder = config.getoption("--submission").resolve()
    if config.getoption("--grading-secret") is not None or folder == config.invocation_params.dir.resolve():
        return ""
    return str(folder)


def asked_wrongly(request: pytest.FixtureRequest, suspects: dict) -> str | None:
    """Why a test asks what the grader cannot check fairly (a misconception nobody lists, or
    too few different questions to keep an answer from being collected), or None."""
    if unknown := sorted(set(suspects) - CATALOGUE.keys()):
        return f"this check names misconception {unknown[0]!r}, which autograder/misconceptions.py lacks"
    asked = request.getfixturevalue("ask") if "ask" in request.fixturenames else None
    if asked is not None and (problem := asked.too_few(MIN_QUESTIONS)):  # at every seed, public too
        return problem.rstrip(".")
    return None


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
        part = item.get_closest_marker("part").args[0]
        result = item.stash.get(CHECK, None)
        if result is None:  # the test ended without a Check: it crashed, or passed with none
            result = Check(item.name, part, Status.PASSED) if report.passed \
                else crashed(item.name, part, call)
        report.check = result
        item.config.stash[CHECKS].append(result)
    return report


def crashed(test: str, part: str, call: pytest.CallInfo) -> Check:
    """A check that failed without a verdict crashed: said in one line, never with its
    traceback, which would quote the suite's code."""
    why = f"{call.excinfo.typename}: {str(call.excinfo.value)[:300]}" if call.excinfo else "no reason"
    return Check.fault(test, part, f"the check stopped with {why}")


def given_rules(runner: Runner, scenario: scenario_sources.Scenario) -> bool:
    """Is every operation the scenario's graphs hold a given one (so that a wrong gradient there
    can only come from how backward() runs the rules)?"""
    handout = runner.reference.handout
    used = scenario.operations & set(handout.operations)
    return bool(used) and used <= set(handout.given)


def with_needs(results: list[Check]) -> list[Check]:
    """The checks, with a note on every failure of a part that other parts' stubs may cost
    (training, tanh far from zero): which parts it needs, and which of them lost points too."""
    lost = {c.part for c in results if not c.passed}
    needs_of = parts.needs()
    for result in results:
        needed = needs_of.get(result.part, [])
        if result.passed or result.status in (Status.UNLOADED, Status.GRADER_FAULT) or not needed:
            continue
        failing = [part for part in needed if part in lost]
        one = len(needed) == 1
        said = (f"This check needs {check_results.listed(needed)}: a bug in {'it' if one else 'any of them'} "
                "may cost it. "
                + (f"{'' if one else 'Of those, '}{check_results.listed(failing)} lost points too: start "
                   f"with {'its' if len(failing) == 1 else 'their'} messages." if failing else
                   f"{'It passes' if one else 'They pass'} {'its' if one else 'their'} own checks."))
        result.notes.append(textwrap.fill(said, 88))
    return results


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """A student's run fits a screen: a check whose only answer was a stub's NotImplementedError
    is a line per part saying which stubs its checks wait for; other lost checks are a line each,
    unless one part is graded (or --messages full), when pytest shows each whole message."""
    config = terminalreporter.config
    failed = terminalreporter.stats.get("failed", [])
    waiting = [report for report in failed if getattr(getattr(report, "check", None), "waiting_for", None)]
    lost = [report for report in failed if report not in waiting and hasattr(report, "check")]
    ran = {result.part for result in config.stash.get(CHECKS, [])}
    short = (config.getoption("--messages") or ("full" if len(ran) == 1 else "short")) == "short"
    terminalreporter.stats["failed"] = [report for report in failed if report not in waiting
                                        and not (short and report in lost)]
    if waiting:
        terminalreporter.stats["waiting"] = waiting
        stubs: dict[str, list[str]] = {}  # a part -> the stub each of its waiting checks waits for
        for report in waiting:
            stubs.setdefault(report.check.part, []).append(report.check.waiting_for)
        terminalreporter.write_sep("=", "waiting for stubs")
        for part, names in stubs.items():
            count = len(names)
            terminalreporter.write_line(f"{part}: {count} check{'s wait' if count > 1 else ' waits'} for "
                                        f"{', '.join(dict.fromkeys(names))}, still a stub")
    if short and lost:
        terminalreporter.stats["lost"] = lost
        terminalreporter.write_sep("=", "lost checks")
        for report in lost:
            terminalreporter.write_line(check_results.line(report.check))
        first = parts.start_with({report.check.part for report in lost}, list(grading_of(config).parts))
        terminalreporter.write_line(f"Each one's whole message, with a snippet to run: pytest autograder "
                                    f"--part {first} (one part), or --messages full (every part).")
    return (yield)


SCORES = pytest.StashKey[list]()
NOT_SEALED = pytest.StashKey[str]()
NOT_GRADED = pytest.StashKey[str]()
REPROS = pytest.StashKey[list]()  # the snippet files --repro wrote


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
    results = config.stash.get(CHECKS, None)
    if not results or BUSY in config.stash:
        return
    if session.exitstatus in (0, 1) and (faults := scoring.grader_faults(results)):
        session.exitstatus = scoring.NOT_GRADED_EXIT  # no score: nothing it did not decide is a grade
        config.stash[NOT_GRADED] = scoring.not_graded(faults)
        if path := config.getoption("--results-json"):
            scoring.not_graded_json(config.stash[NOT_GRADED], path)
        return
    scores = scoring.score(with_needs(results), grading_of(config))
    config.stash[SCORES] = scores
    if path := config.getoption("--results-json"):
        scoring.results_json(scores, path)
    if config.getoption("--repro"):
        config.stash[REPROS] = write_repros(results, config.getoption("--submission"))


REPRO_HEAD = """\
# {part}, {test}: the check's snippet. Run it from the folder of your files:
#     python repro/{test}.py
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the folder of your files

"""


def write_repros(results: list[Check], submission: Path) -> list[Path]:
    """Each failed check's snippet as repro/<test>.py in the submission's folder, to run with
    python; the files written."""
    folder = submission / "repro"
    folder.mkdir(exist_ok=True)
    written = []
    for result in results:
        if not result.passed and result.snippet:
            name = result.test.replace("[", "-").replace("]", "").replace("/", "-")
            text = REPRO_HEAD.format(part=result.part, test=name) + result.snippet + "\n"
            (folder / f"{name}.py").write_text(text, encoding="utf-8")
            written.append(folder / f"{name}.py")
    return written


def repros_written(written: list[Path]) -> str:
    """Where --repro wrote, in one line a student can act on."""
    if not written:
        return "--repro: no lost check has a snippet, so no file was written"
    folder = written[0].parent
    return (f"--repro: {len(written)} snippet{'s' if len(written) > 1 else ''} written to {folder}; "
            f"run one with: python {written[0]}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    submission = config.getoption("--submission")
    return [f"autograder: grading {submission}; one part alone: --part value.mul; "
            "every whole message: --messages full; snippets as files: --repro"]


def pytest_unconfigure(config: pytest.Config) -> None:
    """The score table, last, after everything pytest prints."""
    scores = config.stash.get(SCORES, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and NOT_SEALED in config.stash:
        reporter.write_line(config.stash[NOT_SEALED], red=True)
    if BUSY in config.stash:  # no score: said on stderr, where `autograder bulk` reads the reason
        sys.stderr.write(f"autograder: {config.stash[BUSY]}\n")
    if NOT_GRADED in config.stash:
        sys.stderr.write(f"autograder: no score: {config.stash[NOT_GRADED]}\n")
    if not scores or reporter is None:
        return
    partial = config.stash.get(DESELECTED, 0) > 0 or any(s.total == 0 for s in scores)
    reporter.write_sep("=", "score")
    reporter.write_line(scoring.table(scores, partial=partial, left_out=config.stash.get(DESELECTED, 0)))
    if why := isolation.shared_writes():  # what this level does not keep from a classmate's worker
        reporter.write_line(f"autograder: {why}", yellow=True)
    if path := config.getoption("--results-json"):
        reporter.write_line(f"results written to {path}")
    if REPROS in config.stash:
        reporter.write_line(repros_written(config.stash[REPROS]))
