"""The student's check on Windows and macOS, simulated here (support/laptops.py), against Linux.

Students run `python -m pytest autograder` in the handout on their own laptops, where the Linux
sandbox cannot be had: the kit then runs its workers as plain child processes (portable.py).
Every case below is the handout's own run, from its folder as its README says, once in this
machine's sandbox and once under each simulation, in every process the run starts: the same
score and the same words (every whole message, snippets and graphs included), and a check
that hangs, crashes or prints without end costs its own checks only.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import CORES, EXHAUSTIVE, KIT
from support.corpus import BUGS, Edit, Submission, build
from support.laptops import KINDS, attempts, python_for
from support.shape import GRADED

from autograder.check_results import REPRODUCE_ANYWHERE
from autograder.staff.check import NUMBER

pytestmark = pytest.mark.slow  # grades in processes of its own

MUL = ('other = other if isinstance(other, Value) else Value(other)\n'
       '        out = Value(self.data * other.data, (self, other), "*")')
# A `*` that never answers, in each way a check can fail to: each costs the checks that multiply.
HOSTILE = {
    "spins": Edit("value", MUL, "while True:\n            pass"),
    "sleeps": Edit("value", MUL, "import time\n        time.sleep(10_000)"),
    "exits": Edit("value", MUL, "import os\n        os._exit(3)"),
    "crashes": Edit("value", MUL, "import ctypes\n        ctypes.string_at(0)"),
    "prints-forever": Edit("value", MUL, "while True:\n            print('again and again')"),
}
ONE_BUG = ("mul-assigns-instead-of-adding", "quotient-rule-sign", "unbroadcast-drops-keepdims",
           "dual-default-derivative-one")
MORE_BUGS = ("backward-recursive-without-sort", "tanh-through-exp-2x", "relu-gate-on-the-wrong-side",
             "zero-grad-on-leaves-only")
# On the simulated Windows: the stubs, the reference, a bug of each engine and every way of not
# answering; on the simulated macOS, one of each kind. --exhaustive: every case on both.
EVERY_CASE = ("stubs", "reference", *ONE_BUG, *MORE_BUGS, *HOSTILE)
CASES = {"windows": EVERY_CASE if EXHAUSTIVE else ("stubs", "reference", *ONE_BUG, *HOSTILE),
         "macos": EVERY_CASE if EXHAUSTIVE else ("reference", "quotient-rule-sign", "spins", "crashes")}
# pytest's last line says how long the run took, padded to the terminal's width with `=`.
TIMING = re.compile(r"^=+ (.+?) in [\d.]+s(?: \([\d:]+\))? =+$", re.MULTILINE)


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("student") / "handout"
    done = subprocess.run([sys.executable, "-m", "autograder.staff.cli", "release", "student", "-o",
                           str(out)], cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def files_of(case: str, scratch: Path) -> Path:
    if case == "stubs":
        return KIT / "assignments"
    if case == "reference":
        return KIT / "solutions"
    submission = (Submission(case, (HOSTILE[case],)) if case in HOSTILE
                  else next(bug for bug in BUGS if bug.name == case))
    build(submission, KIT / "solutions", scratch / case)
    return scratch / case


def student_run(handout: Path, python: Path, files: Path, where: Path, env: dict | None = None) -> str:
    """`python -m pytest autograder --messages full` in a copy of the handout at `where` whose
    assignments/ holds `files`: what it printed from the collection on (the header names the
    platform), its timing left out."""
    shutil.copytree(handout, where)
    for engine in GRADED:
        shutil.copyfile(files / f"{engine}.py", where / "assignments" / f"{engine}.py")
    done = subprocess.run([str(python), "-m", "pytest", "autograder", "-p", "no:cacheprovider",
                           "--messages", "full"], cwd=where, capture_output=True, check=False,
                          encoding="utf-8", errors="replace",
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})},
                          timeout=600)
    assert done.returncode in (0, 1), \
        f"{where}: exit {done.returncode}\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
    return TIMING.sub(r"= \1 =", done.stdout[done.stdout.index("collected"):])


@pytest.fixture(scope="module")
def runs(handout: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    """(platform, case) -> what the student's run printed, for every case on Linux (this
    machine's sandbox, the same path as the handout at the same place) and its simulations."""
    root = tmp_path_factory.mktemp("laptops")
    pythons = {"linux": Path(sys.executable), **{kind: python_for(kind, root / kind) for kind in KINDS}}
    cases = {case for kind in KINDS for case in CASES[kind]}
    files = {case: files_of(case, root / "files") for case in cases}
    # One place per case, so that every platform's snippets name the same folder.
    jobs = [("linux", case) for case in sorted(cases)]
    jobs += [(kind, case) for kind in KINDS for case in CASES[kind]]

    def run(job: tuple[str, str]) -> str:
        platform, case = job
        where = root / "runs" / platform / case / "handout"
        text = student_run(handout, pythons[platform], files[case], where)
        return text.replace(str(where), "HANDOUT")

    with ThreadPoolExecutor(max_workers=CORES) as pool:
        printed = dict(zip(jobs, pool.map(run, jobs)))
    printed["logs"] = {kind: attempts(root / kind) for kind in KINDS}
    return printed


def score(text: str) -> str:
    return text[text.index("=== score ==="):]


def lost(text: str) -> list[str]:
    """The lost checks' lines of pytest's progress (`file.py .F.F`)."""
    return re.findall(r"^autograder/suites/\S+ [.FE]+", text, re.MULTILINE)


@pytest.mark.parametrize(("kind", "case"), [(k, c) for k in KINDS for c in CASES[k] if c not in HOSTILE])
def test_a_laptop_grades_as_linux_does_to_the_word(runs, kind, case):
    assert runs[kind, case] == runs["linux", case]


@pytest.mark.parametrize(("kind", "case"), [(k, c) for k in KINDS for c in CASES[k] if c in HOSTILE])
def test_a_check_that_never_answers_costs_the_same_checks_as_on_linux(runs, kind, case):
    on_linux, here = runs["linux", case], runs[kind, case]
    assert score(here) == score(on_linux)
    assert lost(here) == lost(on_linux)
    assert "value.mul" in score(here) and " 0 / 10" in score(here).split("value.mul", 1)[1].splitlines()[0]


def test_the_cases_cost_what_their_bugs_do(runs):
    """The comparison above compares something: the reference and the stubs differ, every bug
    loses points, and every hostile case loses the checks of `*`."""
    total = {case: re.search(r"^total +(\S+) / 100", runs["linux", case], re.MULTILINE)[1]
             for kind in KINDS for case in CASES[kind]}
    assert total["reference"] == "102" and total["stubs"] == "0"
    assert all(float(total[case]) < 102 for case in total if case != "reference"), total


def test_no_simulated_process_reached_for_what_its_platform_lacks(runs):
    assert runs["logs"] == {kind: [] for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_the_simulation_takes_away_what_it_says(kind, tmp_path):
    """The simulations are real: the sandbox cannot start in them, and an import of what the
    platform lacks is refused and logged with the file that asked."""
    python = python_for(kind, tmp_path / kind)
    probe = ("import ctypes\n"
             "try:\n    ctypes.CDLL(None).prctl\nexcept (AttributeError, TypeError):\n    print('no prctl')\n"
             "try:\n    open('/proc/self/status')\nexcept FileNotFoundError:\n    print('no /proc')\n"
             "from autograder import isolation\nprint('portable' if isolation.portable() else 'sandbox')\n")
    done = subprocess.run([str(python), "-c", probe], cwd=KIT, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["no", "prctl", "no", "/proc", "portable"], done.stderr
    child = subprocess.run([str(python), "-I", "-S", "-c", "import sys; print(sys.executable)"],
                           capture_output=True, text=True, check=False)
    assert child.stdout.strip() == str(python)  # what it starts is simulated too, even with -I -S
    if kind == "windows":
        subprocess.run([str(python), "-c", "import resource"], cwd=KIT, capture_output=True, check=False)
        assert [entry[:2] for entry in attempts(tmp_path / kind)] == [("resource", "<string>")]


def test_a_snippet_pasted_where_pytest_ran_prints_what_came_out(runs, handout, tmp_path):
    """Each snippet of a simulated Windows run, pasted into a new Python started in the
    handout's folder (where its README runs pytest), prints the number its message says came out."""
    text = runs["windows", "quotient-rule-sign"]
    blocks = text.split(REPRODUCE_ANYWHERE + "\n")[1:]
    assert len(blocks) == 8
    place = tmp_path / "handout"
    shutil.copytree(handout, place)
    bug = next(bug for bug in BUGS if bug.name == "quotient-rule-sign")
    build(bug, KIT / "solutions", place / "assignments")
    for block in blocks:
        lines = block.splitlines()
        code = "\n".join(line[4:] for line in lines[:next(i for i, line in enumerate(lines)
                                                         if line.strip() and not line.startswith("    "))])
        code = code.replace("HANDOUT", str(place))
        came_out = float(re.search(r"^Came out: \S+ = (\S+)$", block, re.MULTILINE)[1])
        done = subprocess.run([sys.executable, "-c", code], cwd=place, capture_output=True, text=True,
                              check=False, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        printed = [float(n) for n in NUMBER.findall(done.stdout)]
        assert any(math.isclose(n, came_out, rel_tol=1e-9) for n in printed), (code, done.stdout, done.stderr)


def test_a_console_of_another_code_page_and_files_with_crlf_lines(handout, tmp_path):
    """Windows as students have it: files saved with CRLF line ends, and a console whose code
    page cannot print what a submission prints (pytest's output in cp1252): the run goes to its
    score table, scores the CRLF reference in full, and shows the print escaped, not a crash."""
    python = python_for("windows", tmp_path / "windows")
    crlf = tmp_path / "crlf"
    crlf.mkdir()
    for engine in GRADED:
        text = (KIT / "solutions" / f"{engine}.py").read_text(encoding="utf-8")
        (crlf / f"{engine}.py").write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    printing = tmp_path / "prints"
    build(Submission("prints", (Edit("value", "self.grad += other.data * out.grad",
                                     "print('naïve ✓ 🙂'); self.grad = other.data * out.grad"),)),
          KIT / "solutions", printing)
    cp1252 = {"PYTHONIOENCODING": "cp1252"}
    full = student_run(handout, python, crlf, tmp_path / "crlf-run", env=cp1252)
    assert re.search(r"^total +102 / 100", full, re.MULTILINE)
    shown = student_run(handout, python, printing, tmp_path / "prints-run", env=cp1252)
    assert re.search(r"^total +\S+ / 100", shown, re.MULTILINE) and "Your code printed:" in shown


@pytest.mark.parametrize("kind", KINDS)
def test_no_official_grading_is_made_without_the_sandbox(kind, tmp_path):
    """An official grading (the course's secret) refuses to run on plain child processes, and
    says where it can."""
    secret = tmp_path / "grading.secret"
    subprocess.run([sys.executable, "-c", "import sys; from autograder.questions import make_secret; "
                    "make_secret(__import__('pathlib').Path(sys.argv[1]))", str(secret)], check=True)
    done = subprocess.run([str(python_for(kind, tmp_path / kind)), "-m", "pytest", "autograder", "-q",
                           "-p", "no:cacheprovider", f"--submission={KIT / 'solutions'}",
                           f"--reference={KIT / 'solutions'}", f"--grading-secret={secret}"],
                          cwd=KIT, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    said = " ".join((done.stdout + done.stderr).split())
    assert "an official grading runs only in the Linux sandbox" in said and "Grade on Linux" in said


@pytest.mark.parametrize("kind", KINDS)
def test_help_says_what_a_laptops_check_does_not_limit(kind, tmp_path):
    done = subprocess.run([str(python_for(kind, tmp_path / kind)), "-m", "pytest", "autograder", "--help"],
                          cwd=KIT, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    said = " ".join(done.stdout.split())
    assert "On this machine: plain child processes" in said
    assert "it does not limit memory, processes or file sizes" in said
