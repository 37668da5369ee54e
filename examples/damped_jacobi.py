"""A solver outside the package: damped projected Jacobi on the frictionless problem.

    marbles-bench --solver-module examples.damped_jacobi solve --lcp FILE --solver damped-jacobi

(from the repository root; `python examples/damped_jacobi.py` steps a small bowl with it).
Every contact moves at once by β times its projected Gauss step, from the last velocities.
"""
import sys

import numpy as np

from solver.methods.driver import Method, run
from solver.options import SolveSettings
from solver.params import Param

BETA = Param("beta", 0.3, float, "damping of the simultaneous projected steps", lo=0.0, hi=1.0,
             lo_open=True)


def solve(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    diag = problem.diag
    # An inert row (A_cc = 0: both ends fixed) keeps its start impulse.
    step = np.divide(settings["beta"], diag, out=np.zeros_like(diag), where=diag > 0.0)

    def sweep(count: int) -> None:
        for _ in range(count):
            e = problem.error(lam)  # A λ + b, m/s
            lam[:] = np.maximum(0.0, lam - step * e)

    return run(problem, lam, settings, sweep)


METHOD = Method("damped-jacobi", "Damped Jacobi (plug-in example)", solve,
                "β-damped projected Jacobi, written outside the package", (BETA,))


if __name__ == "__main__":  # this folder is on sys.path: the module is `damped_jacobi` here
    from lab.cli.bench import main
    sys.exit(main(["--solver-module", "damped_jacobi", "run", "--scene", "bowl", "--set", "n=20",
                   "--steps", "30", "--solver", "damped-jacobi", "--iterations", "50",
                   "--quiet", *sys.argv[1:]]))
