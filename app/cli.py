"""Command-line options shared by `marbles` and `marbles-bench` (no Qt here).

``--set name=value`` is routed by name: a scene parameter, a solver parameter or a simulation
parameter (warm_start). A name that none of them knows is refused with the full list of valid ones.
Errors are one line on stderr and exit code 2.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import scenes
from solver import registry
from solver.params import Param, ParamError, parse_assignments, resolve
from solver.step import SIM_PARAMS
from solver.world import DEFAULT_DT

ITERATIONS = Param("iterations", 20, int, "solver iterations per step", lo=1, hi=10_000_000)
DT = Param("dt", DEFAULT_DT, float, "time step, seconds", lo=0.0, hi=1.0, lo_open=True)


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
    sys.stderr.write(f"{_prog}: error: {message}\n")
    raise SystemExit(2)


def add_sim_options(parser: argparse.ArgumentParser, steps_default: int | None = None) -> None:
    parser.add_argument("--scene", default="bowl", metavar="S",
                        help=f"scene: {', '.join(scenes.SCENES)} (default bowl)")
    parser.add_argument("--solver", default="pgs", metavar="M",
                        help=f"solver: {', '.join(registry.METHODS)} (default pgs)")
    parser.add_argument("--iterations", default=str(ITERATIONS.default), metavar="N",
                        help="solver iterations per step (default 20)")
    parser.add_argument("--dt", default=None, metavar="H",
                        help=f"time step in seconds (default {DEFAULT_DT}, 50 Hz)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        dest="assignments",
                        help="scene, solver or simulation parameter, repeatable "
                             "(e.g. --set n=10000 --set omega=1.5 --set warm_start=1); "
                             "`marbles-bench list` shows them all")


@dataclass(frozen=True)
class SimConfig:
    scene: str
    scene_params: dict
    solver: str
    solver_params: dict
    sim_params: dict
    iterations: int
    dt: float | None

    def build_world(self):
        world = scenes.build(self.scene, self.scene_params)
        if self.dt is not None:
            world.dt = self.dt
        return world

    def settings_json(self) -> dict:
        return {"iterations": self.iterations, **self.solver_params, **self.sim_params}


def route_assignments(scene: str, solver: str, assignments: dict) -> tuple[dict, dict, dict]:
    """Split --set values into (scene, solver, simulation) parameters, each validated."""
    scene_spec = scenes.get(scene)
    method = registry.get(solver)
    tables = (
        (f"scene {scene}", {p.name for p in scene_spec.params}),
        (f"solver {solver}", {p.name for p in method.all_params}),
        ("the simulation", {p.name for p in SIM_PARAMS}),
    )
    split: tuple[dict, dict, dict] = ({}, {}, {})
    for name, value in assignments.items():
        for k, (_, names) in enumerate(tables):
            if name in names:
                split[k][name] = value
                break
        else:
            valid = "; ".join(f"{owner}: {', '.join(sorted(names)) or 'none'}"
                              for owner, names in tables)
            raise ParamError(f"unknown parameter '{name}' ({valid})")
    return (resolve(scene_spec.params, split[0], f"scene {scene}"),
            resolve(method.all_params, split[1], f"solver {solver}"),
            resolve(SIM_PARAMS, split[2], "the simulation"))


def sim_config(args: argparse.Namespace) -> SimConfig:
    """Validate the shared options; raises ParamError with a one-line message."""
    scenes.get(args.scene)
    registry.get(args.solver)
    iterations = ITERATIONS.parse(args.iterations)
    dt = None if args.dt is None else DT.parse(args.dt)
    scene_params, solver_params, sim_params = route_assignments(
        args.scene, args.solver, parse_assignments(args.assignments))
    return SimConfig(args.scene, scene_params, args.solver, solver_params, sim_params,
                     int(iterations), None if dt is None else float(dt))


def positive_int(name: str, text: str, hi: int = 10**9) -> int:
    return int(Param(name, 1, int, "", lo=1, hi=hi).parse(text))

