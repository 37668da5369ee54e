"""Erleben's proximal Jacobi with the adaptive r-factor on the GPU (`prox-jacobi`:
solver/methods/prox_jacobi.py without friction, prox_friction.prox_jacobi_any with it): every
iteration of a solve in one cooperative launch, each accept-or-reject decided by every thread
alike from grid-wide values.

An iteration: e = A λ + b when not cached (one product), the candidate λ' = prox(λ - R e)
contact by contact (each thread its own contacts), ρ = ‖λ' - λ‖∞ (a grid maximum), with the
objective test the candidate's product e' = A λ' + b and its merit (without friction the
objective's change ½ (λ' - λ)ᵀ(e + e'), with it FCLIB's error Σ_c ‖λ_c - P_K(λ_c - ũ_c)‖², each a
sum in a fixed tree), then the CPU's judge (proximal.judge, compiled for the device) on
thread-local copies of the solve's state. The products are the Jacobi kernels' (the CPU's bit
for bit); the sums differ from the CPU's sequential ones by rounding only, so the iterates are
the CPU's unless a test's margin is at rounding level. No floating-point atomics.
"""
from __future__ import annotations

import numpy as np

from ..methods.prox_friction import HISTORY, MERIT, SLACK, WINDOW, record
from ..methods.proximal import (ACCEPTED, E_VALID, PRODUCTS, REJECTED, RHO, SCALE, STOP,
                                judge)
from .apgd import _frictional_product, _frictionless_product, _grid_max, _grid_sums
from .coulomb import contact_error, project_disk
from .launch import kernel
from .runtime import cuda

STATE = HISTORY + WINDOW  # the float state's slots (prox_friction's layout; the frictionless
COUNTS = 5                # solve uses its first three); counts: proximal's four, then DONE
DONE = 4
LOCAL, BLOCKED, GLOBAL = 0, 1, 2  # the r strategies, as `frictional_bases` takes them

_judge = cuda.jit(device=True)(judge.py_func)
_record = cuda.jit(device=True)(record.py_func)


@cuda.jit(device=True)
def _verdict(st, merit, rho):
    """prox_friction.verdict: < 0 (accept) when the error is below SLACK times the least of the
    current one and the window's, or the step ρ shrank."""
    least = st[MERIT]
    for j in range(HISTORY, HISTORY + WINDOW):
        least = min(least, st[j])
    return -1.0 if merit < SLACK * least or rho < st[RHO] else 1.0


@cuda.jit(device=True)
def _frictionless_propose(lam, e, cand, c, steps, cone, s):
    """cand_c <- max(0, λ_c - (s factor) e_c / denom_c) (λ_c for an inert row); |Δ|."""
    denom, factor = steps
    if denom[c] == 0.0:
        cand[c] = lam[c]
        return 0.0
    new = lam[c] - (s * factor) * e[c] / denom[c]
    if new < 0.0:
        new = 0.0
    cand[c] = new
    return abs(new - lam[c])


@cuda.jit(device=True)
def _frictional_propose(lam, e, cand, c, steps, cone, s):
    """Contact c's rows of prox_C(λ - R e) (prox_friction.prox_contact), R = s base_c; the
    largest |Δ| of its rows (NaN counts as the largest)."""
    base = steps[0]
    rows, mu, mu_roll, mu_spin = cone
    k = c * rows
    if base[c, 0] == 0.0:  # an inert contact keeps its impulses
        for j in range(k, k + rows):
            cand[j] = lam[j]
        return 0.0
    r_n = s * base[c, 0]
    r_t = s * base[c, 1]
    r_r = s * base[c, 2]
    ln = max(lam[k] - r_n * e[k], 0.0)
    cand[k] = ln
    cand[k + 1], cand[k + 2] = project_disk(lam[k + 1] - r_t * e[k + 1],
                                            lam[k + 2] - r_t * e[k + 2], mu[c] * ln)
    if rows == 6:
        cand[k + 3], cand[k + 4] = project_disk(lam[k + 3] - r_r * e[k + 3],
                                                lam[k + 4] - r_r * e[k + 4], mu_roll[c] * ln)
        bound = mu_spin[c] * ln
        cand[k + 5] = min(max(lam[k + 5] - r_r * e[k + 5], -bound), bound)
    worst = 0.0
    for j in range(k, k + rows):
        d = abs(cand[j] - lam[j])
        if not d <= worst:
            worst = d
    return worst


# The merits below are a thread's share of a sum; the kernel adds the shares over the grid
# (a device function that reduces over the grid, reached through two others, would define its
# shared array twice in one kernel, which the CUDA linker refuses).
@cuda.jit(device=True)
def _no_merit(lam, e, cone):
    return np.inf


@cuda.jit(device=True)
def _error_share(lam, e, cone):
    """This thread's contacts' share of FCLIB's squared error Σ_c ‖λ_c - P_K(λ_c - ũ_c)‖²
    (e = A λ + b)."""
    rows, mu, mu_roll, mu_spin = cone
    total = 0.0
    for c in range(cuda.grid(1), mu.shape[0], cuda.gridsize(1)):
        total += contact_error(lam, e, c * rows, mu[c], mu_roll[c], mu_spin[c], rows, True)
    return total


@cuda.jit(device=True)
def _objective_share(lam, cand, e, e_new, cone):
    """This thread's rows' share of (λ' - λ)ᵀ(e + e'), twice f(λ') - f(λ) for
    f = ½λᵀAλ + bᵀλ."""
    total = 0.0
    for c in range(cuda.grid(1), lam.shape[0], cuda.gridsize(1)):
        total += (cand[c] - lam[c]) * (e[c] + e_new[c])
    return total


@cuda.jit(device=True)
def _candidate_share(lam, cand, e, e_new, cone):
    return _error_share(cand, e_new, cone)


@cuda.jit(device=True)
def _objective_decide(rho, value, moved, st, cn, rules):
    return _judge(rho, value if moved else 0.0, st, cn, rules)


@cuda.jit(device=True)
def _error_decide(rho, value, moved, st, cn, rules):
    merit = value if moved else st[MERIT]
    if _judge(rho, _verdict(st, merit, rho), st, cn, rules):
        if moved:
            _record(st, cn, merit)
        return True
    return False


# long: prox_jacobi_any's loop as one launch, closing over its problem kind's product, step,
# merit and test.
def _kernel(product, propose, merit_of, change, half, decide):
    """The iterations kernel of one problem kind (module docstring); `half`: whether the
    candidate's summed change is twice the value the test takes (the objective's)."""

    @kernel
    def iterations(P, rhs, steps, cone, rules, iterate, progress, count):
        """`count` iterations in place: P = (A, csr, dv scratch); rhs (size,) b; steps:
        (denom (m,), factor) without friction, (base (m, 3),) with it; cone = (rows, mu,
        mu_roll, mu_spin); rules: proximal.adaptation's; iterate = (λ, cand, e, e_new) (size,)
        each; progress = (state (STATE,), counts (COUNTS,), reduce): read at the start,
        written at the end."""
        grid = cuda.cg.this_grid()
        lam, cand, e, e_new = iterate
        state, counts, reduce = progress
        rows = cone[0]
        objective = rules[1]
        first = cuda.grid(1)
        stride = cuda.gridsize(1)
        m = lam.shape[0] // rows
        st = cuda.local.array(STATE, np.float64)
        cn = cuda.local.array(4, np.int64)
        for j in range(STATE):
            st[j] = state[j]
        for j in range(4):
            cn[j] = counts[j]
        done = 0
        grid.sync()  # every thread has read the state before thread 0 may write it
        for _ in range(count):
            if st[STOP] != 0.0:
                break
            done += 1
            if cn[E_VALID] == 0:
                product(P, lam, e, grid)
                for j in range(first, lam.shape[0], stride):
                    e[j] += rhs[j]
                cn[PRODUCTS] += 1
                cn[E_VALID] = 1
                grid.sync()
                st[MERIT], _ = _grid_sums(merit_of(lam, e, cone), 0.0, reduce, grid)
            worst = 0.0
            for c in range(first, m, stride):
                d = propose(lam, e, cand, c, steps, cone, st[SCALE])
                if not d <= worst:
                    worst = d
            rho = _grid_max(worst, reduce, grid)
            moved = objective and rho != 0.0
            value = 0.0
            if moved:
                product(P, cand, e_new, grid)
                cn[PRODUCTS] += 1
                for j in range(first, lam.shape[0], stride):
                    e_new[j] += rhs[j]
                grid.sync()
                value, _ = _grid_sums(change(lam, cand, e, e_new, cone), 0.0, reduce, grid)
                if half:
                    value *= 0.5
            if decide(rho, value, moved, st, cn, rules):
                for j in range(first, lam.shape[0], stride):
                    lam[j] = cand[j]
                    if moved:
                        e[j] = e_new[j]
                if not moved and not objective:
                    cn[E_VALID] = 0
            grid.sync()
        if first == 0:
            for j in range(STATE):
                state[j] = st[j]
            for j in range(4):
                counts[j] = cn[j]
            counts[DONE] = done

    return iterations


FRICTIONLESS = _kernel(_frictionless_product, _frictionless_propose, _no_merit,
                       _objective_share, True, _objective_decide)
FRICTIONAL = _kernel(_frictional_product, _frictional_propose, _error_share, _candidate_share,
                     False, _error_decide)


@kernel
def nonzero(diag, out):
    """out <- 1 where A_cc != 0, else 0 (the global strategy's denominators)."""
    for c in range(cuda.grid(1), diag.shape[0], cuda.gridsize(1)):
        out[c] = 1.0 if diag[c] != 0.0 else 0.0


@cuda.jit(device=True, inline=True)
def _inverse(factor, d):
    return factor / d if d > 0.0 else 0.0


@kernel
def frictional_bases(diag, rows, strategy, factor, base):
    """base (m, 3) <- R0 per contact (prox_friction.friction_strategy): local γ / A_nn,
    γ / A_tt, γ / A_rr (0 without rolling rows); blocked the first two γ / max(A_nn, A_tt);
    global `factor` wherever local's step with γ = 1 is not 0. An inert contact: zeros."""
    for c in range(cuda.grid(1), base.shape[0], cuda.gridsize(1)):
        k = c * rows
        gamma = 1.0 if strategy == GLOBAL else factor
        b0 = _inverse(gamma, diag[k])
        b1 = _inverse(gamma, diag[k + 1])
        b2 = _inverse(gamma, diag[k + 3]) if rows > 3 else 0.0
        if b0 == 0.0:
            b0 = 0.0
            b1 = 0.0
            b2 = 0.0
        elif strategy == BLOCKED:
            b0 = _inverse(gamma, max(diag[k], max(diag[k + 1], diag[k + 2])))
            b1 = b0
        elif strategy == GLOBAL:
            b0 = factor
            b1 = factor if b1 > 0.0 else 0.0
            b2 = factor if b2 > 0.0 else 0.0
        base[c, 0] = b0
        base[c, 1] = b1
        base[c, 2] = b2
