"""Nonsmooth Gauss-Seidel (Siconos' NSGS): sweep the contacts and solve each one's 3x3 Coulomb
problem exactly with the others fixed (laws.py).

For spheres a contact's block is diag(A_nn, A_tt, A_tt), whose local problem is closed-form,
and that solution is exactly the `cone` law's step with ω = 1: on the program's own problems
nsgs is pgs, iterate for iterate (a test holds them equal). It differs on an explicit W whose
blocks couple the rows (another tool's problem, an FCLIB file): there laws.coulomb_block solves
the block by enumeration (separate, stick, then the slip direction searched and bisected).
Rolling and spinning rows, when present, follow the three Coulomb rows as in pgs; without
friction it is pgs (a 1x1 local problem is a clamp). `info`: local_failures (explicit W: local
problems no case solved; none for a positive definite block).
"""
from __future__ import annotations

import numpy as np

from ..problem import EXPLICIT
from .driver import Method
from ..options import SolveSettings
from .laws import NSGS
from .matrix_sweeps import solve_matrix
from .pgs import relaxed_solvers


def solve_explicit(problem, lam0: np.ndarray, settings: SolveSettings):
    """Each contact's coupled 3x3 block solved by enumeration (laws.coulomb_block)."""
    return solve_matrix(problem, lam0, settings, NSGS)


METHOD = Method("nsgs", "Nonsmooth Gauss-Seidel",
                {**relaxed_solvers(lambda settings: 1.0), EXPLICIT: solve_explicit},
                "Siconos' NSGS: each contact's Coulomb problem solved exactly with the others "
                "fixed (closed form for spheres, where it is pgs; enumeration on a coupled block)")
