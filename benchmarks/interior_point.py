"""What the SOCCP interior point (`ipm`) reaches where the lab's other solvers stop (not a test):
FCLIB's error on the frozen frictional bowl (μ = μ_wall = 0.5, a full warm start, 20 pgs sweeps
a step, frozen at `--step`), the least error it reaches, the solve time to it and where it
stalls; then on the profiles' problems that no solver solves at 1e-8 (results/RESULTS.md) with
the profiles' own measure (lab.report.profiles.run_solver: from zero, `--budget` solve seconds).
The interior point alone: its newton polish is off unless `--set polish=N` asks for it.

    python -m benchmarks.interior_point                      # the bowl of 350 at step 500
    python -m benchmarks.interior_point --n 30 --problems none
    python -m benchmarks.interior_point --n 350 --set sigma=0.3 --iterations 400
"""
from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

import scenes
from lab.report import profiles
from solver.methods import registry
from solver.params import ParamError
from solver.step import Simulation

# The profiles' problems no solver solved at 1e-8 in the stored profiles (results/RESULTS.md).
UNSOLVED = ("bowl n=60 μ=0.5 step 100", "box n=100 μ=0.5 step 100", "box n=100 μ=0.5 step 200",
            "box n=100 μ=0.2 step 200", "heap n=300 μ=0.5 step 200")


def frozen_bowl(n: int, step: int):
    """The bowl of n marbles, μ = μ_wall = 0.5, frozen at `step` (pgs 20, full warm start)."""
    sim = Simulation(scenes.build("bowl", {"n": n, "mu": 0.5, "mu_wall": 0.5}),
                     registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(step):
        sim.step()
    return sim.problem.copy()


def bowl_report(n: int, step: int, iterations: int, overrides: dict) -> str:
    problem = frozen_bowl(n, step)
    judge = problem.copy()
    errors = [judge.fclib_error(np.zeros(problem.size))]
    settings = dataclasses.replace(
        registry.settings("ipm", iterations, True, {"abs_tol": 0.0, **overrides}),
        observer=lambda lam: errors.append(judge.fclib_error(lam)))
    t0 = time.perf_counter()
    result = registry.get("ipm").solve(problem.copy(), np.zeros(problem.size), settings)
    wall = time.perf_counter() - t0
    e = np.asarray(errors[:len(result.seconds)])
    best = int(np.argmin(e))
    info = ", ".join(f"{k} {v:.3g}" for k, v in result.info.items())
    return (f"bowl of {n}, step {step}: {problem.m} contacts\n"
            f"  ipm {overrides}: best FCLIB error {e[best]:.3g} at iteration {best} "
            f"({result.seconds[best]:.1f} s of solve time); last {e[-1]:.3g} after "
            f"{result.iterations} iterations, {result.seconds[-1]:.1f} s ({wall:.1f} s wall), "
            f"status {result.status}\n  at its end: {info}")


def problems_report(labels: list[str], budget: float, overrides: dict) -> list[str]:
    lines = ["| problem | contacts | ipm to 1e-8 (ms) | best FCLIB error | iterations | status |",
             "|---|---|---|---|---|---|"]
    for frozen in profiles.freeze():
        if frozen.label not in labels:
            continue
        if frozen.problem.rows not in (1, 3):
            lines.append(f"| {frozen.label} | {frozen.contacts} | not solved by ipm: "
                         f"{frozen.problem.rows} rows per contact (newton's) | | | |")
            continue
        run = profiles.run_solver(frozen.problem, "ipm", budget, overrides=overrides)
        reach = run.reach[1e-8]
        lines.append(f"| {frozen.label} | {frozen.contacts} | "
                     f"{'—' if reach is None else f'{reach * 1e3:.0f}'} | {run.best:.3g} | "
                     f"{run.iterations} | {run.status} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.interior_point",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=350, help="marbles in the bowl (default 350)")
    parser.add_argument("--step", type=int, default=500, help="the step frozen (default 500)")
    parser.add_argument("--iterations", type=int, default=300,
                        help="ipm iterations on the bowl (default %(default)s)")
    parser.add_argument("--problems", default="unsolved",
                        help="the profiles' problems: 'unsolved' (the 5 no solver solves at "
                             "1e-8), 'none', or labels separated by ';'")
    parser.add_argument("--budget", type=float, default=10.0,
                        help="solve seconds per profile problem (default %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="an ipm parameter (repeatable)")
    args = parser.parse_args(argv)
    overrides = {"polish": "0"}
    for item in args.set:
        name, _, value = item.partition("=")
        overrides[name] = value
    try:
        registry.settings("ipm", 1, True, overrides)
    except ParamError as err:
        parser.error(str(err))
    if args.n < 1 or args.step < 1 or args.iterations < 1 or args.budget <= 0:
        parser.error("--n, --step, --iterations: positive integers; --budget: positive seconds")
    labels = (list(UNSOLVED) if args.problems == "unsolved" else []
              if args.problems == "none" else args.problems.split(";"))
    print(bowl_report(args.n, args.step, args.iterations, overrides))
    if labels:
        print("\n".join(problems_report(labels, args.budget, overrides)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
