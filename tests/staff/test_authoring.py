"""An instructor adapts the kit, as docs/authoring.md says, on a copy of it.

Each change is made with at most one command plus the code an author means to write; then
`autograder check` says nothing but its cost report, the reference scores full marks and the
stubs zero, in the changed copy, and where the change is new to the kit (an operation as a
part, an engine removed) every release is built from it and `autograder mutate` runs on it.
A change `check` must refuse is refused, one line each naming the file and the fix, and no
command ends in a traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.kit_copy import (
    autograder,
    consistent,
    copy_of_the_kit,
    problems,
    set_key,
    totals,
    warnings,
)

pytestmark = pytest.mark.slow  # each change grades the reference and the stubs more than once


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    return copy_of_the_kit(tmp_path / "kit")


def test_the_kit_as_it_is_is_consistent(kit):
    consistent(kit)


def test_points_and_visibility_are_one_file(kit):
    toml = kit / "grading.toml"
    set_key(toml, 'parts."value.mul"', "points", "12")
    set_key(toml, 'parts."value.stability"', "points", "0")
    set_key(toml, 'parts."value.stability"', "visibility", '"after_due_date"')
    consistent(kit)
    assert totals(kit, "solutions") == (102.0, 100.0)  # 100 - 2 + 2, and the bonus
    set_key(toml, 'parts."value.stability"', "points", "2")  # a hidden part with points hides totals
    done = autograder(kit, "check")
    assert done.returncode == 0 and not problems(done) and len(warnings(done)) == 1  # allowed, and said
    assert warnings(done)[0].startswith("grading.toml: part 'value.stability' is after_due_date and worth 2 "
                                        "points")


def test_making_relu_given_is_one_command(kit):
    done = autograder(kit, "part", "given", "value.relu")
    assert done.returncode == 0, done.stdout
    assert not (kit / "autograder" / "suites" / "test_value_relu.py").exists()
    assert "def relu" in (kit / "assignments" / "value.py").read_text(encoding="utf-8")
    assert "TODO(value.relu)" not in (kit / "assignments" / "value.py").read_text(encoding="utf-8")
    assert "relu-gate" not in (kit / "tests" / "support" / "corpus.py").read_text(encoding="utf-8")
    consistent(kit)
    assert totals(kit, "solutions") == (96.0, 94.0)


def test_adding_exp_as_a_stub_part_is_one_command_and_a_docstring(kit, tmp_path):
    done = autograder(kit, "part", "new", "value.exp", "Value.exp", "--points", "4", "--title",
                      "Value.exp: its own derivative", "--todo", "e**x and its derivative")
    assert done.returncode == 0, done.stdout
    said = autograder(kit, "check").stdout
    assert "the stub Value.exp has no docstring" in said, said
    # What the author writes: the stub's docstring.
    solution = kit / "solutions" / "value.py"
    docstring = '        """Return e**self. Rule: d e**x/dx = e**x, the output itself."""\n'
    solution.write_text(solution.read_text(encoding="utf-8").replace(
        "    def exp(self) -> Value:\n", "    def exp(self) -> Value:\n" + docstring), encoding="utf-8")
    assert autograder(kit, "stubs").returncode == 0
    consistent(kit)
    assert totals(kit, "solutions") == (106.0, 104.0)
    # One bug in exp costs value.exp and the training it is used in, and nothing else.
    bug = tmp_path / "bug"
    shutil.copytree(kit / "solutions", bug)
    text = (bug / "value.py").read_text(encoding="utf-8")
    old = "self.grad += out.data * out.grad"
    assert text.count(old) == 1
    (bug / "value.py").write_text(text.replace(old, "self.grad += self.data * out.grad"), encoding="utf-8")
    results = kit / "bug.json"
    subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                    f"--submission={bug}", "--reference=solutions", f"--results-json={results}"],
                   cwd=kit, capture_output=True, text=True, check=False)
    lost = {t["tags"][0] for t in json.loads(results.read_text(encoding="utf-8"))["tests"]
            if t["score"] < t["max_score"]}
    assert lost == {"value.exp", "value.training"}


def test_changing_the_moons_task_is_caught_in_the_title_and_the_suites_prose(kit):
    suite = kit / "autograder" / "suites" / "test_value_training.py"
    text = suite.read_text(encoding="utf-8")
    assert text.count("steps=5") == 1 and text.count("hidden=8") == 1 and text.count("for 5\nsteps") == 1
    suite.write_text(text.replace("steps=5", "steps=4").replace("hidden=8", "hidden=16"), encoding="utf-8")
    said = problems(autograder(kit, "check"))
    assert said == ["grading.toml: the title of 'value.training' states ['8', '8'], which its scenarios no "
                    "longer use; bring the title up to date",
                    "autograder/suites/test_value_training.py: its docstring states ['5'], which the "
                    "scenarios of value.training no longer use; bring it up to date"], said
    toml = kit / "grading.toml"
    set_key(toml, 'parts."value.training"', "title", '"Training a 2-16-16-1 MLP on make_moons"')
    text = suite.read_text(encoding="utf-8")
    suite.write_text(text.replace("for 5\nsteps", "for 4\nsteps"), encoding="utf-8")
    consistent(kit)


def test_a_limit_too_tight_for_the_reference_is_refused(kit):
    set_key(kit / "grading.toml", "limits", "time_multiplier", "1.5")
    set_key(kit / "grading.toml", "limits", "time_floor_seconds", "0.001")
    done = autograder(kit, "check")
    assert done.returncode == 1
    assert len(problems(done)) == 1 and "[limits] time_multiplier = 1.5" in problems(done)[0]
    release = autograder(kit, "release", "student", "-o", str(kit / "handout"))
    assert release.returncode == 1 and "[limits] time_multiplier = 1.5" in release.stderr
    assert not (kit / "handout").exists() and not list(kit.glob(".handout.*"))


def test_a_test_that_asks_too_few_questions_is_refused(tmp_path):
    """A range so narrow that a student could collect every official answer by resubmitting
    fails the reference's grading, and `check` names the test and the fix."""
    kit = copy_of_the_kit(tmp_path / "kit")
    suite = kit / "autograder" / "suites" / "test_dual.py"
    text = suite.read_text(encoding="utf-8")
    assert text.count("ask.whole(-4, -2000, -2)") == 1
    suite.write_text(text.replace("ask.whole(-4, -2000, -2)", "ask.whole(-4, -9, -2)"), encoding="utf-8")
    done = autograder(kit, "check")
    assert done.returncode != 0
    assert "test_a_constant[int] can ask only 7 different questions" in done.stdout + done.stderr


def test_a_misconception_id_with_a_typo_is_named_before_any_student_hits_it(tmp_path):
    """A suspect's id that the catalogue does not list used to crash the grading of the first
    buggy submission that matched it; `check` names it, with the suite it is in."""
    kit = copy_of_the_kit(tmp_path / "kit")
    suite = kit / "autograder" / "suites" / "test_dual.py"
    text = suite.read_text(encoding="utf-8")
    old = 'suspects={"dual-constant-derivative": lambda e, g: g.observations["der"] == 1}'
    assert text.count(old) == 1
    suite.write_text(text.replace(old, old.replace("derivative", "derivativ")), encoding="utf-8")
    done = autograder(kit, "check")
    assert done.returncode != 0
    assert ("autograder/suites/test_dual.py: a test names misconception 'dual-constant-derivativ', which "
            "autograder/misconceptions.py does not list") in done.stdout + done.stderr


@pytest.mark.parametrize(("line", "said"), [
    ("raise NotImplementedError('the rest of this suite')", "NotImplementedError"),  # a suite that raises
    ("import numpyy as np", "ModuleNotFoundError"),  # an import that fails
])
def test_a_suite_that_does_not_collect_is_named_with_pytests_words(kit, line, said):
    """check says pytest's own words about the suite that does not collect (pytest's traceback of
    the suite's import among them), in place of the rest, which would have nothing to read: one
    finding, and no traceback of the kit's own."""
    suite = kit / "autograder" / "suites" / "test_value_relu.py"
    suite.write_text(f"{line}\n{suite.read_text(encoding='utf-8')}", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "autograder.staff.cli", "check"], cwd=kit,
                          capture_output=True, text=True, check=False)
    assert "Traceback (most recent call last)" not in done.stdout + done.stderr, done.stdout + done.stderr
    found = problems(done)
    assert done.returncode == 1 and len(found) == 1, done.stdout + done.stderr
    assert found[0].startswith(f"collecting the suites of {kit / 'autograder'} failed; fix what pytest says:")
    assert "test_value_relu.py" in done.stdout and said in done.stdout, done.stdout
