"""grading.toml, read once: parts, tolerances and limits."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parent.parent
GRADING_TOML = KIT_ROOT / "grading.toml"
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


class ConfigError(Exception):
    """grading.toml is missing something or holds a value the kit cannot use."""


@dataclass(frozen=True)
class Part:
    id: str
    title: str
    points: float
    visibility: str = "visible"
    bonus: bool = False


@dataclass(frozen=True)
class Tolerances:
    rel: float
    abs: float
    fd_rel: float
    fd_abs: float
    training_rel: float
    training_abs: float


@dataclass(frozen=True)
class Limits:
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


@dataclass(frozen=True)
class Grading:
    parts: dict[str, Part]
    tolerances: Tolerances
    limits: Limits
    source: Path


def _section(data: dict, name: str, cls: type, path: Path):
    table = data.get(name)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: add a [{name}] table")
    fields = cls.__dataclass_fields__
    missing = sorted(set(fields) - set(table))
    unknown = sorted(set(table) - set(fields))
    if missing or unknown:
        raise ConfigError(f"{path}: [{name}] is missing {missing} / has unknown keys {unknown}")
    return cls(**{key: float(value) if fields[key].type == "float" else int(value)
                  for key, value in table.items()})


def parse(path: Path) -> Grading:
    """Read and check a grading.toml; every error names the file and the key to fix."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: not found; the kit needs its grading.toml") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    parts = {}
    for part_id, table in data.get("parts", {}).items():
        try:
            part = Part(id=part_id, **table)
        except TypeError as error:
            raise ConfigError(f"{path}: [parts.\"{part_id}\"]: {error}") from None
        if part.visibility not in VISIBILITIES:
            raise ConfigError(f"{path}: [parts.\"{part_id}\"] visibility must be one of {VISIBILITIES}")
        parts[part_id] = part
    if not parts:
        raise ConfigError(f"{path}: add at least one [parts.\"<id>\"] table")
    return Grading(parts=parts,
                   tolerances=_section(data, "tolerances", Tolerances, path),
                   limits=_section(data, "limits", Limits, path),
                   source=path)


@cache
def load(path: Path = GRADING_TOML) -> Grading:
    return parse(path)
