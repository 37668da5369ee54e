"""Whether an answer is still moving, and where it moves: the change of the impulses over more
iterations of the same solver, split into what the velocities see and what they do not.

With u = W λ + q, a change Δλ of the impulses changes the contact velocities by W Δλ. A pile's
W is singular (more contact rows than the marbles' degrees of freedom), so impulses can go on
changing along W's null space while every velocity stays put: the velocities have converged,
the impulses are not unique, and the residual cannot say so. `seen` compares ‖W Δλ‖ with what a
change of that size does along W's own scale (the mean of its positive diagonal, A_cc): about
1 for a change the velocities feel, 0 to rounding for one in the null space.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

# A change seen by the velocities less than this share of W's scale lies in its null space.
NULL_SHARE = 1e-3
# A relative change of the impulses below this is rounding: the answer has settled.
SETTLED = 1e-12

SETTLED_TEXT = "settled: the impulses no longer change"
NULL_TEXT = ("the impulses drift in W's null space: the velocities have converged, the "
             "impulses are not unique")
MOVING_TEXT = "still converging: the velocities change too"
REACHED_TEXT = "converged in these iterations: the residual fell to rounding"


@dataclass(frozen=True)
class Drift:
    """The change from impulses λ1 to λ2, `iterations` further iterations apart.
    impulse_change ‖Δλ‖₂ (N s; N m s on rolling rows), impulse_share ‖Δλ‖/‖λ1‖,
    velocity_change ‖W Δλ‖₂ (m/s), seen ‖W Δλ‖ / (mean A_cc ‖Δλ‖) (1/1), and the residuals
    (m/s) at both ends."""

    iterations: int
    impulse_change: float
    impulse_share: float
    velocity_change: float
    seen: float
    residual_before: float
    residual_after: float

    @property
    def verdict(self) -> str:
        """One phrase: settled, reached (a change that took the residual from its size to
        rounding: an exact solve's one iteration), drifting in W's null space, or still
        converging."""
        if not self.impulse_share > SETTLED:
            return SETTLED_TEXT
        if self.residual_before > 0.0 and self.residual_after <= SETTLED * self.residual_before:
            return REACHED_TEXT
        return NULL_TEXT if self.seen < NULL_SHARE else MOVING_TEXT

    def text(self) -> str:
        """One line for a report."""
        return (f"drift over {self.iterations} more iterations: impulses moved "
                f"{self.impulse_change:.3e} N s ({self.impulse_share:.2e} of ‖λ‖), velocities "
                f"{self.velocity_change:.3e} m/s (seen {self.seen:.1e}); {self.verdict}")

    def as_dict(self) -> dict:
        return {"iterations": self.iterations, "impulse_change": self.impulse_change,
                "impulse_share": self.impulse_share, "velocity_change": self.velocity_change,
                "seen": self.seen, "residual_before": self.residual_before,
                "residual_after": self.residual_after, "verdict": self.verdict}


def drift_between(problem, lam1: np.ndarray, lam2: np.ndarray, iterations: int) -> Drift:
    """The Drift from λ1 to λ2 (each (size,) of `problem`, any problem kind: W Δλ comes from
    the problem's own product, as the difference of its velocity errors)."""
    lam1 = np.ascontiguousarray(lam1, dtype=np.float64)
    lam2 = np.ascontiguousarray(lam2, dtype=np.float64)
    delta = float(np.linalg.norm(lam2 - lam1))
    size = float(np.linalg.norm(lam1))
    velocity = float(np.linalg.norm(problem.error(lam2) - problem.error(lam1)))
    diag = np.asarray(problem.diag, dtype=np.float64)
    scale = float(np.mean(diag[diag > 0.0])) if np.any(diag > 0.0) else 1.0
    seen = velocity / (scale * delta) if delta > 0.0 else 0.0
    return Drift(int(iterations), delta, delta / size if size > 0.0 else delta, velocity, seen,
                 float(problem.residual(lam1)), float(problem.residual(lam2)))


def drift(problem, method, settings, lam: np.ndarray, iterations: int) -> Drift:
    """Solve on from answer `lam` with `method` (solver.methods.driver.Method) for `iterations`
    more iterations, every one of them (no tolerance stops them: an answer within the
    tolerance may still drift), its other settings as given, and measure the Drift; `lam` is
    not changed."""
    params = {**settings.params, "abs_tol": 0.0, "rel_tol": 0.0}
    more = dataclasses.replace(settings, iterations=int(iterations), trace=False,
                               observer=None, params=params)
    after = method.solve(problem, np.array(lam, dtype=np.float64), more)
    return drift_between(problem, lam, after.lam, iterations)
