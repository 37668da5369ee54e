"""Headless step time of this checkout against other checkouts, alternating run by run so that
load from elsewhere hits all of them alike (not a test). Each run is `marbles-bench run` (or the
module of a checkout that predates lab/) of SCENE with pgs, 20 iterations; its figure is the
median ms/step over its steps; the report gives each tree's median over the rounds and its ratio
to this checkout's.

    python -m benchmarks.step --rounds 5 --tree before:../base [--scene bowl]
                              [--steps 1500] [--set n=10000]... [--threads N]

--threads N goes to the trees that have the option; the others step serially.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("collide", "assemble", "solve", "integrate", "total")


def bench_module(tree: Path) -> str:
    if (tree / "lab" / "cli" / "bench.py").is_file():
        return "lab.cli.bench"
    return "lab.bench" if (tree / "lab" / "bench.py").is_file() else "app.bench"


def knows_threads(tree: Path) -> bool:
    cli = tree / "lab" / "cli" / "options.py"
    cli = cli if cli.is_file() else tree / "lab" / "cli.py"
    return cli.is_file() and "THREADS" in cli.read_text()


def one_run(tree: Path, scene: str, steps: int, assignments: list[str],
            threads: int | None = None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        sets = [arg for a in assignments for arg in ("--set", a)]
        if threads is not None and knows_threads(tree):
            sets += ["--threads", str(threads)]
        subprocess.run([sys.executable, "-m", bench_module(tree), "run", "--scene", scene,
                        "--solver", "pgs", "--iterations", "20", "--steps", str(steps),
                        "--quiet", "--json", str(out), *sets], cwd=tree, check=True,
                       capture_output=True)
        return json.loads(out.read_text())["timing_ms"]["median"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.step",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME:PATH")
    parser.add_argument("--scene", default="bowl")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--set", action="append", default=[], dest="assignments")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    trees = [("this", ROOT)] + [(t.split(":", 1)[0], Path(t.split(":", 1)[1]).resolve())
                                for t in args.tree]
    runs = {name: [] for name, _ in trees}
    for k in range(args.rounds):
        for name, tree in trees:
            runs[name].append(one_run(tree, args.scene, args.steps, args.assignments,
                                      args.threads))
        print(f"round {k + 1}: " + ", ".join(f"{n} {runs[n][-1]['total']:.3f}" for n, _ in trees),
              file=sys.stderr)
    base = statistics.median(r["total"] for r in runs["this"])
    for name, _ in trees:
        med = {p: statistics.median(r[p] for r in runs[name]) for p in PHASES}
        totals = sorted(r["total"] for r in runs[name])
        print(f"{name}: {med['total']:.3f} ms/step median of {args.rounds} "
              f"({totals[0]:.3f}-{totals[-1]:.3f}); collide {med['collide']:.3f}, solve "
              f"{med['solve']:.3f}, integrate {med['integrate']:.3f}; "
              f"{med['total'] / base:.3f} x this")
    return 0


if __name__ == "__main__":
    sys.exit(main())
