"""`marbles-bench`: the headless runner. It imports no Qt.

    marbles-bench list
    marbles-bench run --scene S --solver M --iterations N --steps K [--dt H] [--set k=v]...
                      [--json FILE] [--save-state FILE] [--save-lcp FILE] [--state FILE] [--trace]
    marbles-bench compare --scene S --settle K --iterations N [--solvers a,b,...] [--set k=v]...
                          [--warm-start] [--out DIR]
    marbles-bench solve --lcp FILE --solver M [--iterations N] [--set k=v]... [--json FILE]
    marbles-bench report [--out DIR] [--scenes a,b,...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import scenes
from solver import registry
from solver import compare as comparison
from solver.params import Param, ParamError, parse_assignments, resolve
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


COMPARE_ITERATIONS = Param("iterations", 200, int, "iterations per solver", lo=1, hi=1_000_000)
SETTLE = Param("settle", 1, int, "steps before the frozen one", lo=1, hi=10_000_000)
REPEATS = Param("repeats", 3, int, "timing runs per solver", lo=1, hi=100)


def prepare_out_dir(path: str, names: tuple[str, ...]) -> Path:
    """Create output folder `path` if needed and refuse it, before any work, when it or one of
    the files `names` in it cannot be written."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputError(f"output folder {path!r} is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(f"output folder {path!r} cannot be created ({err.strerror})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {path!r} is not writable")
    for name in names:
        check_writable(out / name)
    return out


def parse_solver_list(text: str | None) -> list[str]:
    """'a,b,c' -> names, each registered and listed once; None -> every registered solver."""
    if text is None:
        return list(registry.METHODS)
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise ParamError(f"--solvers {text!r} has an empty name; give a,b,c (valid: "
                         f"{', '.join(registry.METHODS)})")
    for name in names:
        registry.get(name)
    if len(set(names)) != len(names):
        raise ParamError(f"--solvers {text!r} lists a solver twice")
    return names


def route_compare_assignments(scene: str, settle_solver: str, solvers: list[str],
                              assignments: dict) -> tuple[dict, dict, dict, dict]:
    """Split --set values for `compare` into (scene, simulation, settling solver, compared
    solvers) parameters. `name=value` goes to the scene or the simulation if it is theirs,
    otherwise to the settling solver and to every compared solver that has the parameter;
    `solver.name=value` goes to that compared solver only."""
    scene_names = {p.name for p in scenes.get(scene).params}
    sim_names = {p.name for p in SIM_PARAMS}
    scene_over, sim_over, settle_over = {}, {}, {}
    per_solver: dict[str, dict] = {name: {} for name in solvers}
    for name, value in assignments.items():
        owner, dot, pname = name.rpartition(".")
        if dot:
            if owner not in per_solver:
                raise ParamError(f"--set {name}: '{owner}' is not a compared solver; compared: "
                                 f"{', '.join(solvers)}")
            resolve(registry.get(owner).all_params, {pname: value}, f"solver {owner}")
            per_solver[owner][pname] = value
            continue
        if name in scene_names:
            scene_over[name] = value
            continue
        if name in sim_names:
            sim_over[name] = value
            continue
        takers = [s for s in solvers if name in {p.name for p in registry.get(s).all_params}]
        settle_has = name in {p.name for p in registry.get(settle_solver).all_params}
        if not takers and not settle_has:
            known = sorted(scene_names | sim_names | {p.name for s in {*solvers, settle_solver}
                                                      for p in registry.get(s).all_params})
            raise ParamError(f"unknown parameter '{name}' (valid: {', '.join(known)}, or "
                             "solver.name=value for one compared solver)")
        if settle_has:
            settle_over[name] = value
        for s in takers:
            per_solver[s][name] = value
    scene_p = resolve(scenes.get(scene).params, scene_over, f"scene {scene}")
    sim_p = resolve(SIM_PARAMS, sim_over, "the simulation")
    settle_p = resolve(registry.get(settle_solver).all_params, settle_over,
                       f"solver {settle_solver}")
    for s, over in per_solver.items():
        resolve(registry.get(s).all_params, over, f"solver {s}")  # refuse bad values now
    return scene_p, sim_p, settle_p, {s: over for s, over in per_solver.items() if over}


def run_compare(scene: str, scene_params: dict, settle: int, iterations: int,
                solvers: list[str], settle_solver: str = "pgs", settle_iterations: int = 20,
                settle_params: dict | None = None, sim_params: dict | None = None,
                solver_params: dict | None = None, warm_start: bool = False,
                dt: float | None = None, repeats: int = 3, label: str | None = None,
                quiet: bool = False, state: str | None = None, world=None,
                budget: float = 2.0):
    """Build scene (or take `world`, loaded from state snapshot `state`), settle it, compare
    `solvers` on the frozen step; returns (table, json meta). Shared by `compare` and `report`."""
    if world is None:
        world = load_state(state) if state else scenes.build(scene, scene_params)
    if dt is not None:
        world.dt = dt
    label = label or scene
    warmup([settle_solver])
    progress = None if quiet else Progress(f"{label}: settling", settle)
    frozen = comparison.settle(world, settle, settle_solver, settle_iterations, settle_params,
                               float((sim_params or {}).get("warm_start", 0.0)), progress)
    progress = None if quiet else Progress(f"{label}: comparing", len(solvers), after=1.0)
    table = comparison.compare(frozen.problem, iterations, solvers,
                               frozen.warm if warm_start else None, solver_params, progress,
                               repeats=repeats, budget=budget)
    meta = {"scene": f"{scene} (from {state})" if state else scene,
            "scene_params": {} if state else scene_params, "n_marbles": world.n,
            "step": frozen.step, "time": frozen.time, "dt": world.dt,
            "contact_count": frozen.problem.m,
            "settings": {"settle": settle, "settle_solver": settle_solver,
                         "settle_iterations": settle_iterations,
                         "settle_params": settle_params or {}, "simulation": sim_params or {},
                         "iterations": iterations, "warm_start": warm_start,
                         "solver_params": solver_params or {}, "repeats": repeats,
                         "repeat_budget_seconds": budget},
            "settle_step_residual": float(frozen.report.result.residual)}
    return table, meta


def cmd_compare(args: argparse.Namespace) -> int:
    wall = time.perf_counter()
    scenes.get(args.scene)
    registry.get(args.solver)
    solvers = parse_solver_list(args.solvers)
    settle = int(SETTLE.parse(args.settle))
    iterations = int(COMPARE_ITERATIONS.parse(args.iterations))
    settle_iterations = int(cli.ITERATIONS.parse(args.settle_iterations))
    repeats = int(REPEATS.parse(args.repeats))
    dt = None if args.dt is None else float(cli.DT.parse(args.dt))
    scene_p, sim_p, settle_p, solver_p = route_compare_assignments(
        args.scene, args.solver, solvers, parse_assignments(args.assignments))
    world = load_state(args.state) if args.state else None  # a bad file fails before output
    out = prepare_out_dir(args.out, ("benchmark.npy", "benchmark.json", "benchmark.png"))
    from .figures import comparison_png  # matplotlib only when there is something to draw

    table, meta = run_compare(args.scene, scene_p, settle, iterations, solvers, args.solver,
                              settle_iterations, settle_p, sim_p, solver_p, args.warm_start, dt,
                              repeats, quiet=args.quiet, state=args.state, world=world)
    meta["wall_seconds"] = time.perf_counter() - wall
    title = (f"{args.scene}: step {meta['step']}, {table.meta['contacts']} contacts, "
             f"{'warm' if args.warm_start else 'cold'} start")
    # The plot first and the JSON last: a reader that sees benchmark.json sees a complete set.
    comparison_png(out / "benchmark.png", table, title)
    comparison.write_benchmark(out, table, meta)
    best = min(range(len(table.solvers)), key=lambda k: (not np.isfinite(table.residual[k, -1]),
                                                         table.residual[k, -1]))
    print(f"{args.scene} step {meta['step']}: {table.meta['contacts']} contacts, "
          f"{len(solvers)} solvers x {iterations} iterations; lowest final residual "
          f"{table.solvers[best]} {table.residual[best, -1]:.3e} m/s; wrote {out}/benchmark.npy, "
          f"benchmark.json, benchmark.png")
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    method = registry.get(args.solver)
    iterations = int(cli.ITERATIONS.parse(args.iterations))
    params = resolve(method.all_params, parse_assignments(args.assignments),
                     f"solver {args.solver}")
    if args.json:
        check_writable(args.json)
    problem, extras = comparison.load_lcp_file(args.lcp)
    if args.start == "stored" and extras["lam"] is None:
        raise ParamError(f"--start stored: {args.lcp} has no usable lam")
    lam0 = extras["lam"].copy() if args.start == "stored" else np.zeros(problem.m)
    compile_seconds = warmup([args.solver])
    settings = registry.settings(args.solver, iterations, True, params)
    result = method.solve(problem, lam0.copy(), settings)
    stored = None if extras["lam"] is None else float(problem.residual(extras["lam"]))
    lines = [f"# {args.lcp}: {problem.m} contacts, {problem.n} marbles; {args.solver}, "
             f"{iterations} iterations from {args.start} impulses",
             "# iteration  residual_m_per_s  seconds"]
    lines += [f"{k:6d}  {r:.6e}  {s:.6e}" for k, (r, s)
              in enumerate(zip(result.trace, result.seconds))]
    lines.append(f"{args.solver}: {result.status} after {result.iterations} iterations, "
                 f"residual {result.residual:.6e} m/s"
                 + ("" if stored is None else f" (stored lam: {stored:.6e} m/s)"))
    print("\n".join(lines))
    if args.json:
        write_json(args.json, {
            "lcp": str(args.lcp), "solver": args.solver, "contacts": problem.m,
            "marbles": problem.n, "start": args.start,
            "settings": {"iterations": iterations, **settings.params},
            "metric": comparison.METRIC, "trace": result.trace.tolist(),
            "seconds": result.seconds.tolist(), "iterations": result.iterations,
            "status": result.status, "residual": result.residual,
            "stored_lam_residual": stored, "info": result.info,
            "compile_seconds": compile_seconds})
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from . import report

    return report.main(args)


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

    p_cmp = sub.add_parser(
        "compare", help="every solver on the same frozen contact problem",
        description="Step scene S K times (with --solver, --settle-iterations per step), freeze "
                    "the contact problem of step K, run every solver (or --solvers) on it for N "
                    "iterations from the same start, and write DIR/benchmark.npy, "
                    "DIR/benchmark.json and DIR/benchmark.png.")
    p_cmp.add_argument("--scene", default="bowl", metavar="S",
                       help=f"scene: {', '.join(scenes.SCENES)} (default bowl)")
    p_cmp.add_argument("--settle", default="1", metavar="K",
                       help="steps to run; the K-th step's problem is frozen (default 1)")
    p_cmp.add_argument("--iterations", default="200", metavar="N",
                       help="iterations of every solver on the frozen problem (default 200)")
    p_cmp.add_argument("--solvers", metavar="a,b,...",
                       help=f"solvers to compare (default all: {', '.join(registry.METHODS)})")
    p_cmp.add_argument("--solver", default="pgs", metavar="M",
                       help="solver that steps the scene while settling (default pgs)")
    p_cmp.add_argument("--settle-iterations", default="20", metavar="N",
                       help="iterations per settling step (default 20)")
    p_cmp.add_argument("--dt", default=None, metavar="H", help="time step in seconds")
    p_cmp.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                       dest="assignments",
                       help="scene, simulation or solver parameter, repeatable; a solver "
                            "parameter applies to the settling solver and every compared solver "
                            "that has it; SOLVER.NAME=VALUE sets it for one compared solver")
    p_cmp.add_argument("--warm-start", action="store_true",
                       help="start every solver from the previous step's impulses matched by "
                            "marble pair (default: from zero)")
    p_cmp.add_argument("--repeats", default="3", metavar="R",
                       help="timing runs per solver; the median curve is kept (default 3)")
    p_cmp.add_argument("--out", default=".", metavar="DIR",
                       help="output folder, created if needed (default: current folder)")
    p_cmp.add_argument("--state", metavar="FILE",
                       help="start from a state snapshot (run --save-state) instead of the scene")
    p_cmp.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p_cmp.set_defaults(func=cmd_compare)

    p_solve = sub.add_parser(
        "solve", help="run one solver on a saved LCP snapshot and print its trace",
        description="Load an LCP snapshot (written by `run --save-lcp`; it must carry the "
                    "contact geometry), run solver M from zero (or the stored impulses) and "
                    "print the residual after every iteration.")
    p_solve.add_argument("--lcp", required=True, metavar="FILE", help="LCP snapshot (.npz)")
    p_solve.add_argument("--solver", default="pgs", metavar="M",
                         help=f"solver: {', '.join(registry.METHODS)} (default pgs)")
    p_solve.add_argument("--iterations", default="20", metavar="N",
                         help="iterations (default 20)")
    p_solve.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                         dest="assignments", help="solver parameter, repeatable")
    p_solve.add_argument("--start", choices=("zero", "stored"), default="zero",
                         help="start from zero impulses (default) or from the snapshot's lam")
    p_solve.add_argument("--json", metavar="FILE", help="write the trace and status as JSON")
    p_solve.set_defaults(func=cmd_solve)

    from . import report

    report.add_parser(sub, cmd_report)
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
        # Every file is written atomically: what exists is complete, the rest was not written.
        sys.stderr.write("marbles-bench: interrupted; no partial file written\n")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
