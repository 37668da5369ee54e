"""Projected Gauss-Seidel, a.k.a. sequential impulses with accumulated clamping.

Sweep the contacts; at each, recompute e_c from the current velocities and clamp the accumulated
impulse, λ_c <- max(0, λ_c - ω e_c / A_cc), applying the change to both marbles at once. No matrix
is formed: the velocities carry A λ. ω = 1 here; `psor` and `pgs-sm` reuse these kernels
(gauss_seidel.py).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numba import njit, prange

from .gauss_seidel import frictional_sweeps, relaxed_sweeps
from .sweeps import FRICTION_LAWS, pack
from ..params import Param
from ..partition import share, share_of, shares
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem
from ..products import impulse_velocity, velocity_change
from .driver import Method, SolveSettings, run
from .matrix_sweeps import solve_matrix

# The exact Coulomb disk is the default: its projection is closed-form, and the box lets a
# marble sliding diagonally feel √2 μ (friction that depends on the direction of slip). ccp
# is Anitescu's convex relaxation: it finds a pile's static forces wherever statics allows
# them, where Coulomb's law has sliding solutions too (docs/friction.md).
FRICTION = Param("friction", "cone", str, "friction law: the Coulomb disk ‖λ_t‖ <= μ λ_n after "
                 "the normal (cone), each tangent in ±μ λ_n (box, as many engines), or the "
                 "three rows projected onto the cone at once (ccp, Anitescu's relaxation)",
                 choices=tuple(FRICTION_LAWS))


@njit(parallel=True, cache=True, nogil=True)
def prepare(body_a, body_b, normal, gap, dt, inv_mass, diag, v_pred, omega, lam, v, bias, step,
            ranges, phases):
    """What the sweeps need, in one call: v (n, 3) <- v* + M^-1 J^T λ (m/s), bias (m,) <- gap / h
    (m/s), step (m,) <- ω / A_cc (kg). The same operations as ContactProblem.velocity,
    ContactProblem.bias and ``omega / diag``, so the results are bit for bit theirs; over the
    partition, inline for one block."""
    if shares(ranges) == 1:
        impulse_velocity(body_a, body_b, normal, inv_mass, lam, v)
        _prepare_range(gap, dt, diag, v_pred, omega, v, bias, step, 0, v.shape[0], 0,
                       gap.shape[0])
        return
    velocity_change(body_a, body_b, normal, inv_mass, lam, v, ranges, phases)
    parts = shares(ranges)
    n = v.shape[0]
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        c_first, c_last = share(ranges, t)
        _prepare_range(gap, dt, diag, v_pred, omega, v, bias, step, first, last, c_first,
                       c_last)


@njit(cache=True, nogil=True)
def _prepare_range(gap, dt, diag, v_pred, omega, v, bias, step, first, last, c_first, c_last):
    """prepare's v += v* for marbles [first, last), bias and step for contacts
    [c_first, c_last)."""
    for i in range(first, last):
        v[i, 0] = v_pred[i, 0] + v[i, 0]
        v[i, 1] = v_pred[i, 1] + v[i, 1]
        v[i, 2] = v_pred[i, 2] + v[i, 2]
    for c in range(c_first, c_last):
        bias[c] = gap[c] / dt
        d = diag[c]
        # A_cc = 0 (both ends fixed): an inert row, which no impulse can change; it keeps its
        # start impulse (a Numba division by zero would raise).
        step[c] = omega / d if d != 0.0 else 0.0


def solve_frictional(problem, lam0: np.ndarray, settings: SolveSettings, omega: float,
                     naive: bool = False):
    """Sweeps of solver.friction.sweep_contact over a FrictionalProblem: each contact's normal
    (PGS, or naive's increment clamping), then its tangents onto the disk (or box), then its
    rolling rows; every row's step ω / A_jj."""
    law = FRICTION_LAWS[settings.params.get("friction", "cone")]
    lam = np.array(lam0, dtype=np.float64)
    V = problem.velocity(lam)
    packed = pack(problem, omega)
    p = problem

    def sweep(count: int) -> None:
        frictional_sweeps(p.body_a, p.body_b, packed, p.rows, law, naive, V, lam, count,
                          *p.partition)

    def sync() -> None:
        V[:] = problem.velocity(lam)

    return run(problem, lam, settings, sweep, sync)


def solve_frictional_matrix(problem, lam0: np.ndarray, settings: SolveSettings, omega: float,
                            naive: bool = False):
    """solve_frictional's laws over an explicit problem's matrix W (solver/explicit.py)."""
    law = FRICTION_LAWS[settings.params.get("friction", "cone")]
    return solve_matrix(problem, lam0, settings, law, omega, naive)


def relaxed_solvers(omega: Callable[[SolveSettings], float]) -> dict:
    """The solves of projected SOR for every problem kind, ω = omega(settings) (pgs: 1)."""
    return {
        FRICTIONLESS: lambda p, lam0, s: solve_relaxed(p, lam0, s, omega(s)),
        FRICTIONAL: lambda p, lam0, s: solve_frictional(p, lam0, s, omega(s)),
        EXPLICIT: lambda p, lam0, s: solve_frictional_matrix(p, lam0, s, omega(s)),
    }


def solve_relaxed(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings,
                  omega: float):
    """Projected SOR with relaxation ω from λ0 (pgs: ω = 1), without friction."""
    lam = np.array(lam0, dtype=np.float64)
    v = np.empty_like(problem.v_pred)
    bias = np.empty(problem.m)
    step = np.empty(problem.m)
    prepare(problem.body_a, problem.body_b, problem.normal, problem.gap, float(problem.dt),
            problem.inv_mass, problem.diag, problem.v_pred, float(omega), lam, v, bias, step,
            *problem.partition)

    def sweep(count: int) -> None:
        relaxed_sweeps(problem.body_a, problem.body_b, problem.normal, bias, problem.inv_mass,
                       step, v, lam, count, *problem.partition)

    def sync() -> None:
        v[:] = problem.velocity(lam)

    return run(problem, lam, settings, sweep, sync)


METHOD = Method("pgs", "Projected Gauss-Seidel", relaxed_solvers(lambda settings: 1.0),
                "sequential impulses with accumulated clamping (Bullet, most game engines)",
                (FRICTION,))
