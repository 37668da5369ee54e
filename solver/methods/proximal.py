"""Erleben's proximal-operator fixed point with an adaptive r-factor: what `prox-gs` (sweep form)
and `prox-jacobi` (all-at-once form) share. The iteration is

    λ^{k+1} = prox_C(λ^k - R (A λ^k + b)),   prox_C = max(0, ·) for frictionless contacts

with R = s R0, s a scalar scale (starts at 1), and R0 by the `r` strategy: local γ / A_cc,
blocked one r per contact from its block (1×1 blocks while contacts are frictionless, so equal
to local), or global, one constant in kg. With friction the map is the cone's and the kernels
are in prox_friction.py. Adaptation: an iterate that fails the acceptance test (`merit`) is
rolled back and R <- ν R; an accepted one may grow R <- min(grow R, R0). The default test, the
objective f = ½λᵀAλ + bᵀλ, departs from Erleben's step test ‖Δλ‖∞, which stalls (R -> 0) where ρ
is not monotone; why, and the measurements: docs/solvers.md. `info`: accepted, rejected,
final_scale (s).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from numba import njit

from ..params import Param
from ..problem import ContactProblem
from .driver import Hooks
from ..options import SolveSettings

# Slots of the float64 `state` array kept between kernel calls.
SCALE, RHO, STOP = 0, 1, 2
# Slots of the int64 `counts` array.
ACCEPTED, REJECTED, PRODUCTS, E_VALID = 0, 1, 2, 3
STOP_ABSOLUTE, STOP_RELATIVE = 1.0, 2.0


@njit(cache=True, nogil=True)
def judge(rho, df, state, counts, rules):
    """Accept or reject an iterate of step ρ = ‖Δλ‖∞ (N s) and objective change df (J, or with
    friction prox_friction.verdict's sign); returns True when accepted. state, counts: the
    solve's arrays by the module's slots; rules: `adaptation`'s tuple. The stopping tests always
    use ρ (Erleben's merit)."""
    adapt, objective, nu, grow, rho_abs, rho_rel = rules
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


PARAMS = (
    Param("r", "local", str, "r-factor strategy: per row (local), one per contact from the "
          "largest eigenvalue of its 3×3 block (blocked; = local without friction), one constant "
          "(global)", choices=("local", "global", "blocked")),
    Param("gamma", 1.0, float, "relaxation γ of local/blocked: r = γ / A_cc (blocked with "
          "friction: γ / λmax of the contact's block)", lo=0.0, hi=2.0, lo_open=True,
          hi_open=True),
    Param("r_global", 5.0, float, "the constant r of the global strategy (Erleben: 5)", "kg",
          lo=0.0, lo_open=True),
    Param("adapt", True, bool, "adaptive r-factor: reject an iterate that fails the merit test"),
    Param("merit", "objective", str, "accept an iterate when it lowers f = ½λᵀAλ + bᵀλ "
          "(objective; with friction, which has no objective: FCLIB's error below twice its least of "
          "the last ten, or ‖Δλ‖∞ shrank) "
          "or, as Erleben, when ‖Δλ‖∞ shrinks (step)", choices=("objective", "step")),
    Param("nu", 0.0, float, "shrink factor ν of R on rejection; 0 = Erleben's: 0.9 for "
          "local/blocked, 0.1 for global", lo=0.0, hi=1.0, hi_open=True),
    Param("grow", 0.0, float, "R <- min(grow R, R0) after an accepted iterate (<= 1: off); "
          "0 = 1.1 for global, off for local/blocked", lo=0.0, hi=2.0),
    Param("rho_abs_tol", 0.0, float, "stop when Erleben's ρ = ‖Δλ‖∞ of an accepted "
          "iterate is below this (0: off)", "N s", lo=0.0),
    Param("rho_rel_tol", 0.0, float, "stop when ρ changes by less than this fraction between "
          "accepted iterates (0: off)", lo=0.0),
)


# The Jacobi form's own γ. At γ = 1 every contact of a marble pushes it as if alone; the
# objective test keeps each solve's f falling, but a 20-iteration solve of a pile then still
# pumps energy in, step after step, through the stabilisation (a settled box of 2000 marbles
# with μ 0.5 reached 3.5e4 m/s in 10 steps). At 0.4 every pile of benchmarks/pile_stability.py
# stayed about as settled as under `jacobi` (β = 0.3), with a residual at or below its
# (docs/solvers.md, "prox-jacobi's γ").
JACOBI_GAMMA = 0.4
JACOBI_PARAMS = tuple(
    replace(p, default=JACOBI_GAMMA, help="relaxation γ of local/blocked: r = γ / A_cc (blocked "
            "with friction: γ / λmax of the contact's block); 1 is undamped, which the adaptation "
            "alone does not keep from pumping energy into a pile") if p.name == "gamma" else p
    for p in PARAMS)

GLOBAL_GROW = 1.1  # the default growth of the global strategy (its ν = 0.1 cuts R tenfold)


def scale_rules(settings: SolveSettings) -> tuple[float, float]:
    """(ν, grow) of the adaptation, the settings' own or, at 0, the `r` strategy's defaults:
    0.1 and GLOBAL_GROW for global, 0.9 and 1 (off) for local and blocked."""
    if settings["r"] == "global":
        return settings["nu"] or 0.1, settings["grow"] or GLOBAL_GROW
    return settings["nu"] or 0.9, settings["grow"] or 1.0


def strategy(problem: ContactProblem, settings: SolveSettings):
    """(denom, factor, nu, grow) of the chosen r-factor strategy: R_c = s factor / denom_c,
    and denom_c = 0 marks an inert row (A_cc = 0, both ends fixed), which the kernels skip."""
    nu, grow = scale_rules(settings)
    if settings["r"] == "global":
        return (problem.diag != 0.0).astype(np.float64), settings["r_global"], nu, grow
    return problem.diag, settings["gamma"], nu, grow


def adaptation(settings: SolveSettings, nu: float, grow: float) -> tuple:
    """The judge's rules, one tuple per solve: (adapt, objective test, ν, grow, rho_abs_tol
    (N s), rho_rel_tol); ν and grow are the strategy's (`strategy`,
    prox_friction.friction_strategy)."""
    return (settings["adapt"], settings["merit"] == "objective", nu, grow,
            settings["rho_abs_tol"], settings["rho_rel_tol"])


def hooks(state, counts, info) -> Hooks:
    """The driver's hooks over the kernel's state and counts: `stop`, `products`, `info`."""
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

    return Hooks(stop, products, info)


def fresh_state():
    """(state, counts) of a new solve: scale 1, no accepted ρ yet, no counts."""
    state = np.zeros(3)
    state[SCALE] = 1.0
    state[RHO] = np.inf
    return state, np.zeros(4, dtype=np.int64)


