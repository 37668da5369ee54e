"""Naive sequential impulses: at each contact apply Δ = max(0, -e_c / A_cc) and add it to the
running total. Impulses only grow, so complementarity fails as soon as a later contact removes the
need for an impulse already applied: this method does not solve the LCP; it shows why clamping
the accumulated impulse (PGS) matters."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..problem import (EXPLICIT, FRICTIONAL, FRICTIONLESS, ROW_KERNEL, ContactProblem, apply_row,
                       contact_row, row_error)
from .driver import Method, run
from ..options import SolveSettings
from .pgs import solve_frictional, solve_frictional_matrix


@njit(**ROW_KERNEL)
def naive_sweeps(A, bias, diag, v, lam, count):
    """`count` sweeps in place; v (n, 3) = v* + M^-1 J^T λ is kept consistent with λ; A the
    operator's factors (solver/products.py); bias (m,) gap / h, m/s; diag (m,) A_cc."""
    body_a, body_b, normal, inv_mass = A
    for _ in range(count):
        for c in range(lam.shape[0]):
            a, b, n0, n1, n2 = contact_row(body_a, body_b, normal, c)
            e = row_error(v, a, b, n0, n1, n2, bias[c])
            if e >= 0.0 or diag[c] == 0.0:  # A_cc = 0: an inert row (both ends fixed)
                continue
            delta = -e / diag[c]
            lam[c] += delta
            apply_row(v, inv_mass, a, b, n0, n1, n2, delta)


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    v = problem.velocity(lam)
    bias = problem.bias

    def sweep(count: int) -> None:
        naive_sweeps(problem.A, bias, problem.diag, v, lam, count)

    def sync() -> None:
        v[:] = problem.velocity(lam)

    return run(problem, lam, settings, sweep, sync)


# With friction: increment-clamped normals; the tangents as PGS's, onto the disk of the
# running λ_n.
METHOD = Method("naive", "Naive impulses", {
    FRICTIONLESS: solve,
    FRICTIONAL: lambda p, lam0, s: solve_frictional(p, lam0, s, 1.0, naive=True),
    EXPLICIT: lambda p, lam0, s: solve_frictional_matrix(p, lam0, s, 1.0, naive=True)},
    "increment-clamped sequential impulses; does not solve the LCP")
