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

from ..drivers import driver
from .gauss_seidel import frictional_sweeps, relaxed_sweeps
from .sweeps import FRICTION_LAWS, pack
from ..params import Param
from ..partition import share, share_of, shares
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem, row_step
from ..products import impulse_velocity, velocity_change
from .driver import Method, run
from ..options import SolveSettings
from .matrix_sweeps import solve_matrix

# The exact Coulomb disk is the default: its projection is closed-form, and the box lets a
# marble sliding diagonally feel √2 μ (friction that depends on the direction of slip). ccp
# is Anitescu's convex relaxation: it finds a pile's static forces wherever statics allows
# them, where Coulomb's law has sliding solutions too (docs/friction.md).
FRICTION = Param("friction", "cone", str, "friction law: the Coulomb disk ‖λ_t‖ <= μ λ_n after "
                 "the normal (cone), each tangent in ±μ λ_n (box, as many engines), or the "
                 "three rows projected onto the cone at once (ccp, Anitescu's relaxation)",
                 choices=tuple(FRICTION_LAWS))


@driver(parallel=True, cache=True, nogil=True)
def prepare(A, lam, v_pred, rows_in, scale, out, partition):
    """What the sweeps need, in one call, out = (v, bias, step): v (n, 3) <- v* + M^-1 J^T λ
    (m/s), bias (m,) <- gap / h (m/s), step (m,) <- ω / A_cc (kg), from rows_in = (gap (m,) m,
    diag (m,) 1/kg) and scale = (h s, ω). The same operations as ContactProblem.velocity,
    ContactProblem.bias and ``inverse_diag(diag, ω)``, so the results are bit for bit theirs;
    over the partition, inline for one block."""
    v = out[0]
    ranges = partition[0]
    if shares(ranges) == 1:
        impulse_velocity(A, lam, v)
        _prepare_range(v_pred, rows_in, scale, out, (np.int64(0), v.shape[0]),
                       (np.int64(0), lam.shape[0]))
        return
    velocity_change(A, lam, v, partition)
    parts = shares(ranges)
    n = v.shape[0]
    for t in prange(parts):
        _prepare_range(v_pred, rows_in, scale, out, share_of(n, parts, t), share(ranges, t))


@njit(cache=True, nogil=True)
def _prepare_range(v_pred, rows_in, scale, out, marbles, contacts):
    """prepare's v += v* for marbles [first, last) = `marbles`, bias and step for contacts
    [first, last) = `contacts`."""
    v, bias, step = out
    gap, diag = rows_in
    dt, omega = scale
    for i in range(marbles[0], marbles[1]):
        v[i, 0] = v_pred[i, 0] + v[i, 0]
        v[i, 1] = v_pred[i, 1] + v[i, 1]
        v[i, 2] = v_pred[i, 2] + v[i, 2]
    for c in range(contacts[0], contacts[1]):
        bias[c] = gap[c] / dt
        # An inert row (A_cc = 0, both ends fixed) keeps its start impulse.
        step[c] = row_step(omega, diag[c])


def solve_frictional(problem, lam0: np.ndarray, settings: SolveSettings, omega: float,
                     naive: bool = False):
    """Sweeps of solver.friction.sweep_contact over a FrictionalProblem: each contact's normal
    (PGS, or naive's increment clamping), then its tangents onto the disk (or box), then its
    rolling rows; every row's step ω / A_jj."""
    rule = (FRICTION_LAWS[settings.params.get("friction", "cone")], naive, problem.rows)
    lam = np.array(lam0, dtype=np.float64)
    V = problem.velocity(lam)
    packed = pack(problem, omega)
    ends = (problem.body_a, problem.body_b)

    def sweep(count: int) -> None:
        frictional_sweeps(ends, packed, rule, V, lam, count, problem.partition)

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
    prepare(problem.A, lam, problem.v_pred, (problem.gap, problem.diag),
            (float(problem.dt), float(omega)), (v, bias, step), problem.partition)

    def sweep(count: int) -> None:
        relaxed_sweeps(problem.A, (bias, step), v, lam, count, problem.partition)

    def sync() -> None:
        v[:] = problem.velocity(lam)

    return run(problem, lam, settings, sweep, sync)


METHOD = Method("pgs", "Projected Gauss-Seidel", relaxed_solvers(lambda settings: 1.0),
                "sequential impulses with accumulated clamping (Bullet, most game engines)",
                (FRICTION,))
