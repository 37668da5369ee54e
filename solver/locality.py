"""Locality without changing the arithmetic: a large step, and a step in blocks, solves in the
grid's numbering.

The collider sorts the marbles by grid cell (`Collider.order`). Above `MIN_MARBLES` marbles,
and whenever it is in blocks, a step renumbers its problem by that order, block by block
(`Collider.block_order`): marble order[s] becomes s, the per-marble arrays
(v*, 1/m, and with friction the radii and V*) are gathered into that order, the contacts keep
their order, normals, gaps and keys (world indices, for the warm start). Every kernel then does
the same floating-point operations in the same order on the same values, so the step's result
is bit for bit the one without renumbering, but a contact's two marbles, and the marbles of one
block, sit near each other in memory. The step writes positions and velocities back in the
world's order at its end (a frictional step, or one in blocks, integrates straight into the
world's rows), and `world_numbered` gives the problem back in the world's numbering for
whoever reads it (snapshots, colours, the solver comparison).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from numba import njit, prange

# Renumbering costs a few gathers and scatters of n rows per step and pays only when the
# marbles' velocities no longer fit the caches (box 10 000: about 6 ns per contact update,
# box 100 000: about twice that per update (docs/parallel.md). Chosen between the two.
MIN_MARBLES = 30000

# The empty order of the kernels that write the world's rows (blocked.integrate_range,
# rotation.integrate_spin_range): the step solved in the world's own numbering.
WORLD_ORDER = np.zeros(0, dtype=np.int64)


def wanted(n: int, blocks: int = 1) -> bool:
    """Whether a step of n marbles in `blocks` blocks solves in the grid's numbering: a large
    one, and every step in blocks, whose two threads otherwise write velocities that share
    cache lines (the marbles of two blocks interleave in the world's numbering): the 10 000
    box's twenty frictional sweeps took 5.0-5.1 ms with two threads, 4.5 in block order."""
    return blocks > 1 or n >= MIN_MARBLES


@njit(parallel=True, cache=True, nogil=True)
def relabel(order, body_a, body_b):
    """(body_a, body_b) in the numbering where marble order[s] is s (a wall, -1, stays)."""
    n = order.shape[0]
    rank = np.empty(n, dtype=np.int64)
    for s in prange(n):
        rank[order[s]] = s
    m = body_a.shape[0]
    out_a = np.empty(m, dtype=np.int64)
    out_b = np.empty(m, dtype=np.int64)
    for c in prange(m):
        a = body_a[c]
        out_a[c] = rank[a] if a >= 0 else -1
        out_b[c] = rank[body_b[c]]
    return out_a, out_b


@njit(parallel=True, cache=True, nogil=True)
def _gather_rows(source, order, out):
    """out[s] <- source[order[s]] for (n, k) float64 rows."""
    for s in prange(order.shape[0]):
        i = order[s]
        for j in range(source.shape[1]):
            out[s, j] = source[i, j]


@njit(parallel=True, cache=True, nogil=True)
def _scatter_rows(local, order, out):
    """out[order[s]] <- local[s] for (n, k) float64 rows (order a permutation: no two threads
    write one row)."""
    for s in prange(order.shape[0]):
        i = order[s]
        for j in range(local.shape[1]):
            out[i, j] = local[s, j]


def _rows(a: np.ndarray) -> np.ndarray:
    """a (n,) or (n, k) float64 as (n, k) C-ordered rows (a view when it already is)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return a.reshape(a.shape[0], -1)


# numpy's a[order] and a[order] = b copy (n, 3) rows one by one: about 1 ms each for 100 000
# marbles, and a step does five of them; these kernels copy the same values in parallel.
def gathered(source: np.ndarray, order: np.ndarray) -> np.ndarray:
    """source[order] (the world's per-marble rows in the grid's numbering), a new array."""
    out = np.empty(source.shape, dtype=np.float64)
    _gather_rows(_rows(source), order, out.reshape(out.shape[0], -1))
    return out


def scattered(local: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The rows of `local` (in the grid's numbering) back in the world's order, a new array."""
    out = np.empty(local.shape, dtype=np.float64)
    _scatter_rows(_rows(local), order, out.reshape(out.shape[0], -1))
    return out


def scatter_into(target: np.ndarray, order: np.ndarray, local: np.ndarray) -> None:
    """target[order] = local, in place (target: the world's C-ordered float64 array)."""
    if target.dtype != np.float64 or not target.flags.c_contiguous:
        target[order] = local
        return
    _scatter_rows(_rows(local), order, target.reshape(target.shape[0], -1))


def world_numbered(problem, order: np.ndarray):
    """A problem solved in the grid's numbering, in the world's: the same contacts, with
    world marble indices and per-marble arrays (its derived arrays assembled again, the same
    values)."""
    body_a = np.where(problem.body_a >= 0, order[np.maximum(problem.body_a, 0)], -1)
    body_b = order[problem.body_b]
    if problem.frictional:
        return replace(problem, body_a=body_a, body_b=body_b,
                       radius=scattered(problem.radius, order),
                       inv_mass=scattered(problem.inv_mass, order),
                       V_pred=scattered(problem.V_pred, order))
    return replace(problem, body_a=body_a, body_b=body_b,
                   inv_mass=scattered(problem.inv_mass, order),
                   v_pred=scattered(problem.v_pred, order))
