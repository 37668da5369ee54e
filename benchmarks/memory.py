"""Resident memory of one long headless run, sampled while it runs (not a test): the run's
statistics must take constant memory however many steps it makes. Prints steps, RSS in MiB and
steps per second at 20 evenly spaced points, as the in-process `marbles-bench run` would.

    python -m benchmarks.memory --steps 100000000 [--scene mass-ratio] [--solver pgs]
"""
from __future__ import annotations

import argparse
import os
import time

from lab.session.run import run_steps
from lab.session.spec import RunSpec
from solver.step import Simulation
from solver.warmup import warmup

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000_000)
    parser.add_argument("--scene", default="mass-ratio")
    parser.add_argument("--solver", default="pgs")
    parser.add_argument("--points", type=int, default=20)
    args = parser.parse_args(argv)
    spec = RunSpec.create(args.scene, args.solver)
    warmup([spec.solver])
    sim = spec.simulation(spec.build_world())
    every = max(1, args.steps // args.points)
    start = time.perf_counter()
    print(f"# {args.scene} {args.solver}, {args.steps} steps; RSS before: {rss_mib():.1f} MiB")
    print("# steps  rss_MiB  steps_per_s")

    def sample(done: int, total: int) -> None:
        if done % every == 0 or done == total:
            rate = done / (time.perf_counter() - start)
            print(f"{done:10d}  {rss_mib():7.1f}  {rate:9.0f}", flush=True)

    report = run_steps(sim, args.steps, progress=sample)
    print(f"# median step {report['timing_ms']['median']['total']:.4f} ms "
          f"(exact: {report['timing_exact']}); physics {report['physics']['status']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
