"""Projected Gauss-Seidel by colours: the contacts coloured so that no two of a colour share a
marble (solver/colouring.py), then swept colour by colour, each colour's contacts in index
order. Within a colour no update reads what another writes, so a colour is one parallel sweep:
the cuda backend runs exactly this iteration, a colour a pass of the whole grid
(solver/cuda/gauss_seidel.py). Here it is `pgs`'s sweep over the contacts in colour order,
the iterates of the GPU's solve.

It converges as PGS does (it is PGS in another order); the order costs some of PGS's speed on a
pile, whose spatial order carries information from the floor up within a sweep. With friction
each contact's update is pgs's cone law: the normal, then the tangents onto the disk μ λ_n
(and the rolling rows). On an explicit W (a file of another tool's) contacts neighbour where
W couples them, and the sweep is pgs's over W in colour order.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..colouring import colour_contacts, colour_coupled, colour_order
from ..explicit import MatrixProblem, csr_from_coo
from ..friction import FrictionalProblem
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem
from .driver import Method
from ..options import SolveSettings
from .laws import CONE
from .matrix_sweeps import solve_matrix
from .pgs import solve_frictional, solve_relaxed


def colouring(problem) -> tuple[np.ndarray, int]:
    """(colour (m,) int64, colours): the problem's contact colouring and how many colours."""
    if problem.explicit:
        colour, _ = colour_coupled(problem.indptr, problem.indices, problem.m)
    else:
        colour, _ = colour_contacts(problem.body_a, problem.body_b, problem.n)
    return colour, int(colour.max(initial=-1)) + 1


def _reordered_matrix(p: MatrixProblem, order: np.ndarray) -> MatrixProblem:
    """P W Pᵀ, P q, P μ for the block permutation P that lists contact order[k] k-th."""
    place = np.empty(p.m, dtype=np.int64)
    place[order] = np.arange(p.m)
    rows = np.repeat(np.arange(p.size), np.diff(p.indptr))
    W = csr_from_coo(3 * place[rows // 3] + rows % 3, 3 * place[p.indices // 3] + p.indices % 3,
                     p.data, p.size)
    q = p.q.reshape(-1, 3)[order].ravel()
    return MatrixProblem(*W, q, p.mu[order], p.title, p.description)


def reordered(problem, order: np.ndarray):
    """The same problem with its contacts in `order` (a permutation of 0..m-1), serial."""
    p = problem
    if p.explicit:
        return _reordered_matrix(p, order)
    key = None if p.key is None else p.key[order]
    if p.frictional:
        return FrictionalProblem(p.body_a[order], p.body_b[order], p.normal[order], p.gap[order],
                                 p.radius, p.inv_mass, p.V_pred, p.dt, p.mu[order],
                                 p.mu_roll[order], p.mu_spin[order], p.rows, key)
    return ContactProblem(p.body_a[order], p.body_b[order], p.normal[order], p.gap[order],
                          p.inv_mass, p.v_pred, p.dt, key)


def solve(problem, lam0: np.ndarray, settings: SolveSettings):
    """PGS (ω = 1; with friction the cone law) over the contacts in colour order, from λ0;
    info["colours"]: how many colours."""
    colour, colours = colouring(problem)
    order, _ = colour_order(colour)
    rows = problem.rows

    def back(lam_sorted: np.ndarray) -> np.ndarray:
        lam = np.empty(problem.size)
        lam.reshape(-1, rows)[order] = lam_sorted.reshape(-1, rows)
        return lam

    if settings.observer is not None:
        observer = settings.observer
        settings = dataclasses.replace(settings, observer=lambda lam: observer(back(lam)))
    start = np.asarray(lam0, dtype=np.float64).reshape(-1, rows)[order].ravel()
    sorted_problem = reordered(problem, order)
    if problem.explicit:
        result = solve_matrix(sorted_problem, start, settings, CONE, 1.0)
    elif problem.frictional:
        result = solve_frictional(sorted_problem, start, settings, 1.0)
    else:
        result = solve_relaxed(sorted_problem, start, settings, 1.0)
    return dataclasses.replace(result, lam=back(result.lam), info={"colours": colours})


METHOD = Method("coloured-gs", "Gauss-Seidel by colours",
                {FRICTIONLESS: solve, FRICTIONAL: solve, EXPLICIT: solve},
                "PGS over a colouring of the contacts: a colour's contacts share no marble, so "
                "each colour is one parallel sweep (the GPU's Gauss-Seidel)",
                devices=("cpu", "cuda"))
