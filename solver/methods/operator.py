"""Products with A for the all-at-once methods (jacobi on an explicit W, prox-jacobi and apgd with
friction), whatever the problem is: the frictionless ContactProblem, the frictional problem
over geometry, or an explicit matrix (solver/explicit.py). `operator(problem)` returns one
tuple of arrays of fixed types, so each kernel compiles once and `product` picks the path
inside it; and the per-contact steps of the local laws.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..coulomb import frictional_contact_velocity, frictional_impulse_velocity
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, apply_matrix, inverse_diag
from ..explicit import csr_apply

# Which product a kernel computes (`product`'s switch), one per problem kind.
GEOMETRY, MATRIX, FRICTIONLESS_OPERATOR = 0, 1, 2


def _empty_int() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


def _no_frictional() -> tuple:
    return (_empty_int(), _empty_int(), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)),
            np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), 3)


def _no_frictionless() -> tuple:
    return (_empty_int(), _empty_int(), np.zeros((0, 3)), np.zeros(0))


def _no_matrix() -> tuple:
    return (_empty_int(), _empty_int(), np.zeros(0))


def _contiguous(A: tuple) -> tuple:
    """A's arrays contiguous, of the kernels' types (int64 indices, float64 values)."""
    return tuple(np.ascontiguousarray(a, np.int64 if a.dtype.kind in "iu" else np.float64)
                 if isinstance(a, np.ndarray) else a for a in A)


def _matrix(p) -> tuple:
    return (MATRIX, _no_frictional(), _no_frictionless(), p.A, np.zeros((0, 6)))


def _geometry(p) -> tuple:
    return (GEOMETRY, _contiguous(p.A), _no_frictionless(), _no_matrix(), np.empty((p.n, 6)))


def _frictionless(p) -> tuple:
    return (FRICTIONLESS_OPERATOR, _no_frictional(), _contiguous(p.A), _no_matrix(),
            np.empty((p.n, 3)))


_OPERATORS = {FRICTIONLESS: _frictionless, FRICTIONAL: _geometry, EXPLICIT: _matrix}


def operator(problem) -> tuple:
    """(kind, frictional A, frictionless A, W, scratch): the problem's operator A (its factors,
    solver/products.py, or W in CSR (indptr, indices, data)) in the slot of its kind, the other
    slots empty arrays of the same types; scratch (n, 6) or (n, 3) for the products over
    geometry."""
    return _OPERATORS[problem.kind](problem)


@njit(inline="always", cache=True, nogil=True)
def product(op, lam, out):
    """out <- A λ (one product) for the problem `operator` described."""
    kind, frictional, frictionless, W, scratch = op
    if kind == MATRIX:
        csr_apply(W[0], W[1], W[2], lam, out)
    elif kind == GEOMETRY:
        frictional_impulse_velocity(frictional, lam, scratch)
        frictional_contact_velocity(frictional, scratch, out)
    else:
        apply_matrix(frictionless, lam, scratch, out)


def tangent_bound(problem) -> np.ndarray:
    """(m,) the largest eigenvalue of each contact's 2x2 tangent block (1/kg): one step size
    for both tangents, so that a slide opposes u_t (steps that differ per tangent would turn
    the impulse away from the slip)."""
    return problem.tangent_bound()


def block_bound(problem) -> np.ndarray:
    """(m,) the largest eigenvalue of each contact's 3x3 block of A (1/kg): the bound behind
    the `blocked` r-factor."""
    return problem.block_bound()


def local_steps(problem, factor: float) -> np.ndarray:
    """(m, 3): each contact's steps factor / A_nn (0 for an inert contact, A_nn = 0), factor /
    tangent_bound for both tangents, and factor / A_rr for its rolling rows (0 without)."""
    rows = problem.rows
    steps = np.zeros((problem.m, 3))
    steps[:, 0] = inverse_diag(problem.diag[0::rows], factor)
    steps[:, 1] = inverse_diag(tangent_bound(problem), factor)
    if rows > 3:
        steps[:, 2] = inverse_diag(problem.diag[3::rows], factor)
    steps[steps[:, 0] == 0.0] = 0.0
    return steps
