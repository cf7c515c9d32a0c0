"""As root, a hostile test that skips on a machine that cannot isolate fails instead.

CI runs the kit's tests as root with CAP_SYS_ADMIN (.ci/run): the sandbox tests run there at
the isolated level, and at the unprivileged level made from it. A run as root where the
isolated level, the tools that make the other levels, or the seccomp filter cannot be had would
otherwise pass with these tests skipped; it fails, and says why. Not as root (a developer's
account), they skip as before.
"""

from __future__ import annotations

import os
import shutil
from functools import cache

import pytest

from autograder import sandbox
from autograder.sandbox import seccomp

TOOLS = ("unshare", "setpriv", "sh")


@cache
def cannot_isolate() -> str | None:
    """Why this machine cannot run the sandbox tests at the isolated level, or None."""
    if sandbox.level() != "isolated":
        return f"its level is {sandbox.level()}, not isolated (root with CAP_SYS_ADMIN)"
    if missing := [tool for tool in TOOLS if not shutil.which(tool)]:
        return f"{', '.join(missing)} missing"
    if not seccomp.works():
        return "no seccomp filter can be installed (libseccomp and its Python interface, pyseccomp)"
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ARG001 - pytest's hook signature
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.geteuid() == 0 and (why := cannot_isolate()):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid}: skipped as root, and this machine cannot isolate: {why}. "
                           "CI runs the sandbox tests as root at the isolated level; grade on a "
                           "machine (or a privileged container) that gives it")
