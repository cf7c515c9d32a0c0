"""grading.toml, read once: parts, tolerances, limits, and intake's limits."""

from __future__ import annotations

import difflib
import math
import typing
from dataclasses import dataclass
from functools import cache
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.9 and 3.10: the same reader, published as tomli
    import tomli as tomllib

from .answers import Tolerance

KIT_ROOT = Path(__file__).resolve().parent.parent
GRADING_TOML = KIT_ROOT / "grading.toml"
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


class ConfigError(Exception):
    """grading.toml is missing something or holds a value the kit cannot use."""


@dataclass(frozen=True)
class PartSettings:
    """One part of grading.toml: its id, title, points, Gradescope visibility and bonus flag."""

    id: str
    title: str
    points: float
    visibility: str = "visible"
    bonus: bool = False


@dataclass(frozen=True)
class Tolerances:
    """The [tolerances] table: answers, finite differences and training runs, each rel and abs."""

    rel: float
    abs: float
    fd_rel: float
    fd_abs: float
    training_rel: float
    training_abs: float

    def named(self, name: str) -> Tolerance:
        """The tolerance a test or a replica names: "training" for training runs, else the answers'."""
        if name == "training":
            return Tolerance(self.training_rel, self.training_abs)
        return Tolerance(self.rel, self.abs)


@dataclass(frozen=True)
class Limits:
    """The [limits] table: time as a multiple of the reference's, and the worker's resources."""

    time_multiplier: float
    time_floor_seconds: float
    timeouts_per_part: int
    import_seconds: float
    cpu_seconds: int
    memory_mb: int
    processes: int
    file_size_mb: int
    open_files: int
    output_kb: int
    test_timeout_seconds: float
    scratch_mb: int
    wall_clock_seconds: float
    idle_seconds: float


@dataclass(frozen=True)
class CostBudget:
    """The [budget] table, which `autograder check` holds its cost report to (optional)."""

    class_of_100_minutes: float = 10.0


@dataclass(frozen=True)
class Intake:
    """The [intake] table (optional): how large a zip's listing may be before intake lists it."""

    zip_members: int = 10_000
    download_members: int = 50_000
    zip_directory_mb: int = 8


@dataclass(frozen=True)
class Grading:
    """A checked grading.toml: its parts by id, tolerances, limits, budget, and the file it came from."""

    parts: dict[str, PartSettings]
    tolerances: Tolerances
    limits: Limits
    source: Path
    budget: CostBudget = CostBudget()
    intake: Intake = Intake()


TOP_LEVEL = ("parts", "tolerances", "limits", "budget", "intake")
PART_KEYS = ("title", "points", "visibility", "bonus")


def _unknown(key: str, known: tuple[str, ...] | list[str]) -> str:
    """`"key"` with the nearest known name, if one is near, and the names that are known."""
    near = difflib.get_close_matches(key, known, n=1)
    hint = f'; did you mean "{near[0]}"?' if near else ""
    return f'an unknown key "{key}"{hint} (the keys are {", ".join(known)})'


def _number(where: str, key: str, value: object, whole: bool = False, above_zero: bool = False) -> float:
    """`value` if it is a finite int or float (not a bool), at least 0 (above 0 where
    `above_zero`), an int where `whole`; raises ConfigError naming `where` and `key` otherwise."""
    ok = isinstance(value, int) if whole else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < 0 \
            or (above_zero and value == 0):
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{where} {key} = {value!r}: write {kind} "
                          f"{'above 0' if above_zero else 'of at least 0'} here, without quotes")
    return value


def _section(data: dict, name: str, cls: type, path: Path):
    """The [name] table as a `cls`: every field present, and nothing else; each value a number,
    whole where the field is an int, above 0 but in [tolerances]. Raises ConfigError naming the
    file and the key."""
    table = data.get(name)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: add a [{name}] table")
    fields = typing.get_type_hints(cls)  # field name -> its type (int or float), resolved
    for key in table:
        if key not in fields:
            raise ConfigError(f"{path}: [{name}] has {_unknown(key, list(fields))}")
    missing = [key for key in fields if key not in table]
    if missing:
        raise ConfigError(f"{path}: [{name}] is missing {', '.join(missing)}; add "
                          f"{'them' if len(missing) > 1 else 'it'} (the kit's own grading.toml has "
                          "every key, with a comment saying what it means)")
    # A tolerance may be 0 (exact); a limit of 0 would fail every scenario, a budget of 0 every kit.
    values = {}
    for key, value in table.items():
        whole = fields[key] is int
        checked = _number(f"{path}: [{name}]", key, value, whole=whole, above_zero=name != "tolerances")
        values[key] = int(checked) if whole else float(checked)
    return cls(**values)


def _part(path: Path, part_id: str, table: object) -> PartSettings:
    """The PartSettings of the table [parts."part_id"]; raises ConfigError naming the file and the key."""
    where = f'{path}: [parts."{part_id}"]'
    if not isinstance(table, dict):
        raise ConfigError(f'{where}: write it as a table, with title = "..." and points = N')
    for key in table:
        if key not in PART_KEYS:
            raise ConfigError(f"{where} has {_unknown(key, PART_KEYS)}")
    for key in ("title", "points"):
        if key not in table:
            raise ConfigError(f"{where} has no {key}; add {key} = "
                              + ('"what the part is"' if key == "title" else "the points it is worth"))
    title, visibility, bonus = table["title"], table.get("visibility", "visible"), table.get("bonus", False)
    if not isinstance(title, str) or not title.strip():
        raise ConfigError(f'{where} title = {title!r}: write the part\'s title in quotes, such as "Dual"')
    if visibility not in VISIBILITIES:
        raise ConfigError(f"{where} visibility = {visibility!r}: write one of "
                          + ", ".join(f'"{v}"' for v in VISIBILITIES))
    if not isinstance(bonus, bool):
        raise ConfigError(f"{where} bonus = {bonus!r}: write true or false, without quotes")
    return PartSettings(id=part_id, title=title, points=_number(where, "points", table["points"]),
                visibility=visibility, bonus=bonus)


def parse(path: Path) -> Grading:
    """The Grading in the file at `path`; raises ConfigError naming the file, table and key to fix."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: not found; the kit needs its grading.toml") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read ({error})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    for key in data:
        if key not in TOP_LEVEL:
            raise ConfigError(f"{path}: {_unknown(key, TOP_LEVEL)} at the top level")
    tables = data.get("parts", {})
    if not isinstance(tables, dict):
        raise ConfigError(f'{path}: parts must be tables of their own, [parts."<id>"]')
    parts = {part_id: _part(path, part_id, table) for part_id, table in tables.items()}
    if not parts:
        raise ConfigError(f"{path}: add at least one [parts.\"<id>\"] table")
    return Grading(parts=parts,
                   tolerances=_section(data, "tolerances", Tolerances, path),
                   limits=_section(data, "limits", Limits, path),
                   source=path,
                   budget=_section(data, "budget", CostBudget, path) if "budget" in data else CostBudget(),
                   intake=_section(data, "intake", Intake, path) if "intake" in data else Intake())


@cache
def load(path: Path = GRADING_TOML) -> Grading:
    """`parse(path)`, read once per path; raises ConfigError."""
    return parse(path)
