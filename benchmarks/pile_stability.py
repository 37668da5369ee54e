"""Whether a solver keeps a settled pile settled at a step's iteration count (docs/solvers.md,
"prox-jacobi's γ"; not a test): each pile settled by pgs (20 sweeps), then stepped on by each
run (solver, optionally `key=value` settings) from the same state. Prints, per pile and run, the
median natural-map residual of the steps (m/s) and the fastest marble's largest speed component
over them (m/s): a pile that stays settled keeps the second near the settling's own. "–": a
frictionless-only solver on a pile with friction.

    python -m benchmarks.pile_stability
    python -m benchmarks.pile_stability --runs "jacobi;prox-jacobi gamma=1;prox-jacobi" \\
        --piles box,bowl --steps 40
"""
from __future__ import annotations

import argparse
import copy
import sys

import numpy as np

import scenes
from solver.methods import registry
from solver.options import StepOptions
from solver.params import ParamError, resolve
from solver.step import Simulation

FRICTION = {"mu": 0.5, "mu_wall": 0.5}
# name: (scene, its parameters, pgs steps to settle it)
PILES = {
    "box": ("box", {"n": 2000}, 60), "box-mu": ("box", {"n": 2000, **FRICTION}, 60),
    "bowl": ("bowl", {}, 150), "bowl-mu": ("bowl", FRICTION, 150),
    "column": ("column", {}, 30), "mass-ratio": ("mass-ratio", {}, 30),
    "pyramid": ("pyramid", {}, 30), "heap": ("heap", {}, 150), "disk": ("disk", {}, 100),
}
RUNS = ("jacobi; prox-jacobi gamma=1; prox-jacobi gamma=0.7; prox-jacobi gamma=0.5; "
        "prox-jacobi gamma=0.4; prox-jacobi gamma=0.3")


def run_spec(text: str) -> tuple[str, dict]:
    """'solver key=value ...' -> (solver, settings overrides)."""
    solver, *pairs = text.split()
    bad = [p for p in pairs if "=" not in p]
    if bad:
        raise ParamError(f"run {text!r}: {bad[0]!r} is not key=value")
    return solver, dict(p.split("=", 1) for p in pairs)


def options(solver: str, overrides: dict, iterations: int, frictional: bool) -> StepOptions:
    """`iterations` a step, the default warm start (full with friction, none without)."""
    return StepOptions(registry.settings(solver, iterations, False, overrides),
                       1.0 if frictional else 0.0, 1.0, 1, "cpu", "float64")


def pile_row(pile: str, runs: list[tuple[str, dict]], steps: int, iterations: int) -> list[str]:
    scene, params, settle = PILES[pile]
    world = scenes.build(scene, params)
    frictional = scenes.has_friction(resolve(scenes.get(scene).params, params, scene))
    sim = Simulation(world, options("pgs", {}, 20, frictional))
    for _ in range(settle):
        sim.step()
    cells = [pile, f"{np.abs(world.v).max():.2g}"]
    for solver, overrides in runs:
        if frictional and not registry.get(solver).friction:
            cells.append("–")  # a frictionless-only solver
            continue
        run = Simulation(copy.deepcopy(world), options(solver, overrides, iterations, frictional))
        residuals, fastest = [], 0.0
        for _ in range(steps):
            residuals.append(run.step().result.residual)
            fastest = max(fastest, float(np.abs(run.world.v).max()))
        cells.append(f"{np.median(residuals):.2g} / {fastest:.2g}")
    return cells


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pile_stability",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--piles", default=",".join(PILES),
                        help=f"comma-separated, of {', '.join(PILES)} (default all)")
    parser.add_argument("--runs", default=RUNS,
                        help="semicolon-separated runs, each 'solver key=value ...' "
                             f"(default {RUNS!r})")
    parser.add_argument("--steps", type=int, default=40, help="steps of each run (default 40)")
    parser.add_argument("--iterations", type=int, default=20,
                        help="iterations a step (default 20)")
    args = parser.parse_args(argv)
    piles = [p for p in args.piles.split(",") if p]
    unknown = [p for p in piles if p not in PILES]
    if unknown:
        parser.error(f"unknown pile {unknown[0]!r}; choose from {', '.join(PILES)}")
    if args.steps < 1 or args.iterations < 1:
        parser.error("--steps and --iterations must be at least 1")
    try:
        runs = [run_spec(r.strip()) for r in args.runs.split(";") if r.strip()]
        for solver, overrides in runs:
            registry.settings(solver, args.iterations, False, overrides)
    except (ParamError, KeyError) as error:
        print(f"pile_stability: {error}", file=sys.stderr)
        return 2
    header = ["pile", "settled, fastest"] + [" ".join([s, *(f"{k}={v}" for k, v in o.items())])
                                           for s, o in runs]
    print(f"median residual (m/s) / largest |v| (m/s) over {args.steps} steps of "
          f"{args.iterations} iterations, from each pile settled by pgs")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for pile in piles:
        print("| " + " | ".join(pile_row(pile, runs, args.steps, args.iterations)) + " |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
