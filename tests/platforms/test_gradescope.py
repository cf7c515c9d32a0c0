"""The Gradescope bundle, run the way Gradescope runs it, in a copy of its layout.

`autograder release gradescope` builds autograder.zip once. Each test lays out a fresh
/autograder under a temporary folder (AUTOGRADER_ROOT): the bundle unpacked in source/, the
student's files in submission/, the kit's own virtualenv as venv/, and runs run_autograder.
setup.sh runs with stand-in Pythons and apt-get that only record what they are asked.
Nothing here reads or writes a real /autograder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from support import KIT
from support.corpus import BUGS, build
from support.gradescope import PEEK, by_part, run_autograder, submit
from support.hostile import at_a_level
from support.releases import solution_lines

from autograder import sandbox
from autograder.config import load
from autograder.staff.release import python_minimum

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

CLI = [sys.executable, "-m", "autograder.staff.cli"]
GRADING = load(KIT / "grading.toml")
def test_the_bundle_has_gradescope_files_on_top_and_the_reference_only_in_solutions(bundle):
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        texts = {name: archive.read(name).decode("utf-8", "replace") for name in names}
    assert {"setup.sh", "run_autograder", "grade_submission.py", "requirements.txt",
            "grading.toml"} <= set(names)
    # none of the staff tools: the intake a submission goes through is the grader's own
    assert not [name for name in names if "/staff/" in name]
    assert "autograder/intake/__init__.py" in names
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    assert not [name for name in names if name.startswith(("assignments/", "tests/"))]
    secrets = (("Value.__mul__", "value"), ("Value.backward", "value"), ("unbroadcast", "tensor"))
    for function, engine in secrets:
        for name, text in texts.items():
            if name != f"solutions/{engine}.py":
                assert not [line for line in solution_lines(function, engine) if line in text], name
    pinned = {line.partition("==")[0] for line in texts["requirements.txt"].splitlines() if "==" in line}
    assert {"numpy", "pytest"} <= pinned


def test_the_bundle_holds_the_reference_and_a_secret_of_its_own_and_no_answers(bundle, tmp_path):
    """Every grading asks its own questions: the reference answers them, and sealed answers to the
    public ones would only be a table to copy. Two bundles have two secrets."""
    other = tmp_path / "other.zip"
    done = subprocess.run(CLI + ["release", "gradescope", "-o", str(other)], cwd=KIT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(bundle) as archive, zipfile.ZipFile(other) as second:
        names = set(archive.namelist())
        assert "autograder/reference.json" not in names
        for path in sorted((KIT / "solutions").glob("*.py")):
            assert archive.read(f"solutions/{path.name}") == path.read_bytes()
            assert archive.getinfo(f"solutions/{path.name}").external_attr >> 16 & 0o077 == 0
        secret = archive.read("grading.secret")
        assert len(secret.strip()) >= 32
        assert archive.getinfo("grading.secret").external_attr >> 16 & 0o077 == 0
        assert secret != second.read("grading.secret")


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
    assert "exit status" in results["output"] and "not your fault" in results["output"]
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


@pytest.mark.skipif(sandbox.level() != "isolated",
                    reason="the root levels are simulated from root with CAP_SYS_ADMIN (test_isolation.py)")
@at_a_level
def test_student_code_cannot_read_the_reference_or_the_secret(layout, image_env, level, tmp_path):
    """As Gradescope runs it (root; `container`: without CAP_SYS_ADMIN, as in its image), code
    in a submission reads nothing of the bundle's reference, secret, suites or settings."""
    from support.hostile import prefix

    submit(layout, KIT / "solutions")
    value = layout / "submission" / "value.py"
    source = layout / "source"
    peeks = [source / "grading.secret", source / "solutions" / "value.py", source / "grading.toml",
             source / "autograder" / "suites" / "test_value_mul.py"]
    assert all(path.is_file() for path in peeks)
    value.write_text(value.read_text(encoding="utf-8") + "".join(PEEK.format(path=str(p)) for p in peeks),
                     encoding="utf-8")
    wrap, extra = prefix(level, tmp_path / "container")
    done = subprocess.run([*wrap, "bash", str(layout / "run_autograder")], cwd=layout, capture_output=True,
                          text=True, env={**os.environ, **image_env, **extra, "AUTOGRADER_ROOT": str(layout)},
                          check=False)
    assert done.returncode == 0, done.stderr
    results = json.loads((layout / "results" / "results.json").read_text(encoding="utf-8"))
    assert by_part(results)["value.mul"]["score"] == GRADING.parts["value.mul"].points, \
        by_part(results)["value.mul"]["output"]


def test_setup_sh_is_valid_bash(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as archive:
        archive.extract("setup.sh", tmp_path)
    done = subprocess.run(["bash", "-n", str(tmp_path / "setup.sh")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


# -- the totals students see -------------------------------------------------------------------------

def test_the_default_grading_toml_leaves_every_student_their_total():
    """Gradescope shows no total while a test is not yet shown: every part with points is visible."""
    assert [part.id for part in GRADING.parts.values() if part.points and part.visibility != "visible"] == []
    text = (KIT / "grading.toml").read_text(encoding="utf-8")
    docs = (KIT / "docs" / "platforms.md").read_text(encoding="utf-8")
    for visibility in ("visible", "after_due_date", "after_published", "hidden"):
        assert f'"{visibility}"' in text and f"`{visibility}`" in docs, visibility
    assert "total" in text and "total" in docs


# -- one intake for every path -------------------------------------------------------------------------

def messy(files: Path, target: Path) -> None:
    """The files as students upload them: a folder one level down, `Value.py` with a byte-order
    mark and Windows line endings, `tensor.py` with Windows line endings, dual as a notebook."""
    folder = target / "Lab 3"
    folder.mkdir(parents=True)
    value = (files / "value.py").read_text(encoding="utf-8").replace("\n", "\r\n")
    (folder / "Value.py").write_bytes(b"\xef\xbb\xbf" + value.encode("utf-8"))
    (folder / "tensor.py").write_bytes((files / "tensor.py").read_text(encoding="utf-8")
                                       .replace("\n", "\r\n").encode("utf-8"))
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Forward mode"),
        nbformat.v4.new_code_cell((files / "dual.py").read_text(encoding="utf-8"))])
    nbformat.write(notebook, folder / "dual.ipynb")


def test_a_messy_upload_is_read_as_bulk_reads_it(layout, image_env, tmp_path):
    messy(KIT / "solutions", layout / "submission")
    results, log = run_autograder(layout, image_env)
    assert results["score"] == sum(part.points for part in GRADING.parts.values())
    assert "value.py: taken from Lab 3/Value.py" in results["output"]
    assert "dual.py: taken from Lab 3/dual.ipynb" in results["output"]
    assert "intake: value.py: taken from Lab 3/Value.py" in log  # staff see it in the log too


def test_a_messy_upload_scores_what_its_clean_files_score(layout, image_env, autograde, tmp_path):
    bug = next(b for b in BUGS if "value.mul" in b.loses)
    build(bug, KIT / "solutions", tmp_path / "bug")
    messy(tmp_path / "bug", layout / "submission")
    results, _ = run_autograder(layout, image_env)
    expected = {part: entry["score"] for part, entry in autograde(tmp_path / "bug").items()}
    assert {part: entry["score"] for part, entry in by_part(results).items()} == expected
    assert expected["value.mul"] < GRADING.parts["value.mul"].points


def test_an_empty_upload_says_what_was_missing(layout, image_env):
    results, _ = run_autograder(layout, image_env)
    assert results["score"] == 0 and len(results["tests"]) == len(GRADING.parts)
    assert "the folder is empty" in results["output"]


# -- setup.sh: which Python ----------------------------------------------------------------------------

FAKE_PYTHON = """#!/bin/sh
# Python {version}, as far as setup.sh asks: its version, a venv, pip.
echo "$(basename "$0") $*" >> {log}
case "$1" in
  -c) exec {real} -c "import sys; sys.version_info = ({major}, {minor}, 0)
$2" ;;
  --version) echo "Python {version}.0" ;;
  -m) if [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi ;;
esac
"""

FAKE_APT = """#!/bin/sh
# apt-get: installing a package of {pool} puts it on the PATH
echo "apt-get $*" >> {log}
for package in "$@"; do
  if [ -f "{pool}/$package" ]; then cp "{pool}/$package" "{bin}/$package"; fi
done
"""


def fake_python(folder: Path, name: str, version: str, log: Path) -> None:
    major, minor = version.split(".")
    path = folder / name
    path.write_text(FAKE_PYTHON.format(version=version, major=major, minor=minor, log=log,
                                       real=sys.executable), encoding="utf-8")
    path.chmod(0o755)


def run_setup(bundle: Path, tmp_path: Path, pythons: dict[str, str]) -> tuple[str, list[str]]:
    """setup.sh in a fresh root, with only these Pythons ({name: "3.N"}) on the PATH and apt
    offering the kit's minimum; the Python the virtualenv came from, and what apt-get was asked."""
    root, bin_dir, pool, log = tmp_path / "root", tmp_path / "bin", tmp_path / "pool", tmp_path / "calls.log"
    (root / "source").mkdir(parents=True)
    bin_dir.mkdir()
    pool.mkdir()
    log.touch()
    minimum = python_minimum(KIT)
    fake_python(pool, f"python{minimum}", minimum, log)
    with zipfile.ZipFile(bundle) as archive:
        archive.extract("setup.sh", root / "source")
    (root / "source" / "requirements.txt").write_text("# nothing to install here\n", encoding="utf-8")
    for tool in ("grep", "sort", "chmod", "mkdir", "cp", "basename"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    for name, version in pythons.items():
        fake_python(bin_dir, name, version, log)
    apt = bin_dir / "apt-get"
    apt.write_text(FAKE_APT.format(log=log, pool=pool, bin=bin_dir), encoding="utf-8")
    apt.chmod(0o755)
    done = subprocess.run([shutil.which("bash"), str(root / "source" / "setup.sh")], capture_output=True,
                          text=True, check=False, env={"PATH": str(bin_dir), "AUTOGRADER_ROOT": str(root)})
    assert done.returncode == 0, done.stdout + done.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    venv = [line.split()[0] for line in calls if " -m venv " in f" {line} "]
    assert len(venv) == 1, calls
    assert any(line.startswith("python -m pip install") for line in calls), calls
    return venv[0], [line for line in calls if line.startswith("apt-get")]


def test_setup_sh_takes_the_kits_python_floor_from_pyproject(bundle):
    minimum = python_minimum(KIT)
    assert re.fullmatch(r"3\.\d+", minimum)
    with zipfile.ZipFile(bundle) as archive:
        setup = archive.read("setup.sh").decode("utf-8")
    assert f'minimum="{minimum}"' in setup
    template = (KIT / "autograder" / "staff" / "platform_files" / "setup.sh").read_text(encoding="utf-8")
    assert not re.search(r"3\.\d", template), "setup.sh states a Python version of its own"


def test_setup_sh_prefers_the_images_own_python3(bundle, tmp_path):
    major, minor = map(int, python_minimum(KIT).split("."))
    python, apt = run_setup(bundle, tmp_path, {"python3": f"{major}.{minor + 1}",
                                               f"python{major}.{minor + 2}": f"{major}.{minor + 2}"})
    assert (python, apt) == ("python3", [])


def test_setup_sh_takes_an_older_python3_for_a_new_enough_one(bundle, tmp_path):
    major, minor = map(int, python_minimum(KIT).split("."))
    python, apt = run_setup(bundle, tmp_path, {"python3": f"{major}.{minor - 1}",
                                               f"python{major}.{minor + 2}": f"{major}.{minor + 2}",
                                               f"python{major}.{minor}": f"{major}.{minor}"})
    assert (python, apt) == (f"python{major}.{minor}", [])


def test_setup_sh_installs_python_with_apt_when_none_is_new_enough(bundle, tmp_path):
    minimum = python_minimum(KIT)
    major, minor = map(int, minimum.split("."))
    python, apt = run_setup(bundle, tmp_path, {"python3": f"{major}.{minor - 1}"})
    assert python == f"python{minimum}"
    assert apt == ["apt-get update", f"apt-get install -y --no-install-recommends python{minimum} "
                                     f"python{minimum}-venv"]


def test_the_bundle_can_be_written_to_another_file_system(tmp_path, monkeypatch):
    """The bundle is built in a temporary folder and lands where -o says, on whatever file system
    that is: /dev/shm, or a machine whose /tmp is a tmpfs (a rename across them fails)."""
    from autograder.staff.release import build_gradescope

    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system here to build across")
    scratch = Path(tempfile.mkdtemp(dir=shm, prefix="kit-scratch-"))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the build's own folder, on the tmpfs
        bundle = tmp_path / "out" / "autograder.zip"
        build_gradescope(KIT, bundle)
        with zipfile.ZipFile(bundle) as archive:
            assert "run_autograder" in archive.namelist()
        assert [path.name for path in bundle.parent.iterdir()] == ["autograder.zip"]  # nothing half-written
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
