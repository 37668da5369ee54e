"""Scaling of the step with the thread count (not a test): ms/step by phase, contacts
and ns per contact update for settled box piles, friction off and on, 1 and 2 threads (or
--threads), pgs with 20 iterations; then the convergence per iteration of the sweep in blocks
against the serial sweep on frozen bowl and box problems.

    python -m benchmarks.scaling --rounds 5
    python -m benchmarks.scaling --rounds 5 --sizes 10000,100000,1000000
    python -m benchmarks.scaling --convergence-only

Every pile is settled once (`--settle` steps, with every core) and kept in --states (default
.scaling-states/ under the working directory, reused by later runs); each timed figure is
`marbles-bench run --state` of that pile for --steps steps in a fresh process, whose median
ms/step is the run's figure; the report gives the median over the rounds, the configurations
alternating within a round so that load from elsewhere hits them alike. Run it on a quiet
machine (`uptime` load below 0.3). ns per contact update = solve time / (contacts x
iterations): one contact's normal (and, with friction, tangent) update, the products of the
driver's residual checks included. Parallel efficiency = t(1) / (T t(T)); range: the fastest and
slowest run's ms/step (this machine's runs vary by up to half between processes).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("collide", "assemble", "solve", "integrate", "total")
ITERATIONS = 20
MU = 0.5  # the frictional piles' Coulomb coefficient (marbles and walls)


def _bench(args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        subprocess.run([sys.executable, "-m", "lab.cli.bench", "run", "--solver", "pgs",
                        "--iterations", str(ITERATIONS), "--quiet", "--json", str(out), *args],
                       cwd=ROOT, check=True, capture_output=True)
        return json.loads(out.read_text())


def settled_state(states: Path, n: int, friction: bool, settle: int) -> Path:
    """The box of n marbles after `settle` steps (made once, then reused)."""
    path = states / f"box-{n}-{'mu' if friction else 'nomu'}-{settle}.npz"
    if not path.exists():
        states.mkdir(parents=True, exist_ok=True)
        sets = ["--set", f"n={n}"] + (["--set", f"mu={MU}", "--set", f"mu_wall={MU}"]
                                      if friction else [])
        print(f"settling box n={n}{' with friction' if friction else ''} ({settle} steps)...",
              file=sys.stderr)
        _bench(["--scene", "box", *sets, "--steps", str(settle), "--save-state", str(path)])
    return path


def timed(state: Path, threads: int, steps: int) -> dict:
    """One run's median ms per phase and its last contact count."""
    report = _bench(["--state", str(state), "--steps", str(steps), "--threads", str(threads)])
    return {**report["timing_ms"]["median"], "contacts": report["contacts"]["last"]}


def scaling(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    frictions = {"both": (False, True), "off": (False,), "on": (True,)}[args.friction]
    configs = [(n, f) for n in sizes for f in frictions]
    states = {c: settled_state(Path(args.states), c[0], c[1], args.settle) for c in configs}
    runs: dict = {(c, t): [] for c in configs for t in threads}
    for k in range(args.rounds):
        for c in configs:
            for t in threads:
                runs[(c, t)].append(timed(states[c], t, args.steps))
        print(f"round {k + 1} of {args.rounds} done", file=sys.stderr)
    print(f"| box n | friction | threads | ms/step | range | collide | assemble | solve | "
          f"integrate | contacts | ns/contact update | speed-up | solve speed-up | efficiency |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        base = None
        for t in threads:
            med = {p: statistics.median(r[p] for r in runs[(c, t)]) for p in PHASES}
            totals = [r["total"] for r in runs[(c, t)]]
            contacts = int(statistics.median(r["contacts"] for r in runs[(c, t)]))
            ns = 1e6 * med["solve"] / max(contacts * ITERATIONS, 1)
            base = med if base is None else base
            speedup = base["total"] / med["total"]
            print(f"| {c[0]} | {'μ=' + str(MU) if c[1] else 'off'} | {t} | {med['total']:.2f} | "
                  f"{min(totals):.1f}-{max(totals):.1f} | {med['collide']:.2f} | "
                  f"{med['assemble']:.2f} | {med['solve']:.2f} | {med['integrate']:.2f} | "
                  f"{contacts} | {ns:.1f} | {speedup:.2f} | {base['solve'] / med['solve']:.2f} | "
                  f"{speedup / t:.2f} |")


def convergence(args: argparse.Namespace) -> None:
    """Residual after k sweeps, serial against 2 and 4 blocks, on frozen settled problems
    (deterministic: no timing)."""
    from lab.io.snapshot import read_state
    from solver.methods import registry
    from tests.solver.blocks import problem_of

    marks = (1, 2, 5, 10, 20, 50, 100, 200)
    piles = [("bowl", None)] + [(f"box n={n}", n) for n in
                                 [int(s) for s in args.convergence_sizes.split(",")]]
    print("\n| problem | blocks | " + " | ".join(f"r after {k}" for k in marks) + " |")
    print("|---|---|" + "---|" * len(marks))
    for label, n in piles:
        if n is None:
            state = Path(args.states) / f"bowl-{args.settle}.npz"
            if not state.exists():
                Path(args.states).mkdir(parents=True, exist_ok=True)
                _bench(["--scene", "bowl", "--steps", str(args.settle), "--save-state",
                        str(state)])
        else:
            state = settled_state(Path(args.states), n, False, args.settle)
        world = read_state(str(state)).world
        for blocks in (1, 2, 4):
            p = problem_of(world, blocks)
            settings = registry.settings("pgs", max(marks)).with_trace(True)
            trace = registry.get("pgs").solve(p, np.zeros(p.m), settings).trace
            cells = [f"{trace[min(k, len(trace) - 1)]:.2e}" for k in marks]
            print(f"| {label} ({p.m} contacts) | {blocks} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaling",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="10000,100000",
                        help="box sizes, comma-separated (add 1000000 for the million)")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--friction", choices=("both", "off", "on"), default="both",
                        help="the piles without friction, with it, or both")
    parser.add_argument("--steps", type=int, default=100, help="timed steps per run")
    parser.add_argument("--settle", type=int, default=600, help="steps that settle a pile")
    parser.add_argument("--states", default=".scaling-states", help="where settled piles stay")
    parser.add_argument("--convergence-sizes", default="10000",
                        help="box sizes of the convergence table")
    parser.add_argument("--convergence-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.convergence_only:
        scaling(args)
    convergence(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
