"""Projected Gauss-Seidel with subspace minimization (Morales, Nocedal & Smelyanskiy), SOLVERS.md §5.

PGS finds most of the final active set in a few sweeps and then converges slowly; so each
iteration does

    k_gs PGS sweeps (default 5, as the paper)
    S = {c : λ_c > 0}                                   predicted positive impulses
    repeat at most k_sm times:
        solve (A_SS + ε I) λ_S = -b_S   (λ_c = 0 outside S)
        if all λ_S > 0: break
        λ_S <- max(0, λ_S); drop from S the components set to zero

The reduced matrix is SPD on a well predicted active set, but redundant contacts in a pile make
it singular, hence ε = eps × mean(A_cc) (1/kg). Reduced systems with |S| <= dense_max are formed
densely (O(Σ_marbles contacts²)) and factorised by Cholesky (LAPACK through numpy); larger ones
are solved matrix-free by Jacobi-preconditioned CG on the operator restricted to S (each CG step
is one product with A), to a relative residual cg_tol or cg_max steps. A reduced solution that is
not finite (a poisoned problem) is discarded and the PGS iterate kept.

One iteration = k_gs sweeps + the subspace phase. Products counted: one per sweep, one per CG
step, one to rebuild the velocities after the subspace step, and one per dense reduced solve
(forming A_SS costs about one product; the O(|S|³) factorisation is not a product with A and
shows only in the timings), and two natural-map residuals per subspace phase for the safeguard:
the subspace step is kept only when it lowers the natural-map residual, because a wrongly
predicted S in a pile gives a singular A_SS with b_S outside its range, whose regularised solution
grows like 1/ε. `info`: sweeps, reduced_solves, cholesky, cg_steps, last_subspace, accepted
(subspace steps kept).

Defaults by measurement on the settled bowl (README, Solver laboratory): k_sm = 1 and cg_max = 50
were fastest at every k_gs tried; k_gs = 5 is the paper's, k_gs = 20 is about 3× faster there;
LAPACK's dense Cholesky of a 1000×1000 A_SS costs as much as ~10⁴ products on the reference
machine, hence the low dense_max.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .method import Method, SolveSettings, run
from .params import Param
from .pgs import projected_sweeps
from .problem import ContactProblem, apply_matrix


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
def reduced_cg(body_a, body_b, normal, inv_mass, diag, rhs, mask, eps, x, dv, r, z, p, q,
               tol, max_steps):
    """Jacobi-preconditioned CG on (A_SS + eps I) x_S = -b_S, matrix-free: full-length vectors
    that are zero where mask is 0. x (m,) in: initial guess (zero outside S), out: solution.
    Returns the number of steps (= products with A, plus the one for the first residual)."""
    m = x.shape[0]
    apply_matrix(body_a, body_b, normal, inv_mass, x, dv, q)
    products = 1
    rz = 0.0
    r0 = 0.0
    for c in range(m):
        if mask[c]:
            r[c] = -rhs[c] - q[c] - eps * x[c]
            z[c] = r[c] / (diag[c] + eps)
        else:
            r[c] = 0.0
            z[c] = 0.0
        p[c] = z[c]
        rz += r[c] * z[c]
        r0 = max(r0, abs(r[c]))
    for _ in range(max_steps):
        worst = 0.0
        for c in range(m):
            worst = max(worst, abs(r[c]))
        if not worst > tol * r0:
            break
        apply_matrix(body_a, body_b, normal, inv_mass, p, dv, q)
        products += 1
        pq = 0.0
        for c in range(m):
            if mask[c]:
                q[c] += eps * p[c]
            else:
                q[c] = 0.0
            pq += p[c] * q[c]
        if not pq > 0.0:
            break
        alpha = rz / pq
        rz_new = 0.0
        for c in range(m):
            x[c] += alpha * p[c]
            r[c] -= alpha * q[c]
            z[c] = r[c] / (diag[c] + eps) if mask[c] else 0.0
            rz_new += r[c] * z[c]
        beta = rz_new / rz
        rz = rz_new
        for c in range(m):
            p[c] = z[c] + beta * p[c]
    return products


PARAMS = (
    Param("k_gs", 5, int, "PGS sweeps per iteration (the paper: 5)", lo=1),
    Param("k_sm", 1, int, "reduced solves per subspace phase, at most", lo=1),
    Param("eps", 1e-14, float, "regularisation ε of A_SS, relative to mean(A_cc)", lo=0.0),
    Param("dense_max", 300, int, "largest |S| solved by dense Cholesky; above: matrix-free CG",
          lo=0),
    Param("cg_tol", 1e-12, float, "relative residual of the matrix-free reduced CG", lo=0.0,
          lo_open=True),
    Param("cg_max", 50, int, "CG steps per reduced solve, at most", lo=1),
)


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    m = problem.m
    k_gs = int(settings.get("k_gs", 5))
    k_sm = int(settings.get("k_sm", 1))
    dense_max = int(settings.get("dense_max", 300))
    cg_tol = float(settings.get("cg_tol", 1e-12))
    cg_max = int(settings.get("cg_max", 50))
    eps = float(settings.get("eps", 1e-14)) * (float(np.mean(problem.diag)) if m else 1.0)
    v = problem.velocity(lam)
    bias = problem.bias
    counts = {"sweeps": 0, "reduced_solves": 0, "cholesky": 0, "cg_steps": 0, "products": 0,
              "last_subspace": 0, "accepted": 0}
    graph = None
    scratch = {}

    def reduced_solve(S: np.ndarray) -> np.ndarray | None:
        """λ_S of (A_SS + ε I) λ_S = -b_S, or None if it is not finite."""
        nonlocal graph
        counts["reduced_solves"] += 1
        if S.size <= dense_max:
            if graph is None:
                graph = contact_graph(problem.body_a, problem.body_b, problem.n)
            pos = np.full(m, -1, dtype=np.int64)
            pos[S] = np.arange(S.size)
            K = np.empty((S.size, S.size))
            reduced_dense(problem.normal, problem.inv_mass, *graph, pos, eps, K)
            counts["products"] += 1
            if not np.all(np.isfinite(K)):
                return None
            try:
                L = np.linalg.cholesky(K)
            except np.linalg.LinAlgError:
                return None  # not positive definite in floating point: keep the PGS iterate
            counts["cholesky"] += 1
            x = np.empty(S.size)
            cholesky_solve(L, np.ascontiguousarray(-problem.rhs[S]), x)
        else:
            if not scratch:
                scratch.update(dv=np.empty_like(problem.v_pred),
                               **{k: np.empty(m) for k in ("r", "z", "p", "q")})
            mask = np.zeros(m, dtype=np.bool_)
            mask[S] = True
            full = np.where(mask, lam, 0.0)  # the PGS iterate is a good first guess
            steps = reduced_cg(problem.body_a, problem.body_b, problem.normal, problem.inv_mass,
                               problem.diag, problem.rhs, mask, eps, full, scratch["dv"],
                               scratch["r"], scratch["z"], scratch["p"], scratch["q"], cg_tol,
                               cg_max)
            counts["cg_steps"] += steps
            counts["products"] += steps
            x = full[S]
        return x if np.all(np.isfinite(x)) else None

    def sweep(count: int) -> None:
        for _ in range(count):
            projected_sweeps(problem.body_a, problem.body_b, problem.normal, bias,
                             problem.inv_mass, problem.diag, v, lam, 1.0, k_gs)
            counts["sweeps"] += k_gs
            counts["products"] += k_gs
            S = np.flatnonzero(lam > 0.0)
            counts["last_subspace"] = int(S.size)
            if S.size == 0:
                continue
            before = lam.copy()
            merit_before = problem.residual(lam)
            for _ in range(k_sm):
                x = reduced_solve(S)
                if x is None:
                    break
                positive = x > 0.0
                lam[:] = 0.0
                lam[S] = np.maximum(x, 0.0)
                if positive.all():
                    break
                S = S[positive]
                if S.size == 0:
                    break
            # Safeguard: a wrongly predicted S can make A_SS singular with b_S outside its
            # range, and the regularised solution then grows like 1/ε; keep the subspace step
            # only when it lowers the natural-map residual.
            merit_after = problem.residual(lam)
            counts["products"] += 2
            if merit_after < merit_before:
                counts["accepted"] += 1
                v[:] = problem.velocity(lam)
                counts["products"] += 1
            else:
                lam[:] = before

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
