"""Convergence measures (docs/solvers.md, convergence) and the exit statuses of one solve.

All residuals are in velocity units (m/s); `scaled` divides by ‖b‖∞ for scale-free comparisons.
The natural map is the default everywhere (traces, plots, benchmark files).
"""
from __future__ import annotations

import numpy as np

ABSOLUTE = "absolute"          # residual below the absolute tolerance
RELATIVE = "relative"          # iterates stopped changing (relative tolerance)
MAX_ITERATIONS = "max_iterations"  # iteration budget spent: non-convergence
DIVERGENCE = "divergence"      # residual grew past the bound, or NaN/inf appeared
STATUSES = (ABSOLUTE, RELATIVE, MAX_ITERATIONS, DIVERGENCE)


def natural_map(lam: np.ndarray, e: np.ndarray) -> float:
    """‖min(λ, e)‖∞: zero exactly at a solution of the LCP."""
    return float(np.max(np.abs(np.minimum(lam, e)), initial=0.0))


def fischer_burmeister(lam: np.ndarray, e: np.ndarray) -> float:
    """1/2 Σ φ(λ_c, e_c)^2 with φ(a, b) = a + b - sqrt(a^2 + b^2)."""
    phi = lam + e - np.hypot(lam, e)
    return float(0.5 * np.dot(phi, phi))


def parts(lam: np.ndarray, e: np.ndarray) -> dict[str, float]:
    """The article's three parts: negative impulses, remaining penetration velocity, and
    complementarity |λᵀe|."""
    return {
        "negativity": float(np.max(np.abs(np.minimum(lam, 0.0)), initial=0.0)),
        "penetration": float(np.max(np.abs(np.minimum(e, 0.0)), initial=0.0)),
        "complementarity": float(abs(np.dot(lam, e))),
    }


def all_measures(lam: np.ndarray, e: np.ndarray, rhs: np.ndarray) -> dict[str, float]:
    scale = float(np.max(np.abs(rhs), initial=0.0))
    nat = natural_map(lam, e)
    return {"natural_map": nat, "scaled": nat / scale if scale > 0 else nat,
            "fischer_burmeister": fischer_burmeister(lam, e), **parts(lam, e)}
