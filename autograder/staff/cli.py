"""The `autograder` command for course staff: one subcommand per job."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> module that defines `add_arguments(parser)` and `run(args) -> int`
COMMANDS = {
    "bulk": "autograder.staff.bulk",
    "release": "autograder.staff.release",
    "check": "autograder.staff.check",
    "secret": "autograder.staff.secret",
}


def main(argv: list[str] | None = None) -> int:
    try:
        return dispatch(argv)
    except KeyboardInterrupt:  # each command says what it finished; this is for the moments before
        print("autograder: interrupted", file=sys.stderr)
        return 130


def dispatch(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        modules[name] = module
        module.add_arguments(commands.add_parser(name, help=module.__doc__.splitlines()[0],
                                                 description=module.__doc__))
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
