"""Gauss-Seidel sweeps over a step's contacts in blocks (solver/partition.py): the sweeps of
pgs, psor (and so nsgs on spheres) and the frictional sweep of sweeps.py.

A sweep visits the partition's phases in order and, within a phase, its groups at once, each
group's contacts in their order. Groups of one phase share no marble, so no two threads touch
one velocity, and the sweep is exactly the serial sweep over the contacts in the partition's
order: the interiors of the blocks first, then the contacts between blocks. That order is
fixed by the number of blocks, so a run repeats bit for bit. A phase of one group runs inline,
so a serial problem (one block: one group holds every contact) sweeps on the calling thread.
Each contact's update is written once, for a range of contacts (relaxed_range,
sweeps.frictional_range).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..drivers import driver
from ..problem import ROW_KERNEL, apply_row, contact_row, row_error
from .sweeps import frictional_range


@njit(**ROW_KERNEL)
def relaxed_range(A, rows_in, v, lam, first, last):
    """One projected SOR pass over contacts [first, last): λ_c <- max(0, λ_c - step_c e_c), v
    kept equal to v* + M^-1 J^T λ; A the operator's factors (solver/products.py); rows_in =
    (bias (m,) gap / h, m/s; step (m,) ω / A_cc, precomputed: a multiply in the loop instead
    of a divide, the sweep is latency-bound)."""
    body_a, body_b, normal, inv_mass = A
    bias, step = rows_in
    for c in range(np.uint64(first), np.uint64(last)):
        a, b, n0, n1, n2 = contact_row(body_a, body_b, normal, c)
        e = row_error(v, a, b, n0, n1, n2, bias[c])
        old = lam[c]
        new = old - step[c] * e
        if new < 0.0:
            new = 0.0
        lam[c] = new
        apply_row(v, inv_mass, a, b, n0, n1, n2, new - old)


@driver(parallel=True, cache=True, nogil=True)
def relaxed_sweeps(A, rows_in, v, lam, count, partition):
    """`count` sweeps of relaxed_range over a partition, in place, phase by phase, the groups of
    a phase in parallel (a phase of one group without starting the threads)."""
    ranges, phases = partition
    for _ in range(count):
        for p in range(phases.shape[0] - 1):
            lo = phases[p]
            hi = phases[p + 1]
            if hi - lo == 1:
                relaxed_range(A, rows_in, v, lam, ranges[lo], ranges[lo + 1])
            elif hi > lo:
                for g in prange(lo, hi):
                    relaxed_range(A, rows_in, v, lam, ranges[g], ranges[g + 1])


@driver(parallel=True, cache=True, nogil=True)
def frictional_sweeps(ends, P, rule, V, lam, count, partition):
    """`count` Gauss-Seidel sweeps of `sweep_contact` over a partition, in place, as
    relaxed_sweeps; ends = (body_a, body_b); P: the packed contacts (sweeps.pack); rule =
    (law, naive, rows) (sweeps.py); V (n, 6) is kept equal to V* + M^-1 J^T λ."""
    ranges, phases = partition
    for _ in range(count):
        for p in range(phases.shape[0] - 1):
            lo = phases[p]
            hi = phases[p + 1]
            if hi - lo == 1:
                frictional_range(ends, P, rule, V, lam, ranges[lo], ranges[lo + 1])
            elif hi > lo:
                for g in prange(lo, hi):
                    frictional_range(ends, P, rule, V, lam, ranges[g], ranges[g + 1])
