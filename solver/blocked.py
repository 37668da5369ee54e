"""The parallel forms of a step's per-marble and per-contact passes, for a step whose contacts
come in blocks (solver/partition.py): predict, assemble and integrate.

Each computes, element by element, the very operations of its serial counterpart
(step.predict, problem._assemble, step.integrate) on the same values; only which thread does an
element changes. The sum over contacts into a marble (the scatter M^-1 J^T λ) runs phase by
phase (products.py), so it adds the same terms in the same order for any number of threads.
"""
from __future__ import annotations

from numba import njit, prange

from .partition import shares
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
    """step.integrate over a partition (the same arguments, then the partition's ranges and
    phases), its marbles in `shares(ranges)` equal shares at once."""
    blocked_impulse_velocity(body_a, body_b, normal, inv_mass, lam, dv, ranges, phases)
    n = v.shape[0]
    parts = shares(ranges)
    for t in prange(parts):
        integrate_range(v_pred, dv, h, planar, x, v, order, t * n // parts, (t + 1) * n // parts)


@njit(cache=True, nogil=True)
def integrate_range(v_pred, dv, h, planar, x, v, order, first, last):
    """v <- v* + dv (m/s, y = 0 when `planar`), then x += h v (m), for marbles [first, last)
    of v* and dv's numbering; x and v (n, 3) in the world's, where marble s is order[s] (empty,
    locality.WORLD_ORDER: the same numbering, and dv may then be v itself). Writing the
    world's rows here spares a renumbered step the copies back (solver/locality.py)."""
    ordered = order.shape[0] > 0
    for s in range(first, last):
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
