"""Mass-splitting Jacobi (Tonge, Benevolenski and Voroshilov 2012; PhysX's GPU solver): Jacobi
whose step uses split masses. Each marble is split into as many copies as it has contacts, each
copy with that share of the mass, and each contact is solved against its own two copies:

    λ_c <- max(0, λ_c - (e_c + b_c) / Â_cc),   Â_cc = k_a w_a + k_b w_b

(k: the marble's contact count, w its inverse mass; with friction each row alike, the lever and
rolling terms times k too), every contact from the same iterate; averaging the copies after
the step gives the marbles' velocities with their whole masses, v = v* + M^-1 J^T λ. Â_cc
bounds the marbles' coupling, so the iteration converges to the LCP's solution with no damping
to tune (the paper proves it), where plain Jacobi needs β ~ 1 / (contacts per marble). It
parallelises as Jacobi does, and the cuda backend runs the same kernels (solver/cuda/jacobi.py).

An explicit W (a file of another tool's) has no marbles to split. There each contact's count k_c
is the number of contacts W couples it to (the non-zero 3x3 blocks of its block row, its own
included), and its steps are plain Jacobi's divided by k_c. For a positive semidefinite W,
|x_cᵀ W_cj x_j| <= sqrt(x_cᵀ W_cc x_c · x_jᵀ W_jj x_j) gives W <= diag(k_c W_cc), the bound that
makes the split step converge, as the marbles' split does for J M^-1 Jᵀ.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem, inverse_diag
from .driver import Method, run
from ..options import SolveSettings
from .jacobi import frictional_jacobi_sweeps, jacobi_sweeps, operator_jacobi_sweeps
from .operator import local_steps, operator


def contact_starts(problem) -> np.ndarray:
    """(n + 1,) int64: where each marble's contacts start in a list of them by marble (walls
    included), so marble i has start[i + 1] - start[i] contacts: the CSR's row starts, as the
    GPU holds them."""
    counts = np.bincount(problem.body_b, minlength=problem.n)
    marbles = problem.body_a[problem.body_a >= 0]
    counts += np.bincount(marbles, minlength=problem.n)
    start = np.zeros(problem.n + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    return start


@njit(cache=True, nogil=True)
def split_rows(A, start, out, first, last):
    """out[c] <- Â_cc = k_b w_b + k_a w_a (module docstring) for contacts [first, last); start:
    contact_starts. The GPU's kernel calls it for one contact."""
    body_a, body_b, normal, inv_mass = A
    for c in range(first, last):
        a = body_a[c]
        b = body_b[c]
        k = float(start[b + 1] - start[b]) * inv_mass[b]
        if a >= 0:
            k += float(start[a + 1] - start[a]) * inv_mass[a]
        out[c] = k


@njit(cache=True, nogil=True)
def frictional_split_rows(A, start, out, first, last):
    """out[c * rows + j] <- the split diagonal of every row j of contacts [first, last): the
    normal's k w, the tangents' k (w + r² I^-1), the rolling rows' k I^-1, summed over both
    ends (b first); start: contact_starts."""
    body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows = A
    for c in range(first, last):
        a = body_a[c]
        b = body_b[c]
        k = c * rows
        rb = arm_b[c]
        kb = float(start[b + 1] - start[b])
        lin = kb * inv_mass[b]
        lever = kb * (inv_mass[b] + rb * rb * inv_inertia[b])
        rot = kb * inv_inertia[b]
        if a >= 0:
            ka = float(start[a + 1] - start[a])
            ra = arm_a[c]
            lin += ka * inv_mass[a]
            lever += ka * (inv_mass[a] + ra * ra * inv_inertia[a])
            rot += ka * inv_inertia[a]
        out[k] = lin
        out[k + 1] = lever
        out[k + 2] = lever
        if rows == 6:
            out[k + 3] = rot
            out[k + 4] = rot
            out[k + 5] = rot


def split_diagonal(problem) -> np.ndarray:
    """Â's diagonal of `problem`, (size,) 1/kg."""
    out = np.empty(problem.size)
    kernel = frictional_split_rows if problem.rows > 1 else split_rows
    kernel(problem.A, contact_starts(problem), out, 0, problem.m)
    return out


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    split = split_diagonal(problem)
    scratch = (np.empty_like(problem.v_pred), np.empty(problem.m))

    def sweep(count: int) -> None:
        jacobi_sweeps(problem.A, problem.rhs, split, lam, 1.0, scratch, count, problem.partition)

    return run(problem, lam, settings, sweep)


def _solve_frictional(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    step = inverse_diag(split_diagonal(problem))
    scratch = (np.empty_like(problem.V_pred), np.empty(problem.size))
    p = problem

    def sweep(count: int) -> None:
        frictional_jacobi_sweeps(p.A, p.rhs, step, p.laws, lam, scratch, count, p.partition)

    return run(problem, lam, settings, sweep)


def coupled_counts(problem) -> np.ndarray:
    """(m,) float64: for an explicit W, how many contacts each contact's block row couples it to
    (its own block included)."""
    rows = np.repeat(np.arange(problem.size), np.diff(problem.indptr)) // 3
    pairs = np.unique(rows * problem.m + problem.indices // 3)
    return np.maximum(np.bincount(pairs // problem.m, minlength=problem.m), 1).astype(np.float64)


def _solve_explicit(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    steps = local_steps(problem, 1.0) / coupled_counts(problem)[:, None]
    op = operator(problem)
    e = np.empty(problem.size)

    def sweep(count: int) -> None:
        operator_jacobi_sweeps(op, problem.rhs, steps, problem.mu, lam, e, count)

    return run(problem, lam, settings, sweep)


METHOD = Method("mass-split", "Mass-splitting Jacobi",
                {FRICTIONLESS: solve, FRICTIONAL: _solve_frictional, EXPLICIT: _solve_explicit},
                "Jacobi with each marble's mass split among its contacts (PhysX's GPU solver): "
                "convergent with no damping to tune",
                devices=("cpu", "cuda"))
