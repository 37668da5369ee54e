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
