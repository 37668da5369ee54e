"""Jacobi-preconditioned projected conjugate gradient: `pcg` with P = diag(A),
so z = r / A_cc. The kernel is pcg's; one iteration = 2 products with A, as there."""
from __future__ import annotations

import numpy as np

from ..problem import ContactProblem, inverse_diag
from .driver import Method
from ..options import SolveSettings
from .pcg import RESTART, SAFEGUARD, solve_preconditioned


def solve(problem: ContactProblem, lam0: np.ndarray, settings: SolveSettings):
    return solve_preconditioned(problem, lam0, settings, inverse_diag(problem.diag))


METHOD = Method("ppcg", "Preconditioned projected CG", solve,
                "projected CG with the Jacobi preconditioner P = diag(A)", (RESTART, SAFEGUARD))
