"""newton against pgs on the probe piles (docs/solvers.md's table; not a test): each pile
stepped by pgs (20 sweeps, full warm start), its last problem frozen, then solved from zero by
`newton` (--iterations at most) and by `pgs` (--sweeps); FCLIB's error and the time of each.

    python -m benchmarks.newton
    python -m benchmarks.newton --iterations 100 --piles pyramid,disk
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import scenes
from solver.methods import registry
from solver.step import Simulation

# name: (scene, its parameters, steps before the problem is frozen)
PILES = {
    "pyramid": ("pyramid", {"mu": 0.73}, 1),
    "heap": ("heap", {"mu": 0.5}, 100),
    "disk": ("disk", {"mu": 0.3}, 100),
    "column": ("column", {"mu": 0.5}, 50),
    "bowl": ("bowl", {"n": 60, "mu": 0.5, "mu_wall": 0.5}, 300),
    "box": ("box", {"n": 100, "mu": 0.5}, 200),
}


def frozen(scene: str, params: dict, steps: int):
    sim = Simulation(scenes.build(scene, dict(params)), registry.settings("pgs", 20), 1.0)
    for _ in range(steps):
        sim.step()
    return sim.problem.copy()


def timed(name: str, problem, iterations: int):
    t0 = time.perf_counter()
    result = registry.get(name).solve(problem.copy(), np.zeros(problem.size), registry.settings(
        name, iterations, False, {"abs_tol": 1e-14}))
    return result, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.newton",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=400,
                        help="newton's iterations at most (default %(default)s)")
    parser.add_argument("--sweeps", type=int, default=5000,
                        help="pgs's sweeps (default %(default)s)")
    parser.add_argument("--piles", default=",".join(PILES),
                        help="which piles, comma-separated (default: all)")
    args = parser.parse_args(argv)
    piles = [p for p in args.piles.split(",") if p]
    for pile in piles:
        if pile not in PILES:
            parser.error(f"--piles: unknown pile {pile!r} (one of {', '.join(PILES)})")
    print("| problem | contacts | status | iterations | FCLIB error | time | pgs | pgs time |")
    print("|---|---|---|---|---|---|---|---|")
    for pile in piles:
        scene, params, steps = PILES[pile]
        problem = frozen(scene, params, steps)
        newton, seconds = timed("newton", problem, args.iterations)
        pgs, pgs_seconds = timed("pgs", problem, args.sweeps)
        print(f"| {pile}, step {steps} | {problem.m} | {newton.status} | {newton.iterations} | "
              f"{problem.fclib_error(newton.lam):.1e} | {seconds:.2f} s | "
              f"{problem.fclib_error(pgs.lam):.1e} | {pgs_seconds:.2f} s |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
