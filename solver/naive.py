"""Naive sequential impulses (SOLVERS.md §3): at each contact apply Δ = max(0, -e_c / A_cc) and add
it to the running total. Impulses only grow, so complementarity fails as soon as a later contact
removes the need for an impulse already applied: this method does not solve the LCP, and is here
to show why clamping the accumulated impulse (PGS) matters."""
from __future__ import annotations

import numpy as np
from numba import njit

from .method import Method, SolveSettings, run
from .problem import ContactProblem


@njit(cache=True, nogil=True)
def naive_sweeps(body_a, body_b, normal, bias, inv_mass, diag, v, lam, count):
    for _ in range(count):
        for c in range(lam.shape[0]):
            a = body_a[c]
            b = body_b[c]
            n0 = normal[c, 0]
            n1 = normal[c, 1]
            n2 = normal[c, 2]
            e = n0 * v[b, 0] + n1 * v[b, 1] + n2 * v[b, 2] + bias[c]
            if a >= 0:
                e -= n0 * v[a, 0] + n1 * v[a, 1] + n2 * v[a, 2]
            if e >= 0.0:
                continue
            delta = -e / diag[c]
            lam[c] += delta
            s = inv_mass[b] * delta
            v[b, 0] += s * n0
            v[b, 1] += s * n1
            v[b, 2] += s * n2
            if a >= 0:
                s = inv_mass[a] * delta
                v[a, 0] -= s * n0
                v[a, 1] -= s * n1
                v[a, 2] -= s * n2


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    v = problem.velocity(lam)
    bias = problem.bias

    def sweep(count: int) -> None:
        naive_sweeps(problem.body_a, problem.body_b, problem.normal, bias, problem.inv_mass,
                     problem.diag, v, lam, count)

    def sync() -> None:
        v[:] = problem.velocity(lam)

    return run(problem, lam, settings, sweep, sync)


METHOD = Method("naive", "Naive impulses", solve,
                "increment-clamped sequential impulses; does not solve the LCP")
