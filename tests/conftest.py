"""Fixtures shared by the kit's own tests."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import support
from support import KIT, machine, shared_work
from support.autograding import autograde_folder
from support.corpus import CORPUS, CorpusError, build
from support.shape import GRADED, not_graded

from autograder.questions import SECRET_BYTES, Seed, official_seed
from autograder.stubs import engine_files

SHARED = pytest.StashKey[Path]()  # under pytest-xdist, the folder every process of the run shares


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("the kit's own tests")
    group.addoption("--exhaustive", action="store_true",
                    help="ask the suites' questions at every seed of support.FIXED_SEEDS besides the public "
                         "and the drawn one, and grade the handout on every Python the machine has")
    group.addoption("--drawn-seed", type=lambda text: Seed.parse(text).value, metavar="HEX",
                    help="ask at this official seed in place of one drawn under a fresh secret "
                         "(the report's header names each run's, to ask its questions again)")


def pytest_configure(config: pytest.Config) -> None:
    """Draw this run's official seed before any test module is imported: it parametrizes them.
    Processes that run a share of the tests (pytest-xdist's workers) take the one drawn for the run."""
    config.addinivalue_line("markers", "engine(name): a test about one engine, skipped (with the reason) "
                                       "where the kit's grading.toml grades none (support/shape.py)")
    config.addinivalue_line("markers", "exhaustive: a test whose kind of check another test of the default "
                                       "run makes too; only --exhaustive runs it (deselected otherwise)")
    config.addinivalue_line("markers", "alone: a test that reads what the whole machine holds (every "
                                       "worker's cgroup, say): no other test runs beside it under "
                                       "pytest-xdist (support/machine.py)")
    shared = getattr(config, "workerinput", {})
    drawn = shared.get("drawn_seed") or config.getoption("--drawn-seed") or official_seed(
        os.urandom(SECRET_BYTES), {path.stem: path.read_bytes() for path in engine_files(KIT / "solutions")},
        "the kit's own tests").value
    support.configure(drawn, config.getoption("--exhaustive"))
    if "shared_folder" in shared:
        config.stash[SHARED] = Path(shared["shared_folder"])
    elif getattr(config.option, "numprocesses", None):
        config.stash[SHARED] = Path(tempfile.mkdtemp(prefix="kit-tests-run-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and SHARED in config.stash:
        shutil.rmtree(config.stash[SHARED], ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Each pytest-xdist worker asks at the seed drawn for the run, so that all collect the same tests,
    and shares the run's folder: the lock on the machine, and the groups of tests that share work."""
    node.workerinput["drawn_seed"] = support.SEEDS[0]
    node.workerinput["shared_folder"] = str(node.config.stash[SHARED])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Every test holds the machine from its first fixture to its last teardown: shared, or alone."""
    alone = item.get_closest_marker("alone") is not None
    with machine.held(item.config.stash.get(SHARED, None), alone):
        return (yield)


def pytest_terminal_summary(terminalreporter) -> None:
    """The seeds asked at, printed even with -q: a failure at the drawn one is repeated with it."""
    more = "" if support.EXHAUSTIVE else ("; --exhaustive adds " + ", ".join(support.FIXED_SEEDS)
                                          + " and the tests marked exhaustive")
    terminalreporter.write_line(f"grading seeds: {', '.join(support.EVERY_SEED)} (drawn for this run: "
                                f"--drawn-seed {support.SEEDS[0]} asks its questions again{more})")


def _load(folder: str, name: str) -> ModuleType:
    """Import KIT/folder/name.py under a name of its own, so the two versions never mix."""
    path = KIT / folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{folder}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def reference() -> SimpleNamespace:
    """The complete engines in solutions/, as `reference.value`, `.tensor`, `.dual`."""
    return SimpleNamespace(**{name: _load("solutions", name) for name in GRADED})


@pytest.fixture(scope="session")
def stubs() -> SimpleNamespace:
    """The student's starting point in assignments/, as `stubs.value`, `.tensor`, `.dual`."""
    return SimpleNamespace(**{name: _load("assignments", name) for name in GRADED})




def seal_reference(folder: Path, seed: str = "public") -> SimpleNamespace:
    """solutions/ graded at `seed`, its answers sealed: `.path` of the sealed file, `.parts` its
    results, `.junit` pytest's report of every test (with the scenario each asked for), `.seed`."""
    path, junit = folder / "reference.json", folder / "junit.xml"
    parts = autograde_folder(KIT / "solutions", folder / "results.json", f"--seal-reference={path}",
                             f"--junitxml={junit}", "--grading-seed", seed)
    return SimpleNamespace(path=path, parts=parts, junit=junit, seed=seed)


@pytest.fixture(scope="session")
def nbgrader_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An nbgrader course with the kit's assignment handed out and no students, made once per
    process: each nbgrader test module's course starts as a copy of it (support.nbgrader_courses)."""
    from support.nbgrader_courses import course_without_students

    return course_without_students(tmp_path_factory.mktemp("nbgrader-course"))


@pytest.fixture(scope="session")
def sealed_reference(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """The reference sealed at the public seed, as a handout ships it (see seal_reference)."""
    return seal_reference(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="session")
def sealed_at(sealed_reference: SimpleNamespace,
              tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], SimpleNamespace]:
    """sealed_at(seed): the reference sealed at `seed`, once per test session."""
    made = {"public": sealed_reference}
    lock = threading.Lock()

    def sealed(seed: str) -> SimpleNamespace:
        with lock:
            if seed not in made:
                made[seed] = seal_reference(tmp_path_factory.mktemp(f"reference-{seed}"), seed)
            return made[seed]

    return sealed


@pytest.fixture(scope="session")
def autograde(sealed_at: Callable[[str], SimpleNamespace],
              tmp_path_factory: pytest.TempPathFactory) -> Callable[..., dict[str, dict]]:
    """autograde(folder, env=None, seed="public"): results.json's entries by part id, graded at
    `seed` against the reference sealed at it, in a subprocess. Safe to call from several
    threads at once."""
    results = tmp_path_factory.mktemp("results")

    def grade(submission: Path, env: dict | None = None, seed: str = "public") -> dict[str, dict]:
        target = Path(tempfile.mkdtemp(dir=results)) / "results.json"
        return autograde_folder(submission, target, f"--reference={sealed_at(seed).path}",
                                "--grading-seed", seed, env=env)

    return grade


@pytest.fixture(scope="session")
def corpus_grades(autograde, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every corpus submission, built and graded at every seed, several at a time (a build
    error in its place): seed -> submission -> results."""
    root = tmp_path_factory.mktemp("corpus")
    built: dict[str, Path | CorpusError] = {}
    for submission in CORPUS:
        try:
            build(submission, KIT / "solutions", root / submission.name)
            built[submission.name] = root / submission.name
        except CorpusError as error:
            built[submission.name] = error

    def grade(job: tuple[str, str]) -> dict | CorpusError:
        seed, name = job
        folder = built[name]
        return folder if isinstance(folder, CorpusError) else autograde(folder, seed=seed)

    jobs = [(seed, s.name) for seed in support.EVERY_SEED for s in CORPUS]
    with ThreadPoolExecutor(max_workers=support.CORES) as pool:
        results = dict(zip(jobs, pool.map(grade, jobs)))
    return {seed: {name: results[seed, name] for _, name in jobs if _ == seed} for seed in support.EVERY_SEED}




# -- what several test modules build: made once per session ---------------------------------------

@pytest.fixture(scope="session")
def reference_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference sealed once for the bulk tests, as the `reference/` folder of an OUTDIR."""
    from autograder.staff import bulk

    out = tmp_path_factory.mktemp("sealed")
    bulk.sealed_reference(out, bulk.grader_version())
    return out / "reference"


@pytest.fixture(scope="session")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Gradescope bundle, `autograder release gradescope`."""
    path = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    command = [sys.executable, "-m", "autograder.staff.cli", "release", "gradescope", "-o", str(path)]
    done = subprocess.run(command, cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="session")
def image_env(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What Python can import in Gradescope's image: the bundle's requirements.txt, no more."""
    from support.releases import only_packages

    with zipfile.ZipFile(bundle) as archive:
        pins = archive.read("requirements.txt").decode().splitlines()
    names = [line.partition("==")[0] for line in pins if "==" in line]
    env = only_packages(tmp_path_factory.mktemp("image"), *names)
    plugins = [name.replace("-", "_") for name in names if name.startswith("pytest-")]
    return {**env, "PYTEST_PLUGINS": ",".join(plugins)}  # what pytest would load by itself there


@pytest.fixture
def layout(bundle: Path):
    """A fresh copy of Gradescope's /autograder: yields its root; submission/ starts empty."""
    root = Path(tempfile.mkdtemp(prefix="autograder-root-"))
    root.chmod(0o755)  # as on Gradescope, where `nobody` may reach the virtualenv under it
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):
        (root / "source" / name).chmod(0o755)  # Gradescope keeps the modes the zip records
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "venv").symlink_to(sys.prefix)
    (root / "submission").mkdir()
    yield root
    shutil.rmtree(root)


@pytest.fixture(scope="session")
def student_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An environment in which Python sees only the standard library, numpy and pytest."""
    from support.releases import only_packages

    return only_packages(tmp_path_factory.mktemp("numpy-and-pytest"), "numpy", "pytest")


@pytest.fixture(scope="session")
def classroom_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The GitHub Classroom release (the student release and its workflow) of a kit with a part
    shown after the due date, which the workflow leaves out."""
    from support.releases import AFTER_THE_DUE_DATE, CLI, kit_with_visibility, run

    kit = kit_with_visibility(tmp_path_factory.mktemp("kit"), {AFTER_THE_DUE_DATE: "after_due_date"})
    out = tmp_path_factory.mktemp("classroom") / "handout"
    done = run(CLI + ["release", "classroom", "-o", str(out)], kit)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def workflow(classroom_release: Path) -> dict:
    """The classroom release's workflow, parsed."""
    yaml = pytest.importorskip("yaml", reason="pyyaml reads the workflow: pip install pyyaml")
    return yaml.safe_load((classroom_release / ".github" / "workflows" / "classroom.yml").read_text("utf-8"))


# The fixtures that grade in processes of their own: a test that uses one is slow, wherever it is.
SLOW_FIXTURES = {"autograde", "sealed_reference", "sealed_at", "corpus_grades", "release", "handout",
                 "reference_cache", "bundle", "classroom_release"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`pytest -m "not slow"` is the fast loop: what grades in a process of its own, trains at full
    length or mutates is marked slow (a module's pytestmark, or a fixture of SLOW_FIXTURES). A test
    marked engine(name) is skipped where grading.toml grades no such engine, saying so; one
    marked exhaustive is deselected but with --exhaustive. A pytest-xdist worker writes which
    tests share work (support/shared_work.py)."""
    if not support.EXHAUSTIVE:
        more = {item for item in items if item.get_closest_marker("exhaustive")}
        if more:
            config.hook.pytest_deselected(items=list(more))
            items[:] = [item for item in items if item not in more]
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        for marker in item.iter_markers("engine"):
            if reason := not_graded(marker.args[0]):
                item.add_marker(pytest.mark.skip(reason=reason))
    # The modules whose every test is slow run first, each in its own order: under pytest-xdist the
    # longest work starts early, and no worker is left with it at the end while the other waits. A
    # test marked alone runs last: it waits for the test the other process is running, which then
    # is the last (in the middle of a run, the other process would wait with it, its CPU idle).
    light = {item.module for item in items if item.get_closest_marker("slow") is None}
    items.sort(key=lambda item: (item.get_closest_marker("alone") is not None, item.module in light))
    if hasattr(config, "workerinput"):
        shared_work.write_groups(config.stash[SHARED], items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under `--dist loadgroup`, the tests that share work run in one process (support/shared_work.py)."""
    if config.getoption("dist") == "loadgroup":
        return shared_work.GroupScheduling(config, log, config.stash[SHARED])
    return None
