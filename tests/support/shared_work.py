"""Tests that share work run in one process when the kit's tests run in parallel (pytest-xdist).

A module- or session-scoped fixture is built once in each process that runs a test using it: a
mutation run, a class graded or the corpus graded for the session would be built twice, once per
core, if the tests that use it were spread. So each such test belongs to a group, and under
`--dist loadgroup` a group goes to one process, whole:

- the tests that use a session fixture that builds something only they use (the corpus graded,
  a release, an nbgrader course, the sealed reference of the bulk tests), wherever they are;
- the tests that use a module's own module- or session-scoped fixture;
- and, together, tests that share any of these through others (a test that uses both a module's
  fixture and the corpus joins the two groups).

pytest-xdist's own loadgroup reads a test's group from a suffix that its `xdist_group` mark adds
to the test's node id, and pytest 9.2 no longer lets a plugin change a node id
(pytest-dev/pytest-xdist#1386): the marks were there, and every group was spread. Here each
process writes the groups as it collects (`write_groups`), into a folder that every process of
the run shares, and the scheduler of the process that hands out the tests reads them
(`GroupScheduling`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

# The session fixtures (tests/conftest.py) that build what a few modules use: the corpus graded,
# the Gradescope bundle, the Classroom release, an nbgrader course, the bulk tests' sealed reference.
# Those that nearly every grading test uses (sealed_reference, autograde) would make one group of
# half the suite, and cost a second or two to build again.
SESSION_WORK = {"corpus_grades", "bundle", "classroom_release", "nbgrader_course", "reference_cache"}
FILE = "groups.json"


def shared(item: pytest.Item) -> set[str]:
    """What `item` shares with other tests: each session fixture of SESSION_WORK, and each module-
    or session-scoped fixture of a test module, that it uses."""
    definitions = item._fixtureinfo.name2fixturedefs if hasattr(item, "_fixtureinfo") else {}
    found = set()
    for name in getattr(item, "fixturenames", ()):
        fixture = definitions[name][-1] if definitions.get(name) else None
        if name in SESSION_WORK:
            found.add(name)
        elif fixture and fixture.scope in ("module", "session") and fixture.baseid.endswith(".py"):
            found.add(f"{fixture.baseid}::{name}")
    return found


def groups(items: list[pytest.Item]) -> dict[str, str]:
    """Node id -> group, for each test that shares work: tests that share anything, directly or
    through others, are one group (named by one of the things they share)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    sharing = {item.nodeid: sorted(keys) for item in items if (keys := shared(item))}
    for keys in sharing.values():
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
    return {nodeid: root(keys[0]) for nodeid, keys in sharing.items()}


def write_groups(folder: Path, items: list[pytest.Item]) -> None:
    """Each grouped test's node id -> its group, in `folder` (every process collects the same
    tests, so each writes the same file; the last write stands whole)."""
    partial = folder / f"{FILE}.{os.getpid()}"
    partial.write_text(json.dumps(groups(items)), encoding="utf-8")
    partial.replace(folder / FILE)


class GroupScheduling(LoadScopeScheduling):
    """pytest-xdist's scheduling by scope, where a test's scope is its group (or the test alone),
    the groups in the order the tests were collected: the kit's tests put the longest first."""

    def __init__(self, config: pytest.Config, log, folder: Path) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False  # keep the collection's order, longest first
        self.folder = folder
        self.groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:  # first asked once every process has collected, and so written
            self.groups = json.loads((self.folder / FILE).read_text(encoding="utf-8"))
        return self.groups.get(nodeid, nodeid)
