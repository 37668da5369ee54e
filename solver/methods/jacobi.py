"""Projected Jacobi: every contact's update is computed from the same iterate, then all are
applied, λ <- max(0, λ - β (A λ + b) / diag(A)).

Undamped (β = 1) it diverges on piles, where a marble has many contacts that all push at once;
β around 1 / (contacts per marble) makes it converge, slowly. It parallelises trivially and is
here as the comparison baseline.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..drivers import driver
from ..coulomb import project_disk
from ..params import Param
from ..partition import share, shares
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem, inverse_diag
from ..products import frictional_gather, frictional_velocity_change, gather, velocity_change
from .driver import Method, run
from ..options import SolveSettings
from .operator import local_steps, operator, product

BETA = Param("beta", 0.3, float, "damping of the update (1: undamped, diverges on piles)",
             lo=0.0, hi=1.0, lo_open=True)


@njit(cache=True, nogil=True)
def jacobi_range(rhs, diag, lam, beta, e, first, last):
    """The update of contacts [first, last) from e = A λ (m/s): λ_c <- max(0, λ_c - β (e_c +
    b_c) / A_cc)."""
    for c in range(np.uint64(first), np.uint64(last)):
        if diag[c] == 0.0:  # an inert row (both ends fixed): no impulse changes it
            continue
        new = lam[c] - beta * (e[c] + rhs[c]) / diag[c]
        lam[c] = new if new > 0.0 else 0.0


@driver(parallel=True, cache=True, nogil=True)
def jacobi_sweeps(A, rhs, diag, lam, beta, scratch, count, partition):
    """`count` Jacobi iterations over a partition: e = A λ from one iterate, then every
    contact's update (jacobi_range), the contacts in equal shares at once; inline for one
    block. The same iterates for any number of blocks of the same contacts. scratch = (dv
    (n, 3), e (m,))."""
    dv, e = scratch
    ranges = partition[0]
    parts = shares(ranges)
    m = lam.shape[0]
    for _ in range(count):
        velocity_change(A, lam, dv, partition)
        if parts == 1:
            gather(A, dv, e, np.int64(0), m)
            jacobi_range(rhs, diag, lam, beta, e, np.int64(0), m)
            continue
        for t in prange(parts):
            first, last = share(ranges, t)
            gather(A, dv, e, first, last)
            jacobi_range(rhs, diag, lam, beta, e, first, last)


@njit(cache=True, nogil=True)
def frictional_jacobi_range(rhs, step, laws, rows, lam, e, first, last):
    """The frictional update of contacts [first, last) from e = A λ: the normal λ_n <- max(0,
    λ_n - β e_n / A_nn), the tangents (and rolling rows) stepped alike and projected onto the
    disk of the new μ λ_n. step (m * rows): β / A_jj; laws = (mu, mu_roll, mu_spin). The GPU's
    kernels call it for one contact (solver/cuda/runtime.shared)."""
    mu, mu_roll, mu_spin = laws
    for c in range(first, last):
        k = c * rows
        if step[k] == 0.0:  # an inert row (both ends fixed)
            continue
        ln = lam[k] - step[k] * (e[k] + rhs[k])
        ln = ln if ln > 0.0 else 0.0
        lam[k] = ln
        lam[k + 1], lam[k + 2] = project_disk(lam[k + 1] - step[k + 1] * (e[k + 1] + rhs[k + 1]),
                                              lam[k + 2] - step[k + 2] * (e[k + 2] + rhs[k + 2]),
                                              mu[c] * ln)
        if rows == 6:
            lam[k + 3], lam[k + 4] = project_disk(
                lam[k + 3] - step[k + 3] * (e[k + 3] + rhs[k + 3]),
                lam[k + 4] - step[k + 4] * (e[k + 4] + rhs[k + 4]), mu_roll[c] * ln)
            bound = mu_spin[c] * ln
            ls = lam[k + 5] - step[k + 5] * (e[k + 5] + rhs[k + 5])
            lam[k + 5] = min(max(ls, -bound), bound)


@driver(parallel=True, cache=True, nogil=True)
def frictional_jacobi_sweeps(A, rhs, step, laws, lam, scratch, count, partition):
    """`count` Jacobi iterations on the frictional problem: e = A λ + b from one iterate, then
    every contact's update (frictional_jacobi_range), over a partition as jacobi_sweeps;
    scratch = (dV (n, 6), e (m * rows))."""
    dV, e = scratch
    rows = A[9]
    ranges = partition[0]
    parts = shares(ranges)
    m = A[0].shape[0]
    for _ in range(count):
        frictional_velocity_change(A, lam, dV, partition)
        if parts == 1:
            frictional_gather(A, dV, e, np.int64(0), m)
            frictional_jacobi_range(rhs, step, laws, rows, lam, e, np.int64(0), m)
            continue
        for t in prange(parts):
            first, last = share(ranges, t)
            frictional_gather(A, dV, e, first, last)
            frictional_jacobi_range(rhs, step, laws, rows, lam, e, first, last)


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    beta = settings["beta"]
    dv = np.empty_like(problem.v_pred)
    e = np.empty(problem.m)

    def sweep(count: int) -> None:
        jacobi_sweeps(problem.A, problem.rhs, problem.diag, lam, beta, (dv, e), count,
                      problem.partition)

    return run(problem, lam, settings, sweep)


@njit(cache=True, nogil=True)
def operator_jacobi_sweeps(op, rhs, steps, mu, lam, e, count):
    """`count` Jacobi iterations over any problem `operator` describes with 3 rows per contact
    (an explicit W): e = A λ + b from one iterate, then every contact's normal stepped by
    steps[c, 0] and projected, its tangents by steps[c, 1] onto the disk of the new μ λ_n."""
    for _ in range(count):
        product(op, lam, e)
        for c in range(mu.shape[0]):
            k = 3 * c
            if steps[c, 0] == 0.0:  # an inert contact
                continue
            ln = max(lam[k] - steps[c, 0] * (e[k] + rhs[k]), 0.0)
            lam[k] = ln
            lam[k + 1], lam[k + 2] = project_disk(lam[k + 1] - steps[c, 1] * (e[k + 1] + rhs[k + 1]),
                                                  lam[k + 2] - steps[c, 1] * (e[k + 2] + rhs[k + 2]),
                                                  mu[c] * ln)


def _solve_explicit(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    steps = local_steps(problem, settings["beta"])
    op = operator(problem)
    e = np.empty(problem.size)

    def sweep(count: int) -> None:
        operator_jacobi_sweeps(op, problem.rhs, steps, problem.mu, lam, e, count)

    return run(problem, lam, settings, sweep)


def _solve_frictional(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    step = inverse_diag(problem.diag, settings["beta"])
    scratch = (np.empty_like(problem.V_pred), np.empty(problem.size))
    p = problem

    def sweep(count: int) -> None:
        frictional_jacobi_sweeps(p.A, p.rhs, step, p.laws, lam, scratch, count, p.partition)

    return run(problem, lam, settings, sweep)


METHOD = Method("jacobi", "Projected Jacobi",
                {FRICTIONLESS: solve, FRICTIONAL: _solve_frictional, EXPLICIT: _solve_explicit},
                "all contacts updated from the same iterate, damped by β", (BETA,),
                devices=("cpu", "cuda"))
