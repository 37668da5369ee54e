"""Whether this checkout steps exactly as another one does (not a test): each scene runs in both
trees at each thread count, `marbles-bench run ... --save-state`, and the saved states (positions,
velocities, spins, orientations, the last impulses) are compared bit for bit, tree against tree
at the same thread count (a parallel step is bit for bit the same only for the same blocks).

    python -m benchmarks.bit_for_bit --tree ../old [--threads 1,2,4] [--steps 60]
                                     [--scenes 'bowl;box n=2000 mu=0.5'] [--this-set push_speed=1000]

--this-set adds `--set` values to this checkout's runs only: a parameter the other tree does not
have, at the value that reproduces its behaviour (push_speed=1000: no push is ever capped).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ("x", "v", "w", "q", "contact_impulse")
SCENES = "bowl;box n=2000 mu=0.5;pyramid layers=6 mu=0.5"


def run_state(tree: Path, scene: str, sets: list[str], threads: int, steps: int,
              out: Path) -> None:
    """The state after `steps` steps of `scene` in `tree`, written to `out`."""
    args = [sys.executable, "-m", "lab.cli.bench", "run", "--scene", scene, "--threads",
            str(threads), "--steps", str(steps), "--save-state", str(out)]
    for value in sets:
        args += ["--set", value]
    done = subprocess.run(args, cwd=tree, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {' '.join(args[2:])} failed: "
                         f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")


def same_state(a: Path, b: Path) -> str:
    """'bit for bit', or the first field that differs and by how much."""
    with np.load(a) as one, np.load(b) as other:
        for name in FIELDS:
            if one[name].shape != other[name].shape:
                return f"{name} differs in shape {one[name].shape} / {other[name].shape}"
            if not np.array_equal(one[name], other[name]):
                return f"{name} differs by up to {np.abs(one[name] - other[name]).max():.3g}"
    return "bit for bit"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bit_for_bit",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", required=True, type=Path, help="the other checkout")
    parser.add_argument("--threads", default="1,2,4")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--scenes", default=SCENES,
                        help="';'-separated scenes, each 'name name=value ...'")
    parser.add_argument("--this-set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    if not (tree / "lab" / "cli" / "bench.py").is_file():
        parser.error(f"--tree {args.tree}: not a checkout with lab/cli/bench.py")
    threads = [int(t) for t in args.threads.split(",")]
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, text in enumerate(s for s in args.scenes.split(";") if s.strip()):
            scene, *sets = text.split()
            for t in threads:
                other, this = Path(tmp, f"{k}-{t}-other.npz"), Path(tmp, f"{k}-{t}-this.npz")
                run_state(tree, scene, sets, t, args.steps, other)
                run_state(ROOT, scene, sets + args.this_set, t, args.steps, this)
                verdict = same_state(other, this)
                differ += verdict != "bit for bit"
                print(f"| {text} | {t} threads | {args.steps} steps | {verdict} |", flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
