"""What the two command lines share: the run options, their help generated from the declared
parameters, and one-line errors with exit code 2 (no usage dump, no traceback)."""
from __future__ import annotations

import argparse
import sys

from solver.options import ITERATIONS
from solver.options import DEVICE, PRECISION
from solver.parallel import THREADS
from solver.params import Param, parse_assignments
from solver.world import DT

from ..session.spec import SCENE, SOLVER, SPEED, RunSpec


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are one line (no usage dump) and exit with code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        fail(f"{message} (see {self.prog} --help)")


_prog = "marbles"


def set_prog(name: str) -> None:
    """Program name used in error messages (each entry point sets its own)."""
    global _prog
    _prog = name


def fail(message: str) -> None:
    """One line on stderr (a file name may hold a line break) and exit code 2."""
    sys.stderr.write(f"{_prog}: error: {' '.join(message.splitlines())}\n")
    raise SystemExit(2)


def warn(message: str) -> None:
    """One warning line on stderr; the run goes on."""
    sys.stderr.write(f"{_prog}: warning: {message}\n")


def option(parser: argparse.ArgumentParser, param: Param, metavar: str, flag: str | None = None,
           default: object = "declared", help_text: str | None = None) -> None:
    """--name for a declared parameter: the value stays text (checked later by param.parse, so
    every front end refuses it with the same message) and the help comes from the declaration.
    default="declared" uses the declared default; None leaves the option unset."""
    parser.add_argument(flag or f"--{param.name.replace('_', '-')}", metavar=metavar,
                        default=param.value_text() if default == "declared" else default,
                        help=help_text or param.help_text())


def add_run_options(parser: argparse.ArgumentParser, speed: bool = False,
                    scene_default: object = "declared", scene_help: str | None = None) -> None:
    """--scene, --solver, --iterations, --dt and --set (and --speed for the window);
    scene_default and scene_help as `option` takes them (the window has a default of its own)."""
    option(parser, SCENE, "S", default=scene_default, help_text=scene_help)
    option(parser, SOLVER, "M")
    option(parser, ITERATIONS, "N")
    option(parser, DT, "H", default=None)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        dest="assignments",
                        help="a scene, solver or simulation parameter, repeatable (e.g. --set "
                             "n=10000 --set omega=1.5 --set warm_start=0.5); `marbles-bench "
                             "list` shows them all with ranges, defaults and units")
    if speed:
        option(parser, SPEED, "X")
    option(parser, THREADS, "N")
    option(parser, DEVICE, "D")
    option(parser, PRECISION, "P")


def spec_from_args(args: argparse.Namespace) -> RunSpec:
    """The validated RunSpec of the run options; ParamError with a one-line message."""
    return RunSpec.create(args.scene, args.solver, args.iterations, args.dt,
                          getattr(args, "speed", SPEED.default),
                          parse_assignments(args.assignments),
                          getattr(args, "threads", THREADS.default),
                          getattr(args, "device", DEVICE.default),
                          getattr(args, "precision", PRECISION.default))


SOLVER_MODULE_HELP = ("`--solver-module package.module` (repeatable, anywhere) adds the solver "
                      "that module declares as METHOD")


def take_solver_modules(argv: list[str]) -> list[str]:
    """Load the plug-in of every `--solver-module M` in argv and return argv without them:
    plug-ins load before the parsers are built, so that --solver knows their names. A broken
    one ends the program in one line naming it (exit code 2)."""
    from solver.params import ParamError
    from ..session.spec import load_solver_modules

    modules, rest = [], []
    items = iter(argv)
    for item in items:
        if item == "--solver-module":
            modules.append(next(items, ""))
        elif item.startswith("--solver-module="):
            modules.append(item.split("=", 1)[1])
        else:
            rest.append(item)
    try:
        load_solver_modules(modules)
    except ParamError as err:
        fail(str(err))
    return rest
