"""The Gauss-Seidel driver over an explicit W (solver/explicit.py): the same local laws as the
geometry sweeps (laws.py), with u = W λ + q kept in step with λ by W's columns.

Contact c's update reads its three velocities u[3c:3c+3] and its block W_cc, asks the law for
new impulses, and adds W[:, 3c:3c+3] Δλ to u (the CSR of Wᵀ holds W's columns, so any W works,
symmetric or not). Unlike spheres' blocks an explicit block may couple the rows: the cone law
then steps the tangents from the velocities after the normal's change, Erleben's map (PROX) from
the velocities before it, and nsgs solves the block's local problem exactly (laws.coulomb_block;
the closed form when the block is diag(a, b, b)).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..problem import ROW_KERNEL
from .driver import Hooks, run
from ..options import SolveSettings
from .laws import CONE, NSGS, PROX, contact_step, coulomb_block, coulomb_diagonal
from .operator import local_steps


# A block is diag(a, b, b) to rounding when its off-diagonal entries, and the difference of its
# tangent entries, are below this many ε times its largest entry: a block this program writes
# (J M^-1 Jᵀ of a sphere's contact) carries off-diagonal rounding of a few ε, and a block
# another tool computed from the same geometry no more.
ROUNDING = 64.0 * float(np.finfo(np.float64).eps)
# local's counts: problems enumeration could not solve, solved in closed form, by enumeration
FAILED, CLOSED_FORM, ENUMERATED = 0, 1, 2


@njit(inline="always", cache=True, nogil=True)
def _diagonal_to_rounding(W, c):
    """Whether block c is diag(a, b, b) up to ROUNDING × its largest entry, with b > 0."""
    top = 0.0
    for i in range(3):
        for j in range(3):
            top = max(top, abs(W[c, i, j]))
    tol = ROUNDING * top
    return (abs(W[c, 0, 1]) <= tol and abs(W[c, 0, 2]) <= tol and abs(W[c, 1, 0]) <= tol
            and abs(W[c, 2, 0]) <= tol and abs(W[c, 1, 2]) <= tol and abs(W[c, 2, 1]) <= tol
            and abs(W[c, 1, 1] - W[c, 2, 2]) <= tol and W[c, 1, 1] > 0.0)


@njit(inline="always", cache=True, nogil=True)
def _local_solution(W, c, old, u, mu, counts):
    """nsgs: the exact solution of contact c's problem with the others fixed; W (m, 3, 3) the
    diagonal blocks, old = (λ_n, λ_1, λ_2), u = (u_n, u_1, u_2); counts by the slots above.
    A block diagonal to rounding takes the closed form (its tangent entry the mean of the
    two): the exact solution of a problem that differs from it by rounding."""
    ln, l1, l2 = old
    un, u1, u2 = u
    qn = un - (W[c, 0, 0] * ln + W[c, 0, 1] * l1 + W[c, 0, 2] * l2)
    q1 = u1 - (W[c, 1, 0] * ln + W[c, 1, 1] * l1 + W[c, 1, 2] * l2)
    q2 = u2 - (W[c, 2, 0] * ln + W[c, 2, 1] * l1 + W[c, 2, 2] * l2)
    if _diagonal_to_rounding(W, c):
        counts[CLOSED_FORM] += 1
        return coulomb_diagonal(qn, q1, q2, W[c, 0, 0], 0.5 * (W[c, 1, 1] + W[c, 2, 2]), mu)
    counts[ENUMERATED] += 1
    n0, n1, n2, ok = coulomb_block(W, c, qn, q1, q2, mu)
    if not ok:
        counts[FAILED] += 1
    return n0, n1, n2


@njit(**ROW_KERNEL)
def matrix_sweeps(W, local, rule, u, lam, count, counts):
    """`count` Gauss-Seidel sweeps over the contacts in place. W = (t_indptr, t_indices,
    t_data, blocks): W's columns (the CSR of Wᵀ) and its (m, 3, 3) diagonal blocks; local =
    (steps, scale, mu): steps (m, 3) s_n, s_t (0: an inert contact, skipped), times `scale`,
    and μ (m,); rule = (law, naive); u (size,) = W λ + q, kept consistent with λ; counts (3,)
    int64, nsgs's local solves by FAILED (none for a positive definite block), CLOSED_FORM
    and ENUMERATED."""
    t_indptr, t_indices, t_data, blocks = W
    steps, scale, mu = local
    law, naive = rule
    for _ in range(count):
        for c in range(mu.shape[0]):
            s_n = steps[c, 0] * scale
            if s_n == 0.0:
                continue
            k = 3 * c
            ln, l1, l2 = lam[k], lam[k + 1], lam[k + 2]
            un, u1, u2 = u[k], u[k + 1], u[k + 2]
            if law == NSGS:
                n0, n1, n2 = _local_solution(blocks, c, (ln, l1, l2), (un, u1, u2), mu[c],
                                             counts)
            else:
                step_law = CONE if law == PROX else law
                n0, n1, n2 = contact_step((step_law, naive, law != PROX), (ln, l1, l2),
                                          (un, u1, u2), (s_n, steps[c, 1] * scale),
                                          (blocks[c, 1, 0], blocks[c, 2, 0]), mu[c])
            lam[k] = n0
            lam[k + 1] = n1
            lam[k + 2] = n2
            for j, d in enumerate((n0 - ln, n1 - l1, n2 - l2)):
                if d != 0.0:
                    for p in range(t_indptr[k + j], t_indptr[k + j + 1]):
                        u[t_indices[p]] += t_data[p] * d


def solve_matrix(problem, lam0: np.ndarray, settings: SolveSettings, law: int,
                 omega: float = 1.0, naive: bool = False):
    """Gauss-Seidel sweeps of `law` (steps ω / A_nn and ω / λmax(A_tt)) over an explicit
    problem, through the driver. info (nsgs): local_failures, and how many local problems
    were solved in closed form (blocks diagonal to rounding) and by enumeration."""
    lam = np.array(lam0, dtype=np.float64)
    u = problem.error(lam)
    steps = local_steps(problem, omega)
    counts = np.zeros(3, dtype=np.int64)
    info: dict = {}
    p = problem

    def sweep(count: int) -> None:
        matrix_sweeps(p.columns, (steps, 1.0, p.mu), (law, naive), u, lam, count, counts)
        if law == NSGS:
            info["local_failures"] = int(counts[FAILED])
            info["local_closed_form"] = int(counts[CLOSED_FORM])
            info["local_enumerated"] = int(counts[ENUMERATED])

    def sync() -> None:
        u[:] = problem.error(lam)

    return run(problem, lam, settings, sweep, sync, Hooks(info=info))
