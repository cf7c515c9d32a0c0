"""Check that the kit is consistent, as an author changes it: one line per problem, with its fix.

`autograder check` is silent (exit status 0) when every check passes, else exit status 1. It
grades the reference with its suites at the public seed, in one pytest run that also lists the
tests it collected with their parts, and reads the parts, the marked stubs, grading.toml and the
misconceptions; each check is a function below that returns its problems.
"""

from __future__ import annotations

import argparse
import ast
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .. import scenario_sources, suspects
from ..config import KIT_ROOT, ConfigError, Grading, parse
from ..junit_properties import suspects_named
from ..misconceptions import CATALOGUE
from ..parts import Part, PartError, declared, engine_of, engines
from ..runner import time_limit
from ..stubs import Handout, StubError, engine_files, handout, regions, stale_student_files
from .costs import cost_report, seconds_by_part
from .dry_run import release_problems, stub_checks
from .reference_run import Call, calls_of, grade_reference, part_of, reference_failures, suite_of, tail

# A number as prose writes it: a sign only where no word or digit comes before it, and not
# the "2" of "2x" nor the "4" of "x^4"-like tokens glued to a letter.
NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?!\w|\.\d)")
EXPONENT = re.compile(r"(\*\*|\^)\s*-?\d+(\.\d+)?")
ROOM = 3.0  # how many times its own time the reference must be allowed on every scenario
SHORTEST_ANSWER_LINE = 20  # shorter lines (`return self * other`) say how, not what
ALWAYS = set(suspects.ALWAYS)  # named by the kit's reverse pass in any part that uses it


# -- numbers, as prose states them ---------------------------------------------------------------------

def stated(text: str) -> list[str]:
    """The numbers a text states, leaving out exponents (the 2 of x**2 is notation, not a claim)."""
    return NUMBER.findall(EXPONENT.sub(" ", text))


def prose(text: str) -> str:
    """`text` without the code it quotes in backticks, which states no claim (`a.sum(axis=0)`)."""
    return re.sub(r"`[^`]*`", "", text)


def matches(written: str, candidates: list[float]) -> bool:
    """`written` is one of the candidates, to the precision it is written with."""
    value = float(written)
    decimals = len(written.split(".")[1]) if "." in written and "e" not in written else 0
    slack = 0.5 * 10.0 ** -decimals if decimals else 1e-9
    return any(abs(value - c) <= slack + 1e-9 * abs(c) for c in candidates)


def numbers_in(tree: object) -> list[float]:
    """Every number of an observation or of arguments, and the length of every list in it."""
    if isinstance(tree, bool):
        return []
    if isinstance(tree, (int, float)):
        return [float(tree)]
    if isinstance(tree, dict):
        return [n for value in tree.values() for n in numbers_in(value)]
    if isinstance(tree, (list, tuple)):
        return [float(len(tree))] + [n for item in tree for n in numbers_in(item)]
    return []


def literals_in(tree: ast.Module, name: str) -> list[float]:
    """The numbers written in function `name` of a module (its defaults left out: a call that
    passes the argument does not use them) and in its module's constants, both signs."""
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    constants = [n.value for n in tree.body if isinstance(n, ast.Assign)
                 and all(isinstance(t, ast.Name) and t.id.isupper() for t in n.targets)]
    defaults = {id(node) for default in [*function.args.defaults, *function.args.kw_defaults] if default
                for node in ast.walk(default)}
    numbers = [node.value for part in [function, *constants] for node in ast.walk(part)
               if isinstance(node, ast.Constant) and type(node.value) in (int, float)
               and id(node) not in defaults]
    return [sign * float(number) for number in numbers for sign in (1, -1)]


@cache  # the scenarios' sources are read once per process (scenario_sources.sources)
def scenario_literals(scenario_id: str) -> list[float]:
    """The numbers written in a scenario's own code and its module's constants."""
    module_name, _, name = scenario_id.partition(":")
    return literals_in(ast.parse(scenario_sources.sources()[module_name]), name)


def test_literals(kit: Path, test: str) -> list[float]:
    """The numbers a test's own code writes down (the ranges its questions are drawn from)."""
    return literals_in(ast.parse(suite_of(kit, test).read_text(encoding="utf-8")), test.partition(":")[2])


test_literals.__test__ = False  # a helper, though its name starts like a test's


# -- the checks ----------------------------------------------------------------------------------------

def parts_and_suites(grading: Grading, parts: dict[str, Part], tests: dict[str, int]) -> list[str]:
    """A line for each part of grading.toml with no suite or no test, each suite's part missing
    from grading.toml, and each `also_costs` that names no part."""
    problems = [f"grading.toml: [parts.\"{part}\"] has no suite; write autograder/suites/{Part(part).suite}, "
                "or remove the table" for part in grading.parts if part not in parts]
    problems += [f"autograder/suites/{part.suite}: part {part.id!r} is not in grading.toml; add "
                 f"[parts.\"{part.id}\"] with its title and points" for part in parts.values()
                 if part.id not in grading.parts]
    problems += [f"autograder/suites/{part.suite}: holds no test; write one, or remove the part"
                 for part in parts.values() if part.id in grading.parts and not tests.get(part.id)]
    for part in parts.values():
        problems += [f"autograder/suites/{part.suite}: also_costs names {other!r}, which is not a part"
                     for other in part.also_costs if other not in parts]
    return problems


def stubs_and_points(grading: Grading, parts: dict[str, Part], marked: Handout) -> list[str]:
    """A line for each marked stub of no part, and each part with points that grades given code
    only (no stub of its own, named in no part's also_costs)."""
    problems = [f"solutions/: {', '.join(stubs)} marked for part {part!r}, which no suite declares; fix "
                f"the marker, or write its suite, autograder/suites/{Part(part).suite}, and its table in "
                "grading.toml" for part, stubs in marked.stubs.items() if part not in parts]
    costing = {other for part in parts.values() if part.id in marked.stubs for other in part.also_costs}
    for part in grading.parts.values():
        if part.points and part.id not in marked.stubs and part.id not in costing:
            problems.append(f"grading.toml: part {part.id!r} is worth {part.points:g} points but grades "
                            "given code only (no region of solutions/ is marked for it, and no part's "
                            "also_costs names it); make it worth 0, or mark its stub")
    return problems


def engine_files_of(kit: Path, grading: Grading) -> list[str]:
    """A line for each engine file that grading.toml's parts grade and solutions/ lacks, each file
    of solutions/ that no part grades, and each student file that nothing in solutions/ makes:
    the engines are the first words of the parts' ids, and nothing else says what they are."""
    named = engines(kit / "grading.toml")
    problems = []
    for engine in named:
        grading_it = [part for part in grading.parts if engine_of(part) == engine]
        if not engine.isidentifier():
            problems.append(f"grading.toml: {', '.join(grading_it)} name the file {engine}.py, which Python "
                            "cannot import; start each part's id with an engine file's name (value, ...)")
        elif not (kit / "solutions" / f"{engine}.py").is_file():
            problems.append(f"grading.toml: {', '.join(grading_it)} grade {engine}.py, but "
                            f"solutions/{engine}.py is missing; put its reference there, or remove those "
                            "parts (their tables and their suites), as docs/authoring.md says under "
                            "\"Removing an engine\"")
    problems += [f"solutions/{path.name}: no part of grading.toml grades it; remove it and "
                 f"assignments/{path.name}, or add a part whose id starts with \"{path.stem}\""
                 for path in engine_files(kit / "solutions") if path.stem not in named]
    problems += [f"assignments/{path.name}: no solutions/{path.name} makes it; remove it, or put its "
                 f"reference in solutions/{path.name}" for path in engine_files(kit / "assignments")
                 if not (kit / "solutions" / path.name).is_file()]
    return problems


def hidden_totals(grading: Grading) -> list[str]:
    """A warning for each part with points that is not visible: it hides every student's total on
    Gradescope (a warning, not an error: a course may mean it)."""
    return [f"grading.toml: part {part.id!r} is {part.visibility} and worth {part.points:g} points, so "
            "Gradescope shows no student a total until it is shown; if that is not what you mean, make it "
            '"visible", or worth 0' for part in grading.parts.values()
            if part.points and part.visibility != "visible"]


def undocumented_stubs(kit: Path) -> list[str]:
    """A line for each stub of solutions/ with no docstring (the student reads it: what the stub
    returns and which rule it follows)."""
    problems = []
    for path in engine_files(kit / "solutions"):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        for function in sorted({region.function for region in regions(source, path)}):
            owner, _, name = function.rpartition(".")
            body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner),
                        tree.body) if owner else tree.body
            node = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)
            if not ast.get_docstring(node):
                problems.append(f"solutions/{path.name}: the stub {function} has no docstring; say what it "
                                "returns and which rule it follows (the student reads it)")
    return problems


def answers_handed_out(kit: Path) -> list[str]:
    """Where a line of a stub's answer stands in a line of a student file, given code, docstrings
    and comments included. Lines that several places of the student files hold (`return out`,
    wrapping a number) are the pattern every operation follows, and not an answer."""
    handed = [(f"{path.name}, line {number}", line)
              for path in engine_files(kit / "assignments")
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)]
    problems = []
    for path in engine_files(kit / "solutions"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for region in regions("\n".join(lines), path):
            for line in {line.strip() for line in lines[region.first:region.last - 1]}:
                holders = [where for where, text in handed if line in text]
                if len(line) >= SHORTEST_ANSWER_LINE and len(holders) == 1:
                    problems.append(f"assignments/{holders[0]} hands out a line of the answer to "
                                    f"{region.function} ({region.part}): {line}; rewrite it")
    return sorted(problems)


def misconceptions(parts: dict[str, Part], named: dict[str, set[str]]) -> list[str]:
    """A line for each misconception a part declares or a test names that the catalogue does not
    list or the part does not declare, and each of the catalogue that no part declares."""
    problems = []
    for part in parts.values():
        unknown = set(part.misconceptions) - CATALOGUE.keys()
        problems += [f"autograder/suites/{part.suite}: declares misconception {name!r}, which "
                     "autograder/misconceptions.py does not list; fix the id or add it to the catalogue"
                     for name in sorted(unknown)]
        for name in sorted(named.get(part.id, set()) - set(part.misconceptions) - ALWAYS):
            where = "does not list" if name not in CATALOGUE else "lists, but the part does not declare"
            problems.append(f"autograder/suites/{part.suite}: a test names misconception {name!r}, which "
                            f"autograder/misconceptions.py {where}; fix the id, or declare it")
    reached = {name for part in parts.values() for name in part.misconceptions} | ALWAYS
    problems += [f"autograder/misconceptions.py: {name!r} is declared by no part, so no suite can name it; "
                 "declare it in the PART of the suite that tells it apart, or remove it"
                 for name in CATALOGUE if name not in reached]
    return problems


def numbers(kit: Path, grading: Grading, calls: list[Call], owner_of: dict[str, str]) -> list[str]:
    """A line for each test docstring, part title and suite docstring that states a number its
    scenarios do not use (the task's numbers, such as a network's layer sizes, its steps and its
    learning rate, come from the arguments a test passes)."""
    allowed: dict[str, list[float]] = defaultdict(list)
    by_part: dict[str, list[float]] = defaultdict(list)
    docstrings = {}
    for call in calls:
        found = numbers_in(call.kwargs) + numbers_in(call.observations) + scenario_literals(call.scenario)
        allowed[call.test] += found
        by_part[owner_of[call.test]] += found
        docstrings[call.test] = call.docstring
    for test in docstrings:
        allowed[test] += test_literals(kit, test)
    problems = [f"autograder/suites/{suite_of(Path(), test).name}, {test.partition(':')[2]}: its docstring "
                f"states {wrong}, which the scenario it asks for no longer uses; bring it up to date"
                for test, text in docstrings.items()
                if (wrong := [n for n in stated(prose(text)) if not matches(n, allowed[test])])]
    for part in grading.parts.values():
        title = prose(part.title)
        if part.id in by_part and (wrong := [n for n in stated(title) if not matches(n, by_part[part.id])]):
            problems.append(f"grading.toml: the title of {part.id!r} states {wrong}, which its scenarios no "
                            "longer use; bring the title up to date")
    for suite in sorted({suite_of(kit, test) for test in docstrings}):
        tree = ast.parse(suite.read_text(encoding="utf-8"))
        part = owner_of[next(test for test in docstrings if suite_of(kit, test) == suite)]
        text = prose(ast.get_docstring(tree) or "")
        written = [sign * float(node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                   and type(node.value) in (int, float) for sign in (1, -1)]
        if wrong := [n for n in stated(text) if not matches(n, by_part[part] + written)]:
            problems.append(f"autograder/suites/{suite.name}: its docstring states {wrong}, which the "
                            f"scenarios of {part} no longer use; bring it up to date")
    return problems


def room(grading: Grading, calls: list[Call]) -> list[str]:
    """One line when the limits leave some scenario less than ROOM times the reference's own time."""
    limits = grading.limits
    tight = sorted({(call.seconds, call.scenario) for call in calls
                    if time_limit(limits, call.seconds) < ROOM * call.seconds})
    if not tight:
        return []
    seconds, scenario = tight[-1]
    return [f"{grading.source}: [limits] time_multiplier = {limits.time_multiplier:g} and "
            f"time_floor_seconds = {limits.time_floor_seconds:g} leave the reference's own {scenario} "
            f"({seconds:.3f} s of CPU) "
            f"less than {ROOM:g} times its time, and {len(tight)} scenario(s) in all; raise them, or the "
            "reference itself will fail at random"]


# -- running it ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Findings:
    """What the check found: errors (a release refuses them), warnings (said, and allowed), and
    the cost report (said every time the reference could be graded)."""

    errors: list[str]
    warnings: list[str]
    report: list[str] = field(default_factory=list)
    tests: list | None = None  # the suites' tests, as the reference's grading collected them


def findings(kit: Path = KIT_ROOT) -> Findings:
    """Every inconsistency of the kit in `kit`, one line each with its fix, the warnings, and the
    cost report. Whatever `autograder release` or `autograder mutate` would stop on is among the
    errors: each release format and a mutation probe of each stub are tried here first."""
    from .release import ReleaseError, listed

    try:
        grading = parse(kit / "grading.toml")
        parts = declared(kit / "autograder" / "suites")
        marked = handout(kit / "solutions")
    except (ConfigError, PartError, StubError) as error:
        return Findings([str(error)], [])
    warnings = hidden_totals(grading)
    problems = engine_files_of(kit, grading)
    if problems:  # every later check reads the engine files
        return Findings(problems, warnings)
    with tempfile.TemporaryDirectory(prefix="autograder-check-") as scratch:
        # One pytest run grades the reference and lists the tests it collected, with their parts.
        listing = Path(scratch) / "parts.json"
        done, sealed, junit = grade_reference(kit, Path(scratch), listing)
        try:
            tests = listed(kit, listing, done)
        except ReleaseError as error:
            return Findings([str(error)], [])
        count: dict[str, int] = defaultdict(int)
        for test in tests:
            count[test.part] += 1
        problems = stale_student_files(kit) + parts_and_suites(grading, parts, count)
        problems += stubs_and_points(grading, parts, marked) + answers_handed_out(kit)
        problems += undocumented_stubs(kit)
        released, said = release_problems(kit, tests)  # every release format, tried
        problems += released
        warnings += said
        if not sealed.is_file() or not junit.is_file():
            return Findings(problems + (reference_failures(junit) or [
                "the reference does not answer every scenario of its own suites; fix solutions/ or the "
                f"suites. pytest said:\n{tail(done.stdout)}"]), warnings)
        calls, named = calls_of(kit, junit, sealed), suspects_named(junit)
    tight = room(grading, calls)
    if done.returncode != 0 and not tight:  # with limits too tight, a timeout is their doing: say that alone
        problems += reference_failures(junit) or [
            f"the reference loses points on its own suites; fix solutions/ or the suites. pytest said:\n"
            f"{tail(done.stdout)}"]
    parts_named: dict[str, set[str]] = defaultdict(set)
    for test, names in named.items():
        parts_named[part_of(kit, test)] |= names
    owner = {test: part_of(kit, test) for test in {call.test for call in calls}}
    problems += misconceptions(parts, parts_named)
    problems += numbers(kit, grading, calls, owner)
    stubs_run, mutants, said = stub_checks(kit, parts, calls, owner)
    warnings += said
    report = cost_report(grading, seconds_by_part(calls, owner), mutants,
                         stubs={part: len(found) for part, found in marked.stubs.items()},
                         also_costs={name: part.also_costs for name, part in parts.items()})
    return Findings(problems + stubs_run + tight, warnings + report.warnings, report.lines, tests)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder check` (none)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def run(args: argparse.Namespace) -> int:
    """Run `autograder check`; returns the exit status (1 when it found an error)."""
    found = findings()
    for problem in found.errors:
        print(f"autograder check: {problem}")
    for warning in found.warnings:
        print(f"autograder check: warning: {warning}")
    print("\n".join(found.report))
    return 1 if found.errors else 0
