"""The warm start's matching: last step's impulses carried to this step's contacts by key.

A contact key names the same pair (or marble and wall) from step to step (solver/collide.py).
Most contacts persist in the collider's order, so the kernels match in order first and build an
open-addressing hash table of the previous keys only for what follows the first miss.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .drivers import driver
from .products import ROW_KERNEL


@driver(cache=True, nogil=True)
def carry_over(prev_keys, prev_lam, keys, lam0):
    """lam0[c] <- prev_lam[p] where prev_keys[p] == keys[c] (keys unique within a step), else
    left as is: carry_over_rows with one row per contact."""
    carry_over_rows(prev_keys, prev_lam, 1, keys, lam0, 1)


@driver(parallel=True, cache=True, nogil=True)
def carry_over_rows(prev_keys, prev_lam, prev_rows, keys, lam0, rows, parts=1):
    """The same matching for impulses of several rows per contact: contact c's first
    min(prev_rows, rows) entries from its previous ones (the normal, then tangents...). Most
    contacts persist in the collider's order, so the contacts are matched in order first, and
    an open-addressing hash table of the previous keys (O(m), where sorting and searching cost
    a few times more on the bowl) is built only for what follows the first miss; those are
    looked up in `parts` equal shares at once (inline for one): the same λ0 for any number,
    since a key is matched exactly wherever it is found (the contact order of a step in blocks
    moves too much between steps for the in-order run)."""
    prev = (prev_keys, prev_lam, prev_rows)
    now = (keys, lam0, rows)
    c = _carry_in_order(prev, now)
    m = keys.shape[0]
    if c >= m:
        return
    table = _key_table(prev_keys)
    if parts == 1:
        _carry_rest(prev, now, table, c, m)
        return
    for t in prange(parts):
        _carry_rest(prev, now, table, c + t * (m - c) // parts, c + (t + 1) * (m - c) // parts)


@njit(**ROW_KERNEL)
def _carry_in_order(prev, now):
    """carry_over_rows while keys[c] == prev_keys[c]: the first c where not, or where one
    list ends. prev = (prev_keys, prev_lam, prev_rows): last step's (k,) int64 keys and
    (k * prev_rows,) impulses (N s; N m s for rolling rows), prev_rows per contact;
    now = (keys, lam0, rows): this step's (m,) int64 keys and the (m * rows,) impulses to
    fill, rows per contact."""
    prev_keys, prev_lam, prev_rows = prev
    keys, lam0, rows = now
    common = min(prev_rows, rows)
    for c in range(min(keys.shape[0], prev_keys.shape[0])):
        if prev_keys[c] != keys[c]:
            return c
        _copy_rows(prev_lam, c * prev_rows, lam0, c * rows, common)
    return min(keys.shape[0], prev_keys.shape[0])


@njit(**ROW_KERNEL)
def _carry_rest(prev, now, table, first, last):
    """carry_over_rows for contacts [first, last) (prev, now: `_carry_in_order`): each looked
    for where the last match's shift in the previous order puts it, else in table = (slot,
    mask), the hash table of `_key_table`."""
    prev_keys, prev_lam, prev_rows = prev
    keys, lam0, rows = now
    slot, mask = table
    common = min(prev_rows, rows)
    k = prev_keys.shape[0]
    shift = 0
    for c in range(first, last):
        p = c + shift
        if p < 0 or p >= k or prev_keys[p] != keys[c]:
            p = _key_slot(slot, mask, prev_keys, keys[c])
            if p < 0:
                continue
            shift = p - c
        _copy_rows(prev_lam, p * prev_rows, lam0, c * rows, common)


@njit(inline="always", **ROW_KERNEL)
def _copy_rows(source, src, target, dst, count):
    """target[dst:dst + count] <- source[src:src + count], three written out (twice as fast)."""
    if count == 3:
        target[dst] = source[src]
        target[dst + 1] = source[src + 1]
        target[dst + 2] = source[src + 2]
    else:
        for j in range(count):
            target[dst + j] = source[src + j]


@njit(cache=True, nogil=True)
def _key_table(keys):
    """(slot, mask): the open-addressing table of keys (index or -1 per slot)."""
    size = 2
    while size < 2 * keys.shape[0]:
        size *= 2
    mask = size - 1
    slot = np.full(size, -1, dtype=np.int64)
    for p in range(keys.shape[0]):
        h = ((keys[p] * 2654435761) >> 7) & mask
        while slot[h] >= 0:
            h = (h + 1) & mask
        slot[h] = p
    return slot, mask


@njit(cache=True, nogil=True)
def _key_slot(slot, mask, keys, key):
    """The index p with keys[p] == key in `_key_table`'s table, or -1."""
    h = ((key * 2654435761) >> 7) & mask
    while slot[h] >= 0:
        p = slot[h]
        if keys[p] == key:
            return p
        h = (h + 1) & mask
    return -1
