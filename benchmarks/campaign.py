"""A campaign's speed-up with workers (not a test): a collection of small frozen heaps (seeds ×
sizes × steps, `marbles-bench collect`), five solvers on each with a short budget, run on a
local cluster of 1 worker process and then of 2 into fresh tables; prints the wall time of
each run, the speed-up and the summed CPU seconds of the tasks, and draws the profiles of the
2-worker table (`report --campaign`) into --out. Cluster start and the workers' warm-up are in
the times: they are what a user waits for.

    python -m benchmarks.campaign --out /tmp/campaign-bench
    python -m benchmarks.campaign --out /tmp/cb --seeds 2 --workers 2   # a quick look
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from lab.campaign.collect import collect, grid_runs
from lab.campaign.report import report
from lab.campaign.run import plan, run_campaign
from lab.campaign.table import read_rows

SOLVERS = "pgs,psor,prox-gs,apgd,nsgs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.campaign",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="scratch folder (emptied first)")
    parser.add_argument("--seeds", type=int, default=25, help="heap seeds (default 25: 200 "
                        "problems with the default sizes and steps)")
    parser.add_argument("--sizes", default="20,40", help="heap sizes (default 20,40)")
    parser.add_argument("--steps", default="20,40,60,80", help="steps frozen (default "
                        "20,40,60,80)")
    parser.add_argument("--solvers", default=SOLVERS, help=f"default {SOLVERS}")
    parser.add_argument("--budget", type=float, default=0.01, help="solve s per task "
                        "(default 0.01)")
    parser.add_argument("--cap", type=int, default=100_000, help="iterations per task at most "
                        "(default 100000)")
    parser.add_argument("--set", action="append", default=None, dest="assignments",
                        help="solver parameters (default abs_tol=0: every task runs its whole "
                             "budget, so the time is the solvers' and not Dask's)")
    parser.add_argument("--workers", default="1,2", help="worker counts to time (default 1,2)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    (out / "collection").mkdir(parents=True)
    runs = grid_runs(["heap"], list(range(1, args.seeds + 1)), [0.5],
                     [int(s) for s in args.sizes.split(",")], {})
    start = time.perf_counter()
    entries = collect(out / "collection", runs, [int(s) for s in args.steps.split(",")])
    print(f"collection: {len(entries)} problems in {time.perf_counter() - start:.0f} s")
    assignments = ["abs_tol=0"] if args.assignments is None else args.assignments
    tasks = plan(out / "collection", args.solvers.split(","), assignments, args.budget, args.cap)
    times = {}
    for workers in [int(w) for w in args.workers.split(",")]:
        folder = out / f"workers-{workers}"
        start = time.perf_counter()
        summary = run_campaign(tasks, folder, "processes", workers)
        times[workers] = time.perf_counter() - start
        rows = read_rows(folder)
        cpu = sum(r["cpu_seconds"] or 0.0 for r in rows)
        print(f"{workers} worker(s): {len(tasks)} tasks ({summary.failed} errors) in "
              f"{times[workers]:.1f} s wall; tasks' CPU {cpu:.1f} s; load average "
              f"{os.getloadavg()[0]:.2f}")
        last = folder
    if len(times) > 1:
        one, most = times[min(times)], times[max(times)]
        print(f"speed-up {min(times)} -> {max(times)} workers: {one / most:.2f}x")
    p, path = report(last)
    print(f"profiles of {len(p.solvers)} solvers on {len(p.problems)} problems: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
