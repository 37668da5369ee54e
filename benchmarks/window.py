"""What the window costs the simulation: the measurement behind
docs/desktop-performance.md.

    python -m benchmarks.window [--rounds R] [--frames N] [--speed X]
                                [--variant NAME:KEY=VALUE,...]... [--tree NAME:PATH]...
                                [--run="--scene box --set n=10000 --threads 2"]

Each round runs, one after the other, a scripted window run per variant (under `xvfb-run -a`
when there is no display), `xvfb-run -a python -m app.main --scene bowl --frames N
--no-benchmark --speed X`, and the same scene headless, `python -m lab.cli.bench run --scene bowl
--steps K --quiet --json F`, whose steps per second are steps / (wall_seconds -
compile_seconds). Both run the article's frictionless bowl (the window alone opens on the bowl
with friction). Alternating them inside each round lets load from other jobs hit all of them
alike; the table gives medians over the rounds with the range, and the window's steps per
second as a share of the headless ones of the same rounds. A variant sets environment
variables for its window runs (for experiments, e.g. `--variant one-rasteriser:LP_NUM_THREADS=1`);
a tree runs the window and the headless run from another checkout (e.g. `--tree before:../base`,
a `git worktree` of an earlier commit), so that a change is compared with what it replaced in
the same run, each window as a share of its own core's headless rate. The plain window run is always included.
`--run` adds run options to every window and headless command line (a later `--scene` wins
over the headless run's bowl): a large pile stepped with several threads, say (docs/parallel.md).
Numbers depend on the machine and its load: compare within one run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"([\d.]+) frames/s, ([\d.]+) steps/s, plots ([\d.]+)/s .*median step "
                     r"([\d.]+) ms")


def parse_variant(text: str) -> tuple[str, dict]:
    """'NAME:KEY=VALUE,KEY=VALUE' -> (NAME, {KEY: VALUE})."""
    name, _, assignments = text.partition(":")
    env = {}
    for item in filter(None, assignments.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise argparse.ArgumentTypeError(f"variant {text!r}: {item!r} is not KEY=VALUE")
        env[key] = value
    if not name:
        raise argparse.ArgumentTypeError(f"variant {text!r} has no name")
    return name, env


def parse_tree(text: str) -> tuple[str, Path]:
    """'NAME:PATH' -> (NAME, PATH), PATH a checkout with app/main.py."""
    name, _, path = text.partition(":")
    tree = Path(path).resolve()
    if not name or not (tree / "app" / "main.py").is_file():
        raise argparse.ArgumentTypeError(f"tree {text!r}: want NAME:PATH, PATH a checkout of "
                                         "this project")
    return name, tree


def window_run(frames: int, speed: float, env: dict, tree: Path = ROOT,
               extra: list[str] | None = None) -> dict:
    """One scripted window run from checkout `tree`; its summary line's numbers."""
    # --scene bowl: the frictionless bowl the headless run steps (the window alone opens on
    # the bowl with friction); --run's options come after and win.
    command = [sys.executable, "-m", "app.main", "--scene", "bowl", "--frames", str(frames),
               "--no-benchmark", "--speed", repr(speed), *(extra or [])]
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        command = ["xvfb-run", "-a"] + command
    env = {**os.environ, "PYTHONPATH": str(tree), **env}
    out = subprocess.run(command, cwd=tree, env=env, capture_output=True,
                         text=True, timeout=600)
    match = SUMMARY.search(out.stdout + out.stderr)
    if out.returncode != 0 or match is None:
        raise RuntimeError(f"window run failed ({out.returncode}): {out.stderr[-500:]}")
    fps, sps, plots, step = map(float, match.groups())
    return {"frames/s": fps, "steps/s": sps, "plots/s": plots, "median step ms": step}


def headless_run(steps: int, extra: list[str] | None = None, tree: Path = ROOT) -> dict:
    """One headless run of the same scene from checkout `tree`; steps per second without
    the compile time."""
    # Checkouts from before lab/ was split into packages have the command at lab/bench.py.
    module = "lab.cli.bench" if (tree / "lab" / "cli" / "bench.py").is_file() else "lab.bench"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        subprocess.run([sys.executable, "-m", module, "run", "--scene", "bowl", "--steps",
                        str(steps), "--quiet", "--json", str(report), *(extra or [])],
                       cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True,
                       capture_output=True, timeout=600)
        data = json.loads(report.read_text())
    seconds = data["wall_seconds"] - data["compile_seconds"]
    return {"steps/s": steps / seconds,
            "median step ms": data["timing_ms"]["median"]["total"]}


def _cells(values: list[dict], headless: list[dict]) -> list[str]:
    """A table row's cells: medians (range) over the rounds; the share of `headless`, the
    baseline runs of the same rounds."""
    cells = []
    for key in ("frames/s", "plots/s", "steps/s"):
        if key in values[0]:
            v = np.array([run[key] for run in values])
            cells.append(f"{np.median(v):.1f} ({v.min():.1f}–{v.max():.1f})")
        else:
            cells.append("—")
    share = _shares(values, headless)
    cells.append(f"{100 * np.median(share):.0f}% ({100 * share.min():.0f}–"
                 f"{100 * share.max():.0f}%)")
    step = np.array([run["median step ms"] for run in values])
    cells.append(f"{np.median(step):.3f} ms")
    return cells


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.window",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--frames", type=int, default=60,
                        help="3D frames per window run (default 60)")
    parser.add_argument("--speed", type=float, default=0.0,
                        help="--speed of the window runs (default 0: as fast as possible)")
    parser.add_argument("--steps", type=int, default=12000,
                        help="steps per headless run (default 12000)")
    parser.add_argument("--variant", type=parse_variant, action="append", default=[],
                        metavar="NAME:KEY=VALUE,...", help="also run the window with these "
                        "environment variables (repeatable)")
    parser.add_argument("--tree", type=parse_tree, action="append", default=[],
                        metavar="NAME:PATH", help="also run the window from this checkout "
                        "(repeatable)")
    parser.add_argument("--run", default="", metavar="OPTIONS",
                        help="run options for every window and headless run, as one "
                        "argument: --run='--scene box --threads 2'")
    args = parser.parse_args(argv)
    extra = shlex.split(args.run)
    variants = [("window", {}, ROOT)]
    variants += [(name, env, ROOT) for name, env in args.variant]
    variants += [(name, {}, tree) for name, tree in args.tree]
    # Each checkout's window is a share of its own core's headless rate, run in the same round.
    baselines = {ROOT: "headless"}
    baselines.update({tree: f"{name} headless" for name, tree in args.tree})
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in variants}
    runs.update({name: [] for name in baselines.values()})
    for r in range(args.rounds):
        for name, env, tree in variants:
            runs[name].append(window_run(args.frames, args.speed, env, tree, extra))
            print(f"round {r + 1}/{args.rounds} {name}: {runs[name][-1]}", file=sys.stderr)
        for tree, name in baselines.items():
            runs[name].append(headless_run(args.steps, extra, tree))
            print(f"round {r + 1}/{args.rounds} {name}: {runs[name][-1]}", file=sys.stderr)
    print(f"{args.rounds} rounds, window runs at --speed {args.speed:g}; medians (range)")
    print("| run | frames/s | plots/s | steps/s | of its headless (same round) | median step |")
    print("|---|---|---|---|---|---|")
    base_of = {name: baselines[tree] for name, _, tree in variants}
    base_of.update({name: name for name in baselines.values()})
    for name, values in runs.items():
        print(f"| {name} | " + " | ".join(_cells(values, runs[base_of[name]])) + " |")
    shares = {name: _shares(runs[name], runs[base_of[name]]) for name, _, _ in variants}
    for name, _, _ in variants[1:]:
        print(paired_line(name, shares["window"], shares[name]))
    return 0


def _shares(values: list[dict], headless: list[dict]) -> np.ndarray:
    return (np.array([run["steps/s"] for run in values])
            / np.array([run["steps/s"] for run in headless]))


def paired_line(name: str, window: np.ndarray, other: np.ndarray) -> str:
    """The window's share minus `name`'s, round by round: a round's load hits both alike, so
    the paired difference is steadier than the difference of the medians."""
    diff = 100 * (window - other)
    return (f"window's share minus {name}'s, round by round: median {np.median(diff):+.1f} "
            f"points, mean {diff.mean():+.1f} ({diff.min():+.0f} to {diff.max():+.0f}); the "
            f"window ahead in {int((diff > 0).sum())} of {diff.size} rounds")


if __name__ == "__main__":
    sys.exit(main())
