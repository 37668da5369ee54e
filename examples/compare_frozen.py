"""Compare solvers on one frozen contact problem and plot the residual per iteration.

    python examples/compare_frozen.py [--settle 300] [--iterations 500] [--out compare.png]
"""
import argparse

import scenes
from lab.report.compare import compare, reach, settle
from lab.report.figures import comparison_png
from solver.methods import registry


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settle", type=int, default=300, help="steps before freezing")
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--solvers", default="pgs,psor,pcg,ppcg,mprgp")
    parser.add_argument("--out", default="compare.png")
    args = parser.parse_args(argv)

    frozen = settle(scenes.build("bowl"), args.settle, registry.settings("pgs", 20))
    table = compare(frozen.problem, args.iterations, args.solvers.split(","))
    for name in table.solvers:
        hit = reach(table, name, 1e-6)
        print(f"{name:8s} residual after {table.iterations} iterations "
              f"{table.residual[table.row(name), -1]:.2e} m/s; to 1e-6: "
              + ("not reached" if hit is None else f"{hit[0]} it, {1e3 * hit[1]:.2f} ms"))
    comparison_png(args.out, table, f"bowl, step {frozen.step}, {frozen.problem.m} contacts")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
