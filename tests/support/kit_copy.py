"""A copy of the kit as an author has it, and the commands an author runs in it: the means of
the tests that adapt the kit as docs/authoring.md says (staff/test_authoring.py,
test_kit_changes.py).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from . import KIT


def copy_of_the_kit(folder: Path) -> Path:
    """The kit's folder as an author has it: the grader, the student files, the reference, the
    kit's own corpus (which `part given` edits)."""
    for name in ("autograder", "solutions", "assignments", "tests", "docs"):
        shutil.copytree(KIT / name, folder / name,
                        ignore=shutil.ignore_patterns("__pycache__", "reference.json"))
    for name in ("grading.toml", "pyproject.toml"):  # the releases read the kit's Python and packages
        shutil.copyfile(KIT / name, folder / name)
    return folder


def autograder(kit: Path, *args: str) -> subprocess.CompletedProcess:
    """`autograder ...` run in the copy: its own autograder package is the one imported. No
    command ends in a traceback."""
    done = subprocess.run([sys.executable, "-m", "autograder.staff.cli", *args], cwd=kit, capture_output=True,
                          text=True, check=False)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done


def problems(done: subprocess.CompletedProcess) -> list[str]:
    """What `autograder check` found: its lines but the cost report and the warnings."""
    return [line.removeprefix("autograder check: ") for line in done.stdout.splitlines()
            if line.startswith("autograder check: ") and not line.startswith("autograder check: warning: ")]


def warnings(done: subprocess.CompletedProcess) -> list[str]:
    return [line.removeprefix("autograder check: warning: ") for line in done.stdout.splitlines()
            if line.startswith("autograder check: warning: ")]


def totals(kit: Path, folder: str) -> tuple[float, float]:
    """The total and the maximum that `pytest autograder` gives `folder` of the copy."""
    results = kit / f"{folder}.json"
    subprocess.run([sys.executable, "-m", "pytest", "autograder", "-q", "-p", "no:cacheprovider",
                    f"--submission={folder}", "--reference=solutions", f"--results-json={results}"],
                   cwd=kit, capture_output=True, text=True, check=False)
    tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    bonus = {t["tags"][0] for t in tests if "Bonus" in t["name"]}
    return (round(sum(t["score"] for t in tests), 2),
            round(sum(t["max_score"] for t in tests if t["tags"][0] not in bonus), 2))


def consistent(kit: Path) -> subprocess.CompletedProcess:
    """`autograder check` finds nothing and warns of nothing (it prints its cost report alone), the
    reference earns every point and the stubs none."""
    done = autograder(kit, "check")
    assert done.returncode == 0 and not problems(done) and not warnings(done), done.stdout + done.stderr
    assert "cost report" in done.stdout
    got, most = totals(kit, "solutions")
    assert got >= most > 0
    assert totals(kit, "assignments")[0] == 0
    return done


def every_release(kit: Path, out: Path) -> dict[str, Path]:
    """Every release of the copy, built by `autograder release all` (one check for the four);
    each must build."""
    done = autograder(kit, "release", "all", "-o", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    built = {target: out / target for target in ("student", "classroom", "nbgrader")}
    built["gradescope"] = out / "autograder.zip"
    assert all(where.exists() for where in built.values()), sorted(path.name for path in out.iterdir())
    assert not (built["student"] / ".github").exists()  # only the Classroom release has a workflow
    assert (built["classroom"] / ".github" / "workflows" / "classroom.yml").is_file()
    return built


def set_key(path: Path, table: str, key: str, value: str) -> None:
    text = path.read_text(encoding="utf-8")
    pattern = rf"(\[{re.escape(table)}\][^\[]*?^{key} = )[^\n]*"
    changed, count = re.subn(pattern, rf"\g<1>{value}", text, count=1, flags=re.M | re.S)
    assert count == 1, f"no {key} in [{table}]"
    path.write_text(changed, encoding="utf-8")


def remove_dual(kit: Path) -> None:
    """docs/authoring.md's "Removing an engine", up to its replicas: `part given dual`, which check
    follows with one line, and the two files removed."""
    assert autograder(kit, "part", "given", "dual").returncode == 0
    assert problems(autograder(kit, "check")) == [
        'solutions/dual.py: no part of grading.toml grades it; remove it and assignments/dual.py, or add a '
        'part whose id starts with "dual"']
    (kit / "solutions" / "dual.py").unlink()
    (kit / "assignments" / "dual.py").unlink()
