"""The `autograder` command for course staff: one subcommand per job.

A subcommand's module is imported only when it runs, so that a missing extra costs only the
subcommands that need it, with one line that names it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

# What check, release and bulk read and write notebooks with imports fast (autograder/notebook.py).
sys.modules.setdefault("rfc3987_syntax", None)


@dataclass(frozen=True)
class Command:
    """A subcommand: its module, which defines `add_arguments(parser)` and `run(args) -> int`
    (or the functions named here), what it does, and the extra its module needs."""

    module: str
    summary: str
    extra: str = ""
    add: str = "add_arguments"
    run: str = "run"


COMMANDS = {
    "bulk": Command("autograder.staff.bulk", "grade a class of submissions into a gradebook, grades.csv and "
                    "feedback", extra="staff"),
    "release": Command("autograder.staff.release_command", "build the student handout, a Gradescope bundle "
                       "or nbgrader notebooks"),
    "check": Command("autograder.staff.check", "check that the kit is consistent: one line per problem, with "
                     "its fix"),
    "stubs": Command("autograder.staff.authoring", "write assignments/ from the marked regions of solutions/",
                     add="add_stubs_arguments", run="run_stubs"),
    "part": Command("autograder.staff.authoring", "make a given method a stub part, or a part's stubs given "
                    "code"),
    "mutate": Command("mutants.cli", "mutation testing of the suites, for some parts or all", extra="dev"),
    "replicas": Command("autograder.staff.replicas.verify", "hold bulk grading's replicas of the reference "
                        "against solutions/ at many seeds, and record the ones that agree"),
    "secret": Command("autograder.staff.secret", "make the course's secret that official gradings draw their "
                      "questions from"),
}


def main(argv: list[str] | None = None) -> int:
    """Run the `autograder` command on `argv` (default: sys.argv); returns the exit status. An error
    no command has a message for is one line that says where it was raised, never a traceback."""
    try:
        return dispatch(argv)
    except KeyboardInterrupt:  # each command says what it finished; this is for the moments before
        print("autograder: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the last line of defence: one line, and where to look
        print(f"autograder: stopped by {type(error).__name__}: {error}{raised_at(error)}, which the kit has "
              "no message for; `autograder check` names what is inconsistent in the kit, and this line is "
              "worth reporting", file=sys.stderr)
        return 1


def raised_at(error: BaseException) -> str:
    """` (at autograder/staff/x.py, line N)`: the last line of the kit's own code the error passed."""
    from ..config import KIT_ROOT

    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if Path(frame.filename).resolve().is_relative_to(KIT_ROOT)]
    if not frames:
        return ""
    return f" (at {Path(frames[-1].filename).resolve().relative_to(KIT_ROOT)}, line {frames[-1].lineno})"


def not_a_course_folder() -> str | None:
    """Why the installed package cannot grade, or None: the kit is a course's folder (its
    grading.toml, solutions/ and assignments/ beside the package), installed editable from it."""
    from ..config import KIT_ROOT

    missing = [name for name in ("grading.toml", "solutions", "assignments")
               if not (KIT_ROOT / name).exists()]
    if not missing:
        return None
    return (f"autograder: {KIT_ROOT} is not a course folder (no {', '.join(missing)} beside the autograder "
            "package); the kit grades from its own folder: install it from there with pip install -e "
            "<the kit's folder> (an editable install), not from a wheel")


def dispatch(argv: list[str] | None) -> int:
    """Parse `argv` and run the subcommand it names, importing only that one's module; returns
    the exit status (2 where the kit is no course folder or the module's extra is missing)."""
    argv = sys.argv[1:] if argv is None else argv
    problem = not_a_course_folder()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((word for word in argv if not word.startswith("-")), None)
    for name, command in COMMANDS.items():
        sub = commands.add_parser(name, help=command.summary, description=command.summary)
        if name == chosen:
            try:
                module = importlib.import_module(command.module)
            except ModuleNotFoundError as error:
                extra = command.extra or "staff"
                if command.module.startswith(f"{error.name}."):  # the command's own package
                    said = (f"{command.summary.split(',')[0]} (the kit's {error.name}/ package) is not "
                            f"installed here; install the kit with its {extra} extra")
                else:
                    said = f"needs {error.name}, which comes with the kit's {extra} extra"
                print(f"autograder {name}: {said}: pip install -e '.[{extra}]'", file=sys.stderr)
                return 2
            getattr(module, command.add)(sub)
            sub.set_defaults(run=getattr(module, command.run))
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
