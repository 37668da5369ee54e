"""`marbles-bench`: the headless front end (no Qt). Commands: list, run, compare, solve, report,
collect, campaign; `marbles-bench COMMAND --help` gives the options of each, generated from the
declared parameters."""
from __future__ import annotations

import sys

from .interrupt import INTERRUPTED, finish, hold, release

if __name__ == "__main__":  # `python -m lab.cli.bench`: held like the program (lab.cli.launch)
    hold()

import argparse  # noqa: E402  (after hold(): Ctrl-C during the imports below is one line)
import time  # noqa: E402

import numpy as np

import scenes
from scenes import FRICTION_WARM_START, default_warm_start
from solver.contact_states import pseudo_text
from solver.methods import registry
from solver.options import ITERATIONS
from solver.options import AUTO_MARBLES, DEVICE
from solver.parallel import THREADS
from solver.params import Param, ParamError, parse_assignments
from solver.step import WARM_START
from solver.version import VERSION
from solver.warmup import warmup_for
from solver.world import DT

from ..io.fclib import fclib_refusal, save_fclib
from ..io.files import OutputError, check_out_dir, check_writable, write_json
from ..io.snapshot import read_state, save_lcp, save_state
from ..report.compare import (BENCHMARK_FILES, COMPARE_ITERATIONS, REPEATS, SETTLE, ScenePlan,
                              compare_scene, comparison_device, parse_solver_list,
                              write_benchmark)
from ..report.progress import KernelBar, Progress
from ..session.run import OK as PHYSICS_OK
from ..session.run import PHYSICS_FAILED, dt_warning, run_steps
from ..session.spec import SCENE, SOLVER, RunSpec, route_compare_assignments
from . import campaign, catalog, report, solve
from . import options as cli

STEPS = Param("steps", 500, int, "steps to run", lo=1, hi=10**9)


def cmd_list(args: argparse.Namespace) -> int:
    print(catalog.list_text())
    return 0


def _summary(label: str, spec: RunSpec, world, steps: int, report: dict) -> str:
    med = report["timing_ms"]["median"]
    last = report["last_step"]
    physics = report["physics"]
    done = report["steps_done"]
    verdict = ""
    if physics["status"] != PHYSICS_OK:
        # Said first and loudly: the numbers after it describe a broken run.
        verdict = (f"PHYSICS {physics['status'].upper()} ({physics['non_finite']} non-finite, "
                   f"{physics['escaped']} outside the container"
                   + (f", stopped at step {physics['stopped_at']}" if physics["stopped_at"]
                      else "") + "): ")
    return (verdict + f"{label} {spec.solver} n={world.n} steps={done}"
            + ("" if done == steps else f" of {steps}") + f" dt={world.dt:g}: "
            f"{med['total']:.3f} ms/step median (collide {med['collide']:.3f}, assemble "
            f"{med['assemble']:.3f}, solve {med['solve']:.3f}, integrate {med['integrate']:.3f}); "
            f"contacts {report['contacts']['last']} (max {report['contacts']['max']}); "
            f"last residual {last['residual']:.3e} m/s ({last['status']}, "
            f"{last['iterations']} it); max penetration {report['max_penetration']:.2e} m; "
            f"max speed {report['max_speed']:.2e} m/s")


def _label(origin: dict) -> str:
    """'bowl', or 'bowl (from FILE)' / 'state (from FILE)' for a run from a state snapshot."""
    return origin["scene"] + (f" (from {origin['state']})" if "state" in origin else "")


def _check_scene_options(args: argparse.Namespace) -> None:
    """--scene and scene parameters are refused with --state (the world comes from the file,
    so they would be ignored); without it --scene defaults to the declared scene."""
    if not args.state:
        args.scene = SCENE.default if args.scene is None else args.scene
        return
    if args.scene is not None:
        raise ParamError(f"--scene {args.scene}: with --state the world comes from {args.state}")
    args.scene = SCENE.default
    names = {p.name for p in scenes.get(args.scene).params}
    given = [name for name in parse_assignments(args.assignments) if name in names]
    if given:
        raise ParamError(f"--set {given[0]}: a scene parameter, but with --state the world "
                         f"comes from {args.state}")


def cmd_run(args: argparse.Namespace) -> int:
    wall = time.perf_counter()
    _check_scene_options(args)
    spec = cli.spec_from_args(args)
    steps = int(STEPS.parse(args.steps))
    for path in (args.json, args.save_state, args.save_lcp, args.save_fclib):
        if path is not None:  # an empty name is refused, not silently skipped
            check_writable(path)
    if args.state:
        snap = read_state(args.state)
        world, origin, scene = snap.world, snap.origin(args.state), snap.scene
        if spec.dt is not None:
            world.dt = spec.dt
    else:
        world = spec.build_world()
        origin = {"scene": spec.scene, "scene_params": spec.scene_params}
        scene = {"name": spec.scene, "params": spec.scene_params}
    if args.save_fclib is not None:
        fclib_refusal(world)
    warnings = [w for w in (dt_warning(world),) if w]
    for warning in warnings:
        cli.warn(warning)
    bar = None if args.quiet else KernelBar(f"compiling the Numba kernels of {spec.solver} "
                                            "(a first run only)")
    compile_seconds = warmup_for(world, [spec.solver], spec.options.threads, kernels=bar)
    if bar is not None and bar.done:
        bar.finish(compile_seconds)
    if args.state and not spec.warm_start_given:
        spec = spec.changed(warm_start=default_warm_start(
            {name: getattr(world, name) for name in scenes.FRICTION_NAMES}))
    sim = spec.simulation(world)
    if args.state:
        sim.set_impulses(*snap.impulses)  # a warm start continues as the saved run would have
    progress = None if args.quiet else Progress(f"{origin['scene']}/{spec.solver}", steps)
    report = run_steps(sim, steps, trace_every_step=args.trace, progress=progress)
    full = {**origin, "solver": spec.solver,
            "settings": {**spec.settings_json(),
                         "trace": "every step" if args.trace else "last step only"},
            "n_marbles": world.n, "steps": steps, "dt": world.dt, **report,
            "warnings": warnings,
            "compile_seconds": compile_seconds, "wall_seconds": time.perf_counter() - wall}
    if args.save_state is not None:
        save_state(args.save_state, world, sim.impulses(), scene)
    if args.save_lcp is not None:
        save_lcp(args.save_lcp, sim.problem, sim.lam, world)
    if args.save_fclib is not None:
        save_fclib(args.save_fclib, sim.problem, sim.lam,
                   title=f"marbles: {_label(origin)}, step {report['steps_done']}",
                   description=f"{world.n} marbles, {sim.problem.m} contacts, dt {world.dt:g} s; "
                               f"impulses of {spec.solver} as the first guess")
    if args.json is not None:
        full["wall_seconds"] = time.perf_counter() - wall
        write_json(args.json, full)
    print(_summary(_label(origin), spec, world, steps, full))
    return 0 if report["physics"]["status"] == PHYSICS_OK else PHYSICS_FAILED


def cmd_compare(args: argparse.Namespace) -> int:
    wall = time.perf_counter()
    _check_scene_options(args)
    solvers = parse_solver_list(args.solvers)
    registry.get(args.solver)
    scene_p, sim_p, settle_over, solver_p = route_compare_assignments(
        args.scene, args.solver, solvers, parse_assignments(args.assignments))
    scene, snap = args.scene, None
    frictional = scenes.has_friction(scene_p)
    if args.state:  # a bad file fails before any output
        snap = read_state(args.state)
        origin = snap.origin(args.state)
        scene, scene_p = origin["scene"], origin.get("scene_params")
        frictional = snap.world.frictional
    given = parse_assignments(args.assignments)
    warm = (float(sim_p["warm_start"]) if "warm_start" in given
            else FRICTION_WARM_START if frictional else WARM_START.default)
    if frictional and args.solvers is None:
        solvers = registry.friction_solvers()  # all of them that can solve this problem
    for name in (args.solver, *solvers):
        registry.check_friction(name, frictional)
    plan = ScenePlan(scene, scene_p, int(SETTLE.parse(args.settle)),
                     int(COMPARE_ITERATIONS.parse(args.iterations)), solvers,
                     registry.settings(args.solver, args.settle_iterations, False, settle_over),
                     warm, solver_p, args.warm_start,
                     None if args.dt is None else float(DT.parse(args.dt)),
                     int(REPEATS.parse(args.repeats)), state=args.state,
                     stabilise=float(sim_p["stabilise"]), threads=int(THREADS.parse(args.threads)),
                     push_speed=float(sim_p["push_speed"]),
                     device=comparison_device(args.device), source="marbles-bench compare")
    out = check_out_dir(args.out, BENCHMARK_FILES)  # built whole by write_benchmark
    table, meta = compare_scene(plan, snap.world if snap else None, quiet=args.quiet,
                                impulses=snap.impulses if snap else None)
    meta["wall_seconds"] = time.perf_counter() - wall
    label = _label(meta)
    title = (f"{label}: step {meta['step']}, {table.meta['contacts']} contacts, "
             f"{'warm' if args.warm_start else 'cold'} start")
    # One unit: a reader that sees benchmark.json sees the npy and png of the same comparison.
    write_benchmark(out, table, meta, title)
    best = min(range(len(table.solvers)), key=lambda k: (not np.isfinite(table.residual[k, -1]),
                                                         table.residual[k, -1]))
    print(f"{label} step {meta['step']}: {table.meta['contacts']} contacts, "
          f"{len(solvers)} solvers x {plan.iterations} iterations; lowest final residual "
          f"{table.solvers[best]} {table.residual[best, -1]:.3e} m/s; wrote {out}/benchmark.npy, "
          f"benchmark.json, benchmark.png")
    for name, pseudo in table.meta.get("pseudo_solutions", {}).items():
        print(f"{name}: {pseudo_text(pseudo)}")
    return 0


def _add_run(sub) -> None:
    p = sub.add_parser(
        "run", help="step a scene and report timings, convergence and physics",
        description="Step a scene K times with one solver; print a one-line summary and "
                    "optionally write a JSON report and snapshots. Timings are medians over the "
                    "steps, measured without the per-iteration trace; the last step records it.")
    cli.add_run_options(p)
    cli.option(p, STEPS, "K")
    p.add_argument("--json", metavar="FILE", help="write the JSON report here")
    p.add_argument("--save-state", metavar="FILE", help="write the final state (.npz)")
    p.add_argument("--save-lcp", metavar="FILE",
                   help="write the last step's contact problem (.npz, FCLIB names)")
    p.add_argument("--save-fclib", metavar="FILE",
                   help="write the last step's contact problem as an FCLIB local problem "
                        "(.hdf5; needs friction, without rolling or spinning resistance)")
    p.add_argument("--state", metavar="FILE",
                   help="start from a state snapshot instead of building the scene")
    p.add_argument("--trace", action="store_true",
                   help="record the residual after every iteration of every step (slower)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_run, scene=None)  # None: not given (refused with --state)


def _add_compare(sub) -> None:
    p = sub.add_parser(
        "compare", help="every solver on the same frozen contact problem",
        description="Step scene S K times (with --solver, --settle-iterations per step), freeze "
                    "the contact problem of step K, run every solver (or --solvers) on it for N "
                    "iterations from the same start, and write DIR/benchmark.npy, "
                    "DIR/benchmark.json and DIR/benchmark.png.")
    cli.option(p, SCENE, "S")
    cli.option(p, SETTLE, "K")
    cli.option(p, COMPARE_ITERATIONS, "N")
    p.add_argument("--solvers", metavar="a,b,...",
                   help=f"solvers to compare (default all: {', '.join(registry.METHODS)})")
    cli.option(p, SOLVER, "M", help_text="solver that steps the scene while settling "
                                         f"(default {SOLVER.default})")
    cli.option(p, ITERATIONS, "N", flag="--settle-iterations",
               help_text=f"iterations per settling step (default {ITERATIONS.default})")
    cli.option(p, DT, "H", default=None)
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   dest="assignments",
                   help="scene, simulation or solver parameter, repeatable; a solver parameter "
                        "applies to the settling solver and every compared solver that has it; "
                        "SOLVER.NAME=VALUE sets it for one compared solver")
    p.add_argument("--warm-start", action="store_true",
                   help="start every solver from the previous step's impulses matched by "
                        "marble pair (default: from zero)")
    cli.option(p, REPEATS, "R")
    cli.option(p, THREADS, "N")
    cli.option(p, DEVICE, "D", help_text="where the compared solvers run: cpu (default); cuda: "
               f"those that run on the GPU ({', '.join(registry.on_device('cuda'))}) solve the "
               "frozen problem there, one launch per iteration, the others on the CPU "
               "(benchmark.json's devices); auto: cuda from "
               f"{AUTO_MARBLES} marbles. Settling steps on the CPU")
    p.add_argument("--out", default=".", metavar="DIR",
                   help="output folder, created if needed (default: current folder)")
    p.add_argument("--state", metavar="FILE",
                   help="start from a state snapshot (run --save-state) instead of the scene")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_compare, scene=None)  # None: not given (refused with --state)


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(
        prog="marbles-bench", description="Headless runs and benchmarks of the marble simulator.",
        epilog="Run `marbles-bench COMMAND --help` for the options of each command. "
               f"{cli.SOLVER_MODULE_HELP}.")
    parser.add_argument("--version", action="version", version=f"marbles-bench {VERSION}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=cli.ArgumentParser)
    sub.add_parser("list", help="scenes, solvers and their parameters").set_defaults(
        func=cmd_list)
    _add_run(sub)
    _add_compare(sub)
    solve.add_parser(sub)
    report.add_parser(sub)
    campaign.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    cli.set_prog("marbles-bench")
    argv = cli.take_solver_modules(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        # No command is an error: the help goes to stderr (`--help` alone prints it to stdout).
        parser.print_help(sys.stderr)
        cli.fail("a command is required (list, run, compare, solve, report, collect or campaign)")
    try:
        release()  # from here Ctrl-C lets the command clean up what it was writing
        return args.func(args)
    except (ParamError, OutputError, ValueError) as err:
        # ValueError: malformed snapshot files and the like, each with a one-line message.
        cli.fail(str(err))
    except (KeyboardInterrupt, SystemError) as err:
        if not _interrupted(err):
            raise
        # Every file is written atomically: what exists is complete, the rest was not written.
        sys.stderr.write(INTERRUPTED)
        return 130
    return 0


def _interrupted(err: BaseException | None) -> bool:
    """Whether `err` is Ctrl-C: a KeyboardInterrupt, or one that Numba's loading of a cached
    kernel turned into "SystemError: ... returned a result with an exception set"."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, KeyboardInterrupt):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


if __name__ == "__main__":
    sys.exit(finish(main()))
