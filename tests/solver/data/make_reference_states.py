"""Final states of every seed scene x every solver after 500 steps, from the code of the commit
this was run on; tests/solver/test_reference_states.py checks the current code reproduces them
bit for bit. Run: python make_reference_states.py OUT.npz (from a checkout of that commit)."""
import sys
import time

import numpy as np

import scenes
from solver import registry
from solver.step import Simulation

STEPS = 500
TRACE_EVERY = 25   # every 25th step records its trace (the driver's other path)
EXTRA = (("bowl", "pgs", {"damping": 0.5}, 0.5), ("bowl", "prox-jacobi", {"damping": 0.5}, 0.5))


def runs():
    for scene in ("bowl", "disk", "column", "mass-ratio", "box"):
        for solver in registry.METHODS:
            yield scene, solver, {}, 0.0
    yield from EXTRA


def main(out):
    arrays = {}
    for scene, solver, scene_params, warm in runs():
        t0 = time.perf_counter()
        world = scenes.build(scene, scene_params)
        sim = Simulation(world, solver, 20, warm_start=warm, trace=False)
        for k in range(STEPS):
            sim.step(trace=(k % TRACE_EVERY == 0))
        key = f"{scene}|{solver}|{warm:g}|" + ",".join(f"{k}={v}" for k, v in scene_params.items())
        arrays[key + "|x"] = world.x
        arrays[key + "|v"] = world.v
        print(f"{key}: {time.perf_counter() - t0:.1f} s", flush=True)
    np.savez_compressed(out, **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
