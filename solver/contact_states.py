"""What a frictional solve's answer says each contact does: separate (no normal impulse), stick
(no slip: the tangential velocity within the answer's own error), or slide; and, among the
sticking ones, how many sit on the cone's boundary (‖λ_t‖ = μ λ_n: about to slip, where the
solvers' local laws are not differentiable).

A slip is told from a stick by the answer's own accuracy: a tangential speed below a few times
the solve's residual (m/s) is as much a rounding of zero as an actual slip, so the split is
honest for an answer of any accuracy. Works on every frictional problem kind (geometry or an
explicit W): u = W λ + q comes from the problem's own product.
"""
from __future__ import annotations

import numpy as np

SEPARATED, STICKING, SLIDING = "separated", "sticking", "sliding"
AT_THE_CONE = "sticking_at_the_cone"  # a subset of STICKING
SLACK = 10.0  # a slip counts when faster than this many times the answer's residual
CONE_FRACTION = 1.0 - 1e-9  # ‖λ_t‖ at least this share of μ λ_n: on the boundary


def contact_states(problem, lam: np.ndarray, residual: float | None = None) -> dict:
    """Counts of SEPARATED, STICKING, SLIDING contacts and AT_THE_CONE of the sticking ones for
    impulses `lam` (size,) of frictional `problem`; `residual` (m/s): the answer's error
    (problem.residual(lam) when not given). Inert contacts (both ends fixed) are left out."""
    m, rows = problem.m, problem.rows
    lam = np.asarray(lam, dtype=np.float64)
    if residual is None:
        residual = float(problem.residual(lam))
    L = lam.reshape(m, rows)
    u = problem.error(lam).reshape(m, rows)
    live = np.asarray(problem.diag, dtype=np.float64).reshape(m, rows)[:, 0] > 0.0
    normal = L[:, 0]
    scale = float(np.max(normal[live], initial=0.0))
    separated = live & (normal <= 1e-12 * scale)
    slip = np.sqrt(u[:, 1] ** 2 + u[:, 2] ** 2)
    threshold = SLACK * max(residual, 1e-15) if np.isfinite(residual) else np.inf
    sliding = live & ~separated & (slip > threshold)
    sticking = live & ~separated & ~sliding
    tangent = np.sqrt(L[:, 1] ** 2 + L[:, 2] ** 2)
    mu = np.asarray(problem.mu, dtype=np.float64)
    at_cone = sticking & (mu > 0.0) & (tangent >= CONE_FRACTION * mu * normal)
    return {SEPARATED: int(separated.sum()), STICKING: int(sticking.sum()),
            SLIDING: int(sliding.sum()), AT_THE_CONE: int(at_cone.sum())}


def states_text(states: dict) -> str:
    """One phrase: 'N stick (K at the cone), M slide, J separate'."""
    return (f"{states[STICKING]} stick ({states[AT_THE_CONE]} at the cone), "
            f"{states[SLIDING]} slide, {states[SEPARATED]} separate")


STALL_SHARE = 0.25  # the tail of a trace whose progress is judged
STALL_FACTOR = 0.5  # a tail that did not halve the error has stalled
STALL_MIN = 8  # iterations a tail needs before it can be judged


def pseudo_solution(states: dict, trace, abs_tol: float) -> dict | None:
    """A static pseudo-solution: the error has stalled above `abs_tol` while every loaded
    contact sticks (none slides), the answer towards which Coulomb sweeps and Newton head on
    piles whose solutions slide. `trace`: the residual after every iteration (m/s). None when
    not so; else the stalled error, the factor its tail achieved and the tail's length."""
    trace = np.asarray(trace if trace is not None else [], dtype=np.float64)
    tail = max(STALL_MIN, int(STALL_SHARE * (trace.size - 1)))
    if trace.size <= tail or states[SLIDING] or not states[STICKING]:
        return None
    final, before = float(trace[-1]), float(trace[-1 - tail])
    if not (np.isfinite(final) and np.isfinite(before)) or final <= abs_tol or before <= 0.0:
        return None
    factor = final / before
    if factor < STALL_FACTOR:
        return None
    return {"error": final, "factor": factor, "iterations": tail}


def pseudo_text(pseudo: dict) -> str:
    return (f"pseudo-solution: the residual stalled at {pseudo['error']:.3e} m/s (×"
            f"{pseudo['factor']:.2f} over the last {pseudo['iterations']} iterations) while no "
            f"loaded contact slides: a static answer that need not be a solution (socp or "
            f"portfolio look for sliding ones)")
