"""The two ends of a step: the velocities before contact (predict) and the impulses applied and
the positions advanced (integrate).

Each is written once, over a range of marbles, and run over `parts` equal shares of them at
once; with one part (a serial step) it runs inline on the calling thread. Which thread does a
marble never changes what is computed for it, and the sum over contacts into a marble runs
phase by phase (products.velocity_change), so a step's values depend on its block count only.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .drivers import driver
from .partition import share_of, shares
from .products import velocity_change


@njit(cache=True, nogil=True)
def predict_range(v, gravity, h, decay, planar, out, first, last):
    """out <- decay v + h g for marbles [first, last) (predict)."""
    g0 = h * gravity[0]
    g1 = h * gravity[1]
    g2 = h * gravity[2]
    for i in range(np.uint64(first), np.uint64(last)):
        out[i, 0] = decay * v[i, 0] + g0
        out[i, 1] = 0.0 if planar else decay * v[i, 1] + g1
        out[i, 2] = decay * v[i, 2] + g2


@driver(parallel=True, cache=True, nogil=True)
def predict(v, gravity, h, decay, planar, out, parts):
    """out (n, 3) <- decay v + h g, m/s: the velocities after drag and gravity, before contact,
    with y = 0 when `planar`. v: (n, 3) m/s; gravity: (3,) m/s^2; h: s; decay = e^(-c h) for
    linear drag c (1/s). With decay = 1 (no drag) the same operations, in the same order, as the
    numpy expression ``v + h * gravity`` (x * 1.0 is exact)."""
    n = v.shape[0]
    if parts == 1:
        predict_range(v, gravity, h, decay, planar, out, np.int64(0), n)
        return
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        predict_range(v, gravity, h, decay, planar, out, first, last)


@driver(parallel=True, cache=True, nogil=True)
def integrate(A, lam, v_pred, step, out, order, partition):
    """v (n, 3) <- v* + M^-1 J^T λ (m/s, y = 0 when planar), then x (n, 3) += h v (m): the end
    of a step in one call, step = (h, planar), out = (x, v, dv). Bit for bit what
    ContactProblem.velocity and ``x += h * v`` give: the impulses are summed from zero into
    dv (n, 3) first, then added to v*. The contacts (A, solver/products.py) and v* in the
    step's numbering, x and v in the world's (integrate_range); the contacts in the partition
    (ranges, phases), the marbles in its `shares(ranges)` equal shares at once."""
    x, v, dv = out
    velocity_change(A, lam, dv, partition)
    n = v.shape[0]
    parts = shares(partition[0])
    if parts == 1:
        integrate_range(v_pred, dv, step, (x, v), order, np.int64(0), n)
        return
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        integrate_range(v_pred, dv, step, (x, v), order, first, last)


@njit(cache=True, nogil=True)
def integrate_range(v_pred, dv, step, out, order, first, last):
    """v <- v* + dv (m/s, y = 0 when planar), then x += h v (m), for marbles [first, last)
    of v* and dv's numbering; step = (h, planar); out = (x, v), (n, 3) each, in the world's
    numbering, where marble s is order[s] (empty, locality.WORLD_ORDER: the same numbering,
    and dv may then be v itself). Writing the world's rows here spares a renumbered step the
    copies back (solver/locality.py)."""
    h, planar = step
    x, v = out
    ordered = order.shape[0] > 0
    for s in range(first, last):
        i = order[s] if ordered else s
        v[i, 0] = v_pred[s, 0] + dv[s, 0]
        v[i, 1] = 0.0 if planar else v_pred[s, 1] + dv[s, 1]
        v[i, 2] = v_pred[s, 2] + dv[s, 2]
        x[i, 0] += h * v[i, 0]
        x[i, 1] += h * v[i, 1]
        x[i, 2] += h * v[i, 2]
