"""Start-up (not a test): how long `marbles-bench run` and the window take from a cold and from a
warm Numba cache, and the kernel counts behind the window's compile progress.

    python -m benchmarks.startup --rounds 3 [--tree before:../marbles-6a8a538]
    python -m benchmarks.startup --counts        # rewrite solver/kernel_counts.json
    python -m benchmarks.startup --where pgs:6   # where a cold plan's compile time goes
    python -m benchmarks.startup --signatures    # kernels compiled more than once

Cold: NUMBA_CACHE_DIR set to a new empty folder (what a wheel user, or anyone whose Python or
Numba changed, meets first); warm: the same folder again. `run`: the wall time of
`marbles-bench run --scene bowl --steps 10`. Window: `marbles --frames 1 --no-benchmark` under
`xvfb-run -a`, the default scene (the bowl with friction); a scripted run ends once it has drawn
one frame with steps, so its wall time is the time to moving marbles (plus closing); the window
prints its start-up marks (shown, first state drawn, moving), read where the tree has them.
Medians over the rounds; the trees alternate within each round. `--counts` compiles each plan
(a solver, its rows per contact, serial, and `pgs` in blocks) in a fresh process on an empty
cache and counts the kernels Numba compiles (solver/compile_count.py). `--where METHOD:ROWS`
compiles one serial plan on an empty cache and lists the kernels that took longest, each with
its own time (without the kernels it compiled inside it) and with them. `--signatures` compiles
every plan in one process on an empty cache and lists the project's kernels compiled for more
than one signature or for a literal argument (a literal 0 or False at a call compiles a kernel
again: 1-3 s each on a cold cache).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKS = re.compile(r"(window shown|first state drawn|moving) at ([\d.]+) s")

def _timed(cmd: list[str], cwd: Path, cache: Path) -> tuple[float, str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} (in {cwd}): exit {out.returncode}\n{out.stderr}")
    return seconds, out.stdout + out.stderr


# One plan compiled in a fresh process: the kernels Numba compiles (the count a cold cache
# needs) and each one's seconds, its own (without the kernels compiled inside it) and whole.
PLAN_CHILD = r"""
import collections, json, sys, time
from numba.core import event
from solver.warmup import warmup
stack, own, whole, count = [], collections.Counter(), collections.Counter(), [0]
class Times(event.Listener):
    def on_start(self, ev):
        stack.append([time.perf_counter(), 0.0])
    def on_end(self, ev):
        start, inner = stack.pop()
        seconds = time.perf_counter() - start
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        name = f"{func.__module__}.{func.__qualname__}" if func else "?"
        own[name] += seconds - inner
        whole[name] += seconds
        count[0] += 1
        if stack:
            stack[-1][1] += seconds
event.register("numba:compile", Times())
start = time.perf_counter()
warmup([sys.argv[1]], None, int(sys.argv[3]), (int(sys.argv[2]),))
print(json.dumps({"seconds": time.perf_counter() - start, "kernels": count[0],
                  "own": own, "whole": whole}))
"""


def _on_a_cold_cache(code: str, *args: str) -> subprocess.CompletedProcess:
    """`code` run by a fresh Python in the checkout with an empty Numba cache of its own."""
    with tempfile.TemporaryDirectory() as cache:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT,
                              env={**os.environ, "NUMBA_CACHE_DIR": cache}, capture_output=True,
                              text=True)


def compile_plan(method: str, rows: int, blocks: int) -> dict:
    """PLAN_CHILD's findings for one plan, on an empty cache; a failure ends the run in one
    line."""
    out = _on_a_cold_cache(PLAN_CHILD, method, str(rows), str(blocks))
    if out.returncode != 0:
        last = out.stderr.strip().splitlines()[-1]
        raise SystemExit(f"{method}, {rows} rows: " + last.split(": ", 1)[-1])
    return json.loads(out.stdout.strip().splitlines()[-1])


SIGNATURES_CHILD = r"""
import importlib, pkgutil
from numba.core.registry import CPUDispatcher
from solver.warmup import warmup
import lab, scenes, solver
warmup(None, None, 2, (1, 3, 6))
seen = set()
for package in (solver, lab, scenes):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if ".cuda" in info.name:
            continue
        for name, obj in vars(importlib.import_module(info.name)).items():
            if isinstance(obj, CPUDispatcher) and id(obj) not in seen:
                seen.add(id(obj))
                sigs = [str(s) for s in obj.signatures]
                if len(sigs) > 1 or any("Literal" in s for s in sigs):
                    print(f"{info.name}.{name}: {len(sigs)} signatures")
                    print("".join(f"    {s}\n" for s in sigs), end="")
print(f"{len(seen)} kernels read")
"""


def signatures() -> None:
    """The project's kernels compiled more than once (or for a literal) by every plan."""
    out = _on_a_cold_cache(SIGNATURES_CHILD)
    if out.returncode != 0:
        raise SystemExit("--signatures: " + out.stderr.strip().splitlines()[-1])
    print(out.stdout, end="")


def where(plan: str, top: int = 15) -> None:
    """The `top` kernels of a cold serial plan ('pgs:6') by their own compile seconds."""
    method, _, rows = plan.partition(":")
    found = compile_plan(method, int(rows or 1), 1)
    print(f"{method}, {rows or 1} rows a contact, serial: {found['seconds']:.1f} s compiling "
          f"{found['kernels']} kernels (cold cache)")
    print("| kernel | own s | with the kernels it compiled, s |")
    print("|---|---|---|")
    ranked = sorted(found["own"].items(), key=lambda kv: -kv[1])
    for name, seconds in ranked[:top]:
        print(f"| {name} | {seconds:.2f} | {found['whole'][name]:.2f} |")
    if len(ranked) > top:
        print(f"| the other {len(ranked) - top} | {sum(v for _, v in ranked[top:]):.2f} | |")


def timings(trees: dict[str, Path], rounds: int) -> None:
    xvfb = [] if os.environ.get("DISPLAY") else ["xvfb-run", "-a"]
    run = [sys.executable, "-m", "lab.cli.bench", "run", "--scene", "bowl", "--steps", "10",
           "--quiet"]
    window = [*xvfb, sys.executable, "-m", "app.main", "--frames", "1", "--no-benchmark"]
    results: dict[tuple, list] = {}
    for k in range(rounds):
        for label, tree in trees.items():
            for what, cmd in (("marbles-bench run", run), ("window", window)):
                with tempfile.TemporaryDirectory() as cache:
                    for state in ("cold", "warm"):
                        seconds, text = _timed(cmd, tree, Path(cache))
                        marks = {m: float(t) for m, t in MARKS.findall(text)}
                        results.setdefault((label, what, state), []).append((seconds, marks))
        print(f"round {k + 1} of {rounds} done", file=sys.stderr)
    print(f"median of {rounds}; seconds of wall time")
    print("| tree | command | cache | wall s | window shown | first state drawn | moving |")
    print("|---|---|---|---|---|---|---|")
    for (label, what, state), runs in results.items():
        wall = statistics.median(s for s, _ in runs)
        cells = []
        for mark in ("window shown", "first state drawn", "moving"):
            values = [m[mark] for _, m in runs if mark in m]
            cells.append(f"{statistics.median(values):.1f}" if values else "—")
        print(f"| {label} | {what} | {state} | {wall:.1f} | " + " | ".join(cells) + " |")


def counts(again: bool = False) -> None:
    """Each plan's kernel count into solver/kernel_counts.json, written after each plan (a long
    job: about 20-60 s a plan); plans already there are kept unless `again`."""
    from solver import compile_count
    from solver.methods import registry
    path = ROOT / "solver" / "kernel_counts.json"
    found = {} if again or not path.exists() else json.loads(path.read_text())
    # The window's and run's first plans first, then every solver on each of its problems.
    plans = [("pgs", 6, 1), ("pgs", 3, 1), ("pgs", 1, 1), ("pgs", 1, 2), ("pgs", 3, 2)]
    plans += [(name, rows, 1) for name in registry.METHODS
              for rows in ((1, 3, 6) if registry.get(name).friction else (1,))]
    plans = list(dict.fromkeys(plans))
    for k, (name, rows, blocks) in enumerate(plans):
        key = compile_count.plan_key(name, rows, blocks)
        if key in found:
            continue
        found[key] = compile_plan(name, rows, blocks)["kernels"]
        path.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"{k + 1}/{len(plans)} {key}: {found[key]} kernels", file=sys.stderr)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME:PATH",
                        help="also time another checkout (e.g. a git worktree of an earlier "
                             "commit)")
    parser.add_argument("--counts", action="store_true",
                        help="measure the kernel counts into solver/kernel_counts.json (the "
                             "plans not there yet)")
    parser.add_argument("--again", action="store_true", help="with --counts: every plan anew")
    parser.add_argument("--where", metavar="METHOD:ROWS",
                        help="where a cold serial plan's compile time goes (e.g. pgs:6, the "
                             "window's first plan)")
    parser.add_argument("--signatures", action="store_true",
                        help="the kernels compiled more than once by all plans (a few minutes)")
    args = parser.parse_args(argv)
    if args.signatures:
        signatures()
        return 0
    if args.where:
        where(args.where)
        return 0
    if args.counts:
        counts(args.again)
        return 0
    trees = {"this": ROOT}
    for item in args.tree:
        name, _, path = item.partition(":")
        trees[name] = Path(path).resolve()
    if not shutil.which("xvfb-run") and not os.environ.get("DISPLAY"):
        raise SystemExit("the window needs a display: install xvfb (xvfb-run)")
    timings(trees, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
