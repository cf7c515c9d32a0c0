"""The Gradescope bundle, run the way Gradescope runs it, in a copy of its layout.

`autograder release gradescope` builds autograder.zip once. Each test lays out a fresh
/autograder under a temporary folder (AUTOGRADER_ROOT): the bundle unpacked in source/, the
student's files in submission/, the kit's own virtualenv as venv/, and runs run_autograder.
Nothing here reads or writes a real /autograder.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from corpus import BUGS, build
from test_release import only_packages, solution_lines

from autograder import sandbox
from autograder.config import load

KIT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "autograder.staff.cli"]
GRADING = load(KIT / "grading.toml")
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
TEXT, NUMBER = {"type": "string"}, {"type": "number"}

# Gradescope's results.json, as its autograder specification describes it; every entry the kit
# writes must be one of these, and the kit always writes the keys listed as required.
RESULTS_SCHEMA = {
    "type": "object",
    "required": ["score", "tests", "stdout_visibility"],
    "additionalProperties": False,
    "properties": {
        "score": NUMBER, "execution_time": NUMBER, "output": TEXT, "output_format": FORMAT,
        "test_output_format": FORMAT, "test_name_format": FORMAT, "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"},
        "leaderboard": {"type": "array", "items": {
            "type": "object", "required": ["name", "value"],
            "properties": {"name": TEXT, "value": {"type": ["number", "string"]},
                           "order": {"enum": ["asc", "desc"]}}}},
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["name", "score", "max_score", "status", "output", "tags", "visibility"],
            "additionalProperties": False,
            "properties": {
                "score": NUMBER, "max_score": NUMBER, "status": {"enum": ["passed", "failed"]},
                "name": TEXT, "name_format": FORMAT, "number": TEXT, "output": TEXT,
                "output_format": FORMAT, "tags": {"type": "array", "items": TEXT},
                "visibility": VISIBILITY, "extra_data": {"type": "object"}}}},
    },
}


def hand_check(value: object, schema: dict, where: str = "results") -> None:
    """The part of JSON Schema that RESULTS_SCHEMA uses, for a machine without jsonschema."""
    kinds = {"object": dict, "array": list, "string": str, "number": (int, float)}
    wanted = schema.get("type")
    if wanted is not None:
        options = wanted if isinstance(wanted, list) else [wanted]
        assert any(isinstance(value, kinds[k]) and not isinstance(value, bool) for k in options), where
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r}"
    if isinstance(value, dict):
        assert set(schema.get("required", [])) <= set(value), f"{where}: missing keys"
        if schema.get("additionalProperties") is False:
            assert set(value) <= set(schema["properties"]), f"{where}: unknown keys"
        for key, item in value.items():
            if key in schema.get("properties", {}):
                hand_check(item, schema["properties"][key], f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            hand_check(item, schema["items"], f"{where}[{index}]")


def validate(results: dict) -> None:
    try:
        import jsonschema
    except ImportError:
        hand_check(results, RESULTS_SCHEMA)
    else:
        jsonschema.validate(results, RESULTS_SCHEMA)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    done = subprocess.run(CLI + ["release", "gradescope", "-o", str(path)],
                          cwd=KIT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture(scope="module")
def image_env(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What Python can import in Gradescope's image: the bundle's requirements.txt, no more."""
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


def run_autograder(root: Path, env: dict) -> tuple[dict, str]:
    done = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **env, "AUTOGRADER_ROOT": str(root)}, check=False)
    assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    validate(results)
    return results, done.stdout + done.stderr


def submit(root: Path, files: Path, under: str = "") -> None:
    target = root / "submission" / under
    target.mkdir(parents=True, exist_ok=True)
    for path in files.glob("*.py"):
        shutil.copyfile(path, target / path.name)


def by_part(results: dict) -> dict[str, dict]:
    return {test["tags"][0]: test for test in results["tests"]}


def test_the_bundle_has_gradescope_files_on_top_and_no_solutions(bundle):
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        texts = {name: archive.read(name).decode("utf-8", "replace") for name in names}
    assert {"setup.sh", "run_autograder", "requirements.txt", "grading.toml"} <= set(names)
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    assert not [name for name in names if name.startswith(("solutions/", "assignments/", "tests/"))]
    secrets = (("Value.__mul__", "value"), ("Value.backward", "value"), ("unbroadcast", "tensor"))
    for function, engine in secrets:
        for name, text in texts.items():
            assert not [line for line in solution_lines(function, engine) if line in text], name
    pinned = {line.partition("==")[0] for line in texts["requirements.txt"].splitlines() if "==" in line}
    assert {"numpy", "pytest"} <= pinned


def test_the_bundle_seals_every_answer(bundle, sealed_reference):
    with zipfile.ZipFile(bundle) as archive:
        sealed = json.loads(archive.read("autograder/reference.json"))
    assert set(sealed) == set(json.loads(sealed_reference.path.read_text(encoding="utf-8")))


def test_a_submission_gets_one_entry_per_part(layout, image_env, autograde, tmp_path):
    bug = next(b for b in BUGS if "value.stability" in b.loses)
    build(bug, KIT / "solutions", tmp_path / "bug")
    submit(layout, tmp_path / "bug")
    results, log = run_autograder(layout, image_env)
    entries = by_part(results)
    assert list(entries) == list(GRADING.parts)
    for part in GRADING.parts.values():
        entry = entries[part.id]
        assert (entry["name"], entry["max_score"], entry["visibility"]) == (part.title, part.points,
                                                                          part.visibility)
        assert entry["status"] == ("passed" if entry["score"] == part.points else "failed")
    expected = {part: entry["score"] for part, entry in autograde(tmp_path / "bug").items()}
    assert {part: entry["score"] for part, entry in entries.items()} == expected
    assert {part for part, entry in entries.items() if entry["status"] == "failed"} == set(bug.loses)
    assert results["stdout_visibility"] == "hidden"
    assert "score" in log  # the score table goes to stdout, which only staff see


def test_files_uploaded_in_a_folder_are_found(layout, image_env):
    submit(layout, KIT / "solutions", under="my-work/engine")
    results, _ = run_autograder(layout, image_env)
    assert results["score"] == sum(part.points for part in GRADING.parts.values())


def test_a_grader_that_crashes_still_leaves_a_zero_with_a_reason(layout, image_env):
    submit(layout, KIT / "solutions")
    (layout / "source" / "grading.toml").write_text("[parts\n", encoding="utf-8")
    results, log = run_autograder(layout, image_env)
    assert results["score"] == 0 and results["tests"] == []
    assert "pytest exit status" in results["output"] and "not your fault" in results["output"]
    assert "grading.toml" in log


def test_a_missing_python_still_leaves_a_zero_with_a_reason(layout, image_env):
    (layout / "venv").unlink()
    results, _ = run_autograder(layout, image_env)
    assert results["score"] == 0 and "not set up" in results["output"]


def test_the_kit_and_the_results_are_closed_to_other_accounts(layout, image_env):
    submit(layout, KIT / "solutions")
    run_autograder(layout, image_env)
    for name in ("source", "submission", "results"):
        assert stat.S_IMODE((layout / name).stat().st_mode) == 0o700, name


PEEK = '''
import os

try:
    with open({path!r}) as sealed:
        sealed.read(1)
except OSError:
    pass
else:  # the sealed answers were readable: give the theft away by breaking __mul__
    Value.__mul__ = lambda self, other: None
'''


@pytest.mark.skipif(sandbox.level() == "limits",
                    reason="not root here, so student code runs as this account and can read its files")
def test_student_code_cannot_read_the_sealed_answers(layout, image_env):
    submit(layout, KIT / "solutions")
    value = layout / "submission" / "value.py"
    sealed = layout / "source" / "autograder" / "reference.json"
    value.write_text(value.read_text(encoding="utf-8") + PEEK.format(path=str(sealed)), encoding="utf-8")
    results, _ = run_autograder(layout, image_env)
    assert by_part(results)["value.mul"]["score"] == GRADING.parts["value.mul"].points


def test_setup_sh_is_valid_bash(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as archive:
        archive.extract("setup.sh", tmp_path)
    done = subprocess.run(["bash", "-n", str(tmp_path / "setup.sh")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
