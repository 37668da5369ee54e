"""Save a state, load it back, and export the contact problem of its next step; then solve
the exported problem from the file alone.

    python examples/export_contact_problem.py [--steps 200] [--dir .]
"""
import argparse
from pathlib import Path

import numpy as np

import scenes
from lab.io.snapshot import load_lcp, load_state, save_lcp, save_state
from solver.methods import registry
from solver.step import Simulation


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--dir", default=".")
    args = parser.parse_args(argv)
    out = Path(args.dir)

    sim = Simulation(scenes.build("bowl"), registry.settings("pgs", 20))
    for _ in range(args.steps):
        sim.step()
    save_state(out / "state.npz", sim.world)

    world = load_state(out / "state.npz")                 # the same world, from the file
    again = Simulation(world, registry.settings("pgs", 20))
    again.step()
    save_lcp(out / "step.npz", again.problem, again.lam, world)

    problem, extras = load_lcp(out / "step.npz")         # W, q and the contact geometry
    settings = registry.settings("ppcg", iterations=100, overrides={"abs_tol": 1e-10})
    result = registry.get("ppcg").solve(problem, np.zeros(problem.m), settings)
    print(f"{problem.m} contacts; the step's own impulses leave {problem.residual(extras['lam']):.2e}"
          f" m/s; ppcg from zero: {result.status} after {result.iterations} iterations, "
          f"{result.residual:.2e} m/s")


if __name__ == "__main__":
    main()
