"""What friction costs a step (not a test): a scene stepped with `pgs`, 20 iterations,
frictionless (warm start 0) and with μ = μ_wall = 0.5 (warm start 1: the defaults of each),
both after 300 steps, then 5 x 100 steps of each alternating in one process; prints the
medians of the phases (ms) and the ratio of the totals. Run it on a quiet machine:

    python -m benchmarks.friction_cost [SCENE] [N]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import scenes
from solver.methods import registry
from solver.step import Simulation
from solver.warmup import warmup

PHASES = ("collide", "assemble", "solve", "integrate", "total")
SETTLE, ROUNDS, STEPS, MU = 300, 5, 100, 0.5


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.friction_cost",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("scene", nargs="?", default="bowl", help="scene (default bowl)")
    parser.add_argument("n", nargs="?", type=int, help="its marble count (default the scene's)")
    parser.add_argument("--settle", type=int, default=SETTLE, help="steps before timing")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="alternating rounds")
    parser.add_argument("--steps", type=int, default=STEPS, help="timed steps per round")
    args = parser.parse_args(argv)
    scene = args.scene
    extra = {"n": args.n} if args.n is not None else {}
    warmup(["pgs"])
    sims = {}
    for label, mu in (("frictionless", 0.0), ("friction", MU)):
        world = scenes.build(scene, {**extra, "mu": mu, "mu_wall": mu})
        sims[label] = Simulation(world, registry.settings("pgs", 20), warm_start=1.0 if mu else 0.0)
        for _ in range(args.settle):
            sims[label].step()
    times = {label: {p: [] for p in PHASES} for label in sims}
    for _ in range(args.rounds):
        for label, sim in sims.items():
            for _ in range(args.steps):
                report = sim.step()
                for p in PHASES:
                    times[label][p].append(report.timings[p])
    for label, sim in sims.items():
        cells = ", ".join(f"{p} {1e3 * np.median(times[label][p]):.3f}" for p in PHASES)
        print(f"{label}: {cells} ms; contacts {sim.problem.m}")
    ratio = np.median(times["friction"]["total"]) / np.median(times["frictionless"]["total"])
    print(f"with friction / without: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
