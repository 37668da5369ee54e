"""Erleben's proximal-operator fixed point with an adaptive r-factor (SOLVERS.md §4); the kernels
shared by `prox-gs` (Gauss-Seidel form) and `prox-jacobi` (Jacobi form).

    λ^{k+1} = prox_C(λ^k - R (A λ^k + b)),   prox_C = max(0, ·) for frictionless contacts

R = s R0 with a scalar scale s (starts at 1) and R0 by strategy:

- local:   R0_c = γ / A_cc (γ: relaxation in (0, 2));
- blocked: R0_c = (A_kk)^-1 for contact k's block; frictionless contacts have 1×1 blocks, so this
           is exactly `local` until friction exists;
- global:  R0_c = r, one constant in kg (N s per m/s), default 5 as in Erleben's code.

Adaptation, Erleben's scheme with one deviation, the acceptance test (`merit`):

- reject an iterate, roll λ (and the velocities or A λ cached from it) back, and shrink R <- ν R
  (ν: 0.9 local/blocked, 0.1 global, as in Erleben's code); otherwise accept it and, optionally,
  grow R again, R <- min(grow R, R0) (some later variants do this; capped at R0 so that growth
  only undoes earlier shrinking). Default growth: 1.1 for global, whose ν = 0.1 cuts R tenfold
  at once; none for local/blocked (on the bowl, growth in Jacobi form costs more rejections
  than it saves).
- `merit=objective` (default, the deviation): accept when the iterate lowers the QP objective
  f = ½λᵀAλ + bᵀλ (strictly; an unmoved λ is a fixed point and is kept).
- `merit=step` (Erleben): accept when ρ = ‖λ^{k+1} - λ^k‖∞ (N s) is smaller than the last
  accepted ρ (equality rejects: a projected 2-cycle λ -> 0 -> λ keeps ρ equal).

Why the deviation: ρ shrinks with R itself (Δλ ≈ R e), so each rejection makes the next ρ
smaller, and wherever ρ is not monotone (Gauss-Seidel's usually is not) R decays towards 0 until
λ stops moving: on random small LCPs R ended below 1e-14 R0 with the residual at 0.06 m/s
(README, Solver laboratory). Merits that do not shrink with R did worse in a prototype:
‖R⁻¹Δλ‖∞ (the proximal residual, m/s) grows as R shrinks, so after one failure the rejections
never end, and the natural-map residual is not monotone along convergent iterates either.
f is: every Gauss-Seidel sweep with local r and s γ < 2 lowers it, so `prox-gs` never rejects
there and is exactly PSOR; a Jacobi step lowers it once s < 2 / λmax(R0^½ A R0^½), so s stays
bounded away from 0. Both are then convergent classical schemes. The change of f costs no
product in Gauss-Seidel form: a contact's update Δ_c, made with its fresh e_c, changes f by
Δ_c (e_c + ½ A_cc Δ_c), which is <= 0 whenever R_c A_cc < 2; so with local/blocked r the
test cannot fail and the sweep skips the sum and the copies a rollback needs (a NaN is then
the driver's divergence, as for psor); only global r sums it. In Jacobi form it
needs A λ' for the candidate λ', which is the product the next iterate needs anyway when λ' is
accepted.

Stopping on the merit (Erleben): ρ < rho_abs_tol (status absolute) or |ρ_{k+1} - ρ_k| <
rho_rel_tol ρ_k (status relative) over accepted iterates, with ρ = ‖Δλ‖∞ whichever test accepts;
both off by default; the natural-map tolerances of every method (abs_tol, rel_tol) apply as well.

One iteration = one attempted iterate, accepted or rejected. Gauss-Seidel: one sweep (cost of one
product with A) either way. Jacobi: one product with A per attempted iterate with the objective
test (plus the first); with the step test one only when λ changed since the last one (a rejected
iterate leaves λ and its cached A λ unchanged, so the retry with the smaller R is free).
`info`: accepted, rejected, final_scale (s).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .method import SolveSettings, run
from .params import Param
from .problem import ContactProblem, apply_matrix

# Slots of the float64 `state` array kept between kernel calls.
SCALE, RHO, STOP = 0, 1, 2
# Slots of the int64 `counts` array.
ACCEPTED, REJECTED, PRODUCTS, E_VALID = 0, 1, 2, 3
STOP_ABSOLUTE, STOP_RELATIVE = 1.0, 2.0


@njit(cache=True, nogil=True)
def _judge(rho, df, state, counts, adapt, objective, nu, grow, rho_abs, rho_rel):
    """Accept or reject an iterate of step ρ = ‖Δλ‖∞ and objective change df; returns True when
    accepted. The stopping tests always use ρ (Erleben's merit)."""
    previous = state[RHO]
    if objective:
        # f = ½λᵀAλ + bᵀλ must drop (an unmoved λ is a fixed point and is kept). Strict: a
        # projected 2-cycle λ -> 0 -> λ can keep f equal (one contact, A r = 2).
        ok = df < 0.0 or rho == 0.0
    else:
        # Erleben: the merit must shrink (equality counts as growth, for the same 2-cycle).
        ok = rho < previous or rho == 0.0
    if adapt and not ok:  # a NaN fails both tests
        counts[REJECTED] += 1
        state[SCALE] *= nu
        return False
    counts[ACCEPTED] += 1
    state[RHO] = rho
    if adapt and grow > 1.0:
        state[SCALE] = min(state[SCALE] * grow, 1.0)
    if rho_abs > 0.0 and rho < rho_abs:
        state[STOP] = STOP_ABSOLUTE
    elif rho_rel > 0.0 and previous < np.inf and abs(previous - rho) < rho_rel * previous:
        state[STOP] = STOP_RELATIVE
    return True


@njit(cache=True, nogil=True)
def prox_gs_iterations(body_a, body_b, normal, bias, inv_mass, diag, denom, factor, v, lam,
                       lam_old, v_old, state, counts, count, adapt, objective, nu, grow, rho_abs,
                       rho_rel):
    """`count` Gauss-Seidel proximal iterations in place; returns the number performed (fewer
    when the merit test stops). v (n, 3) = v* + M^-1 J^T λ is kept consistent with λ; R_c =
    state[SCALE] * factor / denom[c] (local: factor γ, denom A_cc; global: factor r, denom 1),
    written so that with s = 1 the update is bit-for-bit PSOR's λ_c - ω e_c / A_cc.
    The sweep's change of f is exact and free: a contact's update Δ_c, made with its fresh e_c,
    changes f by Δ_c (e_c + ½ A_cc Δ_c); with local r and s γ < 2 every term is <= 0."""
    m = lam.shape[0]
    track = adapt and objective
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if adapt:
            lam_old[:] = lam
            v_old[:] = v
        step = state[SCALE] * factor
        rho = 0.0
        df = 0.0
        for c in range(m):
            a = body_a[c]
            b = body_b[c]
            n0 = normal[c, 0]
            n1 = normal[c, 1]
            n2 = normal[c, 2]
            e = n0 * v[b, 0] + n1 * v[b, 1] + n2 * v[b, 2] + bias[c]
            if a >= 0:
                e -= n0 * v[a, 0] + n1 * v[a, 1] + n2 * v[a, 2]
            new = lam[c] - step * e / denom[c]
            if new < 0.0:
                new = 0.0
            delta = new - lam[c]
            lam[c] = new
            if not abs(delta) <= rho:
                rho = abs(delta)  # also carries a NaN through to the test below
            if track:
                df += delta * (e + 0.5 * diag[c] * delta)
            s = inv_mass[b] * delta
            v[b, 0] += s * n0
            v[b, 1] += s * n1
            v[b, 2] += s * n2
            if a >= 0:
                s = inv_mass[a] * delta
                v[a, 0] -= s * n0
                v[a, 1] -= s * n1
                v[a, 2] -= s * n2
        counts[PRODUCTS] += 1
        if not _judge(rho, df, state, counts, adapt, objective, nu, grow, rho_abs, rho_rel):
            lam[:] = lam_old
            v[:] = v_old
    return done


@njit(cache=True, nogil=True)
def prox_jacobi_iterations(body_a, body_b, normal, inv_mass, rhs, denom, factor, lam, cand,
                           e, e_new, dv, state, counts, count, adapt, objective, nu, grow,
                           rho_abs, rho_rel):
    """`count` Jacobi proximal iterations in place; returns the number performed. e (m,) caches
    A λ + b while counts[E_VALID] is 1. With the objective test every attempted iterate costs
    one product, e_new = A λ' + b, which gives f(λ') - f(λ) = ½ (λ' - λ)ᵀ(e + e_new) exactly and
    becomes the cached e when λ' is accepted; with the step test a rejection costs nothing."""
    m = lam.shape[0]
    done = 0
    for _ in range(count):
        if state[STOP] != 0.0:
            break
        done += 1
        if counts[E_VALID] == 0:
            apply_matrix(body_a, body_b, normal, inv_mass, lam, dv, e)
            for c in range(m):
                e[c] += rhs[c]
            counts[PRODUCTS] += 1
            counts[E_VALID] = 1
        step = state[SCALE] * factor
        rho = 0.0
        for c in range(m):
            new = lam[c] - step * e[c] / denom[c]
            if new < 0.0:
                new = 0.0
            cand[c] = new
            delta = abs(new - lam[c])
            if not delta <= rho:
                rho = delta
        df = 0.0
        moved = objective and rho != 0.0
        if moved:
            apply_matrix(body_a, body_b, normal, inv_mass, cand, dv, e_new)
            counts[PRODUCTS] += 1
            for c in range(m):
                e_new[c] += rhs[c]
                df += (cand[c] - lam[c]) * (e[c] + e_new[c])
            df *= 0.5
        if _judge(rho, df, state, counts, adapt, objective, nu, grow, rho_abs, rho_rel):
            lam[:] = cand
            if moved:
                e[:] = e_new
            elif not objective:
                counts[E_VALID] = 0
    return done


PARAMS = (
    Param("r", "local", str, "r-factor strategy; blocked = local while contacts are frictionless "
          "(1×1 blocks)", choices=("local", "global", "blocked")),
    Param("gamma", 1.0, float, "relaxation γ of local/blocked: r_c = γ / A_cc", lo=0.0, hi=2.0,
          lo_open=True, hi_open=True),
    Param("r_global", 5.0, float, "the constant r of the global strategy, kg (Erleben: 5)",
          lo=0.0, lo_open=True),
    Param("adapt", True, bool, "adaptive r-factor: reject an iterate that fails the merit test"),
    Param("merit", "objective", str, "accept an iterate when it lowers f = ½λᵀAλ + bᵀλ "
          "(objective) or, as Erleben, when ‖Δλ‖∞ shrinks (step)", choices=("objective", "step")),
    Param("nu", 0.0, float, "shrink factor ν of R on rejection; 0 = Erleben's: 0.9 for "
          "local/blocked, 0.1 for global", lo=0.0, hi=1.0, hi_open=True),
    Param("grow", 0.0, float, "R <- min(grow R, R0) after an accepted iterate (<= 1: off); "
          "0 = 1.1 for global, off for local/blocked", lo=0.0, hi=2.0),
    Param("rho_abs_tol", 0.0, float, "stop when Erleben's ρ = ‖Δλ‖∞ (N s) of an accepted "
          "iterate is below this (0: off)", lo=0.0),
    Param("rho_rel_tol", 0.0, float, "stop when ρ changes by less than this fraction between "
          "accepted iterates (0: off)", lo=0.0),
)


GLOBAL_GROW = 1.1  # the default growth of the global strategy (its ν = 0.1 cuts R tenfold)


def _strategy(problem: ContactProblem, settings: SolveSettings):
    """(denom, factor, nu, grow) of the chosen r-factor strategy."""
    kind = settings.get("r", "local")
    nu = float(settings.get("nu", 0.0))
    grow = float(settings.get("grow", 0.0))
    if kind == "global":
        return (np.ones(problem.m), float(settings.get("r_global", 5.0)), (nu or 0.1),
                (grow or GLOBAL_GROW))
    return problem.diag, float(settings.get("gamma", 1.0)), (nu or 0.9), (grow or 1.0)


def _common(settings: SolveSettings):
    return (bool(settings.get("adapt", True)), settings.get("merit", "objective") == "objective",
            float(settings.get("rho_abs_tol", 0.0)), float(settings.get("rho_rel_tol", 0.0)))


def _hooks(state, counts, info):
    def stop():
        code = state[STOP]
        if code == STOP_ABSOLUTE:
            return "absolute"
        if code == STOP_RELATIVE:
            return "relative"
        return None

    def products():
        info["accepted"] = int(counts[ACCEPTED])
        info["rejected"] = int(counts[REJECTED])
        info["final_scale"] = float(state[SCALE])
        return int(counts[PRODUCTS])

    return stop, products


def _fresh_state():
    state = np.zeros(3)
    state[SCALE] = 1.0
    state[RHO] = np.inf
    return state, np.zeros(4, dtype=np.int64)


def solve_gauss_seidel(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    denom, factor, nu, grow = _strategy(problem, settings)
    adapt, objective, rho_abs, rho_rel = _common(settings)
    if objective and settings.get("r", "local") != "global":
        # The objective test cannot fail here: with r_c = s γ / A_cc, s <= 1 and γ < 2, every
        # contact's update lowers f. So the sweep needs no copies for a rollback and no sum (a
        # NaN is then the driver's divergence, as for psor).
        adapt = False
    v = problem.velocity(lam)
    bias = problem.bias
    lam_old = np.empty_like(lam)
    v_old = np.empty_like(v)
    state, counts = _fresh_state()
    info: dict = {}

    def sweep(count: int) -> int:
        return prox_gs_iterations(problem.body_a, problem.body_b, problem.normal, bias,
                                  problem.inv_mass, problem.diag, denom, factor, v, lam, lam_old,
                                  v_old, state, counts, count, adapt, objective, nu, grow,
                                  rho_abs, rho_rel)

    def sync() -> None:
        v[:] = problem.velocity(lam)

    stop, products = _hooks(state, counts, info)
    return run(problem, lam, settings, sweep, sync, info=info, stop=stop, products=products)


def solve_jacobi(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    denom, factor, nu, grow = _strategy(problem, settings)
    adapt, objective, rho_abs, rho_rel = _common(settings)
    m = problem.m
    cand = np.empty(m)
    e = np.empty(m)
    e_new = np.empty(m)
    dv = np.empty_like(problem.v_pred)
    state, counts = _fresh_state()
    info: dict = {}

    def sweep(count: int) -> int:
        return prox_jacobi_iterations(problem.body_a, problem.body_b, problem.normal,
                                      problem.inv_mass, problem.rhs, denom, factor, lam, cand, e,
                                      e_new, dv, state, counts, count, adapt, objective, nu, grow,
                                      rho_abs, rho_rel)

    def sync() -> None:
        counts[E_VALID] = 0

    stop, products = _hooks(state, counts, info)
    return run(problem, lam, settings, sweep, sync, info=info, stop=stop, products=products)
