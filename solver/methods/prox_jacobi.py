"""Proximal fixed point in Jacobi form (Erleben): every contact from the same iterate,
λ <- max(0, λ - R (A λ + b)), with the adaptive r-factor of `proximal`. Its rejection rule keeps
one solve from diverging where undamped projected Jacobi does, but not a pile stepped with 20
iterations a step: hence its own default γ (proximal.JACOBI_GAMMA). One iteration = one
attempted iterate: one product with A (with `merit=step`, none for a retry after a rejection)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem, apply_matrix
from .driver import Method, run
from ..options import SolveSettings
from .prox_friction import solve_jacobi
from .proximal import (E_VALID, JACOBI_PARAMS, PRODUCTS, SCALE, STOP, adaptation, fresh_state,
                       hooks, judge, strategy)


@njit(cache=True, nogil=True)
def prox_jacobi_iterations(A, rows_in, factor, rules, iterate, progress, count):
    """`count` Jacobi proximal iterations in place; returns the number performed. A: the
    operator's factors (solver/products.py); rows_in = (rhs (m,) b, m/s; denom (m,): R_c =
    state[SCALE] * factor / denom_c, 0 for an inert row); rules: proximal.adaptation's; iterate
    = (λ (m,) N s; cand (m,) the next iterate; e, e_new (m,) m/s; dv (n, 3) scratch); progress
    = (state, counts) by proximal's slots. e caches A λ + b while counts[E_VALID] is 1. With the
    objective test every attempted iterate costs one product, e_new = A λ' + b, which gives
    f(λ') - f(λ) = ½ (λ' - λ)ᵀ(e + e_new) exactly and becomes the cached e when λ' is accepted;
    with the step test a rejection costs nothing."""
    rhs, denom = rows_in
    objective = rules[1]
    lam, cand, e, e_new, dv = iterate
    state, counts = progress
    m = lam.shape[0]
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if counts[E_VALID] == 0:
            apply_matrix(A, lam, dv, e)
            for c in range(m):
                e[c] += rhs[c]
            counts[PRODUCTS] += 1
            counts[E_VALID] = 1
        step = state[SCALE] * factor
        rho = 0.0
        for c in range(m):
            if denom[c] == 0.0:  # an inert row (A_cc = 0, both ends fixed): it keeps λ_c
                cand[c] = lam[c]
                continue
            new = lam[c] - step * e[c] / denom[c]
            if new < 0.0:
                new = 0.0
            cand[c] = new
            delta = abs(new - lam[c])
            if not delta <= rho:
                rho = delta
        df = 0.0
        moved = objective and rho != 0.0
        if moved:
            apply_matrix(A, cand, dv, e_new)
            counts[PRODUCTS] += 1
            for c in range(m):
                e_new[c] += rhs[c]
                df += (cand[c] - lam[c]) * (e[c] + e_new[c])
            df *= 0.5
        if judge(rho, df, state, counts, rules):
            lam[:] = cand
            if moved:
                e[:] = e_new
            elif not objective:
                counts[E_VALID] = 0
    return done


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    denom, factor, nu, grow = strategy(problem, settings)
    rules = adaptation(settings, nu, grow)
    m = problem.m
    iterate = (lam, np.empty(m), np.empty(m), np.empty(m), np.empty_like(problem.v_pred))
    progress = fresh_state()
    counts = progress[1]
    info: dict = {}
    A, rows_in = problem.A, (problem.rhs, denom)

    def sweep(count: int) -> int:
        return prox_jacobi_iterations(A, rows_in, factor, rules, iterate, progress, count)

    def sync() -> None:
        counts[E_VALID] = 0

    return run(problem, lam, settings, sweep, sync, hooks(*progress, info))


# solve_jacobi takes an explicit W through its products with A (methods/operator.py).
METHOD = Method("prox-jacobi", "Proximal Jacobi",
                {FRICTIONLESS: solve, FRICTIONAL: solve_jacobi, EXPLICIT: solve_jacobi},
                "Erleben's prox fixed point, all-at-once form, adaptive r; with friction the "
                "Coulomb cone's map", JACOBI_PARAMS,
                devices=("cpu", "cuda"))
