"""Projected Gauss-Seidel with subspace minimization (Morales, Nocedal & Smelyanskiy), SOLVERS.md §5.

PGS finds most of the final active set in a few sweeps and then converges slowly; so each
iteration does

    k_gs PGS sweeps (default 5, as the paper)
    S = {c : λ_c > 0}                                   predicted positive impulses
    repeat at most k_sm times (default 3):
        move λ_S towards the solution of (A_SS + ε I) λ_S = -b_S   (λ_c = 0 outside S)
        as far as λ_S >= 0 allows (ratio test)
        if no component reached zero: break
        drop from S the components that reached zero

PGS clamps to exactly 0, so S needs no threshold. The reduced matrix is SPD on a well predicted
active set, but redundant contacts in a pile make it singular, hence ε = eps × mean(A_cc) (1/kg).
Reduced systems with |S| <= dense_max are formed densely (O(Σ_marbles contacts²)) and factorised
by Cholesky (LAPACK through numpy), and the step goes from λ_S towards the exact solution; larger
ones are solved matrix-free by Jacobi-preconditioned CG on the operator restricted to S, warm
started from λ_S, whose steps are followed until one would cross λ_c = 0 (each CG step is one
product with A), at most cg_max steps per solve, and a solve ends once ‖r_S‖∞ is below abs_tol
or cg_tol times its first value.

Why the ratio test rather than the projection max(0, λ_S) of §5: an inexact CG iterate, or a
regularised solve on a singular A_SS (b_S outside its range, solution growing like 1/ε), has a
few negative components; zeroing them leaves their neighbours with violations of 0.01-1 m/s, so
the projected point was worse than the PGS iterate in nearly every phase on the settled bowl (8
of 291 phases kept with k_sm = 1) and the CG steps were wasted. Stopping on the boundary keeps
every step a descent step of f(λ) = ½ λᵀAλ + bᵀλ, whose minimiser over λ >= 0 is the LCP solution
and which PGS sweeps also decrease; the safeguard keeps the subspace step only when f does not
rise (it guards against rounding and non-finite solves), computed from the step, one product.

One iteration = k_gs sweeps + the subspace phase. Products counted: one per sweep, one per CG
step (the first residual comes from the velocities), one per dense reduced solve (forming A_SS
costs about one product; the O(|S|³) factorisation is not a product with A and shows only in the
timings), and one for the safeguard (it also gives the new velocities). `info`: sweeps,
reduced_solves, cholesky, cg_steps, last_subspace, accepted and rejected (subspace steps kept and
thrown away), dropped (components the ratio test removed from S).

Defaults by measurement on the settled bowl (README, Solver laboratory): k_sm = 3 and
cg_max = 200; k_gs = 5 is the paper's; LAPACK's dense Cholesky of a 1000×1000 A_SS costs as much
as ~10⁴ products on the reference machine, hence the low dense_max.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .method import Method, SolveSettings, run
from .params import Param
from .pgs import projected_sweeps
from .problem import ContactProblem, apply_matrix, impulse_velocity


@njit(cache=True, nogil=True)
def contact_graph(body_a, body_b, n):
    """Contacts around each marble, CSR: marble i's contacts are items[start[i]:start[i+1]],
    with sign[k] = -1 where the marble is side a, +1 where it is side b (the row of J)."""
    m = body_a.shape[0]
    count = np.zeros(n + 1, dtype=np.int64)
    for c in range(m):
        if body_a[c] >= 0:
            count[body_a[c] + 1] += 1
        count[body_b[c] + 1] += 1
    for i in range(n):
        count[i + 1] += count[i]
    start = count.copy()
    fill = count[:n].copy()
    items = np.empty(start[n], dtype=np.int64)
    sign = np.empty(start[n])
    for c in range(m):
        a = body_a[c]
        if a >= 0:
            items[fill[a]] = c
            sign[fill[a]] = -1.0
            fill[a] += 1
        b = body_b[c]
        items[fill[b]] = c
        sign[fill[b]] = 1.0
        fill[b] += 1
    return start, items, sign


@njit(cache=True, nogil=True)
def reduced_dense(normal, inv_mass, start, items, sign, pos, eps, out):
    """out (k, k) <- A_SS + eps I, where pos[c] is contact c's index in S or -1."""
    out[:, :] = 0.0
    for i in range(start.shape[0] - 1):
        w = inv_mass[i]
        for u in range(start[i], start[i + 1]):
            c = items[u]
            pc = pos[c]
            if pc < 0:
                continue
            for t in range(start[i], start[i + 1]):
                d = items[t]
                pd = pos[d]
                if pd < 0:
                    continue
                nn = normal[c, 0] * normal[d, 0] + normal[c, 1] * normal[d, 1] \
                    + normal[c, 2] * normal[d, 2]
                out[pc, pd] += w * sign[u] * sign[t] * nn
    for k in range(out.shape[0]):
        out[k, k] += eps


@njit(cache=True, nogil=True)
def cholesky_solve(L, rhs, x):
    """x <- (L Lᵀ)^-1 rhs by forward and back substitution, O(k²)."""
    k = rhs.shape[0]
    for i in range(k):
        s = rhs[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    for i in range(k - 1, -1, -1):
        s = x[i]
        for j in range(i + 1, k):
            s -= L[j, i] * x[j]
        x[i] = s / L[i, i]


@njit(cache=True, nogil=True)
def truncated_cg_phase(body_a, body_b, normal, inv_mass, bias, precond, eps, v, lam, mask, x,
                       r, z, p, q, dv, k_sm, max_steps, tol_abs, tol_rel):
    """The subspace phase on the matrix-free path. S = {c : λ_c > 0} (mask, (m,) bool, out: the
    final S); x (m,) <- the candidate impulses, N s, zero outside S. Jacobi-preconditioned CG on
    (A_SS + ε I) x_S = -b_S from x = λ, truncated at the first step that would make a component
    of x negative (ratio test): the step stops on the boundary, the components it zeroes leave S
    and CG restarts on the smaller S, at most k_sm solves in all. A solve ends early when
    ‖r_S‖∞ <= max(tol_abs, tol_rel ‖r_S⁰‖∞) (m/s). v (n, 3) = v* + M^-1 J^T λ gives the first
    residual without a product; precond (m,) = 1 / (A_cc + ε), kg. r, z, p, q (m,) and dv (n, 3)
    are scratch.
    Returns (products with A, solves, components dropped)."""
    m = lam.shape[0]
    worst0 = 0.0
    size = 0
    for c in range(m):
        if lam[c] > 0.0:
            a = body_a[c]
            b = body_b[c]
            e = normal[c, 0] * v[b, 0] + normal[c, 1] * v[b, 1] + normal[c, 2] * v[b, 2] \
                + bias[c]
            if a >= 0:
                e -= normal[c, 0] * v[a, 0] + normal[c, 1] * v[a, 1] + normal[c, 2] * v[a, 2]
            mask[c] = True
            x[c] = lam[c]
            r[c] = -e - eps * x[c]
            worst0 = max(worst0, abs(r[c]))
            size += 1
        else:
            mask[c] = False
            x[c] = 0.0
            r[c] = 0.0
    products = 0
    solves = 0
    dropped = 0
    stop = max(tol_abs, tol_rel * worst0)
    for _ in range(k_sm):
        if size == 0:
            break
        solves += 1
        rz = 0.0
        for c in range(m):
            z[c] = r[c] * precond[c] if mask[c] else 0.0
            p[c] = z[c]
            rz += r[c] * z[c]
        blocked = False
        worst = 0.0
        for c in range(m):
            worst = max(worst, abs(r[c]))
        for _ in range(max_steps):
            if not worst > stop:
                break
            apply_matrix(body_a, body_b, normal, inv_mass, p, dv, q)
            products += 1
            # One pass for pᵀq and the ratio test: the longest step along p that keeps x_S >= 0.
            # Projecting a longer (inexact or null-space) step instead zeroes components the
            # reduced solution relied on and leaves large violations next to them.
            pq = 0.0
            room = np.inf
            hit = -1
            for c in range(m):
                if mask[c]:
                    q[c] += eps * p[c]
                    pq += p[c] * q[c]
                    if p[c] < 0.0 and -x[c] > room * p[c]:
                        room = -x[c] / p[c]
                        hit = c
                else:
                    q[c] = 0.0
            if not pq > 0.0:
                break
            alpha = rz / pq
            if room < alpha:
                for c in range(m):
                    x[c] += room * p[c]
                    r[c] -= room * q[c]
                # The blocking component (and any other that reached zero by rounding) leaves
                # S; on the boundary x is unchanged, so r stays the residual of the smaller system.
                x[hit] = 0.0
                for c in range(m):
                    if mask[c] and x[c] <= 0.0:
                        x[c] = 0.0
                        mask[c] = False
                        r[c] = 0.0
                        size -= 1
                        dropped += 1
                blocked = True
                break
            rz_new = 0.0
            worst = 0.0
            for c in range(m):
                x[c] += alpha * p[c]
                r[c] -= alpha * q[c]
                z[c] = r[c] * precond[c] if mask[c] else 0.0
                rz_new += r[c] * z[c]
                worst = max(worst, abs(r[c]))
            beta = rz_new / rz
            rz = rz_new
            for c in range(m):
                p[c] = z[c] + beta * p[c]
        if not blocked:
            break
    return products, solves, dropped


@njit(cache=True, nogil=True)
def objective_change(body_a, body_b, normal, inv_mass, bias, v, lam, x, d, dv):
    """Δf = f(x) - f(λ), N s·m/s (J), for f(λ) = ½ λᵀAλ + bᵀλ, the objective whose minimiser
    over λ >= 0 is the LCP solution. Computed from the difference d = x - λ (m,) so that it does
    not cancel: Δf = dᵀ(Aλ + b) + ½ dᵀAd, with Aλ + b read from v (n, 3) = v* + M^-1 J^T λ and
    dᵀAd = Σ_i |J^T d|_i² w_i from dv (n, 3) <- M^-1 J^T d (one product; v + dv are then the
    velocities of x). Returns inf if not finite."""
    m = lam.shape[0]
    linear = 0.0
    for c in range(m):
        d[c] = x[c] - lam[c]
        a = body_a[c]
        b = body_b[c]
        e = normal[c, 0] * v[b, 0] + normal[c, 1] * v[b, 1] + normal[c, 2] * v[b, 2] + bias[c]
        if a >= 0:
            e -= normal[c, 0] * v[a, 0] + normal[c, 1] * v[a, 1] + normal[c, 2] * v[a, 2]
        linear += d[c] * e
    impulse_velocity(body_a, body_b, normal, inv_mass, d, dv)
    quadratic = 0.0
    for i in range(dv.shape[0]):
        w = inv_mass[i]
        if w > 0.0:
            quadratic += (dv[i, 0] ** 2 + dv[i, 1] ** 2 + dv[i, 2] ** 2) / w
    change = linear + 0.5 * quadratic
    return change if np.isfinite(change) else np.inf


PARAMS = (
    Param("k_gs", 5, int, "PGS sweeps per iteration (the paper: 5)", lo=1),
    Param("k_sm", 3, int, "reduced solves per subspace phase, at most", lo=1),
    Param("eps", 1e-14, float, "regularisation ε of A_SS, relative to mean(A_cc)", lo=0.0),
    Param("dense_max", 300, int, "largest |S| solved by dense Cholesky; above: matrix-free CG",
          lo=0),
    Param("cg_tol", 1e-12, float, "relative residual of the matrix-free reduced CG", lo=0.0,
          lo_open=True),
    Param("cg_max", 200, int, "CG steps per reduced solve, at most", lo=1),
)


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    m = problem.m
    k_gs = int(settings.get("k_gs", 5))
    k_sm = int(settings.get("k_sm", 3))
    dense_max = int(settings.get("dense_max", 300))
    cg_tol = float(settings.get("cg_tol", 1e-12))
    cg_max = int(settings.get("cg_max", 200))
    # A reduced residual below the requested tolerance cannot help the stopping test.
    abs_tol = float(settings.get("abs_tol", 0.0))
    eps = float(settings.get("eps", 1e-14)) * (float(np.mean(problem.diag)) if m else 1.0)
    v = problem.velocity(lam)
    bias = problem.bias
    counts = {"sweeps": 0, "reduced_solves": 0, "cholesky": 0, "cg_steps": 0, "products": 0,
              "last_subspace": 0, "accepted": 0, "rejected": 0, "dropped": 0}
    graph = None
    mask = np.zeros(m, dtype=np.bool_)
    x = np.empty(m)
    d = np.empty(m)
    dv = np.empty_like(problem.v_pred)
    scratch = {}

    def dense_phase() -> None:
        """The subspace phase by Cholesky: x <- λ moved towards the solution of
        (A_SS + ε I) y_S = -b_S, as far as x_S >= 0 allows (ratio test); the components the step
        zeroes leave S and the system is solved again, at most k_sm times."""
        nonlocal graph
        if graph is None:
            graph = contact_graph(problem.body_a, problem.body_b, problem.n)
        x[:] = lam
        S = np.flatnonzero(lam > 0.0)
        for _ in range(k_sm):
            if S.size == 0:
                return
            counts["reduced_solves"] += 1
            pos = np.full(m, -1, dtype=np.int64)
            pos[S] = np.arange(S.size)
            K = np.empty((S.size, S.size))
            reduced_dense(problem.normal, problem.inv_mass, *graph, pos, eps, K)
            counts["products"] += 1
            if not np.all(np.isfinite(K)):
                return
            try:
                L = np.linalg.cholesky(K)
            except np.linalg.LinAlgError:
                return  # not positive definite in floating point: keep what we have
            counts["cholesky"] += 1
            y = np.empty(S.size)
            cholesky_solve(L, np.ascontiguousarray(-problem.rhs[S]), y)
            if not np.all(np.isfinite(y)):
                return
            step = y - x[S]
            down = step < 0.0
            ratios = -x[S][down] / step[down]
            alpha = min(1.0, float(ratios.min())) if ratios.size else 1.0
            x[S] += alpha * step
            if alpha >= 1.0:
                return
            x[S[down][ratios <= alpha]] = 0.0
            zero = x[S] <= 0.0
            x[S[zero]] = 0.0
            counts["dropped"] += int(zero.sum())
            S = S[~zero]

    def sweep(count: int) -> None:
        for _ in range(count):
            projected_sweeps(problem.body_a, problem.body_b, problem.normal, bias,
                             problem.inv_mass, problem.diag, v, lam, 1.0, k_gs)
            counts["sweeps"] += k_gs
            counts["products"] += k_gs
            size = int(np.count_nonzero(lam > 0.0))
            counts["last_subspace"] = size
            if size == 0:
                continue
            if size <= dense_max:
                dense_phase()
            else:
                if not scratch:
                    scratch.update({k: np.empty(m) for k in ("r", "z", "p", "q")})
                    scratch["precond"] = 1.0 / (problem.diag + eps)
                products, solves, dropped = truncated_cg_phase(
                    problem.body_a, problem.body_b, problem.normal, problem.inv_mass, bias,
                    scratch["precond"], eps, v, lam, mask, x, scratch["r"], scratch["z"],
                    scratch["p"], scratch["q"], dv, k_sm, cg_max, abs_tol, cg_tol)
                counts["cg_steps"] += products
                counts["products"] += products
                counts["reduced_solves"] += solves
                counts["dropped"] += dropped
            # Safeguard on f = ½ λᵀAλ + bᵀλ, which PGS sweeps never increase: the truncated
            # step decreases it in exact arithmetic, so a rise means rounding or a non-finite
            # solve, and the PGS iterate is kept.
            change = objective_change(problem.body_a, problem.body_b, problem.normal,
                                      problem.inv_mass, bias, v, lam, x, d, dv)
            counts["products"] += 1
            if change <= 0.0 and np.all(np.isfinite(x)):
                counts["accepted"] += 1
                lam[:] = x
                v[:] += dv
            else:
                counts["rejected"] += 1

    def sync() -> None:
        v[:] = problem.velocity(lam)

    info: dict = {}

    def products() -> int:
        info.update({k: val for k, val in counts.items() if k != "products"})
        return counts["products"]

    return run(problem, lam, settings, sweep, sync, info=info, products=products)


METHOD = Method("pgs-sm", "PGS + subspace minimization", solve,
                "k_gs PGS sweeps, then reduced SPD solves on the predicted active set (dense "
                "Cholesky when small, matrix-free CG when large)", PARAMS)
