"""Projected Gauss-Seidel with subspace minimization (Morales, Nocedal & Smelyanskiy).

PGS finds most of the final active set in a few sweeps, then converges slowly; so each iteration
is `k_gs` PGS sweeps, then a subspace phase on S = {c : λ_c > 0}: λ_S moves towards the solution
of (A_SS + ε I) λ_S = -b_S as far as λ_S >= 0 allows (ratio test); the components that reach 0
leave S and the reduced system is solved again, at most `k_sm` times. |S| <= dense_max: dense
Cholesky; larger: matrix-free Jacobi-preconditioned CG truncated at the boundary. A safeguard
keeps the phase only when it does not raise f = ½λᵀAλ + bᵀλ (one product, which also gives the
new velocities). Why the ratio test instead of projecting, and the defaults by measurement:
docs/solvers.md.

Products counted: one per sweep, one per CG step, one per dense reduced solve, one for the
safeguard. `info`: sweeps, reduced_solves, cholesky, cg_steps, last_subspace, accepted,
rejected (phases kept and thrown away), dropped (components the ratio test removed from S).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..params import Param
from ..problem import (ROW_KERNEL, ContactProblem, apply_matrix, contact_graph, contact_row,
                       impulse_velocity, inverse_diag, row_error)
from .driver import GRADIENT_NOISE, Hooks, Method, run
from ..options import SolveSettings
from .gauss_seidel import relaxed_sweeps


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
def cholesky_factor(K, L):
    """L <- the lower Cholesky factor of K (k, k), K = L Lᵀ; False when a pivot is not positive
    (K not positive definite in floating point) or not finite. Written out rather than LAPACK's
    so that its sums run in one fixed order: LAPACK's blocked kernels differ between processors,
    and so would every run after the first reduced solve."""
    k = K.shape[0]
    for j in range(k):
        s = K[j, j]
        for p in range(j):
            s -= L[j, p] * L[j, p]
        if not s > 0.0 or not np.isfinite(s):
            return False
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, k):
            t = K[i, j]
            for p in range(j):
                t -= L[i, p] * L[j, p]
            L[i, j] = t / d
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True, nogil=True)
def shifted_product(K, y, eps, out):
    """out <- K y - ε y = A_SS y for K = A_SS + ε I, each row summed in column order (BLAS's
    matrix-vector product sums in an order that differs between processors)."""
    k = y.shape[0]
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += K[i, j] * y[j]
        out[i] = s - eps * y[i]


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


# long: up to k_sm truncated CG solves in one compiled call, sharing their scratch arrays.
@njit(**ROW_KERNEL)
def truncated_cg_phase(A, system, iterate, reduced, mask, x, scratch, options):
    """The subspace phase on the matrix-free path. S = {c : λ_c > 0} (mask, (m,) bool, out: the
    final S); x (m,) <- the candidate impulses, N s, zero outside S. Jacobi-preconditioned CG on
    (A_SS + ε I) x_S = -b_S from x = λ, truncated at the first step that would make a component
    of x negative (ratio test): the step stops on the boundary, the components it zeroes leave S
    and CG restarts on the smaller S, at most k_sm solves in all. A solve ends early when
    ‖r_S‖∞ <= max(tol_abs, tol_rel ‖r_S⁰‖∞) (m/s). A: the operator's factors
    (solver/products.py); system = (bias, rhs, diag) as objective_change's, bias read only;
    iterate = (λ (m,) N s, v (n, 3) = v* + M^-1 J^T λ m/s), v giving the first residual without
    a product; reduced = (precond (m,) = 1 / (A_cc + ε) kg, ε 1/kg); scratch = (r, z, p, q (m,),
    dv (n, 3)); options = (k_sm, max_steps, tol_abs, tol_rel).
    Returns (products with A, solves, components dropped)."""
    body_a, body_b, normal, _ = A
    bias, _, _ = system
    lam, v = iterate
    precond, eps = reduced
    r, z, p, q, dv = scratch
    k_sm, max_steps, tol_abs, tol_rel = options
    m = lam.shape[0]
    worst0 = 0.0
    size = 0
    for c in range(m):
        if lam[c] > 0.0:
            a, b, n0, n1, n2 = contact_row(body_a, body_b, normal, c)
            e = row_error(v, a, b, n0, n1, n2, bias[c])
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
            apply_matrix(A, p, dv, q)
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


@njit(**ROW_KERNEL)
def objective_change(A, system, iterate, x, d, dv):
    """(Δf, its rounding), N s·m/s (J): Δf = f(x) - f(λ) for f(λ) = ½ λᵀAλ + bᵀλ, the
    objective whose minimiser over λ >= 0 is the LCP solution. Computed from the difference
    d = x - λ (m,) so that it does not cancel: Δf = dᵀ(Aλ + b) + ½ dᵀAd, with Aλ + b read from
    iterate = (λ, v (n, 3) = v* + M^-1 J^T λ) and dᵀAd = Σ_i |J^T d|_i² w_i from dv (n, 3) <-
    M^-1 J^T d (one product; v + dv are then the velocities of x). The rounding is
    GRADIENT_NOISE Σ_c |d_c| (|e_c - b_c| + |b_c| + A_cc λ_c). A: the operator's factors
    (solver/products.py); system = (bias = gap / h (m/s), rhs = b (m/s), diag = A_cc (1/kg)),
    (m,) each. Returns (inf, 0) if not finite."""
    body_a, body_b, normal, inv_mass = A
    bias, rhs, diag = system
    lam, v = iterate
    m = lam.shape[0]
    linear = 0.0
    noise = 0.0
    for c in range(m):
        d[c] = x[c] - lam[c]
        a, b, n0, n1, n2 = contact_row(body_a, body_b, normal, c)
        e = row_error(v, a, b, n0, n1, n2, bias[c])
        linear += d[c] * e
        noise += abs(d[c]) * (abs(e - rhs[c]) + abs(rhs[c]) + diag[c] * lam[c])
    impulse_velocity(A, d, dv)
    quadratic = 0.0
    for i in range(dv.shape[0]):
        w = inv_mass[i]
        if w > 0.0:
            quadratic += (dv[i, 0] ** 2 + dv[i, 1] ** 2 + dv[i, 2] ** 2) / w
    change = linear + 0.5 * quadratic
    if not np.isfinite(change):
        return np.inf, 0.0
    return change, GRADIENT_NOISE * noise


PARAMS = (
    Param("k_gs", 5, int, "PGS sweeps per iteration (the paper: 5)", lo=1, hi=1000),
    Param("k_sm", 3, int, "reduced solves per subspace phase, at most", lo=1, hi=100),
    Param("eps", 1e-14, float, "regularisation ε of A_SS, relative to mean(A_cc)", lo=0.0),
    Param("dense_max", 300, int, "largest |S| solved by dense Cholesky; above: matrix-free CG",
          lo=0, hi=20_000),
    Param("cg_tol", 1e-12, float, "relative residual of the matrix-free reduced CG", lo=0.0,
          lo_open=True),
    Param("cg_max", 200, int, "CG steps per reduced solve, at most", lo=1, hi=100_000),
)


class _Iterations:
    """One solve's state: λ (updated in place), the velocities v = v* + M^-1 J^T λ, the
    scratch of both subspace paths and the counts behind `info` and `products`; the kernels'
    tuples, made once a solve."""

    def __init__(self, problem: ContactProblem, lam: np.ndarray, settings: SolveSettings):
        m = problem.m
        self.problem, self.lam, self.settings = problem, lam, settings
        self.eps = settings["eps"] * (float(np.mean(problem.diag)) if m else 1.0)
        self.v = problem.velocity(lam)
        bias = problem.bias
        self.A = problem.A
        self.pgs_rows = (bias, inverse_diag(problem.diag))  # PGS's ω / A_cc with ω = 1
        self.system = (bias, problem.rhs, problem.diag)
        self.iterate = (lam, self.v)
        self.cg_options = (settings["k_sm"], settings["cg_max"], settings["abs_tol"],
                           settings["cg_tol"])
        self.counts = {"sweeps": 0, "reduced_solves": 0, "cholesky": 0, "cg_steps": 0,
                       "products": 0, "last_subspace": 0, "accepted": 0, "rejected": 0,
                       "dropped": 0}
        self.info: dict = {}
        self.graph = None
        self.mask = np.zeros(m, dtype=np.bool_)
        self.x, self.d = np.empty(m), np.empty(m)
        self.dv = np.empty_like(problem.v_pred)
        # The matrix-free path's (precond, ε) and CG vectors, made when it first runs.
        self.reduced: tuple | None = None
        self.cg_scratch: tuple = ()

    def sweep(self, count: int) -> None:
        k_gs, partition = self.settings["k_gs"], self.problem.partition
        for _ in range(count):
            relaxed_sweeps(self.A, self.pgs_rows, self.v, self.lam, k_gs, partition)
            self.counts["sweeps"] += k_gs
            self.counts["products"] += k_gs
            size = int(np.count_nonzero(self.lam > 0.0))
            self.counts["last_subspace"] = size
            if size == 0:
                continue
            if size <= self.settings["dense_max"]:
                self.dense_phase()
            else:
                self.matrix_free_phase()
            self.keep_if_lower()

    def dense_phase(self) -> None:
        """x <- λ moved towards the solution of (A_SS + ε I) y_S = -b_S by Cholesky, as far
        as x_S >= 0 allows; the components the step zeroes leave S and the system is solved
        again, at most k_sm times."""
        p, x, counts, m = self.problem, self.x, self.counts, self.problem.m
        if self.graph is None:
            self.graph = contact_graph(p.body_a, p.body_b, p.n)
        x[:] = self.lam
        S = np.flatnonzero(self.lam > 0.0)
        for _ in range(self.settings["k_sm"]):
            if S.size == 0:
                return
            counts["reduced_solves"] += 1
            pos = np.full(m, -1, dtype=np.int64)
            pos[S] = np.arange(S.size)
            K = np.empty((S.size, S.size))
            reduced_dense(p.normal, p.inv_mass, *self.graph, pos, self.eps, K)
            counts["products"] += 1
            if not np.all(np.isfinite(K)):
                return
            L = np.empty_like(K)
            if not cholesky_factor(K, L):
                return  # not positive definite in floating point: keep what we have
            counts["cholesky"] += 1
            y = self._refined_solve(K, L, np.ascontiguousarray(-p.rhs[S]))
            if not np.all(np.isfinite(y)):
                return
            S = self._ratio_step(S, y)
            if S is None:
                return

    def _refined_solve(self, K: np.ndarray, L: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """y with A_SS y = rhs, from the Cholesky factor L of K = A_SS + ε I: the solve, then
        one step of iterative refinement against A_SS itself, y += K^-1 (rhs - A_SS y). The
        shift alone leaves y off by ε K^-1 y, a residual of ε |y| m/s that PGS cannot remove
        (2e-12 m/s on the 1000:1 pair, 2e-9 at 1e6:1); the step divides that error by about
        1 + λ_min(A_SS) / ε and also removes most of the rounding of the solve. Singular A_SS
        (redundant contacts): b_S is in its range, the step changes y only there."""
        y = np.empty(rhs.size)
        cholesky_solve(L, rhs, y)
        product = np.empty(rhs.size)
        shifted_product(K, y, self.eps, product)
        correction = rhs - product
        step = np.empty(rhs.size)
        cholesky_solve(L, correction, step)
        return y + step

    def _ratio_step(self, S: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        """Move x_S towards y as far as x_S >= 0 allows; returns the smaller S, or None when
        the whole step was taken."""
        x = self.x
        step = y - x[S]
        down = step < 0.0
        ratios = -x[S][down] / step[down]
        alpha = min(1.0, float(ratios.min())) if ratios.size else 1.0
        if alpha >= 1.0:
            x[S] = y  # exactly: x + (y - x) would add a rounding of |x| (4e-10 N s at 1e6:1)
            return None
        x[S] += alpha * step
        x[S[down][ratios <= alpha]] = 0.0
        zero = x[S] <= 0.0
        x[S[zero]] = 0.0
        self.counts["dropped"] += int(zero.sum())
        return S[~zero]

    def matrix_free_phase(self) -> None:
        counts = self.counts
        if self.reduced is None:
            m = self.problem.m
            self.reduced = (1.0 / (self.problem.diag + self.eps), self.eps)
            self.cg_scratch = (np.empty(m), np.empty(m), np.empty(m), np.empty(m), self.dv)
        # A reduced residual below the requested tolerance (abs_tol in cg_options) cannot help
        # the stopping test.
        products, solves, dropped = truncated_cg_phase(
            self.A, self.system, self.iterate, self.reduced, self.mask, self.x, self.cg_scratch,
            self.cg_options)
        counts["cg_steps"] += products
        counts["products"] += products
        counts["reduced_solves"] += solves
        counts["dropped"] += dropped

    def keep_if_lower(self) -> None:
        """Safeguard on f, which PGS sweeps never increase: the truncated step decreases it in
        exact arithmetic, so a rise beyond rounding means a non-finite or failed solve, and the
        PGS iterate is kept. Within rounding the reduced solution is kept: it solves the
        subspace problem directly, where the PGS iterate is still converging (on the mass-ratio
        pair, a test `change <= 0` threw away 299 of 300 exact phases and PGS stalled)."""
        change, noise = objective_change(self.A, self.system, self.iterate, self.x, self.d,
                                         self.dv)
        self.counts["products"] += 1
        if change <= noise and np.all(np.isfinite(self.x)):
            self.counts["accepted"] += 1
            self.lam[:] = self.x
            self.v[:] += self.dv
        else:
            self.counts["rejected"] += 1

    def sync(self) -> None:
        self.v[:] = self.problem.velocity(self.lam)

    def products(self) -> int:
        self.info.update({k: val for k, val in self.counts.items() if k != "products"})
        return self.counts["products"]


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    it = _Iterations(problem, lam, settings)
    return run(problem, lam, settings, it.sweep, it.sync,
               Hooks(products=it.products, info=it.info))


METHOD = Method("pgs-sm", "PGS + subspace minimization", solve,
                "k_gs PGS sweeps, then reduced SPD solves on the predicted active set (dense "
                "Cholesky when small, matrix-free CG when large)", PARAMS)
