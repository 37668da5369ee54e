"""Products with A for the all-at-once methods (jacobi on an explicit W, prox-jacobi and apgd with
friction), whatever the problem is: the frictionless ContactProblem, the frictional problem
over geometry, or an explicit matrix (solver/explicit.py). `operator(problem)` returns
(kind, geo, csr), plain tuples of arrays of fixed types, so each kernel compiles once and
`product` picks the path inside it; and the per-contact steps of the local laws.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..coulomb import frictional_contact_velocity, frictional_impulse_velocity
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, apply_matrix
from ..explicit import csr_apply

# Which product a kernel computes (`product`'s switch), one per problem kind.
GEOMETRY, MATRIX, FRICTIONLESS_OPERATOR = 0, 1, 2


def _none_f(shape) -> np.ndarray:
    return np.zeros(shape)


def _matrix(problem) -> tuple[int, tuple, tuple]:
    empty_i = np.zeros(0, dtype=np.int64)
    geo = (empty_i, empty_i, _none_f((0, 3)), _none_f((0, 3)), _none_f((0, 3)), _none_f(0),
           _none_f(0), _none_f(0), _none_f(0), _none_f((0, 6)))
    return MATRIX, geo, (problem.indptr, problem.indices, problem.data)


def _geometry(p) -> tuple[int, tuple, tuple]:
    c = np.ascontiguousarray
    empty_i = np.zeros(0, dtype=np.int64)
    geo = (c(p.body_a, np.int64), c(p.body_b, np.int64), c(p.normal, np.float64), c(p.t1),
           c(p.t2), c(p.arm_a), c(p.arm_b), c(p.inv_mass, np.float64), c(p.inv_inertia),
           np.empty((p.n, 6)))
    return GEOMETRY, geo, (empty_i, empty_i, _none_f(0))


def _frictionless(p) -> tuple[int, tuple, tuple]:
    c = np.ascontiguousarray
    empty_i = np.zeros(0, dtype=np.int64)
    geo = (c(p.body_a, np.int64), c(p.body_b, np.int64), c(p.normal, np.float64),
           _none_f((0, 3)), _none_f((0, 3)), _none_f(0), _none_f(0),
           c(p.inv_mass, np.float64), _none_f(0), np.empty((p.n, 3)))
    return FRICTIONLESS_OPERATOR, geo, (empty_i, empty_i, _none_f(0))


_OPERATORS = {FRICTIONLESS: _frictionless, FRICTIONAL: _geometry, EXPLICIT: _matrix}


def operator(problem) -> tuple[int, tuple, tuple]:
    """(kind, geo, csr): geo = (body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass,
    inv_inertia, scratch (n, 6) or (n, 3)), csr = (indptr, indices, data) of W; the arrays a
    kind does not use are empty, of the same types."""
    return _OPERATORS[problem.kind](problem)


@njit(inline="always", cache=True, nogil=True)
def product(kind, geo, csr, rows, lam, out):
    """out <- A λ (one product) for the problem `operator` described."""
    if kind == MATRIX:
        csr_apply(csr[0], csr[1], csr[2], lam, out)
    elif kind == GEOMETRY:
        frictional_impulse_velocity(geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6],
                                    geo[7], geo[8], lam, rows, geo[9])
        frictional_contact_velocity(geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6],
                                    geo[9], rows, out)
    else:
        apply_matrix(geo[0], geo[1], geo[2], geo[7], lam, geo[9], out)


def tangent_bound(problem) -> np.ndarray:
    """(m,) the largest eigenvalue of each contact's 2x2 tangent block (1/kg): one step size
    for both tangents, so that a slide opposes u_t (steps that differ per tangent would turn
    the impulse away from the slip)."""
    return problem.tangent_bound()


def block_bound(problem) -> np.ndarray:
    """(m,) the largest eigenvalue of each contact's 3x3 block of A (1/kg): the bound behind
    the `blocked` r-factor."""
    return problem.block_bound()


def _over(factor: float, values: np.ndarray) -> np.ndarray:
    out = np.zeros_like(values)
    np.divide(factor, values, out=out, where=values > 0.0)
    return out


def local_steps(problem, factor: float) -> np.ndarray:
    """(m, 3): each contact's steps factor / A_nn (0 for an inert contact, A_nn = 0), factor /
    tangent_bound for both tangents, and factor / A_rr for its rolling rows (0 without)."""
    rows = problem.rows
    steps = np.zeros((problem.m, 3))
    steps[:, 0] = _over(factor, problem.diag[0::rows])
    steps[:, 1] = _over(factor, tangent_bound(problem))
    if rows > 3:
        steps[:, 2] = _over(factor, problem.diag[3::rows])
    steps[steps[:, 0] == 0.0] = 0.0
    return steps
