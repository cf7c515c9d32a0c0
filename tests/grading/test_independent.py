"""Fair to engines the reference did not write, and every message shows what it states.

The held-out corpus (tests/engines/, support/engines.py) holds correct engines written from
scratch in the styles of public repositories, and bugs written the same way. Graded as a TA
grades, at the public seed and at every seed of SEEDS: a correct engine gets full marks (a slow
one loses only its `slow` parts, to the time limit, with the likely cause named); a bug loses
exactly the parts it must, is named as it must be, and gets the same grade at every seed. Then
every message of every bug, of this corpus and of the edited one (corpus.py), is checked as
a student would check it: its snippet, run on the submission's own files in a fresh Python,
prints the number the message says came out.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import CORES, EVERY_SEED, KIT, corpus, engines
from support.snippets import Snippets

from autograder.check_results import REPRODUCE, REPRODUCE_ANYWHERE
from autograder.config import load
from autograder.staff.check import NUMBER

pytestmark = pytest.mark.slow  # grades in processes of its own

PARTS = load().parts
SNIPPET = re.compile(f"^(?:{re.escape(REPRODUCE)}|{re.escape(REPRODUCE_ANYWHERE)})\n", re.MULTILINE)
CAME_OUT = re.compile(r"^Came out: (?P<label>.+?) = (?P<value>.+)$", re.MULTILINE)
SLOW_SAID = "A correct engine is this slow when"
UNSTEADY = "this scenario gave a different answer"


@pytest.fixture(scope="session")
def independent(autograde, tmp_path_factory) -> tuple[dict, dict[str, Path]]:
    """Every entry of the held-out corpus, built and graded at every seed: (seed -> entry ->
    results by part, entry -> its folder)."""
    root = tmp_path_factory.mktemp("independent")
    folders = {entry.name: engines.build(entry, number, root / entry.name)
               for number, entry in enumerate(engines.ALL)}
    jobs = [(seed, entry.name) for seed in EVERY_SEED for entry in engines.ALL]
    with ThreadPoolExecutor(max_workers=CORES) as pool:
        results = dict(zip(jobs, pool.map(lambda job: autograde(folders[job[1]], seed=job[0]), jobs)))
    grades = {seed: {name: results[seed, name] for s, name in jobs if s == seed} for seed in EVERY_SEED}
    return grades, folders


def lost(parts: dict[str, dict]) -> set[str]:
    return {part for part, entry in parts.items() if entry["score"] < entry["max_score"]}


def said(parts: dict[str, dict], which: set[str]) -> str:
    return "\n\n".join(f"--- {part}: {parts[part]['score']:g} / {parts[part]['max_score']:g}\n"
                       f"{parts[part]['output'][:3000]}" for part in sorted(which))


@pytest.mark.parametrize("seed", EVERY_SEED)
@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in engines.CORRECT])
def test_a_correct_engine_loses_nothing(entry: engines.Engine, seed: str, independent):
    parts = independent[0][seed][entry.name]
    assert lost(parts) == set(entry.slow), f"{entry.name} at {seed}:\n{said(parts, lost(parts))}"
    for part in entry.slow:  # a correct engine too slow for the limit is told why
        output = parts[part]["output"]
        assert "timed out" in output and SLOW_SAID in output, output


@pytest.mark.parametrize("seed", EVERY_SEED)
@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in engines.BUGS])
def test_a_bug_loses_exactly_its_parts_and_is_named(entry: engines.Engine, seed: str, independent):
    parts = independent[0][seed][entry.name]
    assert lost(parts) == set(entry.loses), \
        f"{entry.name} should lose {sorted(entry.loses)}:\n{said(parts, lost(parts) ^ entry.loses)}"
    named = {tag for part in lost(parts) for tag in parts[part]["tags"][1:]}
    assert named == set(entry.names), f"{entry.name} is {sorted(entry.names)}, named {sorted(named)}"


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in engines.ALL])
def test_no_grade_depends_on_the_seed(entry: engines.Engine, independent):
    grades = {seed: {part: (p["score"], p["tags"]) for part, p in independent[0][seed][entry.name].items()}
              for seed in EVERY_SEED}
    assert all(grade == grades["public"] for grade in grades.values()), grades


def test_every_style_and_kind_is_there():
    """At least a dozen correct engines and a score of bugs, of every engine."""
    assert len(engines.CORRECT) >= 12 and len(engines.BUGS) >= 20
    assert {e.engine for e in engines.CORRECT} == {e.engine for e in engines.BUGS} == set(engines.GRADED)
    assert all(e.loses <= PARTS.keys() and e.slow <= PARTS.keys() for e in engines.ALL)


# -- what a message says came out, against what its snippet prints ---------------------------------

def claims(output: str) -> list[tuple[str, str, float]]:
    """(snippet, label, number) for each message of a part's output whose `Came out:` is a number."""
    found = []
    for block in SNIPPET.split(output)[1:]:
        lines = block.splitlines()
        code = []
        for line in lines:
            if line.strip() and not line.startswith("    "):
                break
            code.append(line[4:])
        came_out = CAME_OUT.search(block)
        if came_out is None or UNSTEADY in " ".join(block.split()):
            continue  # an answer that follows memory addresses is said to differ from run to run
        value = came_out["value"].split(": [", 1)[-1].split(",")[0].strip("[]")  # an array's first number
        try:
            number = float(value)
        except ValueError:
            continue  # an exception, a timeout, a shape: what a snippet shows in other ways
        found.append(("\n".join(code).strip(), came_out["label"], number))
    return found


def printed(code: str, folder: Path, snippets: Snippets | None = None) -> tuple[list[float], str]:
    """The numbers `code` prints run in a fresh Python in `folder`, and what it wrote to stderr: in
    a fork of one of `snippets`, or in a Python started for it, with a hash seed and addresses of
    its own."""
    if snippets is not None:
        stdout, stderr = snippets.run(code, folder)
    else:
        done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
                              timeout=300, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        stdout, stderr = done.stdout, done.stderr
    return [float(n) for n in NUMBER.findall(stdout)], stderr[-800:]


def unprinted(snippets: Snippets, jobs: list[tuple[str, Path, str, str, float]]) -> list[str]:
    def said(numbers: list[float], number: float) -> bool:
        return any(math.isclose(n, number, rel_tol=1e-6, abs_tol=1e-9) for n in numbers)

    def check(job):
        name, folder, code, label, number = job
        if said(printed(code, folder, snippets)[0], number):
            return None
        numbers, error = printed(code, folder)  # a fork shares its hash seed and addresses: start afresh
        if said(numbers, number):
            return None
        if any(printed(code, folder) != (numbers, error) for _ in range(3)):
            return None  # it prints other numbers on every run, as an engine that follows addresses does
        return f"{name}: says {label} = {number!r}, its snippet prints {numbers[:12]}{error}\n{code}"

    with ThreadPoolExecutor(max_workers=CORES) as pool:
        return [problem for problem in pool.map(check, jobs) if problem]


@pytest.fixture(scope="session")
def layout(tmp_path_factory) -> Path:
    """A folder that holds the kit's autograder/, as the handout does: a snippet that imports it
    (the training runs) finds it one folder up from the submission's files."""
    root = tmp_path_factory.mktemp("claims")
    shutil.copytree(KIT / "autograder", root / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def snippets() -> Iterator[Snippets]:
    pythons = Snippets(CORES)
    yield pythons
    pythons.close()


@pytest.mark.parametrize("seed", EVERY_SEED)
def test_every_number_a_message_says_came_out_is_printed_by_its_snippet(seed, independent, corpus_grades,
                                                                          layout, snippets):
    jobs = []
    sources = [(e.name, independent[1][e.name], independent[0][seed][e.name]) for e in engines.BUGS]
    for bug in corpus.BUGS:
        sources.append((bug.name, None, corpus_grades[seed][bug.name]))
    for name, folder, parts in sources:
        here = layout / f"{seed}--{name}"  # beside autograder/, as a student's files are
        if folder is None:
            corpus.build(next(b for b in corpus.BUGS if b.name == name), KIT / "solutions", here)
        else:
            shutil.copytree(folder, here)
        for part in lost(parts):
            jobs += [(f"{name} {part}", here, code, label, number)
                     for code, label, number in claims(parts[part]["output"])]
    assert len(jobs) > 100, "too few numbers stated to check anything"
    problems = unprinted(snippets, list({(job[2], str(job[1]), job[4]): job for job in jobs}.values()))
    assert not problems, f"{len(problems)} of {len(jobs)}:\n\n" + "\n\n".join(problems[:10])
