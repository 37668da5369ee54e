"""Where two threads start to pay (not a test): piles of n marbles (the bowl for 350, else the
box) stepped in one process with threads 1 and 2, the serial-size threshold
(solver.parallel.MIN_MARBLES) lifted, 5 x 60 steps each after 300, alternating; medians of
ms/step. Run it on a quiet machine:

    python -m tests.solver.threshold_benchmark 350 1000 2000 4000 8000
"""
from __future__ import annotations

import sys

import numpy as np

import scenes
import solver.step as step
from solver.methods import registry
from solver.step import Simulation
from solver.warmup import warmup

SETTLE, ROUNDS, STEPS = 300, 5, 60


def compare(n: int) -> tuple[float, float]:
    """Median ms/step of a pile of n marbles with 1 and with 2 threads."""
    scene = "bowl" if n == 350 else "box"
    sims = {}
    for threads in (1, 2):
        sims[threads] = Simulation(scenes.build(scene, {"n": n}), registry.settings("pgs", 20),
                                   threads=threads)
        for _ in range(SETTLE):
            sims[threads].step()
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(ROUNDS):
        for threads, sim in sims.items():
            times[threads] += [sim.step().timings["total"] for _ in range(STEPS)]
    return 1e3 * float(np.median(times[1])), 1e3 * float(np.median(times[2]))


def main(argv: list[str]) -> int:
    # Every pile in blocks when given 2 threads, whatever its size.
    step.blocks_for = lambda n, threads: threads if threads > 1 else 1
    warmup(["pgs"], threads=2)
    for n in [int(a) for a in argv] or [350, 1000, 2000, 4000, 8000]:
        one, two = compare(n)
        print(f"n={n}: threads 1 {one:.3f} ms, threads 2 {two:.3f} ms, 1/2 = {one / two:.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
