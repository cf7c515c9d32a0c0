"""The student's side on the Pythons the machine offers, from the kit's minimum up.

For the newest Python found (python3.N on PATH, or under pyenv), and with --exhaustive for
every one, a virtualenv gets exactly the handout's requirements.txt; the handout then grades
the reference and the stubs as the kit does. The oldest grades so at the oldest versions of
its requirements, and the Gradescope bundle grades the reference with it. A Python older than
the minimum is told so in one line. Where the machine offers no other Python, only the one
running these tests is tried (by the rest of the kit's tests).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import EXHAUSTIVE, KIT
from support.shape import GRADED

import autograder
from autograder.config import load
from autograder.staff.release import project

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length

CLI = [sys.executable, "-m", "autograder.staff.cli"]
PYENV = Path.home() / ".pyenv" / "versions"
GRADING = load(KIT / "grading.toml")
VISIBLE = {part.id: part.points for part in GRADING.parts.values() if part.visibility == "visible"}
INSTALL_SECONDS = 900


def pythons() -> dict[tuple[int, int], Path]:
    """One interpreter per Python 3 version this machine has, by (major, minor), as its name
    says: found without starting any of them, so that collecting these tests costs nothing."""
    found: dict[tuple[int, int], Path] = {}
    named = []
    if PYENV.is_dir():  # pyenv's own interpreters first: its shims run only the versions it selects
        named += [(path.parent.parent.name, str(path)) for path in sorted(PYENV.glob("3.*/bin/python3"))]
    named += [(f"3.{minor}", shutil.which(f"python3.{minor}")) for minor in range(6, 20)]
    for name, candidate in named:
        parts = re.match(r"3\.(\d+)", name)
        if candidate and "shims" in Path(candidate).parts:
            continue
        if candidate and parts and (3, int(parts[1])) not in found:
            found[(3, int(parts[1]))] = Path(candidate)
    return found


FOUND = pythons()
SUPPORTED = {v: p for v, p in FOUND.items() if v >= autograder.MINIMUM_PYTHON and v != sys.version_info[:2]}
OLDER = {v: p for v, p in FOUND.items() if v < autograder.MINIMUM_PYTHON and v >= (3, 8)}
# The newest (the oldest is tried at the floors of its requirements below), or with --exhaustive
# every one.
TRIED = sorted(SUPPORTED) if EXHAUSTIVE else [max(SUPPORTED)] if SUPPORTED else []


def venv(python: Path, folder: Path, *wanted: str) -> Path:
    """A virtualenv of `python` in `folder` with `wanted` installed (pip's arguments) by this
    environment's pip (`pip --python`): a pip of the venv's own, which takes ensurepip 3 s to put
    in, would install the same."""
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True,
                   timeout=300)
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(folder / "bin" / "python"),
                                "install", "-q", "--disable-pip-version-check", *wanted],
                               capture_output=True, text=True, timeout=INSTALL_SECONDS)
    assert installed.returncode == 0, installed.stderr[-2000:]
    return folder / "bin" / "python"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pythons") / "handout"
    done = subprocess.run(CLI + ["release", "student", "-o", str(out)], cwd=KIT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return out


def test_the_minimum_is_the_one_pyproject_states():
    assert project(KIT)["requires-python"] == ">=" + ".".join(map(str, autograder.MINIMUM_PYTHON))


def scores(results: Path) -> dict[str, float]:
    return {t["tags"][0]: t["score"] for t in json.loads(results.read_text(encoding="utf-8"))["tests"]}


def grades_as_the_kit(python: Path, handout: Path, tmp_path: Path) -> None:
    """`pytest autograder` in copies of the handout, with `python`, gives the reference every
    visible part's points and the stubs none, and ends with the score table."""
    for files, expected in (("solutions", dict(VISIBLE)), ("assignments", dict.fromkeys(VISIBLE, 0))):
        copy = tmp_path / f"handout-{files}"
        shutil.copytree(handout, copy)
        for engine in GRADED:
            shutil.copyfile(KIT / files / f"{engine}.py", copy / "assignments" / f"{engine}.py")
        done = subprocess.run([str(python), "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                               "--results-json=" + str(tmp_path / f"{files}.json")],
                              cwd=copy, capture_output=True, text=True, timeout=INSTALL_SECONDS)
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
        assert scores(tmp_path / f"{files}.json") == expected, files
        assert any(line.startswith("total") for line in done.stdout.splitlines()[-3:])


@pytest.mark.parametrize("version", TRIED, ids=lambda v: f"python{v[0]}.{v[1]}")
def test_the_handout_grades_as_the_kit_on_the_supported_pythons(handout, tmp_path, version):
    python = venv(SUPPORTED[version], tmp_path / "venv", "-r", str(handout / "requirements.txt"))
    grades_as_the_kit(python, handout, tmp_path)


def floors(requirements: Path) -> list[str]:
    """The handout's requirements pinned to the oldest versions they allow (`numpy>=1.24` ->
    `numpy==1.24.0`), and pluggy at the oldest that the oldest pytest allows."""
    pinned = []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        found = re.fullmatch(r"([\w-]+)>=([\d.]+)(;.*)?", line.strip())
        assert found, f"requirements.txt: {line!r} names no floor"
        version = found[2] if found[2].count(".") >= 2 else found[2] + ".0"
        pinned.append(f"{found[1]}=={version}{found[3] or ''}")
    return [*pinned, "pluggy==1.3.0"]


@pytest.mark.skipif(not SUPPORTED, reason="the machine offers no other supported Python")
def test_the_handout_grades_as_the_kit_at_the_oldest_versions_it_allows(handout, tmp_path):
    """The oldest Python, numpy, pytest and pluggy the kit declares: the floors are what is tested."""
    pins = tmp_path / "floors.txt"
    pins.write_text("\n".join(floors(handout / "requirements.txt")) + "\n", encoding="utf-8")
    python = venv(SUPPORTED[min(SUPPORTED)], tmp_path / "venv", "-r", str(pins))
    grades_as_the_kit(python, handout, tmp_path)


@pytest.mark.skipif(not SUPPORTED, reason="the machine offers no other supported Python")
def test_the_gradescope_bundle_grades_on_the_oldest_supported_python(tmp_path):
    oldest = min(SUPPORTED)
    bundle = tmp_path / "autograder.zip"
    done = subprocess.run(CLI + ["release", "gradescope", "-o", str(bundle)], cwd=KIT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    source = tmp_path / "source"
    zipfile.ZipFile(bundle).extractall(source)
    python = venv(SUPPORTED[oldest], tmp_path / "venv", "-r", str(source / "requirements.txt"))
    done = subprocess.run([str(python), "grade_submission.py", str(KIT / "solutions"),
                           str(tmp_path / "results.json")], cwd=source, capture_output=True, text=True,
                          timeout=INSTALL_SECONDS)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert scores(tmp_path / "results.json") == {part.id: part.points for part in GRADING.parts.values()}


@pytest.mark.skipif(not OLDER, reason="the machine offers no Python older than the minimum")
def test_an_older_python_is_told_so_in_one_line(handout, tmp_path):
    version = max(OLDER)
    python = venv(OLDER[version], tmp_path / "venv", "numpy", "pytest")
    done = subprocess.run([str(python), "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider"],
                          cwd=handout, capture_output=True, text=True, timeout=600)
    lines = (done.stdout + done.stderr).strip().splitlines()
    wanted = (r"autograder: needs Python 3\.9 or newer, and this is 3\.\d+\.\d+; install a newer one "
              r"and its numpy and pytest")
    assert len(lines) == 1 and re.fullmatch(wanted, lines[0]), lines
