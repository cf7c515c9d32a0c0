"""The commands an author changes the unit with: `autograder stubs`, `autograder part new|given`.

Each makes its change in every place it touches (solutions/, assignments/, the part's suite,
grading.toml; for `given` also the corpus bugs and the misconceptions only that part named) and
prints every file it changed; `autograder check` then says what is left. docs/authoring.md
walks through each.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import re
from pathlib import Path

from ..config import KIT_ROOT, parse
from ..parts import Part, PartError, declaration, declared, suite_name
from ..stubs import OPERATORS, StubError, functions, handout, regions, write_student_files


class AuthoringError(Exception):
    """The change cannot be made as asked; the message names the file and the fix."""


# -- making a stub part ----------------------------------------------------------------------------

SUITE = '''"""{part}: {function}, a stub of its own.

Written by `autograder part new`: the standard checks of an operation of one Value. Choose the
range of inputs where {function} is defined and smooth (LOW, HIGH), then add the situations
that tell its own mistakes apart (see the other suites), each with the misconceptions it names.
"""

from autograder.suspects import lost_a_contribution, ratio
from autograder.parts import Part

{declaration}

METHOD = "{method}"
LOW, HIGH = -2.0, 2.0  # the range of inputs tried: keep it where {function} is defined


def test_{method}_at_the_root(grade, ask):
    """{method} at seeded random inputs in [{{low}}, {{high}}], each the root of its graph."""
    grade("value:method_at_root", method=METHOD, seed=ask.seed(1), count=10, low=LOW, high=HIGH)


def test_{method}_with_an_upstream_gradient(grade, ask):
    """{method} at seeded random inputs in [{{low}}, {{high}}], with an upstream gradient of 3."""
    grade("value:method_values", method=METHOD, seed=ask.seed(2), count=20, low=LOW, high=HIGH,
          suspects={{"ignores-upstream": ratio("grad", 1 / 3)}})


def test_{method}_of_computed_values(grade, ask):
    """{method} of a computed value, x + 0.25, with an upstream gradient of 3: the gradient must reach x."""
    grade("value:method_of_computed_values", method=METHOD, seed=ask.seed(3), count=10, low=LOW, high=HIGH,
          suspects={{"ignores-upstream": ratio("grad", 1 / 3)}})


def test_{method}_beside_its_input(grade, ask):
    """{method}(x) + x: x collects a gradient from both terms."""
    grade("value:method_beside_input", method=METHOD, x=ask.number(0.5, 0.2, 1.5),
          suspects={{"overwrites-gradient": lost_a_contribution("grad", None, 1.0)}})
'''


def new_part(kit: Path, part_id: str, function: str, points: float, title: str, todo: str) -> list[Path]:
    """Make the given method `function` of value.py the stub of a new part `part_id`; the files
    changed. Raises AuthoringError."""
    engine, _, name = part_id.partition(".")
    grading = parse(kit / "grading.toml")
    if engine != "value" or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise AuthoringError(f"{part_id}: name the part value.<name>, in lower case (only an operation "
                             "of value.py gets a suite made for it; write others by hand, as "
                             "docs/authoring.md says)")
    if part_id in grading.parts or (kit / "autograder" / "suites" / suite_name(part_id)).exists():
        raise AuthoringError(f"{part_id}: the part exists already (grading.toml or its suite); choose "
                             "another id")
    solution = kit / "solutions" / "value.py"
    source = solution.read_text(encoding="utf-8")
    method = function.removeprefix("Value.")
    node = dict(functions(ast.parse(source))).get(f"Value.{method}")
    if node is None:
        raise AuthoringError(f"{solution}: no method Value.{method}; name one of its given methods")
    if any(region.function == f"Value.{method}" for region in regions(source, solution)):
        raise AuthoringError(f"{solution}: Value.{method} is a stub already")
    if method.startswith("_") or method in OPERATORS:
        raise AuthoringError(f"Value.{method}: only a method called as x.{method}() gets a suite made "
                             "for it; make an operator a stub by hand (see docs/authoring.md)")
    first = node.body[0]
    documented = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
    start = first.end_lineno + 1 if documented else first.lineno
    lines = source.splitlines()
    indent = re.match(r"\s*", lines[start - 1]).group()
    lines.insert(node.end_lineno, f"{indent}# END SOLUTION")
    lines.insert(start - 1, f"{indent}# BEGIN SOLUTION {part_id}: {todo or f'write Value.{method}'}")
    solution.write_text("\n".join(lines) + "\n", encoding="utf-8")
    changed = [solution, *write_student_files(kit)]
    training = [part for part in grading.parts if part == f"{engine}.training"]
    suite = kit / "autograder" / "suites" / suite_name(part_id)
    part = Part(part_id, also_costs=tuple(training),
                misconceptions=("ignores-upstream", "overwrites-gradient", "rule-on-the-wrong-node"))
    suite.write_text(SUITE.format(part=part_id, function=f"Value.{method}", method=method,
                                  declaration=declaration(part)), encoding="utf-8")
    toml = kit / "grading.toml"
    table = (f'[parts."{part_id}"]\ntitle = "{title or f"Value.{method}"}"\npoints = {points:g}\n'
             'visibility = "visible"\n\n')
    text = toml.read_text(encoding="utf-8")
    at = text.find("\n[tolerances]") + 1 or len(text)  # after the last part, before the tolerances
    toml.write_text(text[:at] + table + text[at:], encoding="utf-8")
    return [*changed, suite, toml]


# -- making a stub part given code -------------------------------------------------------------------

def drop_table(text: str, part_id: str) -> str:
    """grading.toml's text without the table of `part_id`."""
    blocks = re.split(r"(?m)^(?=\[)", text)
    header = re.compile(r'\[parts\.(?:"([^"]+)"|([A-Za-z0-9_-]+))\]')
    kept = [block for block in blocks
            if not ((found := header.match(block)) and (found.group(1) or found.group(2)) == part_id)]
    return "".join(kept)


def drop_calls(path: Path, keep) -> bool:
    """Remove from `path` every call expression inside a top-level list for which `keep(call)` is
    false (the corpus's entries); True when anything was removed."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    doomed = [element for node in ast.walk(tree) if isinstance(node, (ast.List, ast.Tuple))
              for element in node.elts if isinstance(element, ast.Call) and not keep(element)]
    if not doomed:
        return False
    lines = source.splitlines(keepends=True)
    for element in sorted(doomed, key=lambda e: e.lineno, reverse=True):
        start, end = element.lineno - 1, element.end_lineno
        after = lines[end - 1][element.end_col_offset:]
        before = lines[start][:element.col_offset]
        tail = after[1:] if after.startswith(",") else after
        lines[start:end] = [before + tail.lstrip(" ")] if (before + tail).strip() else []
        while start > 0 and lines[start - 1].strip().startswith("#") and not before.strip():
            start -= 1  # the comment that spoke of it goes with it
            del lines[start]
    path.write_text("".join(lines), encoding="utf-8")
    return True


def drop_entries(path: Path, name: str, keys: set[str]) -> bool:
    """Remove the entries `keys` from the dict literal assigned to `name` in `path`; True when
    anything was removed."""
    source = path.read_text(encoding="utf-8")
    def names(statement: ast.stmt) -> list[str]:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [getattr(target, "id", None) for target in targets]

    node = next(n.value for n in ast.parse(source).body
                if isinstance(n, (ast.Assign, ast.AnnAssign)) and name in names(n))
    doomed = [(key, value) for key, value in zip(node.keys, node.values)
              if isinstance(key, ast.Constant) and key.value in keys]
    lines = source.splitlines(keepends=True)
    for key, value in sorted(doomed, key=lambda pair: pair[0].lineno, reverse=True):
        del lines[key.lineno - 1:value.end_lineno]
    path.write_text("".join(lines), encoding="utf-8")
    return bool(doomed)


def loses_part(call: ast.Call, part_id: str) -> bool:
    """Does the corpus entry `call` name `part_id` in its `loses=`?"""
    for keyword in call.keywords:
        if keyword.arg == "loses":
            return part_id in {node.value for node in ast.walk(keyword.value)
                               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return False


def given_part(kit: Path, part_id: str) -> list[Path]:
    """Make every stub of `part_id` given code, and remove the part; the files changed. Raises
    AuthoringError."""
    parts = declared(kit / "autograder" / "suites")
    marked = handout(kit / "solutions")
    if part_id not in parts:
        raise AuthoringError(f"{part_id}: no suite declares this part; name one of {', '.join(parts)}")
    if part_id not in marked.stubs:
        raise AuthoringError(f"{part_id}: no region of solutions/ is marked for it, so nothing is a stub")
    changed = []
    for path in sorted((kit / "solutions").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        of_part = [region for region in regions(source, path) if region.part == part_id]
        for region in reversed(of_part):
            del lines[region.last - 1]
            del lines[region.first - 1]
        if of_part:
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            changed.append(path)
    changed += write_student_files(kit)
    suite = kit / "autograder" / "suites" / parts[part_id].suite
    suite.unlink()
    toml = kit / "grading.toml"
    toml.write_text(drop_table(toml.read_text(encoding="utf-8"), part_id), encoding="utf-8")
    changed += [suite, toml]
    for other in parts.values():
        if part_id in other.also_costs:
            changed.append(rewrite_declaration(kit, other, also_costs=tuple(p for p in other.also_costs
                                                                             if p != part_id)))
    corpus = kit / "tests" / "support" / "corpus.py"
    if corpus.is_file() and drop_calls(corpus, lambda call: not loses_part(call, part_id)):
        changed.append(corpus)
    still = {name for other in parts.values() if other.id != part_id for name in other.misconceptions}
    catalogue = kit / "autograder" / "misconceptions.py"
    if drop_entries(catalogue, "CATALOGUE", set(parts[part_id].misconceptions) - still):
        changed.append(catalogue)
    return changed


def rewrite_declaration(kit: Path, part: Part, **changes) -> Path:
    """Write a suite's PART = Part(...) again with `changes`."""
    path = kit / "autograder" / "suites" / part.suite
    source = path.read_text(encoding="utf-8")
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["PART"])
    lines = source.splitlines()
    lines[node.lineno - 1:node.end_lineno] = declaration(dataclasses.replace(part, **changes)).splitlines()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- the commands ------------------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder part`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    actions = parser.add_subparsers(dest="action", required=True)
    new = actions.add_parser("new", help="make a given method of value.py the stub of a new part")
    new.add_argument("part", metavar="PART", help="the new part's id, such as value.exp")
    new.add_argument("function", metavar="FUNCTION", help="the given method, such as Value.exp")
    new.add_argument("--points", type=float, default=0.0, help="what the part is worth (default 0)")
    new.add_argument("--title", default="", help="the part's title in grading.toml")
    new.add_argument("--todo", default="", help="the stub's TODO line: what the student does")
    given = actions.add_parser("given", help="make a part's stubs given code, and remove the part")
    given.add_argument("part", metavar="PART", help="the part's id, such as value.relu")


def run(args: argparse.Namespace) -> int:
    """Run `autograder part`; returns the exit status."""
    try:
        if args.action == "new":
            changed = new_part(KIT_ROOT, args.part, args.function, args.points, args.title, args.todo)
        else:
            changed = given_part(KIT_ROOT, args.part)
    except (AuthoringError, PartError, StubError) as error:
        print(f"autograder part: {error}")
        return 2
    for path in changed:
        print(f"{'removed' if not path.exists() else 'wrote'} {path.relative_to(KIT_ROOT)}")
    print("now run `autograder check`: it says what is left to do, if anything")
    return 0


def add_stubs_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `autograder stubs` (none)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def run_stubs(args: argparse.Namespace) -> int:
    """Run `autograder stubs`; returns the exit status."""
    try:
        changed = write_student_files(KIT_ROOT)
    except StubError as error:
        print(f"autograder stubs: {error}")
        return 2
    for path in changed:
        print(f"wrote {path.relative_to(KIT_ROOT)}")
    if not changed:
        print("assignments/ is already what solutions/ makes of it")
    return 0
