"""Hostile submissions: each scores exactly what it honestly implements, and the grader survives.

The honest base is the reference with `__mul__` put back to its stub, so there is a part to
steal. Tricks played at import must leave every part's score as the base's; tricks played
inside backward() cost the parts that call it, and nothing else, with a reason in words.
"""

from __future__ import annotations

import json
import linecache
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import KIT
from support.autograding import autograde_folder
from support.hostile import fast_grading, grade, make_submission, scores

from autograder import graphs, sandbox

pytestmark = pytest.mark.slow  # grades in processes of its own, or trains at full length
NEEDS_ISOLATION = pytest.mark.skipif(
    sandbox.level() != "isolated",
    reason="only an isolated worker (root with namespaces) hides the kit's files and processes; "
           "see docs/threat-model.md")


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> dict:
    """A sealed reference, fast limits, and the honest base's scores."""
    folder = tmp_path_factory.mktemp("hostile")
    grading = fast_grading(folder)
    sealed = folder / "reference.json"
    autograde_folder(KIT / "solutions", folder / "reference-results.json", f"--grading={grading}",
                     f"--seal-reference={sealed}")
    base = make_submission(folder, "honest")
    run = {"folder": folder, "grading": grading, "extra": (f"--reference={sealed}",)}
    run["honest"] = scores(grade(base, folder, grading, *run["extra"]))
    assert run["honest"]["value.mul"] == 0 and run["honest"]["value.backward"] > 0
    return run


def graded(bench: dict, name: str, **trick: str) -> dict[str, dict]:
    submission = make_submission(bench["folder"], name, **trick)
    return grade(submission, bench["folder"], bench["grading"], *bench["extra"])


AT_IMPORT = {
    "patches_the_comparisons": """
        import builtins, math
        import numpy
        math.isclose = lambda *args, **kwargs: True
        numpy.allclose = lambda *args, **kwargs: True
        numpy.testing.assert_allclose = lambda *args, **kwargs: None
        builtins.abs = lambda x: 0
        try:
            import _pytest.outcomes
            _pytest.outcomes.fail = lambda *args, **kwargs: None
        except ImportError:
            pass
        """,
    "lies_in_comparisons": """
        class _Liar(float):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __lt__(self, other): return True
            def __le__(self, other): return True
            def __abs__(self): return _Liar(0.0)
            def __sub__(self, other): return _Liar(0.0)
            def __rsub__(self, other): return _Liar(0.0)
            __hash__ = float.__hash__

        def _lying_mul(self, other):
            out = Value(0.0)
            out.data = _Liar(0.0)
            self.grad = other.grad = _Liar(0.0) if isinstance(other, Value) else _Liar(0.0)
            return out

        Value.__mul__ = _lying_mul
        """,
    "prints_200_megabytes": """
        import sys as _sys
        for _ in range(200):
            _sys.stdout.write("x" * (1 << 20))
        """,
    "closes_its_output": """
        import os as _os
        _os.close(1)
        _os.close(2)
        """,
    "forks_many_children": """
        import os as _os, time as _time
        for _ in range(300):
            try:
                if _os.fork() == 0:
                    _time.sleep(120)
                    _os._exit(0)
            except OSError:
                break
        """,
}


@pytest.mark.parametrize("trick", AT_IMPORT)
def test_a_trick_at_import_gains_nothing(bench, trick):
    results = graded(bench, trick, at_import=AT_IMPORT[trick])
    assert scores(results) == bench["honest"]


@NEEDS_ISOLATION
def test_the_reference_cannot_be_found(bench):
    results = graded(bench, "walks_the_filesystem", in_mul=f"""
        import os
        found = []
        for start in ({str(KIT)!r}, "/tmp", "/root", "/home", "/work"):
            for top, folders, files in os.walk(start):
                folders[:] = [f for f in folders if f not in (".venv", "site-packages", ".git")]
                found += [os.path.join(top, f) for f in files if f in ("value.py", "grading.toml")
                          or f.startswith("test_value_")]
        found = [path for path in found if not path.startswith(os.getcwd())]
        print("FOUND", found)
        for path in found:
            if path.endswith("value.py"):
                namespace = {{}}
                exec(open(path).read(), namespace)
                return namespace["Value"].__mul__(self, other)
        """)
    assert scores(results) == bench["honest"]
    assert "FOUND []" in results["value.mul"]["output"]


@NEEDS_ISOLATION
def test_the_suites_cannot_be_read_or_printed(bench):
    results = graded(bench, "prints_the_suites", in_mul=f"""
        for path in {[str(p) for p in (KIT / "autograder" / "suites").glob("test_*.py")]!r}:
            try:
                print(open(path).read())
            except OSError as error:
                print("cannot read", path, type(error).__name__)
        """)
    assert scores(results) == bench["honest"]
    everything = json.dumps(results)
    assert "def test_" not in everything and "cannot read" in everything


@NEEDS_ISOLATION
def test_fake_results_land_nowhere(bench):
    def planted() -> set[Path]:
        return {p for p in bench["folder"].rglob("*")
                if p.is_file() and (p.name.endswith("results.json") or p.suffix == ".csv")}

    before = planted()
    kit_before = sorted(p.name for p in KIT.iterdir())
    results = graded(bench, "writes_fake_results", at_import=f"""
        import os as _os
        for _folder in (".", "/tmp", {str(bench['folder'])!r}, {str(KIT)!r}, "/autograder/results"):
            for _name in ("results.json", "grades.csv"):
                try:
                    with open(_os.path.join(_folder, _name), "w") as _file:
                        _file.write('{{"score": 100}}')
                except OSError:
                    pass
        """)
    assert scores(results) == bench["honest"]
    assert {p.name for p in planted() - before} == {"writes_fake_results-results.json"}
    assert sorted(p.name for p in KIT.iterdir()) == kit_before


@NEEDS_ISOLATION
def test_the_grader_cannot_be_killed(bench):
    results = graded(bench, "kills_its_parent", in_mul="""
        import os, signal
        for pid in (os.getppid(), 1, -1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError as error:
                print("kill", pid, type(error).__name__)
        print("still here")
        """)
    assert scores(results) == bench["honest"]
    assert "still here" in results["value.mul"]["output"]


@NEEDS_ISOLATION
def test_no_process_outlives_its_worker(bench):
    results = graded(bench, "leaves_children", in_mul="""
        import os, time
        children = []
        for _ in range(300):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                os.setsid()  # out of the worker's process group
                time.sleep(120)
                os._exit(0)
            children.append(pid)
        print("CHILDREN", len(children), "UID", os.getuid())
        """)
    found = re.findall(r"CHILDREN (\d+) UID (\d+)", " ".join(e["output"] for e in results.values()))
    assert found and all(int(count) < 300 for count, _ in found)  # the process limit stopped them
    assert not [uid for _, uid in found if _alive(int(uid))]


IN_BACKWARD = {
    "calls_sys_exit": ("import sys; sys.exit(0)", "raised SystemExit"),
    "calls_os_exit": ("import os; os._exit(0)", "the worker exited with status 0 before answering"),
    "raises_keyboard_interrupt": ("raise KeyboardInterrupt", "raised KeyboardInterrupt"),
    "loops_forever": ("while True: pass", "timed out after 0.10 s of CPU time"),
    "eats_memory": ("hoard = []\nwhile True: hoard.append(bytes(1 << 28))", "memory limit of 2048 MB"),
    "recurses_without_end": ("def down(n): return down(n + 1)\ndown(0)", "RecursionError"),
    "overflows_the_c_stack": ("import sys\nsys.setrecursionlimit(10**7)\nclass Loop:\n"
                              "    def __repr__(self): return repr(self)\nrepr(Loop())",
                              "the worker crashed (a segmentation fault"),
}


@pytest.mark.parametrize("trick", IN_BACKWARD)
def test_a_trick_in_backward_costs_only_what_calls_backward(bench, trick):
    code, reason = IN_BACKWARD[trick]
    results = graded(bench, trick, in_backward=code)
    # Only value.backward's scenarios (and the training runs, which the base cannot pass without
    # __mul__) call backward() itself: the other parts run the kit's own reverse pass.
    for part, entry in results.items():
        assert entry["score"] == (0 if part == "value.backward" else bench["honest"][part]), part
    assert reason in results["value.backward"]["output"], results["value.backward"]["output"]


def test_where_an_error_happened_is_found_without_reading_every_frame_of_its_traceback(tmp_path, monkeypatch):
    """The worker's report of an exception names the submission's last line it passed through
    (scenarios/common.py's `where`, which serve.py asks too). A recursion's traceback holds
    20,000 frames; reading each of them took a case's CPU time limit, so that the answer came
    back a timeout, without the word RecursionError. It is sought from the deepest frame up,
    and only the line named is read."""
    from autograder.inside.scenarios import common

    submission = tmp_path / "value.py"
    submission.write_text("def down(n):\n    return down(n + 1)\n", encoding="utf-8")
    module: dict = {}
    exec(compile(submission.read_text(encoding="utf-8"), str(submission), "exec"), module)
    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # the worker's own
    try:
        module["down"](0)
    except RecursionError as error:
        raised = error
    finally:
        sys.setrecursionlimit(depth)
    looked_up = []
    real = linecache.getline
    monkeypatch.setattr(linecache, "getline", lambda *args: looked_up.append(args) or real(*args))
    monkeypatch.chdir(tmp_path)
    assert common.where(raised) == "value.py, line 2: return down(n + 1)"
    assert len(looked_up) == 1


def test_a_recursion_ends_its_scenario_at_the_first_case(monkeypatch):
    """Each case of a scenario that recursed without end would spend the CPU time of a 20,000-
    frame recursion: the first RecursionError (or MemoryError) is the scenario's answer."""
    from autograder.inside.scenarios import common

    calls = []

    def observe() -> dict:
        calls.append(1)
        raise RecursionError("maximum recursion depth exceeded")

    with pytest.raises(RecursionError):
        [common.case({"x": x}, observe) for x in range(5)]
    assert len(calls) == 1
    assert common.case({"x": 1}, lambda: 1 / 0)["raised"]["type"] == "ZeroDivisionError"


def _alive(uid: int) -> bool:
    """Is a process of this uid running or sleeping? (A zombie holds nothing.)"""
    return any(True for _ in sandbox.processes_of(uid))


def test_an_endless_import_costs_only_its_file(bench):
    results = graded(bench, "hangs_at_import", at_import="while True: pass")
    for part, entry in results.items():
        assert entry["score"] == (0 if part.startswith("value.") else bench["honest"][part]), part
    expected = "importing value.py failed: timed out after 3.00 s of CPU time"
    assert expected in results["value.backward"]["output"]


def test_different_hash_seeds_give_the_same_scores(bench):
    """The grader's PYTHONHASHSEED reaches neither its scores nor the worker, whose string hashes
    are the same in every grading: a submission that prints one (in its stubbed __mul__, whose
    failed checks show it) prints the same number however the grader was started."""
    submission = make_submission(bench["folder"], "hash_seeds", in_mul='print("HASH", hash("value.mul"))')
    seen = {}
    for seed in ("1", "2"):
        results = grade(submission, bench["folder"], bench["grading"], *bench["extra"],
                        env={"PYTHONHASHSEED": seed})
        printed = set(re.findall(r"HASH (-?\d+)", results["value.mul"]["output"]))
        assert len(printed) == 1, results["value.mul"]["output"]
        seen[seed] = (scores(results), printed)
    assert seen["1"] == seen["2"] and seen["1"][0] == bench["honest"]


# Answers forged on their way out of the worker (json.dumps replaced at import): each keeps the
# form the judge expects and holds nothing, or holds what JSON can say but a real answer cannot.
FORGE = """
import json as _json
_dumps = _json.dumps

def _forge(x, key=None):
    if isinstance(x, dict):
        if "ndarray" in x:
            return {{"ndarray": _numbers(x["ndarray"]), "shape": x["shape"]}}
        return {kind_dict}
    if isinstance(x, list):
        return {kind_list}
    if isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool)):
        return {kind_number}
    return x

def _numbers(numbers):
    return {kind_array}

def _forged_dumps(obj, *args, **kwargs):
    if isinstance(obj, dict) and "observations" in obj:
        obj = dict(obj, observations=_forge(obj["observations"]))
    return _dumps(obj, *args, **kwargs)

_json.dumps = _forged_dumps
"""
KEEP = {"kind_dict": "{k: _forge(v, k) for k, v in x.items()}", "kind_list": "[_forge(v) for v in x]",
        "kind_number": "x", "kind_array": "[_forge(v) for v in numbers]"}
# Each forgery, and what the message of unbroadcast (whose answers are arrays) says of it.
MALFORMED = "a malformed answer"
FORGERIES = {
    "an_array_with_no_numbers": ({"kind_array": "[]"}, MALFORMED),
    "an_array_one_number_short": ({"kind_array": "[0.0 for _ in numbers[1:]]"}, MALFORMED),
    "an_array_one_number_long": ({"kind_array": "[0.0 for _ in numbers] + [0.0]"}, MALFORMED),
    "empty_lists": ({"kind_list": "[]"}, "result length = 0"),
    "dicts_without_keys": ({"kind_dict": "{}"}, MALFORMED),
    "dicts_with_a_key_more": ({"kind_dict": "dict({k: _forge(v, k) for k, v in x.items()}, extra=0.0)"},
                              MALFORMED),
    "numbers_as_text": ({"kind_number": "'0'", "kind_array": "['0' for _ in numbers]"}, MALFORMED),
    "numbers_as_booleans": ({"kind_number": "True", "kind_array": "[True for _ in numbers]"}, MALFORMED),
    "numbers_as_null": ({"kind_number": "None", "kind_array": "[None for _ in numbers]"}, MALFORMED),
    "numbers_too_large_for_a_float": ({"kind_number": "10 ** 400",
                                       "kind_array": "[10 ** 400 for _ in numbers]"}, MALFORMED),
    # What a real engine's overflow gives: a wrong answer, shown as it came out.
    "numbers_as_nan": ({"kind_number": "float('nan')", "kind_array": "[float('nan') for _ in numbers]"},
                       "[nan, nan, nan"),
    "numbers_as_infinity": ({"kind_number": "float('inf')", "kind_array": "[float('inf') for _ in numbers]"},
                            "[inf, inf, inf"),
    # Too deep for json.dumps: the worker dies of its own forgery.
    "lists_nested_deeply": ({"kind_list": "eval('[' * 5000 + ']' * 5000)"}, "before answering"),
}
ZERO_UNBROADCAST = "def unbroadcast(grad, shape):\n    return np.zeros(shape)\n\n\n"


def with_zero_unbroadcast(folder: Path, at_import: str = "") -> Path:
    """The honest base, with an unbroadcast that answers zeros of the right shape (and
    `at_import` at the end of tensor.py)."""
    source = (folder / "tensor.py").read_text(encoding="utf-8")
    start = source.index("def unbroadcast(")
    end = min(source.index(f"\n{word} ", start) for word in ("def", "class")) + 1
    source = source[:start] + ZERO_UNBROADCAST + source[end:] + "\n" + textwrap.dedent(at_import)
    (folder / "tensor.py").write_text(source, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def zero_unbroadcast(bench) -> dict[str, float]:
    submission = with_zero_unbroadcast(make_submission(bench["folder"], "zero_unbroadcast"))
    honest = scores(grade(submission, bench["folder"], bench["grading"], *bench["extra"]))
    assert honest["tensor.unbroadcast"] < 12 / 2, "zeros should fail most of unbroadcast"
    return honest


@pytest.mark.parametrize("forgery", FORGERIES)
def test_an_answer_that_holds_nothing_earns_nothing(bench, zero_unbroadcast, forgery):
    edits, said = FORGERIES[forgery]
    code = FORGE.format(**{**KEEP, **edits})
    submission = with_zero_unbroadcast(make_submission(bench["folder"], forgery), at_import=code)
    results = grade(submission, bench["folder"], bench["grading"], *bench["extra"])
    for part, entry in results.items():
        assert entry["score"] <= zero_unbroadcast[part], part
    message = results["tensor.unbroadcast"]["output"]
    assert results["tensor.unbroadcast"]["score"] == 0
    assert said in message and "fault of the grader" not in message
    assert not re.search(r"\{[a-z_]+\}", message), "a snippet was left unfilled"


# An exception whose type name and message hold lines of a message of the kit's: an answer it
# never gave, a score line, and a graph table with a row marked.
FORGED_LINES = ["Expected: nothing; this check passed", "value.mul: 10 / 10 points", graphs.INTRO,
                "  ".join(graphs.COLUMNS), ">  1  forged  FORGED  1.0  10.0  10.0  -"]
FORGED_MESSAGE = "\n\n" + "\n".join(FORGED_LINES)
FORGED_RAISE = (f"raise type('ValueError\\n' + {FORGED_LINES[1]!r}, (Exception,), {{}})"
                f"({FORGED_MESSAGE!r})")


@pytest.mark.parametrize("where", ["in_mul", "at_import"])
def test_a_message_holds_no_line_of_the_submissions_making(bench, where):
    results = graded(bench, f"forges_a_message_{where}", **{where: FORGED_RAISE})
    for part, entry in results.items():
        honest = 0 if where == "at_import" and part.startswith("value.") else bench["honest"][part]
        assert entry["score"] == honest, part
    output = results["value.mul"]["output"]
    assert "FORGED" in output  # the exception is shown, as text the submission wrote
    for forged in FORGED_LINES:
        starting = [line for line in output.splitlines() if line.startswith(forged)]
        assert not starting, f"a line of the submission's making passes for the kit's: {starting}"
    tables = [block for block in graphs.blocks(output) if isinstance(block, graphs.Table)]
    assert not any("FORGED" in cell for table in tables for row in table.rows for cell in row)


# -- what no setting outside the grader can do ------------------------------------------------------

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0 or sandbox.level() not in sandbox.ROOT_LEVELS,
                             reason="the grader drops root only when it runs as root")
REPORTS_ITS_UID = 'print("UID", __import__("os").getuid())'


def grading_run(submission: Path, folder: Path, *options: str,
                env: dict | None = None) -> subprocess.CompletedProcess:
    """`pytest autograder` on `submission` as a process of its own, whatever its exit status."""
    command = [sys.executable, "-m", "pytest", "autograder", f"--submission={submission}",
               "--results-json=" + str(folder / f"{submission.name}-results.json"), "-q",
               "-p", "no:cacheprovider", *options]
    return subprocess.run(command, cwd=KIT, env={**os.environ, **(env or {})}, capture_output=True,
                          text=True, timeout=1800)


@AS_ROOT
def test_no_environment_variable_runs_a_submission_as_root(bench):
    """AUTOGRADER_SANDBOX_LEVEL=limits, set as root, once ran the submission as uid 0."""
    results = grade(make_submission(bench["folder"], "reports_its_uid", in_mul=REPORTS_ITS_UID),
                    bench["folder"], bench["grading"], *bench["extra"],
                    env={"AUTOGRADER_SANDBOX_LEVEL": "limits"})
    uids = re.findall(r"UID (\d+)", results["value.mul"]["output"])
    assert uids and "0" not in uids
    assert scores(results) == bench["honest"]


@AS_ROOT
def test_no_option_lowers_the_level_to_root(bench):
    """--sandbox-level limits as root is refused before anything runs, and so is a level that
    does not exist (test_isolation.py lowers isolated to unprivileged by name)."""
    marker = bench["folder"] / "ran-at-limits"
    would_run = make_submission(bench["folder"], "would_run_as_root", at_import=f"""
        open({str(marker)!r}, "w").write("ran")
        """)
    refused = grading_run(would_run, bench["folder"], "--grading=" + str(bench["grading"]), *bench["extra"],
                          "--sandbox-level", "limits")
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR, refused.stdout[-2000:]
    said = " ".join((refused.stdout + refused.stderr).split())
    assert "--sandbox-level limits" in said and "never runs as root" in said and "Traceback" not in said
    assert not marker.exists()
    unknown = grading_run(KIT / "solutions", bench["folder"], "--sandbox-level", "none")
    assert unknown.returncode == pytest.ExitCode.USAGE_ERROR
    assert "isolated, unprivileged, limits" in unknown.stderr


# Put at the end of value.py: every scenario (a public function of the scenario modules whose
# first parameter is an engine) sleeps before it runs, and then answers as the reference does.
SLEEPS_IN_EVERY_SCENARIO = """
import sys as _sys, time as _time, types as _types

def _sleeping(function):
    def sleeping(*args, **kwargs):
        _time.sleep(0.5)
        return function(*args, **kwargs)
    sleeping.__dict__.update(vars(function))  # its @scenario declaration: the engine it takes
    return sleeping

for _name, _module in list(_sys.modules.items()):
    if _name.startswith("scenarios."):
        for _key, _value in list(vars(_module).items()):
            if isinstance(_value, _types.FunctionType) and hasattr(_value, "engine"):
                setattr(_module, _key, _sleeping(_value))
"""


def test_sleeping_is_budgeted_per_submission(bench):
    """A correct engine that sleeps half a second in every scenario kept every point, and held
    its grading for minutes (each request could idle a second): now it has idle_seconds in all,
    and loses the scenarios past it; the same engine without the sleep loses nothing."""
    grading = bench["folder"] / "grading-idle.toml"
    text, count = re.subn(r"^idle_seconds = .*$", "idle_seconds = 1.0", bench["grading"].read_text(),
                          flags=re.M)
    assert count == 1
    grading.write_text(text)
    correct = grade(KIT / "solutions", bench["folder"], grading, *bench["extra"])
    assert all(entry["score"] == entry["max_score"] for entry in correct.values())
    sleeper = bench["folder"] / "sleeps"
    shutil.copytree(KIT / "solutions", sleeper)
    with open(sleeper / "value.py", "a", encoding="utf-8") as file:
        file.write(SLEEPS_IN_EVERY_SCENARIO)
    results = grade(sleeper, bench["folder"], grading, *bench["extra"])
    total = sum(entry["score"] for entry in results.values())
    assert 0 < total < sum(entry["max_score"] for entry in results.values() if entry["max_score"])
    everything = " ".join(entry["output"] for entry in results.values())
    assert "slept or waited" in everything and "may do so for 1 s in all" in everything
