"""MPRGP, Dostál's modified proportioning with reduced gradient projections, on the
bound-constrained QP min f(λ) = ½ λᵀAλ + bᵀλ, λ >= 0 (a reference beyond the article).

Each iteration is one step: a CG step on the free set while the iterate is proportional
(‖β‖² <= Γ² φ̃ᵀφ, chopped against reduced free gradient) and the CG step stays feasible; an
expansion step (to the bound, then a projected gradient step of fixed length ᾱ = alpha / ‖A‖,
‖A‖ bounded by Gershgorin's theorem from the contacts, no product) when it would not; a
proportioning step along the chopped gradient when the iterate is not proportional. Details and
guards: docs/solvers.md.

Products with A: CG 1, expansion 2, proportioning 1, plus 1 for the first gradient. `info`: cg,
expansion, proportioning (step counts), alpha_bar (kg), norm_bound (1/kg).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..params import Param
from ..problem import ContactProblem, apply_matrix, contact_graph
from .driver import Hooks, Method, run
from ..options import SolveSettings

CURVATURE_GUARD = 1e-12
# Slots of the int64 `counts` array.
PRODUCTS, CG, EXPANSION, PROPORTIONING = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def gershgorin_bound(normal, inv_mass, start, items):
    """max_c Σ_d |A_cd|, an upper bound of ‖A‖₂ (1/kg), from the contacts around each marble."""
    m = normal.shape[0]
    rows = np.zeros(m)
    for i in range(start.shape[0] - 1):
        w = inv_mass[i]
        for u in range(start[i], start[i + 1]):
            c = items[u]
            for t in range(start[i], start[i + 1]):
                d = items[t]
                nn = normal[c, 0] * normal[d, 0] + normal[c, 1] * normal[d, 1] \
                    + normal[c, 2] * normal[d, 2]
                rows[c] += w * abs(nn)
    worst = 0.0
    for c in range(m):
        if not rows[c] <= worst:
            worst = rows[c]
    return worst


@njit(cache=True, nogil=True)
def _gradient(A, rhs, lam, dv, g):
    """g <- A λ + b (one product); dv (n, 3) is scratch."""
    apply_matrix(A, lam, dv, g)
    for c in range(lam.shape[0]):
        g[c] += rhs[c]


@njit(cache=True, nogil=True)
def _free_gradient(lam, g, p):
    for c in range(lam.shape[0]):
        p[c] = g[c] if lam[c] > 0.0 else 0.0


@njit(cache=True, nogil=True)
def mprgp_start(A, system, iterates, dv, counts):
    """The gradient of λ and the first direction, its free part (one product); the arguments as
    mprgp_iterations'."""
    rhs, _ = system
    lam, g, p, _, _ = iterates
    _gradient(A, rhs, lam, dv, g)
    _free_gradient(lam, g, p)
    counts[PRODUCTS] += 1


# long: the three step kinds share g, p and the counters in one compiled loop.
@njit(cache=True, nogil=True)
def mprgp_iterations(A, system, iterates, dv, counts, count, options):
    """`count` MPRGP steps in place on λ. A: the operator's factors (solver/products.py);
    system = (rhs, diag), (m,) each: b (m/s) and diag(A) (1/kg); iterates = (λ (N s),
    g = A λ + b (m/s), the direction p, q = A p or A d, the proportioning direction d), (m,)
    each, g and p carried over between calls; dv (n, 3) is the products' scratch; counts (4,) by
    the module's slots; options = (ᾱ (kg), Γ): the expansion step and the proportioning
    parameter."""
    rhs, diag = system
    lam, g, p, q, d = iterates
    alpha_bar, big_gamma = options
    m = lam.shape[0]
    for _ in range(count):
        beta2 = 0.0
        prop = 0.0
        free2 = 0.0
        for c in range(m):
            if lam[c] > 0.0:
                phi = g[c]
                reduced = min(lam[c] / alpha_bar, phi)
                prop += reduced * phi
                free2 += phi * phi
            elif g[c] < 0.0:
                beta2 += g[c] * g[c]
        if beta2 == 0.0 and free2 == 0.0:
            continue  # projected gradient exactly zero: λ solves the LCP
        if beta2 <= big_gamma * big_gamma * prop:
            apply_matrix(A, p, dv, q)
            counts[PRODUCTS] += 1
            pq = 0.0
            pdp = 0.0
            gp = 0.0
            for c in range(m):
                pq += p[c] * q[c]
                pdp += p[c] * p[c] * diag[c]
                gp += g[c] * p[c]
            alpha_f = np.inf
            for c in range(m):
                if p[c] > 0.0:
                    step = lam[c] / p[c]
                    if step < alpha_f:
                        alpha_f = step
            curved = pq > CURVATURE_GUARD * pdp
            alpha_cg = gp / pq if curved else np.inf
            if curved and alpha_cg <= alpha_f:
                counts[CG] += 1
                for c in range(m):
                    lam[c] -= alpha_cg * p[c]
                    if lam[c] < 0.0:
                        lam[c] = 0.0  # rounding only: α_cg <= α_f keeps λ >= 0
                    g[c] -= alpha_cg * q[c]
                phq = 0.0
                for c in range(m):
                    if lam[c] > 0.0:
                        phq += g[c] * q[c]
                gamma = phq / pq
                for c in range(m):
                    phi = g[c] if lam[c] > 0.0 else 0.0
                    p[c] = phi - gamma * p[c]
            else:
                counts[EXPANSION] += 1
                if alpha_f == np.inf:
                    alpha_f = 0.0  # no bound ahead and no curvature: only the gradient step
                for c in range(m):
                    lam[c] -= alpha_f * p[c]
                    if lam[c] < 0.0:
                        lam[c] = 0.0
                    g[c] -= alpha_f * q[c]
                for c in range(m):
                    if lam[c] > 0.0:
                        new = lam[c] - alpha_bar * g[c]
                        lam[c] = new if new > 0.0 else 0.0
                _gradient(A, rhs, lam, dv, g)
                counts[PRODUCTS] += 1
                _free_gradient(lam, g, p)
        else:
            counts[PROPORTIONING] += 1
            for c in range(m):
                d[c] = g[c] if (lam[c] <= 0.0 and g[c] < 0.0) else 0.0
            apply_matrix(A, d, dv, q)
            counts[PRODUCTS] += 1
            dq = 0.0
            ddd = 0.0
            for c in range(m):
                dq += d[c] * q[c]
                ddd += d[c] * d[c] * diag[c]
            alpha = beta2 / dq if dq > CURVATURE_GUARD * ddd else alpha_bar
            for c in range(m):
                lam[c] -= alpha * d[c]  # d <= 0: λ only grows, stays feasible
                g[c] -= alpha * q[c]
            _free_gradient(lam, g, p)


PARAMS = (
    Param("Gamma", 1.0, float, "proportioning parameter Γ (Dostál)", lo=0.0, lo_open=True),
    Param("alpha", 1.9, float, "expansion step ᾱ = alpha / ‖A‖ (Gershgorin bound); <= 2",
          lo=0.0, hi=2.0, lo_open=True),
)


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    m = problem.m
    dv = np.empty_like(problem.v_pred)
    g, p, q, d = (np.zeros(m) for _ in range(4))
    counts = np.zeros(4, dtype=np.int64)
    info: dict = {}
    alpha_bar = 0.0
    if m:
        start, items, _ = contact_graph(problem.body_a, problem.body_b, problem.n)
        bound = gershgorin_bound(problem.normal, problem.inv_mass, start, items)
        alpha_bar = settings["alpha"] / bound if bound > 0 else 0.0
        if not np.isfinite(alpha_bar):
            alpha_bar = 0.0  # poisoned problem: the driver will report divergence
        info.update(norm_bound=float(bound), alpha_bar=alpha_bar)
    A = problem.A
    system = (problem.rhs, problem.diag)
    iterates = (lam, g, p, q, d)
    options = (alpha_bar, settings["Gamma"])

    def sync() -> None:
        mprgp_start(A, system, iterates, dv, counts)

    def sweep(count: int) -> None:
        mprgp_iterations(A, system, iterates, dv, counts, count, options)

    def products() -> int:
        info.update(cg=int(counts[CG]), expansion=int(counts[EXPANSION]),
                    proportioning=int(counts[PROPORTIONING]))
        return int(counts[PRODUCTS])

    if m:
        sync()
    return run(problem, lam, settings, sweep, sync, Hooks(products=products, info=info))


METHOD = Method("mprgp", "MPRGP (Dostál)", solve,
                "CG on the free set + fixed-step expansion (ᾱ from a Gershgorin bound of ‖A‖) "
                "+ proportioning", PARAMS)
