"""Gradescope's side, as the tests of the bundle play it: its results.json schema, a submission
put where Gradescope puts it, and run_autograder run in a copy of its /autograder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

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


PEEK = '''
try:
    with open({path!r}) as peeked:
        peeked.read(1)
except OSError:
    pass
else:  # the file was readable: give the theft away by breaking __mul__
    Value.__mul__ = lambda self, other: None
'''
