"""Projected conjugate gradient (Tardieu, Youbissi & Chamberland) on the QP
min f(λ) = ½ λᵀAλ + bᵀλ, λ >= 0: CG with the iterate projected, the residual recomputed
(a second product with A) and projected, and the direction restarted when the active set changes
(`restart=clip`: the projection clipped a component; `restart=active`: {λ > 0} changed at all).
On an SPD system that never touches a bound it is exactly (preconditioned) CG.

Beyond the sources, `safeguard` (default on) replaces a projected step that raises f, which the
projection can do and which makes the plain method cycle on singular A, by a shorter one
(backtracking on the projection arc, then a truncated line search); f never rises. Both tests
ignore rounding: a clip within the noise of λ restarts nothing, and a step whose change of f is
within the rounding of its computation is not taken (λ solves the LCP as well as its data
allow), so the method stays textbook CG on the resting column and at its floor after
convergence. The guards, the formula for f's change before the second product and the
measurements: docs/solvers.md.

One iteration = 2 products with A (q = A p and the new gradient; 1 for a step not taken);
`info` counts restarts, guards, safeguards and rounding_steps (steps not taken). `ppcg` uses this kernel with the Jacobi preconditioner P = diag(A).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..params import Param
from ..problem import ContactProblem, apply_matrix
from .driver import GRADIENT_NOISE, Hooks, Method, run
from ..options import SolveSettings

CURVATURE_GUARD = 1e-12  # pᵀAp below this times pᵀ diag(A) p counts as no curvature
# Rounding of a contact impulse, relative to the size of λ and of the step: b = J v* + gap/h is
# itself only good to tens of ε (the gap is a difference of positions of order 1 m, divided by
# h; a resting column's b of 0.196 m/s carries ±3e-15), and so are the CG vectors built from it.
CLIP_NOISE = 64.0 * np.finfo(np.float64).eps

# Slots of the int64 `counts` array the kernel keeps between calls.
PRODUCTS, RESTARTS, GUARDS, FRESH, SAFEGUARDS, SAFEGUARD_PRODUCTS, DESCENT_RESTARTS, \
    TRUNCATED, ROUNDING_STEPS = range(9)
BACKTRACKS = 4  # halvings of the step the safeguard tries before the truncated line search


@njit(cache=True, nogil=True)
def _project(lam, g, pinv, z):
    """z <- P^-1 r with r = proj(-g) (zero where λ_c = 0 and the contact wants to separate);
    returns rᵀz. r itself is never stored: g = A λ + b is."""
    rz = 0.0
    for c in range(lam.shape[0]):
        rc = -g[c]
        floor = 0.0 if lam[c] <= 0.0 else -np.inf
        if rc < floor:  # a select, not a branch (a NaN stays)
            rc = floor
        zc = pinv[c] * rc
        z[c] = zc
        rz += rc * zc
    return rz


@njit(cache=True, nogil=True)
def _gradient(A, system, lam, dv, g, z):
    """g <- A λ + b (one product) and z <- P^-1 proj(-g); returns rᵀz. dv (n, 3) is scratch."""
    rhs, _, pinv = system
    apply_matrix(A, lam, dv, g)
    for c in range(lam.shape[0]):
        g[c] += rhs[c]
    return _project(lam, g, pinv, z)


@njit(cache=True, nogil=True)
def pcg_start(A, system, iterates, dv, state, counts):
    """First gradient, residual and direction from λ (one product), in iterates (pcg_iterations);
    state[0] = rᵀz. dv (n, 3) is scratch."""
    lam, g, z, p, _ = iterates
    state[0] = _gradient(A, system, lam, dv, g, z)
    for c in range(lam.shape[0]):
        p[c] = z[c]
    counts[PRODUCTS] += 1
    counts[FRESH] = 1


@njit(cache=True, nogil=True)
def _curvature(A, diag, p, g, dv, q):
    """q <- A p; returns (pᵀAp, pᵀ diag(A) p, gᵀp): the curvature along p, its scale, and the
    slope of f along p."""
    apply_matrix(A, p, dv, q)
    pq = 0.0
    pdp = 0.0
    gp = 0.0
    for c in range(p.shape[0]):
        pc = p[c]
        pq += pc * q[c]
        pdp += pc * pc * diag[c]
        gp += g[c] * pc
    return pq, pdp, gp


@njit(cache=True, nogil=True)
def _clipped_terms(A, g, q, alpha, clipped, delta, count, u):
    """(δᵀ(g + α q), δᵀAδ) for δ nonzero only on the `count` contacts listed in clipped (values
    in delta), touching only them and their marbles: δᵀAδ = Σ_i w_i ‖(Jᵀδ)_i‖². u (n, 3) is zero
    on entry and on return."""
    body_a, body_b, normal, inv_mass = A
    linear = 0.0
    for k in range(count):
        c = clipped[k]
        d = delta[k]
        linear += d * (g[c] + alpha * q[c])
        a = body_a[c]
        b = body_b[c]
        for j in range(3):
            u[b, j] += d * normal[c, j]
            if a >= 0:
                u[a, j] -= d * normal[c, j]
    quadratic = 0.0
    for k in range(count):
        c = clipped[k]
        for i in (body_a[c], body_b[c]):
            if i >= 0:
                quadratic += inv_mass[i] * (u[i, 0] * u[i, 0] + u[i, 1] * u[i, 1]
                                            + u[i, 2] * u[i, 2])
                u[i, 0] = 0.0
                u[i, 1] = 0.0
                u[i, 2] = 0.0
    return linear, quadratic


@njit(cache=True, nogil=True)
def _undo_step(lam, p, alpha, clipped, clipped_old, count, out):
    """out <- λ_old, the iterate before the projected step λ = max(0, λ_old + α p): unclipped
    contacts moved by α p_c exactly up to rounding, a contact at 0 returns to exactly 0, and the
    `count` clipped ones are restored from clipped_old. out may be λ itself."""
    for c in range(lam.shape[0]):
        back = lam[c] - alpha * p[c]
        out[c] = back if back > 0.0 else 0.0
    for k in range(count):
        out[clipped[k]] = clipped_old[k]


@njit(cache=True, nogil=True)
def _clip_is_noise(lam, p, alpha, delta, count):
    """True when every clipped overshoot δ is within the noise of the step's vectors,
    CLIP_NOISE max(‖λ‖∞, α ‖p‖∞): a component that should stay at 0 lands on -1.5e-14 N s (ppcg
    on the resting column, ‖λ‖∞ ≈ 10 N s), and clipping that changes no active set (textbook
    CG would carry it along). Restarting there cost ppcg 4 extra iterations."""
    size = 0.0
    for c in range(lam.shape[0]):
        size = max(size, abs(lam[c]), abs(alpha * p[c]))
    worst = 0.0
    for k in range(count):
        worst = max(worst, delta[k])
    return worst <= CLIP_NOISE * size


@njit(cache=True, nogil=True)
def _trial(A, system, iterates, scratch, t):
    """λ <- max(0, λ_old + t p), g_new <- A λ + b and z (one product); returns
    (f(λ) - f(λ_old), rᵀz), with f's change exact for the quadratic: ½ (λ - λ_old)ᵀ(g + g_new).
    g is the gradient at λ_old; λ_old and g_new are scratch's (pcg_iterations)."""
    lam, g, z, p, _ = iterates
    dv, lam_old, g_new, _, _, _, _ = scratch
    m = lam.shape[0]
    for c in range(m):
        new = lam_old[c] + t * p[c]
        lam[c] = new if new > 0.0 else 0.0
    rz = _gradient(A, system, lam, dv, g_new, z)
    df = 0.0
    for c in range(m):
        df += (lam[c] - lam_old[c]) * (g[c] + g_new[c])
    return 0.5 * df, rz


@njit(cache=True, nogil=True)
def _safeguard(A, system, iterates, scratch, alpha, curvature, counts):
    """From λ_old (scratch's; gradient g, q = A p, curvature = (pᵀAp, pᵀ diag(A) p, gᵀp) as
    _curvature returns them), where the projected step of length α raised f, a step that lowers
    it: λ <- max(0, λ_old + t p) with t = α/2, α/4, ... (BACKTRACKS trials, one product each for
    the gradient); if none lowers f, the exact minimiser of f along p or the first bound before
    it (a feasible segment, so f drops). Where p does not descend (gᵀp >= 0) it is first
    replaced by the preconditioned projected residual z (one product for its q), and the trials
    start at its full step. Leaves g = A λ + b and z; returns rᵀz."""
    _, diag, pinv = system
    lam, g, z, p, q = iterates
    dv, lam_old, g_new, _, _, _, _ = scratch
    pq, pdp, gp = curvature
    m = lam.shape[0]
    t = 0.5 * alpha
    if not gp < 0.0:
        counts[DESCENT_RESTARTS] += 1
        rz = _project(lam_old, g, pinv, z)
        for c in range(m):
            p[c] = z[c]
        gp = -rz  # z_c = 0 wherever r_c was zeroed, so gᵀz = -rᵀz
        pq, pdp, _ = _curvature(A, diag, p, g, dv, q)
        counts[PRODUCTS] += 1
        counts[SAFEGUARD_PRODUCTS] += 1
        t = rz / pq if pq > CURVATURE_GUARD * pdp else 0.0
        if not gp < 0.0:
            for c in range(m):  # zero projected residual: λ_old solves the LCP; stay
                lam[c] = lam_old[c]
            return rz
    for _ in range(BACKTRACKS):
        if not t > 0.0:
            break
        df, rz = _trial(A, system, iterates, scratch, t)
        counts[PRODUCTS] += 1
        counts[SAFEGUARD_PRODUCTS] += 1
        if df < 0.0:
            g[:] = g_new
            return rz
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
    rz = _gradient(A, system, lam, dv, g, z)
    counts[PRODUCTS] += 1
    counts[SAFEGUARD_PRODUCTS] += 1
    return rz


# long: the method's iteration as one loop (the step, the change of f and its guards, the
# restart rule), sharing its vectors and counters.
@njit(cache=True, nogil=True)
def pcg_iterations(A, system, iterates, scratch, state, counts, count, options):
    """`count` projected CG iterations in place on λ. A: the operator's factors
    (solver/products.py); system = (rhs, diag, pinv), (m,) each: b (m/s), diag(A) (1/kg) and the
    preconditioner P^-1; iterates = (λ (N s), g = A λ + b (m/s), z = P^-1 proj(-g), the
    direction p, q = A p), (m,) each; g, z, p and state (1,) = (rᵀz,) and counts (9,) by the
    module's slots carry over between calls, so that count=1 repeated equals one call with the
    total. scratch = (dv (n, 3), the products'; λ_old and g_new (m,), the safeguard's; clipped
    (m,) int64, clipped_old, delta (m,) and u (n, 3), the clipped contacts'), touched only by
    what owns them. options = (clip_only, safeguard): the restart rule and whether a step that
    raises f is replaced (module docstring)."""
    rhs, diag, _ = system
    lam, g, z, p, q = iterates
    dv, lam_old, _, clipped, clipped_old, delta, u = scratch
    clip_only, safeguard = options
    m = lam.shape[0]
    for _ in range(count):
        rz = state[0]
        if rz == 0.0:
            continue  # projected residual exactly zero: λ solves the LCP, nothing to do
        pq, pdp, gp = _curvature(A, diag, p, g, dv, q)
        counts[PRODUCTS] += 1
        if not pq > CURVATURE_GUARD * pdp and counts[FRESH] == 0:
            # No curvature along a conjugate direction: restart from the residual.
            for c in range(m):
                p[c] = z[c]
            counts[FRESH] = 1
            pq, pdp, gp = _curvature(A, diag, p, g, dv, q)
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
        # The projected step; the clipped contacts are listed for the safeguard. With it, also
        # how far rounding can move the computed change of f over this step (below).
        n_clipped = np.int64(0)  # not a literal 0: the helpers it goes to compile once
        flips = 0
        noise = 0.0
        for c in range(m):
            old = lam[c]
            move = alpha * p[c]
            new = old + move
            if safeguard:
                noise += abs(move) * (abs(g[c] - rhs[c]) + abs(rhs[c]) + diag[c] * old)
            if new < 0.0:
                clipped[n_clipped] = c
                clipped_old[n_clipped] = old
                delta[n_clipped] = -new
                n_clipped += 1
                new = 0.0
            flips += 1 if (new > 0.0) != (old > 0.0) else 0
            lam[c] = new
        if clip_only:
            changed = n_clipped > 0 and not _clip_is_noise(lam, p, alpha, delta, n_clipped)
        else:
            changed = flips > 0
        # The change of f = ½λᵀAλ + bᵀλ without another product: with Δ = α p + δ, where
        # δ_c = -(λ_c + α p_c) > 0 undoes the overshoot of a clipped contact,
        # f(λ + Δ) - f(λ) = α gᵀp + ½ α² pᵀAp + δᵀ(g + α A p) + ½ δᵀAδ.
        df = alpha * gp + 0.5 * alpha * alpha * pq
        if safeguard and n_clipped:
            linear, quadratic = _clipped_terms(A, g, q, alpha, clipped, delta, n_clipped, u)
            df += linear + 0.5 * quadratic
            for k in range(n_clipped):  # a clipped contact moved by -λ_old, not by α p_c
                c = clipped[k]
                size = abs(g[c] - rhs[c]) + abs(rhs[c]) + diag[c] * clipped_old[k]
                noise += (clipped_old[k] - abs(alpha * p[c])) * size
        # |df| below this is rounding (driver.GRADIENT_NOISE). It scales with the step, not with
        # |f|: f is flat near its minimum, where real uphill steps change it by far less than
        # ε |f| (accepting changes up to m ε |f| let the settled bowl's iterates drift back up to
        # 1e-6 m/s after convergence).
        noise *= GRADIENT_NOISE
        taken = True
        if safeguard and abs(df) <= noise:
            # Rounding decides the sign of df: λ solves the LCP as well as its data allow (or p
            # no longer carries a real descent). The step is not taken and the direction
            # restarts from the residual; where that step is rounding too, λ stays.
            counts[ROUNDING_STEPS] += 1
            _undo_step(lam, p, alpha, clipped, clipped_old, n_clipped, lam)
            rz_new = rz
            taken = False
        elif safeguard and df > 0.0:
            # The projection bent the step uphill (or p had stopped descending): back to λ_old
            # and a shorter step that lowers f, then restart the direction.
            counts[SAFEGUARDS] += 1
            _undo_step(lam, p, alpha, clipped, clipped_old, n_clipped, lam_old)
            rz_new = _safeguard(A, system, iterates, scratch, alpha, (pq, pdp, gp), counts)
            changed = True
        else:
            # The new gradient (second product) and preconditioned projected residual.
            rz_new = _gradient(A, system, lam, dv, g, z)
            counts[PRODUCTS] += 1
        if changed or not taken or not rz > 0.0:
            counts[RESTARTS] += 1 if taken else 0
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
    clip_only = settings["restart"] == "clip"
    safeguard = settings["safeguard"]
    m = problem.m
    dv = np.empty_like(problem.v_pred)
    g, z, p, q = (np.zeros(m) for _ in range(4))
    # Scratch of the clipped contacts and of the safeguard (np.empty: not touched otherwise).
    lam_old, g_new, clipped_old, delta = (np.empty(m) for _ in range(4))
    clipped = np.empty(m, dtype=np.int64)
    u = np.zeros_like(problem.v_pred)
    state = np.zeros(1)
    counts = np.zeros(9, dtype=np.int64)
    A = problem.A
    system = (problem.rhs, problem.diag, pinv)
    iterates = (lam, g, z, p, q)
    scratch = (dv, lam_old, g_new, clipped, clipped_old, delta, u)
    options = (clip_only, safeguard)

    def sync() -> None:
        pcg_start(A, system, iterates, dv, state, counts)

    def sweep(count: int) -> None:
        pcg_iterations(A, system, iterates, scratch, state, counts, count, options)

    info: dict = {}

    def products() -> int:
        info["restarts"] = int(counts[RESTARTS])
        info["guards"] = int(counts[GUARDS])
        info["safeguards"] = int(counts[SAFEGUARDS])
        info["safeguard_products"] = int(counts[SAFEGUARD_PRODUCTS])
        info["descent_restarts"] = int(counts[DESCENT_RESTARTS])
        info["truncated"] = int(counts[TRUNCATED])
        info["rounding_steps"] = int(counts[ROUNDING_STEPS])
        return int(counts[PRODUCTS])

    if m:
        sync()
    result = run(problem, lam, settings, sweep, sync, Hooks(products=products, info=info))
    return result


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    return solve_preconditioned(problem, lam0, settings, np.ones(problem.m))


RESTART = Param("restart", "clip", str,
                "restart the direction only when the projection clips a component (clip) or "
                "whenever {λ>0} changes (active, as the method is usually stated)",
                choices=("active", "clip"))
SAFEGUARD = Param("safeguard", True, bool,
                  "replace a projected step that raises f = ½λᵀAλ + bᵀλ by a shorter one "
                  "(0: the sources' PCG, which can cycle on singular A)")

METHOD = Method("pcg", "Projected conjugate gradient", solve,
                "CG with projected iterate and residual, restarted when the active set changes "
                "(2 products with A per iteration)", (RESTART, SAFEGUARD))
