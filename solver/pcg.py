"""Projected conjugate gradient (Tardieu, Youbissi & Chamberland), SOLVERS.md §3.

CG on the QP  min 1/2 λᵀAλ + bᵀλ, λ >= 0, with three changes:

1. the new iterate is projected, λ <- max(0, λ + α p);
2. the residual is recomputed directly, r = -(A λ + b) (a second product with A per iteration),
   and projected: r_c = 0 where λ_c = 0 and r_c < 0 (an inactive contact that wants to stay so);
3. conjugacy is kept only while the active set does not change; when it changes the direction
   restarts from the (preconditioned) projected residual.

What counts as a change is the `restart` parameter. `clip` (default): the projection cut a
component off at zero. A contact leaving zero because it wants to push does not move CG out of
its subspace (its projected residual was already free), so it keeps conjugacy; with this rule the
sources' claims hold (a resting column of k marbles in k iterations from λ = 0, the 1000:1 pair
in 2). `active`: SOLVERS.md's literal rule, any change of {c : λ_c > 0}; from λ = 0 the first
step always changes it, and again as contacts join one by one, so the column takes up to 2k.

On a plain SPD linear system (no bound ever touched) it is exactly (preconditioned) CG.

Guard for pᵀAp ≈ 0 (piles make A singular, so a direction can have no curvature): when
pᵀAp <= 1e-12 pᵀ diag(A) p the direction is first restarted from the residual (one more product);
if that one has no curvature either, the objective is linear along it and decreasing (its slope is
-rᵀz < 0), so the step goes to the first bound it meets (the largest α keeping λ + α p >= 0).
Without such a bound the QP is unbounded along p; λ is left unchanged and the guard is counted.

One iteration = one projected CG step = 2 products with A (q = A p and the recomputed residual),
plus 1 when the guard restarts the direction; `SolveResult.products` also counts the one product
that builds the first residual. `info`: restarts (active-set changes), guards.

`ppcg` imports this kernel with the Jacobi preconditioner P = diag(A); here P = I.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .method import Method, SolveSettings, run
from .params import Param
from .problem import ContactProblem, apply_matrix

CURVATURE_GUARD = 1e-12  # pᵀAp below this times pᵀ diag(A) p counts as no curvature

# Slots of the int64 `counts` array the kernel keeps between calls.
PRODUCTS, RESTARTS, GUARDS, FRESH = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def projected_residual(body_a, body_b, normal, inv_mass, rhs, lam, dv, r):
    """r (m,) <- proj(-(A λ + b)): zero where λ_c = 0 and the contact wants to separate."""
    apply_matrix(body_a, body_b, normal, inv_mass, lam, dv, r)
    for c in range(lam.shape[0]):
        rc = -(r[c] + rhs[c])
        if lam[c] <= 0.0 and rc < 0.0:
            rc = 0.0
        r[c] = rc


@njit(cache=True, nogil=True)
def pcg_start(body_a, body_b, normal, inv_mass, rhs, pinv, lam, dv, r, z, p, state, counts):
    """First residual and direction from λ (one product). state[0] = rᵀz."""
    projected_residual(body_a, body_b, normal, inv_mass, rhs, lam, dv, r)
    rz = 0.0
    for c in range(lam.shape[0]):
        z[c] = pinv[c] * r[c]
        p[c] = z[c]
        rz += r[c] * z[c]
    state[0] = rz
    counts[PRODUCTS] += 1
    counts[FRESH] = 1


@njit(cache=True, nogil=True)
def _curvature(body_a, body_b, normal, inv_mass, diag, p, dv, q):
    """q <- A p; returns (pᵀAp, pᵀ diag(A) p), the curvature along p and its scale."""
    apply_matrix(body_a, body_b, normal, inv_mass, p, dv, q)
    pq = 0.0
    pdp = 0.0
    for c in range(p.shape[0]):
        pq += p[c] * q[c]
        pdp += p[c] * p[c] * diag[c]
    return pq, pdp


@njit(cache=True, nogil=True)
def pcg_iterations(body_a, body_b, normal, inv_mass, rhs, diag, pinv, lam, dv, r, z, p, q,
                   state, counts, count, clip_only):
    """`count` projected CG iterations in place on λ; r, z, p and state/counts carry over
    between calls so that count=1 repeated equals one call with the total."""
    m = lam.shape[0]
    for _ in range(count):
        rz = state[0]
        if rz == 0.0:
            continue  # projected residual exactly zero: λ solves the LCP, nothing to do
        pq, pdp = _curvature(body_a, body_b, normal, inv_mass, diag, p, dv, q)
        counts[PRODUCTS] += 1
        if not pq > CURVATURE_GUARD * pdp and counts[FRESH] == 0:
            # No curvature along a conjugate direction: restart from the residual.
            for c in range(m):
                p[c] = z[c]
            counts[FRESH] = 1
            pq, pdp = _curvature(body_a, body_b, normal, inv_mass, diag, p, dv, q)
            counts[PRODUCTS] += 1
        if pq > CURVATURE_GUARD * pdp:
            alpha = rz / pq
        else:
            counts[GUARDS] += 1
            alpha = np.inf
            for c in range(m):
                if p[c] < 0.0:
                    step = lam[c] / -p[c]
                    if step < alpha:
                        alpha = step
            if alpha == np.inf:
                alpha = 0.0  # unbounded along p (or p = 0): stay
        changed = False
        for c in range(m):
            old = lam[c]
            new = old + alpha * p[c]
            if new < 0.0:
                new = 0.0
            if clip_only:
                if old + alpha * p[c] < 0.0:
                    changed = True
            elif (new > 0.0) != (old > 0.0):
                changed = True
            lam[c] = new
        projected_residual(body_a, body_b, normal, inv_mass, rhs, lam, dv, r)
        counts[PRODUCTS] += 1
        rz_new = 0.0
        for c in range(m):
            z[c] = pinv[c] * r[c]
            rz_new += r[c] * z[c]
        if changed or not rz > 0.0:
            counts[RESTARTS] += 1
            for c in range(m):
                p[c] = z[c]
            counts[FRESH] = 1
        else:
            beta = rz_new / rz
            for c in range(m):
                p[c] = z[c] + beta * p[c]
            counts[FRESH] = 0
        state[0] = rz_new


def solve_preconditioned(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings,
                         pinv: np.ndarray):
    """Projected CG with z = pinv * r (pinv (m,): 1 for pcg, 1/diag(A) for ppcg)."""
    lam = np.array(lam0, dtype=np.float64)
    clip_only = settings.get("restart", "clip") == "clip"
    m = problem.m
    dv = np.empty_like(problem.v_pred)
    r, z, p, q = (np.zeros(m) for _ in range(4))
    state = np.zeros(1)
    counts = np.zeros(4, dtype=np.int64)
    args = (problem.body_a, problem.body_b, problem.normal, problem.inv_mass, problem.rhs)

    def sync() -> None:
        pcg_start(*args, pinv, lam, dv, r, z, p, state, counts)

    def sweep(count: int) -> None:
        pcg_iterations(*args, problem.diag, pinv, lam, dv, r, z, p, q, state, counts, count,
                       clip_only)

    info: dict = {}

    def products() -> int:
        info["restarts"] = int(counts[RESTARTS])
        info["guards"] = int(counts[GUARDS])
        return int(counts[PRODUCTS])

    if m:
        sync()
    result = run(problem, lam, settings, sweep, sync, info=info, products=products)
    return result


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    return solve_preconditioned(problem, lam0, settings, np.ones(problem.m))


RESTART = Param("restart", "clip", str,
                "restart the direction only when the projection clips a component (clip) or "
                "whenever {λ>0} changes (active, SOLVERS.md literally)",
                choices=("active", "clip"))

METHOD = Method("pcg", "Projected conjugate gradient", solve,
                "CG with projected iterate and residual, restarted when the active set changes "
                "(2 products with A per iteration)", (RESTART,))
