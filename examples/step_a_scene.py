"""Build a scene and step it: the simulation core on its own.

    python examples/step_a_scene.py [--scene bowl] [--solver pgs] [--steps 500]
"""
import argparse

import numpy as np

import scenes
from solver.methods import registry
from solver.step import Simulation, max_penetration


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene", default="bowl")
    parser.add_argument("--solver", default="pgs")
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args(argv)

    world = scenes.build(args.scene)                      # x, v: (n, 3) m, m/s
    sim = Simulation(world, registry.settings(args.solver, iterations=20))
    for _ in range(args.steps):
        report = sim.step()                               # collide, assemble, solve, integrate
    speed = np.linalg.norm(world.v, axis=1)
    print(f"{args.scene}/{args.solver}: t = {world.time:.2f} s, {report.contacts} contacts, "
          f"last residual {report.result.residual:.2e} m/s, max speed {speed.max():.3f} m/s, "
          f"deepest overlap {1e3 * max_penetration(world):.2f} mm, "
          f"step {1e3 * report.timings['total']:.3f} ms")


if __name__ == "__main__":
    main()
