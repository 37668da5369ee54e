"""A colouring of a step's contacts: contacts that share a marble get different colours, so the
contacts of one colour can be updated at once (Gauss-Seidel by colours: each colour one
parallel sweep).

The colouring is Jones and Plassmann's: every contact has a pseudo-random priority (a hash of
its index); in a round, each uncoloured contact whose priority beats every uncoloured
neighbour's takes the smallest colour none of its coloured neighbours has. The round's
choices are made from the colours before the round and written after it, so the result does
not depend on the order the contacts are visited in: the GPU's parallel rounds
(solver/cuda/colour.py) and this serial loop give the same colours. Two contacts neighbour when
they share a marble (walls are not shared); a fixed marble counts as shared too, which costs a
few colours and keeps every colour's updates free of any common write.

`choose` is plain Python, compiled here for the CPU and by solver/cuda/colour.py for the GPU,
so both run one definition of the rule. An explicit W (a file of another tool's) has no
marbles: there two contacts neighbour when W couples them (`colour_coupled`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .problem import contact_graph


def choose(c, ends, graph, colour):
    """The colour contact c takes in this round (smallest free among its coloured neighbours),
    or -1 when an uncoloured neighbour outranks it. ends = (body_a, body_b) (m,) int64;
    graph = (start (n + 1,), items) the contacts around each marble (problem.contact_graph);
    colour (m,) int64, -1 for uncoloured."""
    body_a, body_b = ends
    start, items = graph
    # A 31-bit mix of the index (products stay below 2**62 for any int64 contact count
    # this program meets): neighbours' priorities look random, so rounds stay few.
    h = (c * 1103515245 + 12345) & 0x7FFFFFFF
    h ^= h >> 13
    mine = (h * 1664525 + 1013904223) & 0x7FFFFFFF
    for side in range(2):
        i = body_a[c] if side == 0 else body_b[c]
        if i < 0:
            continue
        for p in range(start[i], start[i + 1]):
            d = items[p]
            if d == c or colour[d] >= 0:
                continue
            h = (d * 1103515245 + 12345) & 0x7FFFFFFF
            h ^= h >> 13
            theirs = (h * 1664525 + 1013904223) & 0x7FFFFFFF
            if theirs > mine or (theirs == mine and d > c):
                return -1
    k = 0
    taken = True
    while taken:
        taken = False
        for side in range(2):
            i = body_a[c] if side == 0 else body_b[c]
            if i < 0:
                continue
            for p in range(start[i], start[i + 1]):
                d = items[p]
                if d != c and colour[d] == k:
                    taken = True
        if taken:
            k += 1
    return k


_choose = njit(inline="always", cache=True, nogil=True)(choose)


@njit(cache=True, nogil=True)
def colour_graph(ends, graph, m):
    """(colour (m,) int64, rounds): the rounds of the module docstring over m contacts whose
    neighbours `choose` finds through ends and graph."""
    colour = np.full(m, -1, dtype=np.int64)
    fresh = np.empty(m, dtype=np.int64)
    left = m
    rounds = 0
    while left > 0:
        rounds += 1
        for c in range(m):
            if colour[c] < 0:
                fresh[c] = _choose(c, ends, graph, colour)
        left = 0
        for c in range(m):
            if colour[c] < 0:
                colour[c] = fresh[c]
                if colour[c] < 0:
                    left += 1
    return colour, rounds


@njit(cache=True, nogil=True)
def colour_contacts(body_a, body_b, n):
    """(colour (m,) int64, rounds): the colouring of contacts between marbles."""
    start, items, _ = contact_graph(body_a, body_b, n)
    return colour_graph((body_a, body_b), (start, items), body_a.shape[0])


def colour_coupled(indptr: np.ndarray, indices: np.ndarray, m: int) -> tuple[np.ndarray, int]:
    """(colour (m,) int64, rounds): the colouring of an explicit W's m contacts (W in CSR,
    3 rows each), neighbours where W couples them. Each contact stands for a marble of its own
    whose contacts are those its block row couples it to, so `choose` runs unchanged."""
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr)) // 3
    pairs = np.unique(rows * m + indices // 3)
    start = np.concatenate([[0], np.cumsum(np.bincount(pairs // m, minlength=m))])
    ends = (np.full(m, -1, dtype=np.int64), np.arange(m, dtype=np.int64))
    return colour_graph(ends, (start.astype(np.int64), (pairs % m).astype(np.int64)), m)


def colour_order(colour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order (m,), bins (K + 1,)): the contacts sorted by colour, each colour in index order,
    and where each colour's contacts start in `order`."""
    order = np.argsort(colour, kind="stable")
    counts = np.bincount(colour, minlength=int(colour.max(initial=-1)) + 1)
    bins = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return order, bins
