"""The parallel forms of a step's per-marble and per-contact passes, for a step whose contacts
come in blocks (solver/partition.py): predict, assemble and integrate.

Each computes, element by element, the very operations of its serial counterpart
(step.predict, problem._assemble, step.integrate) on the same values; only which thread does an
element changes. The sum over contacts into a marble (the scatter M^-1 J^T λ) runs phase by
phase (products.py), so it adds the same terms in the same order for any number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .products import blocked_impulse_velocity


@njit(parallel=True, cache=True, nogil=True)
def blocked_predict(v, gravity, h, decay, planar, out):
    """step.predict with the marbles shared among the threads: out (n, 3) <- decay v + h g."""
    g0 = h * gravity[0]
    g1 = h * gravity[1]
    g2 = h * gravity[2]
    for i in prange(v.shape[0]):
        out[i, 0] = decay * v[i, 0] + g0
        out[i, 1] = 0.0 if planar else decay * v[i, 1] + g1
        out[i, 2] = decay * v[i, 2] + g2


@njit(parallel=True, cache=True, nogil=True)
def blocked_integrate(body_a, body_b, normal, inv_mass, lam, v_pred, h, planar, x, v, dv,
                      order, ranges, phases):
    """step.integrate over a partition: v (n, 3) <- v* + M^-1 J^T λ (m/s), x (n, 3) += h v.
    The contacts and v* in the step's numbering, x and v in the world's, where marble s is
    order[s] (empty: the same numbering); dv (n, 3) scratch for M^-1 J^T λ, which may be v
    itself when the numberings are the same."""
    blocked_impulse_velocity(body_a, body_b, normal, inv_mass, lam, dv, ranges, phases)
    ordered = order.shape[0] > 0
    for u in prange(v.shape[0]):
        s = np.int64(u)  # a prange index is unsigned; mixed with signed it would be a float
        i = order[s] if ordered else s
        v[i, 0] = v_pred[s, 0] + dv[s, 0]
        v[i, 1] = 0.0 if planar else v_pred[s, 1] + dv[s, 1]
        v[i, 2] = v_pred[s, 2] + dv[s, 2]
        x[i, 0] += h * v[i, 0]
        x[i, 1] += h * v[i, 1]
        x[i, 2] += h * v[i, 2]


@njit(parallel=True, cache=True, nogil=True)
def blocked_assemble(body_a, body_b, normal, gap, inv_mass, v_pred, h, diag, rhs):
    """problem._assemble with the contacts shared among the threads: diag (m,) = A_cc (1/kg),
    rhs (m,) = J v* + gap/h (m/s)."""
    for c in prange(gap.shape[0]):
        a = body_a[c]
        b = body_b[c]
        u = normal[c, 0] * v_pred[b, 0] + normal[c, 1] * v_pred[b, 1] + normal[c, 2] * v_pred[b, 2]
        k = inv_mass[b]
        if a >= 0:
            u -= normal[c, 0] * v_pred[a, 0] + normal[c, 1] * v_pred[a, 1] + normal[c, 2] * v_pred[a, 2]
            k += inv_mass[a]
        diag[c] = k
        rhs[c] = u + gap[c] / h
