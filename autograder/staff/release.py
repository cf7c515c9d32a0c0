"""Build what leaves the kit: the student handout, a Gradescope bundle, nbgrader notebooks.

`autograder release student|classroom|gradescope|nbgrader -o OUT` (docs/platforms.md). A
handout holds nothing of solutions/, only the reference's answers to the public questions of
the suites it ships, sealed by running exactly those against solutions/; the Gradescope bundle,
which students never see, holds the reference and a secret of its own instead. Loaded by pytest
as a plugin (`-p autograder.staff.release --list-parts PATH`), it writes each test's part.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import secrets
import shutil
import string
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

from .. import scenario_sources
from ..config import Grading, parse, tomllib
from ..parts import engines
from ..questions import make_secret
from ..stubs import engine_files, stubs_by_part
from .reference_run import tail

PLATFORM_FILES = Path(__file__).parent / "platform_files"
SUITES = Path("autograder") / "suites"
SEALED = Path("autograder") / "reference.json"
# Never copied out of the package: build caches, any sealed file left behind, and the staff
# tools (bulk grading, building releases, the platform templates), which grade nothing.
NOT_SHIPPED = {"__pycache__", "reference.json", ".pytest_cache", "staff"}
# What Gradescope's image needs, pinned to the versions that sealed the answers (nbformat:
# intake reads a notebook submission; pyseccomp: the workers' filter of system calls).
GRADESCOPE_PACKAGES = ("numpy", "pytest", "pytest-timeout", "nbformat", "pyseccomp")
PYTEST_INI = """\
[pytest]
# `pytest` alone grades assignments/; test order is fixed so every run reads the same.
testpaths = autograder
addopts = -p no:randomly
"""
STUDENT_GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\nrepro/\n"
STUDENT_GUIDE = Path("docs") / "students.md"  # what a message says: the handout's README links it
# The Gradescope bundle's own secret, beside its grading.toml.
BUNDLE_SECRET = Path("grading.secret")
NEWEST_PYTHON = "3.13"  # the newest Python the kit is tested on (tests/platforms/test_pythons.py)
NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}  # how the handout counts its files


class ReleaseError(Exception):
    """A release cannot be built as asked; the message names the file and the fix."""


class WholePointsError(ReleaseError):
    """A part's points are fractional, which GitHub Classroom alone cannot count."""


# -- which part every test grades (a pytest plugin, run in a subprocess on the kit) ------------

def pytest_addoption(parser: pytest.Parser) -> None:
    """Add --list-parts."""
    parser.addoption("--list-parts", type=Path, default=None,
                     help="write every collected test's file, name and part to this JSON file")


def pytest_collection_finish(session: pytest.Session) -> None:
    """With --list-parts, write every collected test's file, name, class and part as JSON, unless
    a file failed to collect (its error is counted among the failures by then)."""
    path = session.config.getoption("--list-parts")
    if path is None or session.testsfailed:
        return
    items = []
    for item in session.items:
        marker = item.get_closest_marker("part")
        items.append({"file": str(item.path), "name": getattr(item, "originalname", item.name),
                      "cls": item.cls.__name__ if getattr(item, "cls", None) else None,
                      "part": marker.args[0] if marker else None})
    path.write_text(json.dumps(items), encoding="utf-8")


@dataclass(frozen=True)
class SuiteTest:
    """One collected test of the suites, and the part it grades."""

    file: Path  # relative to the kit
    name: str  # the top-level definition that holds it: a function or a class
    part: str


def collect(kit: Path) -> list[SuiteTest]:
    """Every test of the kit's suites with the part it grades, as pytest itself collects them;
    raises ReleaseError with pytest's own words when collecting fails."""
    with tempfile.TemporaryDirectory() as scratch:
        listing = Path(scratch) / "parts.json"
        done = run_pytest(kit, ["--collect-only", "-qq", "-p", "autograder.staff.release",
                                f"--list-parts={listing}", str(kit / "autograder")])
        return listed(kit, listing, done)


def listed(kit: Path, listing: Path, done: subprocess.CompletedProcess) -> list[SuiteTest]:
    """The tests a pytest run with --list-parts collected (`done`, which wrote `listing` once it
    had collected every file); raises ReleaseError with pytest's own words when collecting failed."""
    if not listing.is_file():
        # pytest's own words: its usage errors on stderr, its collection errors after ERRORS
        errors = done.stdout[done.stdout.find("= ERRORS ="):] if "= ERRORS =" in done.stdout else ""
        message = done.stderr.strip() or tail(errors or done.stdout)
        raise ReleaseError(f"collecting the suites of {kit / 'autograder'} failed; fix what pytest "
                           f"says:\n{message}")
    records = json.loads(listing.read_text(encoding="utf-8"))
    return [SuiteTest(Path(r["file"]).relative_to(kit), r["cls"] or r["name"], r["part"]) for r in records]


def run_pytest(cwd: Path, args: list[str]) -> subprocess.CompletedProcess:
    """pytest in a fresh process whose `autograder` package is the one in `cwd`."""
    return subprocess.run([sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=cwd, capture_output=True, text=True, check=False)


# -- the suites a release may hold -------------------------------------------------------------

def prune(source: str, hidden: set[str], where: Path) -> str:
    """The suite's source without the top-level tests named in `hidden`, nor the helpers
    (functions and constants) that only those tests used."""
    tree = ast.parse(source, filename=str(where))
    dropped = [node for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in hidden]
    while True:
        kept = [node for node in tree.body if node not in dropped]
        used = {node.id for part in kept for node in ast.walk(part)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        orphans = [node for node in kept if helper_names(node) and not helper_names(node) & used]
        if not orphans:
            break
        dropped += orphans
    lines = source.splitlines(keepends=True)
    for node in sorted(dropped, key=lambda n: n.lineno, reverse=True):
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        del lines[start - 1:node.end_lineno]
    return re.sub(r"\n{4,}", "\n\n\n", "".join(lines)).rstrip("\n") + "\n"


def helper_names(node: ast.stmt) -> set[str]:
    """The names a plain helper defines; empty for tests, fixtures and what pytest reads."""
    if isinstance(node, ast.FunctionDef) and not node.decorator_list and not node.name.startswith("test"):
        return {node.name}
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        names = {t.id for t in node.targets}
        return set() if "pytestmark" in names else names
    return set()


def plan_suites(tests: list[SuiteTest], shipped: set[str]) -> dict[Path, set[str] | None]:
    """For each suite file holding a test: None to ship it whole, else the definitions to cut
    out. Files whose every test grades a part not in `shipped` are left out entirely. Raises
    ReleaseError for a definition that holds tests of shipped and unshipped parts."""
    by_file: dict[Path, dict[str, set[str]]] = {}
    for test in tests:
        by_file.setdefault(test.file, {}).setdefault(test.name, set()).add(test.part)
    plan: dict[Path, set[str] | None] = {}
    for file, definitions in by_file.items():
        hidden = set()
        for name, parts in definitions.items():
            if parts <= shipped:
                continue
            if parts & shipped:
                raise ReleaseError(f"{file}: {name} holds tests of parts {sorted(parts)}, some shipped "
                                   "and some not; give each part its own test function")
            hidden.add(name)
        if hidden != set(definitions):
            plan[file] = hidden or None
    return plan


def unused_scenario_modules(kit: Path) -> set[Path]:
    """The scenario modules of inside/ whose scenarios are all of engines grading.toml no longer
    grades (an engine removed) and that no other scenario module imports: not shipped."""
    graded = set(engines(kit / "grading.toml"))
    served: dict[str, set[str]] = {}
    for scenario in scenario_sources.every_scenario():
        served.setdefault(scenario.id.partition(":")[0], set()).add(scenario.engine)
    needed: set[str] = set()
    wanted = [module for module, engines_of in served.items() if engines_of & graded]
    while wanted:
        module = wanted.pop()
        if module not in needed:
            needed.add(module)
            wanted += scenario_sources.needs(module)
    folder = Path("autograder", "inside", "scenarios")
    return {folder / f"{module}.py" for module in served if module not in needed}


def copy_package(kit: Path, out: Path, tests: list[SuiteTest], shipped: set[str]) -> None:
    """The autograder package with only the tests of the shipped parts (and only the scenario
    modules of the engines graded)."""
    plan = plan_suites(tests, shipped)
    suite_files = {test.file for test in tests}
    unused = unused_scenario_modules(kit)
    source = kit / "autograder"
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(kit)
        if path.is_dir() or NOT_SHIPPED & set(relative.parts) or path.suffix == ".pyc" or relative in unused:
            continue
        if relative in suite_files and relative not in plan:
            continue
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        cut = plan.get(relative)
        if cut:
            target.write_text(prune(path.read_text(encoding="utf-8"), cut, relative), encoding="utf-8")
        else:
            shutil.copyfile(path, target)


def only_parts(text: str, keep: set[str]) -> str:
    """grading.toml's text without the [parts."<id>"] tables of the parts not in `keep`."""
    blocks = re.split(r"(?m)^(?=\[)", text)
    header = re.compile(r'\[parts\.(?:"([^"]+)"|([A-Za-z0-9_-]+))\]')
    kept = []
    for block in blocks:
        found = header.match(block)
        if found and (found.group(1) or found.group(2)) not in keep:
            continue
        kept.append(block)
    return "".join(kept)


def seal(release: Path, solutions: Path) -> None:
    """Record the reference's answers for exactly the suites in `release`, and check on the way
    that the reference earns every point of them; raises ReleaseError when it does not."""
    done = run_pytest(release, ["autograder", f"--submission={solutions}", f"--reference={solutions}",
                                f"--seal-reference={release / SEALED}"])
    if done.returncode != 0 or not (release / SEALED).is_file():
        raise ReleaseError(f"the reference in {solutions} does not pass the suites it would seal; "
                           f"fix solutions/ or the suites first:\n{tail(done.stdout)}")


def prepare(out: Path) -> None:
    """Raise ReleaseError unless `out` is missing or an empty folder."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(f"{out} already exists and is not an empty folder; choose a new path "
                           "or remove it first")


@contextlib.contextmanager
def building(out: Path) -> Iterator[Path]:
    """A new folder beside `out` to build a release in, moved into place when the build is done:
    a build that fails leaves nothing behind, and nothing half-written blocks the next."""
    prepare(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield partial
        if out.exists():
            out.rmdir()  # empty, as prepare() found it
        partial.rename(out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def project(kit: Path) -> dict:
    """The [project] table of the kit's pyproject.toml; raises ReleaseError."""
    pyproject = kit / "pyproject.toml"
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        raise ReleaseError(f"{pyproject}: cannot read its [project] table ({error}); the releases take "
                           "the kit's minimum Python and what a student installs from there") from None


def python_minimum(kit: Path) -> str:
    """The kit's Python floor, "3.9", from requires-python in its pyproject.toml: the one place
    that says it, for the handout's README and the Gradescope image alike. Raises ReleaseError."""
    required = project(kit).get("requires-python", "")
    found = re.fullmatch(r">=\s*(\d+\.\d+)", required.strip())
    if not found:
        raise ReleaseError(f'{kit / "pyproject.toml"}: requires-python = "{required}"; write it as '
                           '">=3.N", the only form setup.sh and the handout can state')
    return found.group(1)


def student_requirements(kit: Path) -> str:
    """requirements.txt of the handout: the kit's own dependencies, which are what a student needs."""
    return "".join(f"{requirement}\n" for requirement in project(kit)["dependencies"])


# -- the student handout -------------------------------------------------------------------------

def build_student(kit: Path, out: Path, classroom: bool = False, tests: list[SuiteTest] | None = None,
                  sealed: bool = True) -> None:
    """Write into `out` assignments/, the visible suites and the grader, with answers sealed for
    them only (unless not `sealed`: `autograder check`'s dry run, which grades the reference
    itself); with `classroom`, GitHub Classroom's workflow too. `tests` are the suites' tests, as
    `collect` finds them (collected here when not given). Raises ReleaseError."""
    grading = parse(kit / "grading.toml")
    visible = {part.id for part in grading.parts.values() if part.visibility == "visible"}
    tests = collect(kit) if tests is None else tests
    shutil.copytree(kit / "assignments", out / "assignments",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    copy_package(kit, out, tests, visible)
    (out / "grading.toml").write_text(only_parts((kit / "grading.toml").read_text(encoding="utf-8"),
                                                 visible), encoding="utf-8")
    kept = parse(out / "grading.toml")
    if set(kept.parts) != visible:
        raise ReleaseError(f"{kit / 'grading.toml'}: could not cut the hidden parts out cleanly; "
                           "write every part as its own [parts.\"<id>\"] table")
    (out / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    (out / "requirements.txt").write_text(student_requirements(kit), encoding="utf-8")
    (out / ".gitignore").write_text(STUDENT_GITIGNORE, encoding="utf-8")
    (out / "README.md").write_text(student_readme(kit, grading, kept, python_minimum(kit)),
                                   encoding="utf-8")
    if classroom:
        workflow = out / ".github" / "workflows" / "classroom.yml"
        workflow.parent.mkdir(parents=True)
        workflow.write_text(classroom_workflow(kept, [t for t in tests if t.part in visible],
                                               supported_pythons(kit)), encoding="utf-8")
    if (kit / STUDENT_GUIDE).is_file():  # a kit without it ships a README that does not link it
        (out / STUDENT_GUIDE).parent.mkdir()
        shutil.copyfile(kit / STUDENT_GUIDE, out / STUDENT_GUIDE)
    if sealed:
        seal(out, kit / "solutions")
    for cache in sorted(out.rglob("__pycache__")):  # whatever ran in the handout compiled nothing of it
        shutil.rmtree(cache)


def student_readme(kit: Path, grading: Grading, kept: Grading, python: str) -> str:
    """The handout's README.md: its parts (`kept`) with their points, the parts of `grading` it
    leaves out and when they are shown, and the Python it needs."""
    files = engine_files(kit / "assignments")
    stubs = {part: (f"{found[0][0]}.py", [function for _, function in found])
             for part, found in stubs_by_part(kit / "solutions").items()}
    rows = []
    for part in kept.parts.values():
        file, names = stubs.get(part.id, ("", []))
        engine = part.id.split(".")[0]
        where = (f"`{file}`: " + ", ".join(f"`{n}`" for n in names) if names
                 else f"all of `{engine}.py`, through its public API")
        bonus = " (bonus)" if part.bonus else ""
        rows.append(f"| `{part.id}` | {part.title} | {where} | {part.points:g}{bonus} |")
    total = sum(p.points for p in kept.parts.values() if not p.bonus)
    later = [p for p in grading.parts.values() if p.id not in kept.parts]
    when = {"after_due_date": "shown to you after the due date", "after_published": "shown to you once the "
            "grades are published", "hidden": "never shown to you"}
    later_note = "".join(f"\nBesides these, `{p.id}` ({p.points:g} points) is graded by tests that are not "
                         f"in this handout, {when[p.visibility]}.\n" for p in later)
    names = ", ".join(f"`{path.name}`" for path in files)
    count = NUMBERS.get(len(files), str(len(files))) + " small automatic-differentiation engine" + (
        "s" if len(files) != 1 else "")
    guide = ("\n[docs/students.md](docs/students.md) says what a message holds and how to read its graph."
             if (kit / STUDENT_GUIDE).is_file() else "")
    return f"""# Build your own autograd engine

You write the missing pieces of {count}. Every file
in `assignments/` is complete except its stubs: each one says `TODO(<part>)` and raises
`NotImplementedError` until you replace it. Read the given operations first: they are
worked examples of the rules your stubs follow.

## Set up (once)

    python -m pip install -r requirements.txt

Python {python} or later, with numpy and pytest.

## Check your work

From this folder, on Windows, macOS or Linux:

    python -m pytest autograder

It runs the tests on your files in `assignments/` and ends with a score table, one row
per part, after a line for each lost check. Every lost point comes with a message: what was
tried, a snippet you can paste into Python to reproduce it, what came out, what was
expected, and the idea it points to.

| to | run |
| --- | --- |
| grade one part, with each lost check's whole message | `python -m pytest autograder --part value.mul` |
| see every whole message | `python -m pytest autograder --messages full` |
| also write each lost check's snippet to `assignments/repro/` | `python -m pytest autograder --repro` |
| grade files kept somewhere else | `python -m pytest autograder --submission=PATH` |

A snippet runs wherever you paste it into a new Python (its first line finds your files).{guide}

This run asks the public questions, whose answers this handout holds sealed, so its score is
your own check, not your grade. The course grades the files you hand in with the same checks
and other numbers, drawn from your files under a secret it keeps: a correct engine scores the
same there, and nothing else does.

Your code runs in a separate process with a limit of CPU time (and, on Linux, of memory);
printing is fine, but a print in a loop of thousands of steps slows you down.

## Parts and points

| part | what | where | points |
| --- | --- | --- | --- |
{chr(10).join(rows)}

Total: {total:g} points, bonus not counted.
{later_note}
## What you hand in

{names}, from `assignments/`. Keep the names of the files, classes and functions,
and keep your code inside these files: the grader imports nothing else.
"""


# -- GitHub Classroom ------------------------------------------------------------------------------

def step_id(part_id: str) -> str:
    """A part's id as a workflow step's id: every character but letters, digits and `-` as `-`."""
    return re.sub(r"[^A-Za-z0-9-]", "-", part_id)


def part_command(part_id: str, tests: list[SuiteTest]) -> str:
    """The pytest command that runs exactly one part's tests: whole files where the file holds
    only that part, else the definitions one by one."""
    of_part = [t for t in tests if t.part == part_id]
    targets = []
    for file in sorted({t.file for t in of_part}):
        if all(t.part == part_id for t in tests if t.file == file):
            targets.append(file.as_posix())
        else:
            targets += sorted({f"{file.as_posix()}::{t.name}" for t in of_part if t.file == file})
    return "python -m pytest -q " + " ".join(targets)


def supported_pythons(kit: Path) -> list[str]:
    """The Python versions the kit supports, from its floor (pyproject.toml) to NEWEST_PYTHON."""
    major, minor = (int(n) for n in python_minimum(kit).split("."))
    newest = int(NEWEST_PYTHON.split(".")[1])
    return [f"{major}.{n}" for n in range(minor, newest + 1)]


def classroom_workflow(kept: Grading, tests: list[SuiteTest], pythons: list[str]) -> str:
    """GitHub Classroom's workflow: one command-grader step per part, then the reporter; and the
    student's check on every system and each of `pythons`. Raises ReleaseError for a part of
    fractional points (Classroom counts whole ones)."""
    steps, env, runners = [], [], []
    for part in kept.parts.values():
        if not any(t.part == part.id for t in tests):
            continue
        if float(part.points) != int(part.points):
            raise WholePointsError(f'grading.toml: [parts."{part.id}"] points = {part.points}; GitHub '
                                   "Classroom counts whole points only, make it a whole number")
        ident = step_id(part.id)
        steps.append(f"""      - name: {json.dumps(part.id)}
        id: {ident}
        uses: education/autograding-command-grader@v1
        with:
          test-name: {json.dumps(part.title)}
          command: {json.dumps(part_command(part.id, tests))}
          timeout: 10
          max-score: {int(part.points)}""")
        env.append(f'          {ident.upper()}_RESULTS: "${{{{steps.{ident}.outputs.result}}}}"')
        runners.append(ident)
    template = string.Template((PLATFORM_FILES / "classroom.yml").read_text(encoding="utf-8"))
    return template.substitute(steps="\n".join(steps), reporter_env="\n".join(env),
                               runners=",".join(runners), pythons=", ".join(f'"{v}"' for v in pythons))


# -- Gradescope ------------------------------------------------------------------------------------

def gradescope_requirements(kit: Path) -> str:
    """The image's packages: on this Python's version and newer, exactly the versions that sealed
    the reference's answers; on the older ones the kit supports (whose wheels may not exist at
    those versions), the kit's own floors, and tomli, which those Pythons need. Raises
    ReleaseError when one of the packages is not installed here."""
    declared = [*project(kit)["dependencies"], *project(kit)["optional-dependencies"]["staff"]]
    floors = {re.split(r"[<>=!~; ]", spec, maxsplit=1)[0]: spec for spec in declared}
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    lines = ["# The versions that sealed the reference's answers, and the kit's floors for older Pythons."]
    for name in GRADESCOPE_PACKAGES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise ReleaseError(f"{name} is not installed here; install the kit's staff extras "
                               "(pip install -e '.[staff]') so the bundle can pin it") from None
        lines.append(f'{name}=={version}; python_version >= "{here}"')
        lines.append(f'{floors.get(name, name)}; python_version < "{here}"')
    lines += [spec for spec in declared if "python_version" in spec]
    return "\n".join(lines) + "\n"


def gradescope_setup(python: str) -> str:
    """setup.sh, with the kit's minimum Python written in; raises ReleaseError."""
    template = (PLATFORM_FILES / "setup.sh").read_text(encoding="utf-8")
    if template.count("@python_minimum@") != 1:
        raise ReleaseError(f"{PLATFORM_FILES / 'setup.sh'}: keep exactly one @python_minimum@, where "
                           "the kit's minimum Python goes")
    return template.replace("@python_minimum@", python)


def build_gradescope(kit: Path, bundle: Path, tests: list[SuiteTest] | None = None,
                     sealed: bool = True) -> None:
    """autograder.zip: run_autograder, setup.sh and grade_submission.py at the top, the grader
    beside them (no staff tool: a submission goes through the grader's own intake), the
    reference in solutions/ and a secret of the bundle's own in grading.secret. The bundle is
    written beside where it goes and renamed into place, on any file system. `tests` and
    `sealed` are as for `build_student`. Raises ReleaseError."""
    if bundle.suffix != ".zip":
        raise ReleaseError(f"{bundle}: Gradescope takes a .zip; name the output autograder.zip")
    if bundle.exists():
        raise ReleaseError(f"{bundle} already exists; remove it or choose another name")
    bundle.parent.mkdir(parents=True, exist_ok=True)
    grading = parse(kit / "grading.toml")
    tests = collect(kit) if tests is None else tests
    with tempfile.TemporaryDirectory() as scratch:
        staging = Path(scratch) / "source"
        staging.mkdir()
        copy_package(kit, staging, tests, set(grading.parts))
        shutil.copyfile(kit / "grading.toml", staging / "grading.toml")
        (staging / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
        (staging / "requirements.txt").write_text(gradescope_requirements(kit), encoding="utf-8")
        (staging / "setup.sh").write_text(gradescope_setup(python_minimum(kit)), encoding="utf-8")
        for name in ("run_autograder", "grade_submission.py"):
            shutil.copyfile(PLATFORM_FILES / name, staging / name)
        if sealed:
            seal(staging, kit / "solutions")  # the reference passes every suite it ships with
            (staging / SEALED).unlink()  # every grading asks its own questions: the public answers are no use
        (staging / "solutions").mkdir()
        for path in sorted((kit / "solutions").glob("*.py")):
            shutil.copyfile(path, staging / "solutions" / path.name)
        make_secret(staging / BUNDLE_SECRET)
        # Beside the bundle, not in the scratch folder, which may be on another file system.
        partial = bundle.parent / f".{bundle.name}.{secrets.token_hex(4)}"
        try:
            write_zip(staging, partial)
            partial.replace(bundle)  # all or nothing
        finally:
            partial.unlink(missing_ok=True)


def write_zip(staging: Path, partial: Path) -> None:
    """Zip the folder `staging` into `partial`, as Gradescope unpacks it: the same bytes for the
    same files (fixed dates), the scripts executable, the reference and the secret private."""
    with zipfile.ZipFile(partial, "x", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(staging.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts:
                continue
            info = zipfile.ZipInfo(path.relative_to(staging).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            executable = path.name in ("setup.sh", "run_autograder")
            private = path.name == BUNDLE_SECRET.name or "solutions" in path.relative_to(staging).parts
            info.external_attr = (0o755 if executable else 0o600 if private else 0o644) << 16
            archive.writestr(info, path.read_bytes())
