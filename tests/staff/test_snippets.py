"""The kit's tests run a message's snippet as a student pastes it (support/snippets.py): a forked
Python must print what a fresh `python -c` prints in the same folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.snippets import Snippets

SNIPPET = """
import os, sys
from engine import VALUE
print(VALUE * 2, os.getcwd() == {folder!r}, sys.path[0] == "", "engine" in sys.modules)
print("to stderr", file=sys.stderr)
"""


def test_a_forked_snippet_prints_what_a_fresh_python_prints(tmp_path: Path):
    folders = [tmp_path / "one", tmp_path / "two"]
    for number, folder in enumerate(folders, 1):
        folder.mkdir()
        (folder / "engine.py").write_text(f"VALUE = {number}\n", encoding="utf-8")
    snippets = Snippets(1)
    try:
        for folder in folders:  # the second must not see the first one's engine
            code = SNIPPET.format(folder=str(folder))
            fresh = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True)
            assert snippets.run(code, folder) == (fresh.stdout, fresh.stderr)
        assert "raise" not in snippets.run("raise SystemExit(3)", tmp_path)[1]
        assert "ZeroDivisionError" in snippets.run("1 / 0", tmp_path)[1]
    finally:
        snippets.close()
