"""`marbles-bench collect` and `marbles-bench campaign`: a collection of frozen FCLIB problems,
and every (problem, solver, setting) of one run as a task on Dask with one Parquet row each
(lab.campaign). Every option is checked before any file is written."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import scenes
from solver.params import Param, ParamError, parse_assignments, resolve

from ..campaign.collect import collect, collect_runs, grid_runs, profile_runs
from ..campaign.run import SCHEDULERS, check_scheduler, default_workers, plan, run_campaign
from ..campaign.table import ROWS, done_keys
from ..io.files import prepare_out_dir
from ..report.compare import parse_solver_list
from ..report.profiles import ITERATION_CAP
from ..report.progress import Progress

CAMPAIGN_BUDGET = Param("budget", 1.0, float, "solve seconds each task gets", "s", lo=0.0,
                        lo_open=True, hi=3600.0)
CAP = Param("cap", ITERATION_CAP, int, "iterations per task at most", lo=1, hi=10**7)
WORKERS = Param("workers", 0, int, "worker processes of the local cluster (0: one per core)",
                lo=0, hi=4096)
STEP = Param("step", 1, int, "a step to freeze", lo=1, hi=10**6)
SEED = Param("seed", 1, int, "a seed", lo=0, hi=10**9)
MU = Param("mu", 0.5, float, "a friction coefficient", lo=0.0, lo_open=True, hi=10.0)
SIZE = Param("size", 1, int, "a size (n, or layers)", lo=1, hi=10**7)


def _list(text: str, param: Param, flag: str) -> list:
    """'a,b,c' -> parsed values, each in range; ParamError names the bad one."""
    words = [w.strip() for w in text.split(",")]
    if not all(words):
        raise ParamError(f"{flag} {text!r} has an empty value")
    return list(dict.fromkeys(param.parse(w) for w in words))


# The grid's options and their defaults (--sizes: each scene's own), which --profiles replaces.
GRID_DEFAULTS = {"scenes": "heap", "seeds": "1", "mu": "0.5", "sizes": None, "steps": "50"}


def cmd_collect(args: argparse.Namespace) -> int:
    if args.profiles:
        given = [f"--{name}" for name, default in GRID_DEFAULTS.items()
                 if getattr(args, name) != default] + (["--set"] if args.assignments else [])
        if given:
            raise ParamError(f"--profiles takes the profiles' own problems: {given[0]} is not "
                             "for it")
        out = prepare_out_dir(args.out, ("index.json",))
        runs = profile_runs()
        progress = None if args.quiet else Progress("collect", len(runs))
        entries = collect_runs(out, runs, progress)
        print(f"collect: the {len(entries)} problems of the performance profiles; wrote "
              f"{out}/index.json and {len(entries)} problem files")
        return 0
    names = [s.strip() for s in args.scenes.split(",")]
    for name in names:
        scenes.get(name)
    seeds = _list(args.seeds, SEED, "--seeds")
    mus = _list(args.mu, MU, "--mu")
    sizes = _list(args.sizes, SIZE, "--sizes") if args.sizes else [None]
    steps = _list(args.steps, STEP, "--steps")
    runs = grid_runs(names, seeds, mus, sizes, parse_assignments(args.assignments))
    for name, params in runs:  # every parameter checked before any file is written
        resolve(scenes.get(name).params, params, f"scene {name}")
    out = prepare_out_dir(args.out, ("index.json",))
    progress = None if args.quiet else Progress("collect", len(runs))
    entries = collect(out, runs, steps, progress)
    print(f"collect: {len(entries)} problems from {len(runs)} runs; wrote {out}/index.json and "
          f"{len(entries)} problem files")
    return 0


class _CampaignProgress(Progress):
    """Tasks done, failed and the time left, on stderr."""

    def row(self, summary) -> None:
        self.label = f"campaign ({summary.failed} failed)"
        self(summary.done, summary.total - summary.skipped)


def cmd_campaign(args: argparse.Namespace) -> int:
    solvers = parse_solver_list(args.solvers)
    budget = float(CAMPAIGN_BUDGET.parse(args.budget))
    cap = int(CAP.parse(args.cap))
    workers = int(WORKERS.parse(args.workers)) or default_workers()
    check_scheduler(args.scheduler)
    if not Path(args.collection).is_dir():
        raise ParamError(f"collection {args.collection!r}: not a folder")
    tasks = plan(args.collection, solvers, args.assignments, budget, cap)
    out = prepare_out_dir(args.out, ("campaign.json",))
    todo = len(tasks) - len(done_keys(out) & {t.key for t in tasks})
    progress = None if args.quiet else _CampaignProgress("campaign", max(todo, 1))
    try:
        summary = run_campaign(tasks, out, args.scheduler, workers,
                               progress=None if progress is None else progress.row)
    except KeyboardInterrupt:
        sys.stderr.write(f"marbles-bench: interrupted; the table in {out}/{ROWS} holds the "
                         f"{len(done_keys(out))} tasks finished, each whole; rerun to go on\n")
        return 130
    print(f"campaign: {summary.total} tasks, {summary.skipped} already in the table, "
          f"{summary.done} run ({summary.failed} errors) in {summary.seconds:.1f} s; "
          f"table {out}/{ROWS}")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "collect", help="freeze contact problems into a collection of FCLIB files",
        description="Run every scene × seed × μ × size of the grid once with pgs (20 sweeps a "
                    "step) and freeze its contact problem at each of the steps into "
                    "OUT/<scene>-<parameters>-step<K>.hdf5, an FCLIB local problem, plus "
                    "OUT/index.json. The same command writes the same files. Rolling and "
                    "spinning resistance are off unless --set turns them on (mu_roll=R, "
                    "mu_spin=R): FCLIB's local problem cannot hold their rows, so such a "
                    "problem is the lab's LCP snapshot, OUT/<...>.npz. A seed or size goes "
                    "only to scenes that have one (size: n, else layers).")
    p.add_argument("out", metavar="OUT", help="output folder, created if needed")
    p.add_argument("--scenes", default=GRID_DEFAULTS["scenes"], metavar="a,b,...",
                   help=f"frictional scenes (default heap; {', '.join(scenes.SCENES)})")
    p.add_argument("--seeds", default=GRID_DEFAULTS["seeds"], metavar="a,b,...",
                   help="seeds (default 1)")
    p.add_argument("--mu", default=GRID_DEFAULTS["mu"], metavar="a,b,...",
                   help="friction coefficients, marbles and walls alike (default 0.5)")
    p.add_argument("--sizes", metavar="a,b,...", help="sizes (default: each scene's own)")
    p.add_argument("--steps", default=GRID_DEFAULTS["steps"], metavar="a,b,...",
                   help="steps to freeze (default 50)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   dest="assignments", help="another scene parameter for every run, repeatable")
    p.add_argument("--profiles", action="store_true",
                   help="instead of a grid: the problems of the performance profiles (`report "
                        "--part profiles`), with their labels, so a campaign on them redraws "
                        "those profiles")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser(
        "campaign", help="every solver on every problem of a collection, on Dask",
        description="Run every (problem, solver, setting) of COLLECTION (a folder of FCLIB "
                    "files and LCP snapshots with friction, `collect`'s or another tool's) as "
                    "one Dask task from λ = 0 for --budget solve seconds, and write one row "
                    "per task into the Parquet "
                    "table OUT/rows (docs/campaigns.md lists its columns). A rerun skips the "
                    "tasks already there; Ctrl-C leaves every written row whole. `marbles-bench "
                    "report --campaign OUT` draws the profiles from it.")
    p.add_argument("collection", metavar="COLLECTION",
                   help="folder of FCLIB files (and .npz LCP snapshots with friction)")
    p.add_argument("--out", required=True, metavar="OUT", help="campaign folder, created if "
                   "needed; an existing one is resumed")
    p.add_argument("--solvers", default="pgs,psor,prox-gs,apgd,newton", metavar="a,b,...",
                   help="frictional solvers (default pgs,psor,prox-gs,apgd,newton)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   dest="assignments",
                   help="solver parameter, repeatable: NAME=VALUE for every solver that has "
                        "it, SOLVER.NAME=VALUE for one")
    p.add_argument("--budget", default=CAMPAIGN_BUDGET.value_text(), metavar="S",
                   help=CAMPAIGN_BUDGET.help_text())
    p.add_argument("--cap", default=CAP.value_text(), metavar="N", help=CAP.help_text())
    p.add_argument("--scheduler", default="processes", metavar="WHERE",
                   help=f"{', '.join(SCHEDULERS)} (a local cluster of worker processes, of "
                        "threads in one, or this process alone, for debugging), or the "
                        "address of a running `dask scheduler`, tcp://HOST:8786 (default "
                        "processes)")
    p.add_argument("--workers", default="0", metavar="N", help=WORKERS.help_text())
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_campaign)
