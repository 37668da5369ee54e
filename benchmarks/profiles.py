"""Performance profiles of the frictional solvers (not a test): the collection of frozen
frictional steps of lab.report.profiles, every frictional solver from zero impulses with the
same budget of solve seconds, the milliseconds to FCLIB's error 1e-8 per problem and solver
(— where not within the budget), and the verdict at 1e-4 and 1e-8. `marbles-bench report --part
profiles` measures the same and writes the figure and RESULTS.md's section.

    python -m benchmarks.profiles
    python -m benchmarks.profiles --budget 2 --solvers pgs,psor,newton --scenes heap,pyramid
"""
from __future__ import annotations

import argparse
import sys

from lab.report import profiles
from lab.report.markdown import ms_cell
from lab.report.progress import Progress
from solver.methods import registry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profiles",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=profiles.BUDGET.default,
                        help="solve seconds per solver per problem (default %(default)s)")
    parser.add_argument("--solvers", default=",".join(registry.friction_solvers()),
                        help="frictional solvers, comma-separated (default: all)")
    scenes = sorted({entry.scene for entry in profiles.COLLECTION})
    parser.add_argument("--scenes", default=",".join(scenes),
                        help="the collection's problems of these scenes only (default: all)")
    args = parser.parse_args(argv)
    solvers = [s for s in args.solvers.split(",") if s]
    for name in solvers:
        if name not in registry.METHODS or not registry.get(name).friction:
            parser.error(f"--solvers: {name!r} is not a frictional solver "
                         f"({', '.join(registry.friction_solvers())})")
    chosen = [s for s in args.scenes.split(",") if s]
    if not set(chosen) <= set(scenes) or args.budget <= 0:
        parser.error(f"--scenes: of {', '.join(scenes)}; --budget: positive seconds")
    collection = [entry for entry in profiles.COLLECTION if entry.scene in chosen]
    progress = Progress("profiles", max(1, profiles.run_count(solvers, collection)),
                        stream=sys.stderr)
    p = profiles.measure_profiles(solvers, args.budget, collection, progress)
    tight = min(profiles.TOLERANCES)
    print(f"ms of solve time to FCLIB's error {tight:g}, {args.budget:g} s budget, at most "
          f"{p.cap} iterations")
    print("| problem | contacts | " + " | ".join(p.solvers) + " |")
    print("|---|---|" + "---|" * len(p.solvers))
    for frozen, row in zip(p.problems, p.runs):
        print(f"| {frozen.label} | {frozen.contacts} | "
              + " | ".join(ms_cell(r.reach[tight]) for r in row) + " |")
    for tol in profiles.TOLERANCES:
        print(profiles.verdict(p.times(tol), p.solvers, tol))
    print(f"{p.seconds:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
