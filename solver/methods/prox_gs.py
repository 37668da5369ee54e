"""Proximal fixed point in Gauss-Seidel form (Erleben): sweep the contacts with the freshest
velocities, λ_c <- max(0, λ_c - R_c e_c), with the adaptive r-factor of `proximal`. With
r=local, adapt=0 and frictionless contacts it is exactly PSOR with ω = γ, and with the default
objective test so is the adaptive form (every sweep with local r lowers f, so none is rejected).
One iteration = one sweep (accepted or rejected), the cost of one product with A."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..drivers import driver
from ..problem import (EXPLICIT, FRICTIONAL, FRICTIONLESS, ROW_KERNEL, ContactProblem, apply_row,
                       contact_row, row_error)
from .driver import Method, run
from ..options import SolveSettings
from .prox_friction import solve_gs, solve_gs_matrix
from .proximal import (PARAMS, PRODUCTS, SCALE, STOP, adaptation, fresh_state, hooks, judge,
                       strategy)


@njit(inline="always", cache=True, nogil=True)
def _copy(lam, v, lam_to, v_to):
    """lam_to <- lam, v_to <- v, element by element: in a parallel kernel a slice assignment is
    a parallel loop of its own, which would start the threads for one block."""
    for c in range(lam.shape[0]):
        lam_to[c] = lam[c]
    for i in range(v.shape[0]):
        for k in range(3):
            v_to[i, k] = v[i, k]


@njit(**ROW_KERNEL)
def prox_gs_range(A, rows_in, step, track, v, lam, first, last):
    """One proximal Gauss-Seidel pass over contacts [first, last) with step = s * factor;
    A the operator's factors (solver/products.py); rows_in = (bias (m,) gap / h, m/s; diag
    (m,) A_cc, 1/kg; denom (m,): R_c = step / denom_c, 0 for an inert row); v (n, 3) m/s, λ
    (m,) N s. Returns (ρ, df): the largest |Δλ_c| (NaN carried through) and, when `track`, the
    exact change of f made by these contacts' updates (J)."""
    body_a, body_b, normal, inv_mass = A
    bias, diag, denom = rows_in
    rho = 0.0
    df = 0.0
    # An unsigned c: a signed one from a range whose start the compiler cannot prove >= 0 costs
    # a negative-index wraparound on every load and store of the contact (a tenth of a sweep's
    # time on the bowl).
    for c in range(np.uint64(first), np.uint64(last)):
        if denom[c] == 0.0:  # an inert row (A_cc = 0, both ends fixed): it keeps λ_c
            continue
        a, b, n0, n1, n2 = contact_row(body_a, body_b, normal, c)
        e = row_error(v, a, b, n0, n1, n2, bias[c])
        new = lam[c] - step * e / denom[c]
        if new < 0.0:
            new = 0.0
        delta = new - lam[c]
        lam[c] = new
        if not abs(delta) <= rho:
            rho = abs(delta)  # also carries a NaN through to the test below
        if track:
            df += delta * (e + 0.5 * diag[c] * delta)
        apply_row(v, inv_mass, a, b, n0, n1, n2, delta)
    return rho, df


# long: Erleben's loop (copy, sweep in phases, per-group merits reduced, judge, roll back).
@driver(parallel=True, cache=True, nogil=True)
def prox_gs_iterations(A, rows_in, factor, rules, iterate, progress, count, partition):
    """`count` Gauss-Seidel proximal iterations in place over a partition, in gauss_seidel.py's
    order and threads (one block: the serial sweep, on the calling thread); returns the number
    performed (fewer when the merit test stops). A, rows_in: prox_gs_range's; rules:
    proximal.adaptation's; iterate = (v (n, 3) m/s, kept equal to v* + M^-1 J^T λ; λ (m,) N s;
    v_old, lam_old: their copies for a rollback); progress = (state, counts) by proximal's
    slots. R_c = state[SCALE] * factor / denom[c] (local: factor γ, denom A_cc; global: factor
    r, denom 1), written so that with s = 1 the update is bit-for-bit PSOR's λ_c - ω e_c / A_cc.
    The sweep's change of f is exact and free: a contact's update Δ_c, made with its fresh e_c,
    changes f by Δ_c (e_c + ½ A_cc Δ_c); with local r and s γ < 2 every term is <= 0. ρ is the
    largest of the groups' that hold contacts and df their sum, in group order, so a run
    repeats bit for bit for a given partition."""
    adapt, objective = rules[0], rules[1]
    v, lam, v_old, lam_old = iterate
    state, counts = progress
    ranges, phases = partition
    track = adapt and objective
    groups = ranges.shape[0] - 1
    # Every group's slot is written in every sweep before it is read (the phases cover the
    # groups); np.zeros would be a parallel loop of its own.
    rhos = np.empty(groups)
    dfs = np.empty(groups)
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if adapt:
            _copy(lam, v, lam_old, v_old)
        step = state[SCALE] * factor
        for p in range(phases.shape[0] - 1):
            lo = phases[p]
            hi = phases[p + 1]
            if hi - lo == 1:
                rhos[lo], dfs[lo] = prox_gs_range(A, rows_in, step, track, v, lam, ranges[lo],
                                                  ranges[lo + 1])
            elif hi > lo:
                for g in prange(lo, hi):
                    rhos[g], dfs[g] = prox_gs_range(A, rows_in, step, track, v, lam, ranges[g],
                                                    ranges[g + 1])
        rho = 0.0
        df = 0.0
        for g in range(groups):
            if ranges[g] == ranges[g + 1]:
                # A group without contacts has no step: its 0 would replace a NaN before it
                # (one block's empty interface after its interior), hiding a failed sweep.
                continue
            if not rhos[g] <= rho:
                rho = rhos[g]
            df += dfs[g]
        counts[PRODUCTS] += 1
        if not judge(rho, df, state, counts, rules):
            _copy(lam_old, v_old, lam, v)
    return done


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    denom, factor, nu, grow = strategy(problem, settings)
    adapt, objective, nu, grow, rho_abs, rho_rel = adaptation(settings, nu, grow)
    if objective and settings["r"] != "global":
        # The objective test cannot fail here: with r_c = s γ / A_cc, s <= 1 and γ < 2, every
        # contact's update lowers f. So the sweep needs no copies for a rollback and no sum (a
        # NaN is then the driver's divergence, as for psor).
        adapt = False
    rules = (adapt, objective, nu, grow, rho_abs, rho_rel)
    v = problem.velocity(lam)
    iterate = (v, lam, np.empty_like(v), np.empty_like(lam))
    progress = fresh_state()
    info: dict = {}
    A, rows_in, parts = problem.A, (problem.bias, problem.diag, denom), problem.partition

    def sweep(count: int) -> int:
        return prox_gs_iterations(A, rows_in, factor, rules, iterate, progress, count, parts)

    def sync() -> None:
        v[:] = problem.velocity(lam)

    return run(problem, lam, settings, sweep, sync, hooks(*progress, info))


METHOD = Method("prox-gs", "Proximal Gauss-Seidel",
                {FRICTIONLESS: solve, FRICTIONAL: solve_gs, EXPLICIT: solve_gs_matrix},
                "Erleben's prox fixed point, sweep form, adaptive r; with friction the "
                "Coulomb cone's map", PARAMS)
