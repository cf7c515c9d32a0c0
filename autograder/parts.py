"""What a part of the unit is: one declaration per part, at the top of its suite.

`autograder/suites/test_<part>.py` (dots as underscores) holds one part's tests and declares
it: `PART = Part("value.mul", misconceptions=(...), also_costs=(...))`; grading.toml gives its
title, points and visibility. The rest is derived, never listed by hand: its stubs are the
regions of solutions/ marked with its id (stubs.py), its engine file is its id's first word,
and the engine files a student completes are those of grading.toml's parts (`engines`): of the
grading.toml in use, the kit's own unless the grader was given another (`use`, the plugin's
`--grading`). Every reader of the engines asks here, when it reads them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .config import GRADING_TOML, ConfigError, parse

SUITES = Path(__file__).parent / "suites"
_IN_USE = [GRADING_TOML]  # the grading.toml this process grades by


def use(grading: Path) -> None:
    """Grade by `grading` (a grading.toml) in this process: its parts' engines are the files read."""
    _IN_USE[0] = Path(grading)


def engines(grading: Path | None = None) -> tuple[str, ...]:
    """The files a student completes, by engine name (`value` for value.py): the first words of
    the part ids of `grading` (a grading.toml; by default the one in use), in the order its parts
    come. Empty when it cannot be read: whatever reads it next says why."""
    path = Path(grading or _IN_USE[0])
    try:
        stamp = path.stat()
    except OSError:
        return ()
    return _engines_of(path, (stamp.st_mtime_ns, stamp.st_size))


@cache
def _engines_of(path: Path, stamp: tuple[int, int]) -> tuple[str, ...]:
    """engines() of a grading.toml as it was at `stamp` (read once: intake asks once per file)."""
    try:
        return tuple(dict.fromkeys(engine_of(part) for part in parse(path).parts))
    except ConfigError:
        return ()


def listed(words: list[str], last: str = "and") -> str:
    """Words as a sentence lists them: `value.py, tensor.py and dual.py`."""
    return f" {last} ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def engine_of(part_id: str) -> str:
    """The engine file a part grades, by name: the first word of its id."""
    return part_id.split(".")[0]


class PartError(Exception):
    """A suite's part declaration is missing or malformed; the message names the file and the fix."""


@dataclass(frozen=True)
class Part:
    """One part: its id, the misconceptions its tests may name, and the other parts a bug in
    its stubs may cost by their nature (training uses every operation; tanh far from zero is
    tanh)."""

    id: str
    misconceptions: tuple[str, ...] = ()
    also_costs: tuple[str, ...] = ()

    @property
    def engine(self) -> str:
        """The engine file the part grades: the first word of its id."""
        return engine_of(self.id)

    @property
    def suite(self) -> str:
        """The file name of its suite."""
        return suite_name(self.id)


def declaration(part: Part) -> str:
    """The source of `PART = Part(...)` for a part, in the kit's style (lines of at most 100)."""
    head = f"PART = Part({part.id!r}".replace("'", '"')
    fields = [(name, getattr(part, name)) for name in ("also_costs", "misconceptions") if getattr(part, name)]
    line = head
    for name, values in fields:
        items = ", ".join(f'"{value}"' for value in values) + ("," if len(values) == 1 else "")
        pad = " " * (len("PART = Part(") + len(name) + 2)
        words, rows = items.split(" "), [""]
        for word in words:
            rows[-1] += ("" if not rows[-1] else " ") + word
            if len(pad) + len(rows[-1]) > 90:
                rows.append("")
        text = f"{name}=(" + f"\n{pad}".join(row for row in rows if row) + ")"
        line += ",\n" + " " * len("PART = Part(") + text
    return line + ")"


def suite_name(part_id: str) -> str:
    """`value.mul` -> `test_value_mul.py`."""
    return "test_" + part_id.replace(".", "_") + ".py"


def read_declaration(path: Path) -> Part:
    """The `PART = Part(...)` of a suite file, read from its source (literals only). Raises PartError."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as error:
        raise PartError(f"{path}: cannot be read ({error})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["PART"]:
            call = node.value
            if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Part"):
                break
            try:
                args = [ast.literal_eval(a) for a in call.args]
                kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
                part = Part(*args, **{k: tuple(v) for k, v in kwargs.items()})
            except (ValueError, TypeError) as error:
                raise PartError(f"{path}: write PART = Part(...) with literals only ({error})") from None
            if path.name != part.suite:
                raise PartError(f"{path}: declares part {part.id!r}, whose suite is {part.suite}; rename "
                                "the file or the part")
            return part
    raise PartError(f'{path}: declare its part at the top, as PART = Part("<part id>", misconceptions=(...))')


@cache
def declared(folder: Path = SUITES) -> dict[str, Part]:
    """Every part declared by a suite of `folder`, by id, in file order. Raises PartError."""
    parts = [read_declaration(path) for path in sorted(folder.glob("test_*.py"))]
    return {part.id: part for part in parts}


def needs() -> dict[str, list[str]]:
    """A part -> the parts whose stubs it may lose points to (their `also_costs` name it)."""
    needs_of: dict[str, list[str]] = {}
    for part in declared().values():
        for cost in part.also_costs:
            needs_of.setdefault(cost, []).append(part.id)
    return needs_of


def start_with(lost: set[str], order: list[str]) -> str:
    """The lost part to read first: in grading.toml's order, the first whose loss no other lost
    part may explain (value.stability needs value.tanh: where both lost, tanh comes first)."""
    needs_of = needs()
    ordered = [part for part in order if part in lost] + sorted(lost - set(order))
    return next((part for part in ordered if not lost & set(needs_of.get(part, ())) - {part}), ordered[0])
