"""Steps on shared cores (not a test): the settled box of 2000 marbles with μ = 0.5, `pgs` with 20
iterations, stepped on 2 threads while another process keeps one core busy, against 1 thread.

    python -m benchmarks.shared_cores --runs 5
    python -m benchmarks.shared_cores --variants "active:OMP_WAIT_POLICY=active;default:"

Each run is a fresh process (the threading layer and its wait policy are fixed when Numba's
thread pool starts) that times --steps steps one by one; a busy loop runs beside it in another
process. A variant is `label:NAME=VALUE,NAME=VALUE` (environment variables for the run; an empty
list is the program's own choice). The table gives, per variant, the median over the runs of
each run's median ms/step, the slowest run's median, the worst single step, and the worst step
over the median of the 1-thread runs (the issue's aim: below 3). The 1-thread runs have the busy
loop beside them too: on 2 cores one busy process leaves one core, and a 1-thread step should
not notice it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.scaling import settled_state

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VARIANTS = ("program:;omp-active:NUMBA_THREADING_LAYER=omp,OMP_WAIT_POLICY=active;"
                    "omp-passive:NUMBA_THREADING_LAYER=omp,OMP_WAIT_POLICY=passive;"
                    "workqueue:NUMBA_THREADING_LAYER=workqueue")

CHILD = r"""
import json, sys, time
import numpy as np
from lab.io.snapshot import read_state
from solver.methods import registry
from solver.step import Simulation
from solver.warmup import warmup
import numba
state, threads, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
world = read_state(state).world
warmup(["pgs"], threads=threads)
sim = Simulation(world, registry.settings("pgs", 20), warm_start=1.0, threads=threads)
for _ in range(3):
    sim.step(trace=False)
times = []
for _ in range(steps):
    t = time.perf_counter()
    sim.step(trace=False)
    times.append(1e3 * (time.perf_counter() - t))
layer = numba.threading_layer() if threads > 1 else "serial"
print(json.dumps({"times": times, "layer": layer}))
"""


def parse_variants(text: str) -> list[tuple[str, dict[str, str]]]:
    """'label:A=1,B=2;label2:' -> [(label, {A: 1, B: 2}), (label2, {})]."""
    out = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        label, _, assignments = item.partition(":")
        env = dict(a.split("=", 1) for a in filter(None, assignments.split(",")))
        out.append((label, env))
    return out


def one_run(state: Path, threads: int, steps: int, env: dict[str, str], busy: bool = True) -> dict:
    """Step times (ms) of one fresh process, with a busy loop beside it unless not `busy`."""
    run_env = {k: v for k, v in os.environ.items()
               if k not in ("OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER", "GOMP_SPINCOUNT")}
    run_env.update(env)
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        time.sleep(0.2)
        out = subprocess.run([sys.executable, "-c", CHILD, str(state), str(threads), str(steps)],
                             cwd=ROOT, env=run_env, capture_output=True, text=True, check=True)
    finally:
        if loop is not None:
            loop.kill()
            loop.wait()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.shared_cores",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per variant")
    parser.add_argument("--steps", type=int, default=100, help="timed steps per run")
    parser.add_argument("--variants", default=DEFAULT_VARIANTS,
                        help="'label:NAME=VALUE,...;label:...' (default: %(default)s)")
    parser.add_argument("--no-busy", action="store_true",
                        help="no busy process beside the runs (what the variants cost when the "
                             "cores are free)")
    parser.add_argument("--states", default=".scaling-states", help="where settled piles stay")
    args = parser.parse_args(argv)
    state = settled_state(Path(args.states), 2000, True, 600)
    variants = parse_variants(args.variants)
    configs = [("1 thread", {}, 1)] + [(label, env, 2) for label, env in variants]
    runs: dict[str, list[dict]] = {label: [] for label, _, _ in configs}
    for k in range(args.runs):  # the configurations alternate within a round
        for label, env, threads in configs:
            runs[label].append(one_run(state, threads, args.steps, env, not args.no_busy))
        print(f"round {k + 1} of {args.runs} done", file=sys.stderr)
    base = statistics.median(statistics.median(r["times"]) for r in runs["1 thread"])
    print(f"box of 2000, mu 0.5, pgs 20 iterations, {args.steps} steps a run, {args.runs} runs, "
          f"{'nothing' if args.no_busy else 'one busy process'} beside each run")
    print("| variant | threads | layer | median ms/step | slowest run's median | worst step | "
          "worst / 1-thread median |")
    print("|---|---|---|---|---|---|---|")
    for label, env, threads in configs:
        medians = [statistics.median(r["times"]) for r in runs[label]]
        worst = max(max(r["times"]) for r in runs[label])
        layers = sorted({r["layer"] for r in runs[label]})
        print(f"| {label} | {threads} | {','.join(layers)} | {statistics.median(medians):.2f} | "
              f"{max(medians):.2f} | {worst:.1f} | {worst / base:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
