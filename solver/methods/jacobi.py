"""Projected Jacobi: every contact's update is computed from the same iterate, then all are
applied, λ <- max(0, λ - β (A λ + b) / diag(A)).

Undamped (β = 1) it diverges on piles, where a marble has many contacts that all push at once;
β around 1 / (contacts per marble) makes it converge, slowly. It parallelises trivially and is
here as the comparison baseline.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..params import Param
from ..problem import ContactProblem, apply_matrix
from .driver import Method, SolveSettings, run

BETA = Param("beta", 0.3, float, "damping of the update (1: undamped, diverges on piles)",
             lo=0.0, hi=1.0, lo_open=True)


@njit(cache=True, nogil=True)
def jacobi_sweeps(body_a, body_b, normal, inv_mass, rhs, diag, lam, beta, dv, e, count):
    for _ in range(count):
        apply_matrix(body_a, body_b, normal, inv_mass, lam, dv, e)
        for c in range(lam.shape[0]):
            if diag[c] == 0.0:  # an inert row (both ends fixed): no impulse changes it
                continue
            new = lam[c] - beta * (e[c] + rhs[c]) / diag[c]
            lam[c] = new if new > 0.0 else 0.0


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    beta = settings["beta"]
    dv = np.empty_like(problem.v_pred)
    e = np.empty(problem.m)

    def sweep(count: int) -> None:
        jacobi_sweeps(problem.body_a, problem.body_b, problem.normal, problem.inv_mass,
                      problem.rhs, problem.diag, lam, beta, dv, e, count)

    return run(problem, lam, settings, sweep)


METHOD = Method("jacobi", "Projected Jacobi", solve,
                "all contacts updated from the same iterate, damped by β", (BETA,))
