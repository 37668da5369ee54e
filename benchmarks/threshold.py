"""Where two threads start to pay (not a test): piles of n marbles (the bowl for 350, else the
box) stepped in one process with threads 1 and 2, the serial-size threshold
(solver.parallel.MIN_MARBLES) lifted, 5 x 60 steps each after 300, alternating; medians of
ms/step. Run it on a quiet machine:

    python -m benchmarks.threshold 350 1000 2000 4000 8000
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import scenes
import solver.step as step
from solver.methods import registry
from solver.step import Simulation
from solver.warmup import warmup

SETTLE, ROUNDS, STEPS = 300, 5, 60


def compare(n: int, settle: int = SETTLE, rounds: int = ROUNDS,
            steps: int = STEPS) -> tuple[float, float]:
    """Median ms/step of a pile of n marbles with 1 and with 2 threads."""
    scene = "bowl" if n == 350 else "box"
    sims = {}
    for threads in (1, 2):
        sims[threads] = Simulation(scenes.build(scene, {"n": n}), registry.settings("pgs", 20),
                                   threads=threads)
        for _ in range(settle):
            sims[threads].step()
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(rounds):
        for threads, sim in sims.items():
            times[threads] += [sim.step().timings["total"] for _ in range(steps)]
    return 1e3 * float(np.median(times[1])), 1e3 * float(np.median(times[2]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.threshold",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[350, 1000, 2000, 4000, 8000],
                        metavar="N", help="pile sizes (default 350 1000 2000 4000 8000)")
    parser.add_argument("--settle", type=int, default=SETTLE, help="steps before timing")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="alternating rounds")
    parser.add_argument("--steps", type=int, default=STEPS, help="timed steps per round")
    args = parser.parse_args(argv)
    # Every pile in blocks when given 2 threads, whatever its size.
    step.blocks_for = lambda n, threads: threads if threads > 1 else 1
    warmup(["pgs"], threads=1)
    warmup(["pgs"], threads=2)
    for n in args.sizes:
        one, two = compare(n, args.settle, args.rounds, args.steps)
        print(f"n={n}: threads 1 {one:.3f} ms, threads 2 {two:.3f} ms, 1/2 = {one / two:.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
