"""grading.toml: every mistake is one error naming the file, the table, the key and the fix."""

import re
from pathlib import Path

import pytest
from support import KIT

from autograder.config import ConfigError, parse

TOML = (KIT / "grading.toml").read_text(encoding="utf-8")


def edited(tmp_path: Path, old: str, new: str) -> Path:
    """The kit's grading.toml with one line changed, written to a file of its own."""
    assert TOML.count(old) == 1, old
    path = tmp_path / "grading.toml"
    path.write_text(TOML.replace(old, new), encoding="utf-8")
    return path


def test_the_kits_own_grading_toml_is_read_as_written():
    grading = parse(KIT / "grading.toml")
    assert grading.parts["value.mul"].points == 10 and isinstance(grading.parts["value.mul"].points, int)
    assert grading.limits.cpu_seconds == 120 and isinstance(grading.limits.time_multiplier, float)


@pytest.mark.parametrize(("old", "new", "message"), [
    ('points = 10\nvisibility = "visible"\n\n[parts."value.tanh"]',
     'points = "ten"\nvisibility = "visible"\n\n[parts."value.tanh"]',
     r'\[parts\."value\.mul"\] points = \'ten\': write a number of at least 0 here, without quotes'),
    ('title = "Value.tanh: derivative from the output"\npoints = 8',
     'title = "Value.tanh: derivative from the output"\npoint = 8',
     r'\[parts\."value\.tanh"\] has an unknown key "point"; did you mean "points"\?'),
    ('title = "Value.relu: gradient through the gate"\n', '',
     r'\[parts\."value\.relu"\] has no title; add title = '),
    ('title = "Value.tanh at large inputs"\npoints = 2\nvisibility = "visible"',
     'title = "Value.tanh at large inputs"\npoints = 2\nvisibility = "later"',
     r'\[parts\."value\.stability"\] visibility = \'later\': write one of "visible", "hidden"'),
    ("bonus = true", 'bonus = "yes"', r"bonus = 'yes': write true or false"),
    ("points = 12", "points = -12",
     r'\[parts\."tensor\.unbroadcast"\] points = -12: write a number of at least 0'),
    ("cpu_seconds = 120", "cpu_second = 120",
     r'\[limits\] has an unknown key "cpu_second"; did you mean "cpu_seconds"\?'),
    ("cpu_seconds = 120", "cpu_seconds = 120.5",
     r"\[limits\] cpu_seconds = 120\.5: write a whole number above 0"),
    ("memory_mb = 2048", "memory_mb = 0", r"\[limits\] memory_mb = 0: write a whole number above 0"),
    ("time_multiplier = 10.0", "time_multiplier = true", r"time_multiplier = True: write a number above 0"),
    ("rel = 1e-7", 'rel = "1e-7"', r"\[tolerances\] rel = '1e-7': write a number of at least 0 here"),
    ("open_files = 256\n", "", r"\[limits\] is missing open_files; add it"),
    ("[tolerances]", "[tolerance]",
     r'an unknown key "tolerance"; did you mean "tolerances"\? .* at the top level'),
    pytest.param('[parts."dual"]', "[parts.dual.extra]", r'\[parts\."dual"\] has an unknown key "extra"',
                 marks=pytest.mark.engine("dual")),
])
def test_a_mistake_in_grading_toml_is_one_line_naming_the_file_key_and_fix(tmp_path, old, new, message):
    path = edited(tmp_path, old, new)
    with pytest.raises(ConfigError) as raised:
        parse(path)
    text = str(raised.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    assert re.search(message, text), text


def test_a_tolerance_of_zero_is_allowed(tmp_path):
    assert parse(edited(tmp_path, "abs = 1e-9", "abs = 0")).tolerances.abs == 0.0


def test_grading_toml_that_is_not_toml_says_so(tmp_path):
    path = tmp_path / "grading.toml"
    path.write_text("[parts\npoints = ", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse(path)
