"""`marbles-bench`: the headless runner. It imports no Qt.

    marbles-bench list
    marbles-bench run --scene S --solver M --iterations N --steps K [--dt H] [--set k=v]...
                      [--json FILE] [--save-state FILE] [--save-lcp FILE] [--state FILE] [--trace]
"""
from __future__ import annotations

import argparse
import sys
import time

import scenes
from solver import registry
from solver.params import ParamError
from solver.runner import Progress, run_steps
from solver.snapshot import (OutputError, check_writable, load_state, save_lcp, save_state,
                             write_json)
from solver.step import SIM_PARAMS, Simulation
from solver.warmup import warmup

from . import cli

EPILOG = "Run `marbles-bench COMMAND --help` for the options of each command."


def cmd_list(args: argparse.Namespace) -> int:
    out = ["Scenes (--scene NAME, parameters by --set name=value):"]
    for scene in scenes.SCENES.values():
        out.append(f"  {scene.name:<12} {scene.description}")
        out += [f"      {p.describe()}" for p in scene.params]
    out.append("Solvers (--solver NAME):")
    for method in registry.METHODS.values():
        out.append(f"  {method.name:<12} {method.label}: {method.description}")
        out += [f"      {p.describe()}" for p in method.params]
    out.append("Parameters every solver takes:")
    out += [f"      {p.describe()}" for p in registry.METHODS["pgs"].all_params]
    out.append("Simulation parameters:")
    out += [f"      {p.describe()}" for p in SIM_PARAMS]
    print("\n".join(out))
    return 0


def _summary(config: cli.SimConfig, world, steps: int, report: dict) -> str:
    med = report["timing_ms"]["median"]
    last = report["last_step"]
    return (f"{config.scene} {config.solver} n={world.n} steps={steps} dt={world.dt:g}: "
            f"{med['total']:.3f} ms/step median (collide {med['collide']:.3f}, assemble "
            f"{med['assemble']:.3f}, solve {med['solve']:.3f}, integrate {med['integrate']:.3f}); "
            f"contacts {report['contacts']['last']} (max {report['contacts']['max']}); "
            f"last residual {last['residual']:.3e} m/s ({last['status']}, "
            f"{last['iterations']} it); max penetration {report['max_penetration']:.2e} m; "
            f"max speed {report['max_speed']:.2e} m/s")


def cmd_run(args: argparse.Namespace) -> int:
    wall = time.perf_counter()
    config = cli.sim_config(args)
    steps = cli.positive_int("steps", args.steps)
    outputs = [p for p in (args.json, args.save_state, args.save_lcp) if p]
    for path in outputs:
        check_writable(path)
    if args.state:
        world = load_state(args.state)
        if config.dt is not None:
            world.dt = config.dt
    else:
        world = config.build_world()
    compile_seconds = warmup([config.solver])
    sim = Simulation(world, config.solver, config.iterations, config.solver_params,
                     warm_start=config.sim_params["warm_start"], trace=False)
    progress = None if args.quiet else Progress(f"{config.scene}/{config.solver}", steps)
    report = run_steps(sim, steps, trace_every_step=args.trace, progress=progress)
    full = {"scene": config.scene if not args.state else f"{config.scene} (from {args.state})",
            "scene_params": config.scene_params, "solver": config.solver,
            "settings": {**config.settings_json(),
                         "trace": "every step" if args.trace else "last step only"},
            "n_marbles": world.n, "steps": steps, "dt": world.dt, **report,
            "compile_seconds": compile_seconds, "wall_seconds": time.perf_counter() - wall}
    if args.save_state:
        save_state(args.save_state, world)
    if args.save_lcp:
        save_lcp(args.save_lcp, sim.problem, sim.lam, world)
    if args.json:
        full["wall_seconds"] = time.perf_counter() - wall
        write_json(args.json, full)
    print(_summary(config, world, steps, full))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(
        prog="marbles-bench", description="Headless runs and benchmarks of the marble simulator.",
        epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=cli.ArgumentParser)
    p_list = sub.add_parser("list", help="scenes, solvers and their parameters")
    p_list.set_defaults(func=cmd_list)
    p_run = sub.add_parser(
        "run", help="step a scene and report timings, convergence and physics",
        description="Step a scene K times with one solver; print a one-line summary and "
                    "optionally write a JSON report and snapshots. Timings are medians over the "
                    "steps, measured without the per-iteration trace; the last step records it.")
    cli.add_sim_options(p_run)
    p_run.add_argument("--steps", default="500", metavar="K", help="steps to run (default 500)")
    p_run.add_argument("--json", metavar="FILE", help="write the JSON report here")
    p_run.add_argument("--save-state", metavar="FILE", help="write the final state (.npz)")
    p_run.add_argument("--save-lcp", metavar="FILE",
                       help="write the last step's contact problem (.npz, FCLIB names)")
    p_run.add_argument("--state", metavar="FILE",
                       help="start from a state snapshot instead of building the scene")
    p_run.add_argument("--trace", action="store_true",
                       help="record the residual after every iteration of every step (slower)")
    p_run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p_run.set_defaults(func=cmd_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    cli.set_prog("marbles-bench")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (ParamError, OutputError) as err:
        cli.fail(str(err))
    except ValueError as err:  # malformed snapshot files and the like
        cli.fail(str(err))
    except KeyboardInterrupt:
        sys.stderr.write("marbles-bench: interrupted; no output written\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
