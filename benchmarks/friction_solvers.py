"""The frictional solver laboratory's cost and convergence tables (docs/friction-lab.md).

    python -m benchmarks.friction_solvers [--runs R] [--budget N] [--json FILE]

1. Cost: ns per contact per iteration of every frictional solver on the fast path (no trace),
   median over R runs: the bowl (350 marbles, μ = μ_wall = 0.5, 500 steps of 20 PGS sweeps with
   a full warm start, 200 iterations) and `box` with n = 10000 (μ = 0.5, 150 steps, 20
   iterations).
2. Convergence: iterations and milliseconds (traced solves, the residual measurement excluded)
   to reach 1e-6 and 1e-8 m/s from zero on that frozen bowl and on a bowl of 60 (300 steps),
   within N iterations (default 20000), and the best residual reached.

Numbers depend on the machine and its load; ratios within one run are what to compare.
"""
from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

import scenes
# prox-jacobi at Erleben's γ = 1, where the lab pages' figures were measured
from lab.report.sources import source_settings
from solver.methods import registry
from solver.step import Simulation
from solver.warmup import warmup


FRICTION = {"mu": 0.5, "mu_wall": 0.5}
TOLERANCES = (1e-6, 1e-8)


def frozen(scene: str, steps: int, overrides: dict):
    sim = Simulation(scenes.build(scene, {**FRICTION, **overrides}),
                     registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(steps):
        sim.step()
    return sim.problem.copy()


def cost(problem, name: str, iterations: int, runs: int) -> float:
    """Median ns per contact per iteration, fast path, tolerances off."""
    settings = source_settings(name, iterations, False, {"abs_tol": 0.0})
    method = registry.get(name)
    method.solve(problem, np.zeros(problem.size), settings)  # compile on this problem
    times = []
    for _ in range(runs):
        start = np.zeros(problem.size)
        t0 = time.perf_counter()
        result = method.solve(problem, start, settings)
        times.append((time.perf_counter() - t0) / max(result.iterations, 1))
    return float(np.median(times)) / problem.m * 1e9


def reach(problem, name: str, budget: int) -> dict:
    settings = source_settings(name, budget, True, {"abs_tol": min(TOLERANCES)})
    result = registry.get(name).solve(problem, np.zeros(problem.size), settings)
    out = {"best": float(np.min(result.trace)), "status": result.status}
    for tol in TOLERANCES:
        hit = np.flatnonzero(result.trace <= tol)
        out[f"{tol:g}"] = None if not hit.size else (int(hit[0]),
                                                     float(result.seconds[hit[0]]) * 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.friction_solvers",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=int, default=20000)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    names = registry.friction_solvers()
    warmup(names)
    bowl = frozen("bowl", 500, {})
    small = frozen("bowl", 300, {"n": 60})
    box = frozen("box", 150, {"n": 10000})
    report = {"machine": platform.platform(), "processor": platform.processor(),
              "contacts": {"bowl": bowl.m, "bowl60": small.m, "box": box.m}, "solvers": {}}
    print(f"bowl {bowl.m} contacts, bowl60 {small.m}, box {box.m}")
    print("| solver | ns/contact/it bowl | box 10000 | bowl: 1e-6 (it, ms) | 1e-8 | best | "
          "bowl 60: 1e-6 | 1e-8 | best |")
    for name in names:
        row = {"bowl_ns": cost(bowl, name, 200, args.runs),
               "box_ns": cost(box, name, 20, max(3, args.runs // 2)),
               "bowl": reach(bowl, name, min(args.budget, 5000)),
               "bowl60": reach(small, name, args.budget)}
        report["solvers"][name] = row

        def cell(r, tol):
            hit = r[f"{tol:g}"]
            return "—" if hit is None else f"{hit[0]}, {hit[1]:.1f}"
        print(f"| `{name}` | {row['bowl_ns']:.0f} | {row['box_ns']:.0f} | "
              f"{cell(row['bowl'], 1e-6)} | {cell(row['bowl'], 1e-8)} | "
              f"{row['bowl']['best']:.1e} | {cell(row['bowl60'], 1e-6)} | "
              f"{cell(row['bowl60'], 1e-8)} | {row['bowl60']['best']:.1e} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
