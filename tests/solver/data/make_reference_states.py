"""Final states of every seed scene x every solver after 500 steps, from the code of the commit
this was run on; tests/solver/test_reference_states.py checks the current code reproduces them
bit for bit. Run from the repository root:

    PYTHONPATH=. python tests/solver/data/make_reference_states.py OUT.npz
    PYTHONPATH=. python tests/solver/data/make_reference_states.py FILE.npz --only KEY ...

The second form re-makes only the runs named (keys as in the file, e.g. 'box|pcg|0|') with the
current code and keeps every other array of FILE as it is. Every run was made on commit
2444add, except the pcg, ppcg and pgs-sm runs, whose bits changed with their rounding-level
tolerances and were re-made with --only (docs/solvers.md; the states first differ by 1e-17 to 7e-14 m).
"""
import argparse
import time

import numpy as np

import scenes
from solver.methods import registry
from solver.step import Simulation

STEPS = 500
TRACE_EVERY = 25   # every 25th step records its trace (the driver's other path)
EXTRA = (("bowl", "pgs", {"damping": 0.5}, 0.5), ("bowl", "prox-jacobi", {"damping": 0.5}, 0.5))


def runs():
    for scene in ("bowl", "disk", "column", "mass-ratio", "box"):
        for solver in registry.METHODS:
            yield scene, solver, {}, 0.0
    yield from EXTRA


def key_of(scene: str, solver: str, scene_params: dict, warm: float) -> str:
    return f"{scene}|{solver}|{warm:g}|" + ",".join(f"{k}={v}" for k, v in scene_params.items())


def final_state(scene: str, solver: str, scene_params: dict, warm: float):
    world = scenes.build(scene, scene_params)
    sim = Simulation(world, registry.settings(solver, 20), warm_start=warm)
    for k in range(STEPS):
        sim.step(trace=(k % TRACE_EVERY == 0))
    return world.x, world.v


def main(out: str, only: list[str] | None = None) -> None:
    arrays = {}
    if only:
        with np.load(out) as z:
            arrays = {k: z[k] for k in z.files}
        unknown = set(only) - {key_of(*r) for r in runs()}
        if unknown:
            raise SystemExit(f"unknown key(s): {', '.join(sorted(unknown))}")
    for run in runs():
        key = key_of(*run)
        if only and key not in only:
            continue
        t0 = time.perf_counter()
        arrays[key + "|x"], arrays[key + "|v"] = final_state(*run)
        print(f"{key}: {time.perf_counter() - t0:.1f} s", flush=True)
    np.savez_compressed(out, **arrays)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the .npz to write (with --only: to update)")
    parser.add_argument("--only", nargs="+", metavar="KEY", help="re-make only these runs")
    args = parser.parse_args()
    main(args.out, args.only)
