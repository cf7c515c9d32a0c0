"""The student release: no solution, no hidden test, no hidden answer, and the same grades.

The default grading.toml shows every part at once; this course hides one until the due date
(`value.stability`, as a grading.toml may), so that the release has something to leave out.
The release is built once from a copy of this kit with that grading.toml, by `autograder
release student`, then searched as
a student would unpack it, and run with nothing but the standard library, numpy and pytest
importable: on the stubs, on the reference copied in as the student's files, and on buggy
submissions from the corpus, each scoring on every visible part what the full kit gives.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from support import KIT
from support.corpus import BUGS, build
from support.releases import (
    AFTER_THE_DUE_DATE,
    CLI,
    GRADING,
    VISIBLE,
    kit_with_visibility,
    run,
    solution_lines,
)
from support.shape import GRADED

from autograder.config import load
from autograder.staff.check import answers_handed_out
from autograder.staff.release import (
    SEALED,
    ReleaseError,
    SuiteTest,
    collect,
    only_parts,
    plan_suites,
    prune,
)
from autograder.stubs import stubs_by_part


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    kit = kit_with_visibility(tmp_path_factory.mktemp("kit"), {AFTER_THE_DUE_DATE: "after_due_date"})
    out = tmp_path_factory.mktemp("student") / "handout"
    done = run(CLI + ["release", "student", "-o", str(out)], kit)  # the copy's own autograder package
    assert done.returncode == 0, done.stderr
    return out


def release_texts(release: Path) -> dict[Path, str]:
    return {path.relative_to(release): path.read_text(encoding="utf-8", errors="replace")
            for path in release.rglob("*") if path.is_file()}


# Every stub with a line of its own (a reflected form such as Dual.__radd__ is one short line).
STUBS_WITH_OWN_LINES = [(function, engine) for found in stubs_by_part(KIT / "solutions").values()
                        for engine, function in found if solution_lines(function, engine)]


def test_most_stubs_have_lines_of_their_own_to_look_for():
    every = [(function, engine) for found in stubs_by_part(KIT / "solutions").values()
             for engine, function in found]
    short = [function for function, engine in every if (function, engine) not in STUBS_WITH_OWN_LINES]
    assert all(function.rpartition(".")[2].startswith("__r") for function in short), short  # reflected forms
    assert len(STUBS_WITH_OWN_LINES) >= len(every) / 2  # 13 of the kit's 15


@pytest.mark.parametrize(("function", "engine"), STUBS_WITH_OWN_LINES)
def test_no_line_of_the_reference_ships(release, function, engine):
    secrets = solution_lines(function, engine)
    for path, text in release_texts(release).items():
        leaked = sorted(line for line in secrets if line in text)
        assert not leaked, f"{path} holds the reference's {function}: {leaked}"
    assert not (release / "solutions").exists()


def test_only_the_visible_suites_ship(release):
    kit_tests = collect(KIT)
    shipped = collect(release)
    assert {t.part for t in shipped} == {t.part for t in kit_tests} & VISIBLE
    assert {(t.file, t.name) for t in shipped} == {(t.file, t.name) for t in kit_tests if t.part in VISIBLE}
    hidden = [t for t in kit_tests if t.part not in VISIBLE]
    assert hidden, "the kit has no hidden test, so this test proves nothing; add one or drop this test"
    hidden_files = {t.file.name for t in hidden} - {t.file.name for t in kit_tests if t.part in VISIBLE}
    texts = release_texts(release)
    for path, text in texts.items():
        assert path.name not in hidden_files
        for test in hidden:
            assert test.name not in text, f"{path} names the hidden test {test.name}"
    assert not (release / "autograder" / "staff").exists()


def seal_kit_tests(tests: list[SuiteTest], out: Path) -> set[str]:
    """The scenario keys that running these tests of the kit against solutions/ seals."""
    done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                *sorted({f"{t.file.as_posix()}::{t.name}" for t in tests}),
                "--submission=" + str(KIT / "solutions"), f"--seal-reference={out}"], KIT)
    assert done.returncode == 0, done.stdout[-3000:]
    return set(json.loads(out.read_text(encoding="utf-8"))["answers"])


def test_the_sealed_file_answers_the_visible_scenarios_only(release, tmp_path):
    sealed = set(json.loads((release / SEALED).read_text(encoding="utf-8"))["answers"])
    kit_tests = collect(KIT)
    visible = seal_kit_tests([t for t in kit_tests if t.part in VISIBLE], tmp_path / "visible.json")
    hidden = seal_kit_tests([t for t in kit_tests if t.part not in VISIBLE], tmp_path / "hidden.json")
    assert sealed == visible
    assert hidden - visible, "every hidden scenario is also a visible one, so nothing is hidden"
    assert not sealed & (hidden - visible)


def test_grading_toml_keeps_the_visible_parts(release):
    kept = load(release / "grading.toml")
    assert set(kept.parts) == VISIBLE
    assert kept.tolerances == GRADING.tolerances and kept.limits == GRADING.limits
    readme = (release / "README.md").read_text(encoding="utf-8")
    for part in kept.parts.values():
        assert f"| `{part.id}` | {part.title} |" in readme
    assert "python -m pytest autograder" in readme
    later = GRADING.parts[AFTER_THE_DUE_DATE]
    assert (f"Besides these, `{later.id}` ({later.points:g} points) is graded by tests that are not in this "
            "handout, shown to you after the due date.") in readme


def grade(folder: Path, results: Path, *options: str, env: dict | None = None) -> dict[str, float]:
    done = run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                f"--results-json={results}", *options], folder, env)
    assert done.returncode in (0, 1) and results.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return {t["tags"][0]: t["score"] for t in json.loads(results.read_text(encoding="utf-8"))["tests"]}


def submissions(tmp_path: Path) -> dict[str, Path]:
    """The stubs, the reference, and two corpus bugs that cost visible parts."""
    chosen = {"stubs": KIT / "assignments", "reference": KIT / "solutions"}
    for bug in [b for b in BUGS if b.loses & VISIBLE][:2]:
        build(bug, KIT / "solutions", tmp_path / bug.name)
        chosen[bug.name] = tmp_path / bug.name
    return chosen


def test_the_release_grades_as_the_kit_with_numpy_and_pytest_only(release, student_env, tmp_path):
    for name, files in submissions(tmp_path).items():
        handout = tmp_path / f"handout-{name}"
        shutil.copytree(release, handout)
        for engine in GRADED:
            shutil.copyfile(files / f"{engine}.py", handout / "assignments" / f"{engine}.py")
        in_release = grade(handout, tmp_path / f"{name}-release.json", env=student_env)
        in_kit = grade(KIT, tmp_path / f"{name}-kit.json", f"--submission={files}")
        assert set(in_release) == VISIBLE
        assert in_release == {part: in_kit[part] for part in VISIBLE}, name
        if name == "reference":
            assert in_release == {part: GRADING.parts[part].points for part in VISIBLE}
        elif name == "stubs":
            assert not any(in_release.values())
        else:
            assert any(in_release[part] < GRADING.parts[part].points for part in VISIBLE)


def test_the_blocker_blocks(release, student_env):
    done = run([sys.executable, "-c", "import sklearn"], release, student_env)
    assert "sklearn is installed here, but not where the kit is tried" in done.stderr


def test_the_kit_never_stands_in_for_a_file_the_release_lacks(release, student_env, tmp_path):
    handout = tmp_path / "handout"
    shutil.copytree(release, handout)
    (handout / "autograder" / "misconceptions.py").unlink()
    done = run([sys.executable, "-c", "import autograder.misconceptions"], handout, student_env)
    assert "No module named 'autograder.misconceptions'" in done.stderr


# -- the pieces, on small made-up inputs -----------------------------------------------------------

SUITE = textwrap.dedent('''\
    import pytest

    SHOWN = {"a": 1}
    SECRET = {"b": 2}


    def shown_helper(expected, got):
        return True


    def secret_helper(expected, got):
        return SECRET


    @pytest.mark.part("shown")
    def test_shown(grade):
        grade("value:x", suspects=SHOWN, check=shown_helper)


    @pytest.mark.part("secret")
    @pytest.mark.parametrize("x", [1, 2])
    def test_secret(grade, x):
        grade("value:y", x=x, check=secret_helper)
    ''')


def test_prune_cuts_a_hidden_test_and_the_helpers_only_it_used():
    pruned = prune(SUITE, {"test_secret"}, Path("suite.py"))
    ast.parse(pruned)
    for gone in ("test_secret", "secret_helper", "SECRET", '"secret"'):
        assert gone not in pruned
    for kept in ("test_shown", "shown_helper", "SHOWN = ", "import pytest"):
        assert kept in pruned


def test_plan_leaves_out_hidden_files_and_refuses_mixed_tests():
    tests = [SuiteTest(Path("a.py"), "test_1", "shown"), SuiteTest(Path("b.py"), "test_2", "secret"),
             SuiteTest(Path("c.py"), "test_3", "shown"), SuiteTest(Path("c.py"), "test_4", "secret")]
    assert plan_suites(tests, {"shown"}) == {Path("a.py"): None, Path("c.py"): {"test_4"}}
    with pytest.raises(ReleaseError, match="d.py: test_5"):
        plan_suites([SuiteTest(Path("d.py"), "test_5", "shown"), SuiteTest(Path("d.py"), "test_5", "secret")],
                    {"shown"})


def test_only_parts_keeps_the_rest_of_grading_toml():
    text = (KIT / "grading.toml").read_text(encoding="utf-8")
    cut = only_parts(text, {"value.mul"})
    assert '[parts."value.mul"]' in cut and '[parts."value.tanh"]' not in cut
    assert "[tolerances]" in cut and "[limits]" in cut


def test_every_stub_names_its_part():
    parts = stubs_by_part(KIT / "solutions")
    assert parts and set(parts) <= set(GRADING.parts)
    assert parts["value.mul"] == [("value", "Value.__mul__")]


def test_no_line_of_the_student_files_answers_a_stub(tmp_path):
    """Given code, a docstring or a hint comment that holds a line of a stub's answer is named."""
    assert answers_handed_out(KIT) == []
    kit = tmp_path / "kit"
    for folder in ("assignments", "solutions"):
        shutil.copytree(KIT / folder, kit / folder)
    tensor = kit / "assignments" / "tensor.py"
    # A given walk of the graph, as the reference's zero_grad writes it.
    tensor.write_text(tensor.read_text(encoding="utf-8") + textwrap.dedent("""

        def walk(root):
            seen: set[Value] = set()
            return seen
        """), encoding="utf-8")
    value = kit / "assignments" / "value.py"
    hint = "# TODO(value.mul): the product rule, for a Value or a plain number"
    value.write_text(value.read_text(encoding="utf-8").replace(
        hint, hint + "  # hint: self.grad += other.data * out.grad"), encoding="utf-8")
    answered = answers_handed_out(kit)
    assert len(answered) == 2, answered
    assert answered[0].startswith("assignments/tensor.py, line ") and answered[0].endswith(
        "hands out a line of the answer to Value.zero_grad (value.zero_grad): seen: set[Value] = set(); "
        "rewrite it")
    assert answered[1].startswith("assignments/value.py, line ") and "Value.__mul__ (value.mul): " \
        "self.grad += other.data * out.grad" in answered[1]


def test_nothing_a_submission_goes_through_imports_a_staff_tool():
    # Releases and the Gradescope bundle leave autograder/staff/ out, so the grader (the
    # package, its suites, and the platform's entry point) must never reach into it.
    package = KIT / "autograder"
    grader = [path for path in package.rglob("*.py") if "staff" not in path.relative_to(package).parts]
    grader.append(package / "staff" / "platform_files" / "grade_submission.py")
    reaching = []
    for path in grader:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or "", *(alias.name for alias in node.names)]
                     if isinstance(node, ast.ImportFrom) else [])
            if any("staff" in name.split(".") for name in names):
                reaching.append(f"{path.relative_to(KIT)}:{node.lineno}")
    assert len(grader) > 10 and not reaching


@pytest.mark.slow  # four releases, each a process of its own
def test_no_release_carries_the_course_secret(tmp_path):
    """The course's secret, which the official questions of bulk and nbgrader are drawn under,
    is in no handout, no classroom repository, no nbgrader source and no Gradescope bundle (which
    makes a secret of its own)."""
    kit = kit_with_visibility(tmp_path / "kit", {"value.mul": "visible"})
    done = run(CLI + ["secret"], kit)
    assert done.returncode == 0, done.stderr
    secret = (kit / "grading.secret").read_text(encoding="utf-8").strip()
    done = run(CLI + ["release", "all", "-o", str(tmp_path / "out")], kit)
    assert done.returncode == 0, done.stderr
    shutil.unpack_archive(tmp_path / "out" / "autograder.zip", tmp_path / "out" / "bundle")
    released = [path for name in ("student", "classroom", "nbgrader", "bundle")
                for path in (tmp_path / "out" / name).rglob("*") if path.is_file()]
    assert {path.relative_to(tmp_path / "out").parts[0] for path in released} == {
        "student", "classroom", "nbgrader", "bundle"}
    assert any(path.name == "grading.secret" for path in released)  # the bundle's own
    assert not [path for path in released if secret.encode() in path.read_bytes()]


def test_the_handout_carries_the_students_guide_and_nothing_compiled(release):
    """The handout's README links docs/students.md and names the options a student needs; no
    file compiled while the answers were sealed ships."""
    guide = release / "docs" / "students.md"
    assert guide.read_text(encoding="utf-8") == (KIT / "docs" / "students.md").read_text(encoding="utf-8")
    readme = (release / "README.md").read_text(encoding="utf-8")
    assert "(docs/students.md)" in readme
    assert all(option in readme for option in ("--part value.mul", "--messages full", "--repro"))
    assert not [path for path in release.rglob("*") if path.name == "__pycache__" or path.suffix == ".pyc"]
