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

Safeguard (beyond the sources; `safeguard`, default on): the step length comes from the
unprojected quadratic, and the projection can bend the step uphill, so the sources' PCG can raise
f = ½λᵀAλ + bᵀλ and, on singular A, cycle for ever (6 of 123 singular random LCPs with `clip`,
README, Solver laboratory). The recomputed gradient g' = A λ' + b gives the change of f exactly
and for free, f(λ') - f(λ) = ½ (λ' - λ)ᵀ(g + g'). When it is positive the step is replaced:
backtracking on the projection arc, λ' = max(0, λ + t p) with t = α/2, α/4, ... (BACKTRACKS
trials, one product each for g'), then, if none lowered f, the exact minimiser of f along p or
the first bound before it (a feasible segment, which lowers f); where p does not descend
(gᵀp >= 0) the arc starts from the full step along the preconditioned projected residual z
instead (one product for A z). The direction then restarts from the residual. So f never rises.
It fires rarely (a few times in ~650 iterations on the settled bowl, where it happens to save
iterations) and never on the column or the mass-ratio pair, whose iterates are unchanged; its
only cost when it does not fire is keeping λ and the previous gradient (no product).

One iteration = one projected CG step = 2 products with A (q = A p and the recomputed residual),
plus 1 when the guard restarts the direction, plus the safeguard's; `SolveResult.products` also
counts the one product that builds the first residual. `info`: restarts (active-set changes),
guards, safeguards (steps replaced), safeguard_products, descent_restarts (safeguards that
switched to z), truncated (safeguards that ended on the line search).

`ppcg` imports this kernel with the Jacobi preconditioner P = diag(A); here P = I.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .method import Method, SolveSettings, run
from .params import Param
from .problem import ContactProblem, apply_matrix

CURVATURE_GUARD = 1e-12  # pᵀAp below this times pᵀ diag(A) p counts as no curvature

# Slots of the int64 `counts` array the kernel keeps between calls. PARITY: which row of the
# (2, m) gradient buffer holds A λ + b of the current λ (the other receives the next one).
PRODUCTS, RESTARTS, GUARDS, FRESH, SAFEGUARDS, SAFEGUARD_PRODUCTS, DESCENT_RESTARTS, TRUNCATED, \
    PARITY = range(9)
BACKTRACKS = 4  # halvings of the step the safeguard tries before the truncated line search


@njit(cache=True, nogil=True)
def _project(lam, g, pinv, r, z):
    """r <- proj(-g) (zero where λ_c = 0 and the contact wants to separate), z <- P^-1 r;
    returns rᵀz."""
    rz = 0.0
    for c in range(lam.shape[0]):
        rc = -g[c]
        if lam[c] <= 0.0 and rc < 0.0:
            rc = 0.0
        r[c] = rc
        z[c] = pinv[c] * rc
        rz += rc * z[c]
    return rz


@njit(cache=True, nogil=True)
def _gradient(body_a, body_b, normal, inv_mass, rhs, lam, dv, g):
    """g <- A λ + b (one product)."""
    apply_matrix(body_a, body_b, normal, inv_mass, lam, dv, g)
    for c in range(lam.shape[0]):
        g[c] += rhs[c]


@njit(cache=True, nogil=True)
def pcg_start(body_a, body_b, normal, inv_mass, rhs, pinv, lam, dv, grad, r, z, p, state,
              counts):
    """First gradient, residual and direction from λ (one product). state[0] = rᵀz."""
    counts[PARITY] = 0
    g = grad[0]
    _gradient(body_a, body_b, normal, inv_mass, rhs, lam, dv, g)
    state[0] = _project(lam, g, pinv, r, z)
    for c in range(lam.shape[0]):
        p[c] = z[c]
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
def _step_gradient(body_a, body_b, normal, inv_mass, rhs, lam, lam_old, g, dv, g_new):
    """g_new <- A λ + b (one product); returns f(λ) - f(λ_old) = ½ (λ - λ_old)ᵀ(g + g_new),
    exact for the quadratic f (g = A λ_old + b)."""
    apply_matrix(body_a, body_b, normal, inv_mass, lam, dv, g_new)
    df = 0.0
    for c in range(lam.shape[0]):
        gc = g_new[c] + rhs[c]
        g_new[c] = gc
        df += (lam[c] - lam_old[c]) * (g[c] + gc)
    return 0.5 * df


@njit(cache=True, nogil=True)
def _safeguard(body_a, body_b, normal, inv_mass, rhs, diag, pinv, lam, lam_old, g, g_new, dv,
               r, z, p, q, alpha, pq, pdp, counts):
    """Replace the projected step λ_old -> λ, which raised f, by one that lowers it: λ <-
    max(0, λ_old + t p) with t = α/2, α/4, ... (BACKTRACKS trials, each one product for its
    gradient); if none lowers f, the exact minimiser of f along p, or the first bound before it
    (a feasible segment, so f drops). Where p does not descend (gᵀp >= 0) it is first replaced
    by the preconditioned projected residual z (one product for its q), and the trials start
    at its full step. Leaves g_new = A λ + b."""
    m = lam.shape[0]
    gp = 0.0
    for c in range(m):
        gp += g[c] * p[c]
    t = 0.5 * alpha
    if not gp < 0.0:
        counts[DESCENT_RESTARTS] += 1
        rz = _project(lam_old, g, pinv, r, z)
        for c in range(m):
            p[c] = z[c]
        gp = -rz  # z_c = 0 wherever r_c was zeroed, so gᵀz = -rᵀz
        pq, pdp = _curvature(body_a, body_b, normal, inv_mass, diag, p, dv, q)
        counts[PRODUCTS] += 1
        counts[SAFEGUARD_PRODUCTS] += 1
        t = rz / pq if pq > CURVATURE_GUARD * pdp else 0.0
    if not gp < 0.0:
        # Zero projected residual: λ_old solves the LCP; stay there.
        for c in range(m):
            lam[c] = lam_old[c]
            g_new[c] = g[c]
        return
    for _ in range(BACKTRACKS):
        if not t > 0.0:
            break
        for c in range(m):
            new = lam_old[c] + t * p[c]
            lam[c] = new if new > 0.0 else 0.0
        df = _step_gradient(body_a, body_b, normal, inv_mass, rhs, lam, lam_old, g, dv, g_new)
        counts[PRODUCTS] += 1
        counts[SAFEGUARD_PRODUCTS] += 1
        if df < 0.0:
            return
        t *= 0.5
    counts[TRUNCATED] += 1
    t = -gp / pq if pq > CURVATURE_GUARD * pdp else np.inf
    block = -1
    for c in range(m):
        if p[c] < 0.0:
            step = lam_old[c] / -p[c]
            if step < t:
                t = step
                block = c
    if t == np.inf:
        t = 0.0  # f unbounded below along p: no finite step (not for a feasible LCP)
    for c in range(m):
        new = lam_old[c] + t * p[c]
        lam[c] = new if new > 0.0 else 0.0
    if block >= 0:
        lam[block] = 0.0  # exactly on the bound it reached
    _gradient(body_a, body_b, normal, inv_mass, rhs, lam, dv, g_new)
    counts[PRODUCTS] += 1
    counts[SAFEGUARD_PRODUCTS] += 1


@njit(cache=True, nogil=True)
def pcg_iterations(body_a, body_b, normal, inv_mass, rhs, diag, pinv, lam, lam_old, dv, grad,
                   r, z, p, q, state, counts, count, clip_only, safeguard):
    """`count` projected CG iterations in place on λ; r, z, p, the gradient buffer and
    state/counts carry over between calls so that count=1 repeated equals one call with the
    total."""
    m = lam.shape[0]
    for _ in range(count):
        rz = state[0]
        if rz == 0.0:
            continue  # projected residual exactly zero: λ solves the LCP, nothing to do
        cur = counts[PARITY]
        g = grad[cur]
        g_new = grad[1 - cur]
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
            lam_old[c] = old
            new = old + alpha * p[c]
            if new < 0.0:
                new = 0.0
            if clip_only:
                if old + alpha * p[c] < 0.0:
                    changed = True
            elif (new > 0.0) != (old > 0.0):
                changed = True
            lam[c] = new
        # The new gradient (second product), and with it, exactly and for free, the change of
        # f = ½λᵀAλ + bᵀλ.
        df = _step_gradient(body_a, body_b, normal, inv_mass, rhs, lam, lam_old, g, dv, g_new)
        counts[PRODUCTS] += 1
        if safeguard and df > 0.0:
            # The projection bent the step uphill (or p had stopped descending): a shorter
            # step that lowers f instead, then restart the direction.
            counts[SAFEGUARDS] += 1
            _safeguard(body_a, body_b, normal, inv_mass, rhs, diag, pinv, lam, lam_old, g, g_new,
                       dv, r, z, p, q, alpha, pq, pdp, counts)
            changed = True
        counts[PARITY] = 1 - cur
        rz_new = _project(lam, g_new, pinv, r, z)
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
    safeguard = bool(settings.get("safeguard", True))
    m = problem.m
    dv = np.empty_like(problem.v_pred)
    r, z, p, q, lam_old = (np.zeros(m) for _ in range(5))
    grad = np.zeros((2, m))
    state = np.zeros(1)
    counts = np.zeros(9, dtype=np.int64)
    args = (problem.body_a, problem.body_b, problem.normal, problem.inv_mass, problem.rhs)

    def sync() -> None:
        pcg_start(*args, pinv, lam, dv, grad, r, z, p, state, counts)

    def sweep(count: int) -> None:
        pcg_iterations(*args, problem.diag, pinv, lam, lam_old, dv, grad, r, z, p, q, state,
                       counts, count, clip_only, safeguard)

    info: dict = {}

    def products() -> int:
        info["restarts"] = int(counts[RESTARTS])
        info["guards"] = int(counts[GUARDS])
        info["safeguards"] = int(counts[SAFEGUARDS])
        info["safeguard_products"] = int(counts[SAFEGUARD_PRODUCTS])
        info["descent_restarts"] = int(counts[DESCENT_RESTARTS])
        info["truncated"] = int(counts[TRUNCATED])
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
SAFEGUARD = Param("safeguard", True, bool,
                  "replace a projected step that raises f = ½λᵀAλ + bᵀλ by a shorter one "
                  "(0: the sources' PCG, which can cycle on singular A)")

METHOD = Method("pcg", "Projected conjugate gradient", solve,
                "CG with projected iterate and residual, restarted when the active set changes "
                "(2 products with A per iteration)", (RESTART, SAFEGUARD))
