"""APGD (Mazhar, Heyn, Negrut and Tasora, as in Chrono): Nesterov-accelerated projected gradient
on the cone complementarity relaxation

    min f(λ) = ½ λᵀAλ + bᵀλ  over λ in K = Π_c {‖λ_t‖ <= μ λ_n}  (with rolling rows:
    ‖λ_r‖ <= μ_r λ_n, |λ_s| <= μ_s λ_n; without friction λ >= 0),

with a step 1/L from a Lipschitz estimate, backtracking (L doubles until f(λ') <= f(y) +
∇f(y)·(λ' - y) + L/2 ‖λ' - y‖², tested as (λ'-y)ᵀA(λ'-y) <= L ‖λ'-y‖², free of cancellation),
L shrunk by 0.9 after each iteration, a gradient restart (momentum dropped when ∇f(y)·(λ' - λ) >
0), and the best iterate by the relaxation's natural map returned, as the paper's algorithm.
With `precondition` (the default; the paper has none) all of it runs in ν = λ / s, s one
scale per sub-block of a contact (block_scales), on A' = S A S: ‖λ' - y‖ becomes ‖(λ' - y)/s‖,
the step t S (A y + b), and L is in the scaled variables (no unit, not comparable with L
unscaled).

Its solutions are Anitescu's: u = A λ + b in the dual cone, u_n >= μ ‖u_t‖, so a sliding contact
separates at u_n = μ ‖u_t‖ where Coulomb's keeps u_n = 0 (docs/friction-lab.md measures it).
The traces show Coulomb's error (what every solver is measured by); the stopping test
(`abs_tol`) and the best iterate use the relaxation's own natural map, max_c ‖λ_c - P_K(λ_c -
u_c)‖, which is 0 at its solutions. One iteration = one product with A plus one per backtrack
(two more at the start: A λ0 and the first Lipschitz estimate). `info`: backtracks, restarts,
relaxation_residual (the natural map of the returned iterate), lipschitz (the last L: 1/kg
unscaled, no unit with `precondition`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..coulomb import project_cone
from ..params import Param
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS
from .driver import Hooks, Method, run
from ..options import SolveSettings
from .laws import project_composite
from .operator import local_steps, operator, product

RESTART = Param("restart", True, bool, "gradient restart: drop the momentum when the step goes "
                "against the gradient at y")
PRECONDITION = Param("precondition", True, bool, "diagonal preconditioning: one scale 1/sqrt(A_jj) "
                     "for each contact's normal, tangents, rolling pair and spin, so that one "
                     "step 1/L suits every row (the sources have none)")
MAX_BACKTRACKS = 60
# Slots of the float64 state and int64 counts arrays.
L, THETA, RMIN, STOP = 0, 1, 2, 3
PRODUCTS, BACKTRACKS, RESTARTS = 0, 1, 2


@njit(inline="always", cache=True, nogil=True)
def project_contact(z, out, k, rows, mu, mu_roll, mu_spin):
    """out[k:k+rows] <- the projection of z[k:k+rows] onto the contact's admissible set."""
    if rows == 1:
        out[k] = max(z[k], 0.0)
    elif rows == 3:
        out[k], out[k + 1], out[k + 2] = project_cone(z[k], z[k + 1], z[k + 2], mu)
    else:
        (out[k], out[k + 1], out[k + 2], out[k + 3], out[k + 4],
         out[k + 5]) = project_composite((z[k], z[k + 1], z[k + 2], z[k + 3], z[k + 4],
                                          z[k + 5]), (mu, mu_roll, mu_spin))


@njit(cache=True, nogil=True)
def relaxation_residual(lam, Alam, rhs, cone, scratch):
    """max over contacts of ‖λ_c - P_K(λ_c - u_c)‖ with u = A λ + b (its natural map, m/s);
    cone = (rows, mu, mu_roll, mu_spin, live) the admissible set K, live (m,) bool: not an
    inert contact; scratch = (z, p), (size,) each."""
    rows, mu, mu_roll, mu_spin, live = cone
    z, p = scratch
    worst = 0.0
    for c in range(live.shape[0]):
        if not live[c]:
            continue
        k = c * rows
        for j in range(rows):
            z[k + j] = lam[k + j] - (Alam[k + j] + rhs[k + j])
        project_contact(z, p, k, rows, mu[c], mu_roll[c], mu_spin[c])
        total = 0.0
        for j in range(rows):
            total += (lam[k + j] - p[k + j]) ** 2
        if not total <= worst * worst:
            worst = math.sqrt(total)
    return worst


@njit(inline="always", cache=True, nogil=True)
def inverse_root(a, b):
    """1/sqrt(max(a, b)) (kg^½ for A's diagonal entries a, b in 1/kg); 1 where that is not
    positive (a row that moves no mass) or not finite (a poisoned problem, which the driver
    reports; a scale of 0 or NaN would only add warnings)."""
    d = max(a, b)
    return 1.0 / math.sqrt(d) if 0.0 < d < math.inf else 1.0


@njit(cache=True, nogil=True)
def block_scales(diag, cone, scale, scaled):
    """The diagonal preconditioner, λ = scale ν: scale (size,) <- one value per sub-block of a
    contact, 1/sqrt of its largest A_jj (normal; tangents; rolling pair; spin), 1 for an inert
    contact. A single value per sub-block keeps the cone's form in ν: ‖λ_t‖ <= μ λ_n is ‖ν_t‖
    <= (μ s_n / s_t) ν_n, so scaled = (μ', μ_roll', μ_spin') (m,) each <- those coefficients.
    diag (size,) A_jj (1/kg); cone = (rows, mu, mu_roll, mu_spin, live) (relaxation_residual)."""
    rows, mu, mu_roll, mu_spin, live = cone
    mu_s, roll_s, spin_s = scaled
    for c in range(live.shape[0]):
        k = c * rows
        mu_s[c] = mu[c]
        roll_s[c] = mu_roll[c]
        spin_s[c] = mu_spin[c]
        for j in range(rows):
            scale[k + j] = 1.0
        if not live[c]:
            continue
        n = inverse_root(diag[k], diag[k])
        scale[k] = n
        if rows >= 3:
            t = inverse_root(diag[k + 1], diag[k + 2])
            scale[k + 1] = t
            scale[k + 2] = t
            mu_s[c] = mu[c] * n / t
        if rows == 6:
            r = inverse_root(diag[k + 3], diag[k + 4])
            w = inverse_root(diag[k + 5], diag[k + 5])
            scale[k + 3] = r
            scale[k + 4] = r
            scale[k + 5] = w
            roll_s[c] = mu_roll[c] * n / r
            spin_s[c] = mu_spin[c] * n / w


# long: the paper's algorithm as one loop (step with backtracking, momentum, restart, best).
@njit(cache=True, nogil=True)
def apgd_iterations(op, rhs, cone, metric, iterates, state, counts, count, options):
    """`count` APGD iterations; op: operator.operator's tuple; cone = (rows, mu, mu_roll,
    mu_spin, live) (relaxation_residual); metric = (scale, μ', μ_roll', μ_spin')
    (block_scales; ones and the cone's own without preconditioning): each step is taken in
    ν = λ / scale, the iterates are kept in λ; iterates = (γ, y, A γ, A y, candidate, its product,
    best, scratch z), (size,) each: γ, y and their products persist between calls, best holds
    γ̂; state (4,) and counts (3,) by the module's slots; options = (restart, tol). Returns the
    number performed."""
    rows, _, _, _, live = cone
    scale, mu, mu_roll, mu_spin = metric
    gamma, y, Ag, Ay, cand, Acand, best, z = iterates
    restart, tol = options
    size = gamma.shape[0]
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        lip = state[L]
        for _bt in range(MAX_BACKTRACKS):
            t = 1.0 / lip
            for j in range(size):  # ν_y - t S (A y + b), S = diag(scale)
                z[j] = y[j] / scale[j] - (t * scale[j]) * (Ay[j] + rhs[j])
            for c in range(live.shape[0]):
                k = c * rows
                if live[c]:
                    project_contact(z, cand, k, rows, mu[c], mu_roll[c], mu_spin[c])
                    for j in range(k, k + rows):
                        cand[j] *= scale[j]
                else:  # an inert contact keeps its impulses
                    for j in range(rows):
                        cand[k + j] = gamma[k + j]
            product(op, cand, Acand)
            counts[PRODUCTS] += 1
            curvature = 0.0
            length = 0.0
            for j in range(size):
                d = cand[j] - y[j]
                curvature += d * (Acand[j] - Ay[j])
                e = d / scale[j]
                length += e * e
            if curvature <= lip * length or not np.isfinite(curvature):
                break
            lip *= 2.0
            counts[BACKTRACKS] += 1
        theta = state[THETA]
        theta_next = 0.5 * (-theta * theta + theta * math.sqrt(theta * theta + 4.0))
        beta = theta * (1.0 - theta) / (theta * theta + theta_next)
        ascent = 0.0
        for j in range(size):
            ascent += (Ay[j] + rhs[j]) * (cand[j] - gamma[j])
        if restart and ascent > 0.0:
            beta = 0.0
            theta_next = 1.0
            counts[RESTARTS] += 1
        for j in range(size):
            y[j] = cand[j] + beta * (cand[j] - gamma[j])
            Ay[j] = Acand[j] + beta * (Acand[j] - Ag[j])
            gamma[j] = cand[j]
            Ag[j] = Acand[j]
        r = relaxation_residual(gamma, Ag, rhs, cone, (z, cand))
        if r < state[RMIN]:
            state[RMIN] = r
            best[:] = gamma
        if state[RMIN] < tol:
            state[STOP] = 1.0
        state[THETA] = theta_next
        state[L] = 0.9 * lip
    return done


def _frictional_coefficients(problem):
    """The cone: (rows, mu, mu_roll, mu_spin (m,), live (m,) bool: not an inert contact)."""
    live = local_steps(problem, 1.0)[:, 0] > 0.0
    return problem.rows, problem.mu, problem.mu_roll, problem.mu_spin, live


def _frictionless_coefficients(problem):
    """The same without friction: one row, μ = 0, the cone a half-line."""
    zeros = np.zeros(problem.m)
    return 1, zeros, zeros, zeros, problem.diag != 0.0


_COEFFICIENTS = {FRICTIONLESS: _frictionless_coefficients, FRICTIONAL: _frictional_coefficients,
                 EXPLICIT: _frictional_coefficients}


def metric(problem, cone, precondition: bool) -> tuple:
    """apgd_iterations's metric for the problem: block_scales's scales and coefficients, or
    ones and the cone's own coefficients (the sources' unpreconditioned steps)."""
    rows, mu, mu_roll, mu_spin, live = cone
    scale = np.ones(live.shape[0] * rows)
    if not precondition:
        return scale, mu, mu_roll, mu_spin
    scaled = tuple(np.empty(live.shape[0]) for _ in range(3))
    block_scales(problem.diag, cone, scale, scaled)
    return (scale, *scaled)


def relaxation_error(problem, lam: np.ndarray) -> float:
    """The relaxation's natural map at λ (m/s): max over contacts of ‖λ_c - P_K(λ_c - u_c)‖,
    u = A λ + b; 0 at its solutions. What apgd's stopping test and best iterate use, for a
    caller that measures another solver of the relaxation (pgs with the ccp law) alike."""
    lam = np.ascontiguousarray(lam, dtype=np.float64)
    cone = _COEFFICIENTS[problem.kind](problem)
    scratch = (np.empty_like(lam), np.empty_like(lam))
    return float(relaxation_residual(lam, problem.apply(lam), problem.rhs, cone, scratch))


def solve(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    cone = _COEFFICIENTS[problem.kind](problem)
    op = operator(problem)
    rhs = problem.rhs
    gamma, y, Ag, Ay = lam.copy(), lam.copy(), np.empty_like(lam), np.empty_like(lam)
    cand, Acand, best, z = (np.empty_like(lam) for _ in range(4))
    iterates = (gamma, y, Ag, Ay, cand, Acand, best, z)
    options = (settings["restart"], settings["abs_tol"])
    scaling = metric(problem, cone, settings["precondition"])
    scale = scaling[0]
    state = np.zeros(4)
    counts = np.zeros(3, dtype=np.int64)
    info: dict = {}

    def start() -> None:
        """From λ: A λ, the Lipschitz estimate ‖A'(ν - 1)‖/‖ν - 1‖ (Chrono's, in the scaled
        variables ν = λ / scale, A' = S A S), the best = λ."""
        gamma[:] = lam
        y[:] = lam
        product(op, gamma, Ag)
        Ay[:] = Ag
        ones = lam - scale  # S (ν - 1)
        product(op, ones, Acand)
        counts[PRODUCTS] += 2
        norm = float(np.linalg.norm(ones / scale))
        estimate = float(np.linalg.norm(Acand * scale)) / norm if norm > 0.0 else 0.0
        state[:] = (estimate if estimate > 0.0 else 1.0, 1.0, np.inf, 0.0)
        state[RMIN] = relaxation_residual(gamma, Ag, rhs, cone, (z, cand))
        best[:] = lam

    def sweep(count: int) -> int:
        done = apgd_iterations(op, rhs, cone, scaling, iterates, state, counts, count, options)
        lam[:] = best
        return done

    def stop():
        return "absolute" if state[STOP] != 0.0 else None

    def products() -> int:
        info.update(backtracks=int(counts[BACKTRACKS]), restarts=int(counts[RESTARTS]),
                    relaxation_residual=float(state[RMIN]), lipschitz=float(state[L]))
        return int(counts[PRODUCTS])

    start()
    return run(problem, lam, settings, sweep, start, Hooks(stop, products, info))


# One solve for every kind: the kind's coefficients and products with A are data to it.
METHOD = Method("apgd", "Accelerated projected gradient",
                {FRICTIONLESS: solve, FRICTIONAL: solve, EXPLICIT: solve},
                "Nesterov-accelerated projected gradient with adaptive step and restart on the "
                "cone complementarity relaxation (Chrono); sliding contacts separate at "
                "u_n = μ‖u_t‖", (RESTART, PRECONDITION),
                devices=("cpu", "cuda"))
