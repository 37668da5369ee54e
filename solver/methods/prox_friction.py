"""Erleben's proximal fixed point with Coulomb friction (docs/friction-lab.md): the kernels of
`prox-gs` and `prox-jacobi` on frictional problems, over geometry or an explicit W.

    λ_c <- prox_C(λ_c - R_c u_c):  λ_n <- max(0, ·), then λ_t onto the disk of radius μ λ_n

(rolling rows onto their disk μ_r λ_n, spinning into ±μ_s λ_n). Any R_c > 0 per row has
Coulomb's solutions as fixed points, provided both tangents share one r (else the impulse of a
slide turns away from the slip). R = s R0 with R0 per strategy:

- local:   γ / A_nn on the normal, γ / λmax(A_tt) on both tangents (= γ / A_tt for spheres),
           γ / A_rr on rolling rows. In Gauss-Seidel form over spheres this is psor's cone law
           with ω = γ, step for step.
- blocked: one r per contact, γ / λmax(A_cc) of its 3x3 block: the largest step the whole block
           allows. Spheres' blocks are diag(A_nn, A_tt, A_tt) with A_tt = 7/2 A_nn between two
           marbles, so the normal's step is 2/7 of local's: (A_cc)^-1 itself would be `local`
           again. Rolling rows as local.
- global:  r on every row.

Friction makes the problem no QP, so `merit=objective` cannot test f = ½λᵀAλ + bᵀλ (a Coulomb
solution is no minimiser of it): it uses FCLIB's error E = Σ_c ‖λ_c - P_K(λ_c - ũ_c)‖² over
contacts (`contact_error`), non-monotonely: an iterate is accepted when E is below twice the
least E of the last ten accepted iterates, or when Erleben's step ρ = ‖Δλ‖∞ shrank (the
reasons and the measurements below). `merit=step` is Erleben's test alone. With friction the
test can fail in Gauss-Seidel form too, so local r adapts there as well.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..coulomb import contact_error, frictional_contact_velocity, project_disk
from ..problem import ROW_KERNEL, inverse_diag
from .driver import run
from ..options import SolveSettings
from .laws import CONE, PROX
from .matrix_sweeps import matrix_sweeps
from .operator import block_bound, local_steps, operator, product
from .proximal import (ACCEPTED, E_VALID, PRODUCTS, SCALE, STOP, adaptation, hooks, judge,
                       scale_rules)
from .sweeps import BIAS, STEP_N, frictional_range, pack

MERIT = 3  # slot of the float64 state: FCLIB's squared error of the current λ (inf: unknown)
SCALED = 4  # slot: the scale the packed steps were last written with
# The test with friction: accept an iterate when its error is below SLACK times the least of
# the last WINDOW accepted errors, or when its step ρ shrank (Erleben's test). FCLIB's error is
# not monotone along convergent Coulomb iterations: Gauss-Seidel with local r rose by up to
# 1.64x within ten sweeps on a bowl of 100 marbles, and a strictly monotone test shrank R to
# 1e-15 there (stalled at 2.5e-4 m/s where adapt=0 reached 1.4e-7). The Jacobi form on one
# marble with rolling rows oscillates (the error alternates 0.18, 0.03, 0.17, ...) while ρ
# shrinks: the error test alone stalled it at 0.05 m/s, with ρ it converges in 916 iterations.
# Growth of both at once is what divergence looks like (docs/friction-lab.md).
WINDOW = 10
SLACK = 2.0
HISTORY = 5  # first slot of the window in the state array


def friction_strategy(problem, settings):
    """(base (m, 3), nu, grow): R0 per contact for the normal, both tangents and the rolling
    rows by the `r` strategy (0 for an inert contact), and the adaptation's ν and growth."""
    nu, grow = scale_rules(settings)
    if settings["r"] == "global":
        base = np.where(local_steps(problem, 1.0) > 0.0, settings["r_global"], 0.0)
        return base, nu, grow
    base = local_steps(problem, settings["gamma"])
    if settings["r"] == "blocked":
        block = inverse_diag(block_bound(problem), settings["gamma"])
        live = base[:, 0] > 0.0
        base[live, 0] = block[live]
        base[live, 1] = block[live]
    return base, nu, grow


def fresh_friction_state():
    state = np.zeros(HISTORY + WINDOW)
    state[SCALE] = 1.0
    state[1] = np.inf  # proximal.RHO: no accepted ρ yet
    state[MERIT] = np.inf
    state[SCALED] = -1.0
    state[HISTORY:] = np.inf
    return state, np.zeros(4, dtype=np.int64)


@njit(cache=True, nogil=True)
def reference(state):
    """The error an iterate must stay below: SLACK times the smallest of the last WINDOW
    accepted ones and the current one's."""
    least = state[MERIT]
    for j in range(HISTORY, HISTORY + WINDOW):
        least = min(least, state[j])
    return SLACK * least


@njit(cache=True, nogil=True)
def verdict(state, merit, rho):
    """The change the judge sees: < 0 (accept) when the error is below the window's bound or
    the step ρ shrank (Erleben's test), which a converging oscillation passes."""
    return -1.0 if merit < reference(state) or rho < state[1] else 1.0


@njit(cache=True, nogil=True)
def record(state, counts, merit):
    """λ's error is `merit` now: it becomes the current one and enters the window."""
    state[MERIT] = merit
    state[HISTORY + counts[ACCEPTED] % WINDOW] = merit


@njit(**ROW_KERNEL)
def _geometry_error(A, P, V, laws, lam, e):
    """Σ_c contact_error² for velocities V (n, 6) = V* + M^-1 J^T λ: e = J V + gap/h."""
    rows = A[9]
    mu, mu_roll, mu_spin = laws
    frictional_contact_velocity(A, V, e)
    total = 0.0
    for c in range(A[0].shape[0]):
        e[c * rows] += P[c, BIAS]
        r = contact_error(lam, e, c * rows, mu[c], mu_roll[c], mu_spin[c], rows)
        total += r * r
    return total


@njit(**ROW_KERNEL)
def _copy(src, dst):
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(**ROW_KERNEL)
def _copy2(src, dst):
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


@njit(**ROW_KERNEL)
def _step(lam, old):
    """ρ = ‖λ - λ_old‖∞ (a NaN comes through)."""
    rho = 0.0
    for i in range(lam.shape[0]):
        d = abs(lam[i] - old[i])
        if not d <= rho:
            rho = d
    return rho


# long: Erleben's loop (copy, sweep, merit, judge, roll back) written out over the geometry.
@njit(**ROW_KERNEL)
def prox_gs_geometry(A, P, base, laws, rules, iterate, progress, count):
    """`count` Gauss-Seidel proximal iterations over geometry in place (the packed sweep,
    law cone, steps s R0 written into P's step columns whenever s changed); returns the
    number performed. A: the operator's factors (solver/products.py); P: the packed contacts
    (sweeps.pack); base (m, 3): R0, kg; laws = (mu, mu_roll, mu_spin); rules:
    proximal.adaptation's; iterate = (V (n, 6) m/s and rad/s, kept equal to V* + M^-1 J^T λ; λ
    (size,) N s; V_old, lam_old: their copies for a rollback; e (size,) scratch for the
    error); progress = (state, counts) by the slots of proximal and this module."""
    adapt, objective = rules[0], rules[1]
    V, lam, V_old, lam_old, e = iterate
    state, counts = progress
    rows = A[9]
    ends = (A[0], A[1])
    track = adapt and objective
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if state[SCALED] != state[SCALE]:
            for c in range(P.shape[0]):
                for j in range(3):
                    P[c, STEP_N + j] = state[SCALE] * base[c, j]
            state[SCALED] = state[SCALE]
        if track and state[MERIT] == np.inf:
            state[MERIT] = _geometry_error(A, P, V, laws, lam, e)
        _copy(lam, lam_old)
        if adapt:
            _copy2(V, V_old)
        # The rule typed as pgs's (int64, bool, int64), not as literals: one compiled sweep.
        frictional_range(ends, P, (np.int64(CONE), np.bool_(False), rows), V, lam, np.int64(0),
                         ends[0].shape[0])
        counts[PRODUCTS] += 1
        rho = _step(lam, lam_old)
        df = 0.0
        merit = 0.0
        if track:
            merit = _geometry_error(A, P, V, laws, lam, e)
            df = verdict(state, merit, rho)
        if judge(rho, df, state, counts, rules):
            if track:
                record(state, counts, merit)
        else:
            _copy(lam_old, lam)
            _copy2(V_old, V)
    return done


@njit(**ROW_KERNEL)
def _matrix_error(mu, lam, u):
    total = 0.0
    for c in range(mu.shape[0]):
        r = contact_error(lam, u, 3 * c, mu[c], 0.0, 0.0, 3)
        total += r * r
    return total


@njit(**ROW_KERNEL)
def prox_gs_matrix(columns, base, mu, rules, iterate, failures, progress, count):
    """`count` Gauss-Seidel proximal iterations over an explicit W in place (Erleben's map:
    every row of a contact from the velocities before its update); returns the number
    performed. columns: W by its columns and blocks (MatrixProblem.columns); base (m, 3): R0;
    mu (m,); rules: proximal.adaptation's; iterate = (u (size,) = W λ + q, kept consistent with
    λ; λ (size,); u_old, lam_old: their copies for a rollback); failures (3,) int64:
    matrix_sweeps' counts; progress = (state, counts) by the slots of proximal and this
    module."""
    adapt, objective = rules[0], rules[1]
    u, lam, u_old, lam_old = iterate
    state, counts = progress
    track = adapt and objective
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if track and state[MERIT] == np.inf:
            state[MERIT] = _matrix_error(mu, lam, u)
        _copy(lam, lam_old)
        if adapt:
            _copy(u, u_old)
        matrix_sweeps(columns, (base, state[SCALE], mu), (PROX, False), u, lam, 1, failures)
        counts[PRODUCTS] += 1
        rho = _step(lam, lam_old)
        merit = _matrix_error(mu, lam, u) if track else 0.0
        if judge(rho, verdict(state, merit, rho) if track else 0.0, state, counts, rules):
            if track:
                record(state, counts, merit)
        else:
            _copy(lam_old, lam)
            _copy(u_old, u)
    return done


@njit(inline="always", cache=True, nogil=True)
def prox_contact(lam, e, out, k, steps, law, rows):
    """out[k:k+rows] <- prox_C(λ - R e) for the contact at row k (e = A λ + b, m/s); steps =
    (r_n, r_t, r_r) its R on the normal, tangent and rolling rows, kg; law = (mu, mu_roll,
    mu_spin) its coefficients."""
    r_n, r_t, r_r = steps
    mu, mu_roll, mu_spin = law
    ln = max(lam[k] - r_n * e[k], 0.0)
    out[k] = ln
    out[k + 1], out[k + 2] = project_disk(lam[k + 1] - r_t * e[k + 1],
                                          lam[k + 2] - r_t * e[k + 2], mu * ln)
    if rows == 6:
        out[k + 3], out[k + 4] = project_disk(lam[k + 3] - r_r * e[k + 3],
                                              lam[k + 4] - r_r * e[k + 4], mu_roll * ln)
        bound = mu_spin * ln
        out[k + 5] = min(max(lam[k + 5] - r_r * e[k + 5], -bound), bound)


@njit(cache=True, nogil=True)
def _error_sum(lam, e, mu, mu_roll, mu_spin, rows):
    total = 0.0
    for c in range(mu.shape[0]):
        r = contact_error(lam, e, c * rows, mu[c], mu_roll[c], mu_spin[c], rows)
        total += r * r
    return total


# long: the frictionless prox_jacobi_iterations' loop with the cone's map and FCLIB's error.
@njit(cache=True, nogil=True)
def prox_jacobi_any(op, rhs, base, cone, rules, iterate, progress, count):
    """`count` Jacobi proximal iterations in place over any problem `operator` describes; op:
    operator.operator's tuple; rhs (size,) b, m/s; base (m, 3): R0, kg; cone = (rows, mu,
    mu_roll, mu_spin (m,)); rules: proximal.adaptation's; iterate = (λ (size,) N s; cand
    (size,) the next iterate; e, e_new (size,) m/s); progress = (state, counts) by the slots
    of proximal and this module. e caches A λ + b while counts[E_VALID] is 1. With the
    objective (error) test every attempted iterate costs one product, A λ' + b, which becomes e
    when λ' is accepted."""
    rows, mu, mu_roll, mu_spin = cone
    objective = rules[1]
    lam, cand, e, e_new = iterate
    state, counts = progress
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if counts[E_VALID] == 0:
            product(op, lam, e)
            for j in range(e.shape[0]):
                e[j] += rhs[j]
            counts[PRODUCTS] += 1
            counts[E_VALID] = 1
            state[MERIT] = _error_sum(lam, e, mu, mu_roll, mu_spin, rows)
        s = state[SCALE]
        for c in range(mu.shape[0]):
            k = c * rows
            if base[c, 0] == 0.0:  # an inert contact keeps its impulses
                for j in range(rows):
                    cand[k + j] = lam[k + j]
                continue
            prox_contact(lam, e, cand, k, (s * base[c, 0], s * base[c, 1], s * base[c, 2]),
                         (mu[c], mu_roll[c], mu_spin[c]), rows)
        rho = 0.0
        for j in range(lam.shape[0]):
            d = abs(cand[j] - lam[j])
            if not d <= rho:
                rho = d
        moved = objective and rho != 0.0
        merit = state[MERIT]
        if moved:
            product(op, cand, e_new)
            counts[PRODUCTS] += 1
            for j in range(e.shape[0]):
                e_new[j] += rhs[j]
            merit = _error_sum(cand, e_new, mu, mu_roll, mu_spin, rows)
        if judge(rho, verdict(state, merit, rho), state, counts, rules):
            lam[:] = cand
            if moved:
                e[:] = e_new
                record(state, counts, merit)
            elif not objective:
                counts[E_VALID] = 0
    return done


def _gs_start(problem, lam0: np.ndarray, settings: SolveSettings):
    """What both forms of prox-gs start from: λ, its copy's buffer, R0 (m, 3), the judge's
    rules, (state, counts) and the info dict."""
    lam = np.array(lam0, dtype=np.float64)
    base, nu, grow = friction_strategy(problem, settings)
    return (lam, np.empty_like(lam), base, adaptation(settings, nu, grow),
            fresh_friction_state(), {})


def solve_gs(problem, lam0: np.ndarray, settings: SolveSettings):
    """prox-gs on a frictional problem over geometry."""
    lam, lam_old, base, rules, progress, info = _gs_start(problem, lam0, settings)
    state = progress[0]
    V = problem.velocity(lam)
    iterate = (V, lam, np.empty_like(V), lam_old, np.empty(problem.size))
    packed = pack(problem, 1.0)
    A, laws = problem.A, problem.laws

    def sweep(count: int) -> int:
        return prox_gs_geometry(A, packed, base, laws, rules, iterate, progress, count)

    def sync() -> None:
        V[:] = problem.velocity(lam)
        state[MERIT] = np.inf

    return run(problem, lam, settings, sweep, sync, hooks(*progress, info))


def solve_gs_matrix(problem, lam0: np.ndarray, settings: SolveSettings):
    """prox-gs on an explicit problem's matrix W."""
    lam, lam_old, base, rules, progress, info = _gs_start(problem, lam0, settings)
    state = progress[0]
    u = problem.error(lam)
    iterate = (u, lam, np.empty_like(u), lam_old)
    failures = np.zeros(3, dtype=np.int64)  # matrix_sweeps' counts (nsgs's; unused here)
    columns, mu = problem.columns, problem.mu

    def sweep(count: int) -> int:
        return prox_gs_matrix(columns, base, mu, rules, iterate, failures, progress, count)

    def sync() -> None:
        u[:] = problem.error(lam)
        state[MERIT] = np.inf

    return run(problem, lam, settings, sweep, sync, hooks(*progress, info))


def solve_jacobi(problem, lam0: np.ndarray, settings: SolveSettings):
    """prox-jacobi on a frictional problem, over geometry or an explicit W."""
    lam = np.array(lam0, dtype=np.float64)
    base, nu, grow = friction_strategy(problem, settings)
    rules = adaptation(settings, nu, grow)
    progress = fresh_friction_state()
    counts = progress[1]
    info: dict = {}
    op = operator(problem)
    iterate = (lam, np.empty_like(lam), np.empty_like(lam), np.empty_like(lam))
    rhs, cone = problem.rhs, (problem.rows, *problem.laws)

    def sweep(count: int) -> int:
        return prox_jacobi_any(op, rhs, base, cone, rules, iterate, progress, count)

    def sync() -> None:
        counts[E_VALID] = 0

    return run(problem, lam, settings, sweep, sync, hooks(*progress, info))
