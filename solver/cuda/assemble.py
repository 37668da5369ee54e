"""The step's contact problem on the GPU, one cooperative launch after the contacts: the
marbles' step velocities gathered into the solve's numbering (slots, solver/cuda/collide.py),
A's diagonal and b per row (and with friction the contact frames, lever arms and coefficients),
the contacts around each marble (a CSR: marble s's contacts are items[start[s]:start[s + 1]],
in contact order, with the side), and the warm start: last step's impulses matched by key.

Every formula is the CPU's (solver/problem.py, solver/friction.py, solver/warm_start.py), in the
same order, so a row on the GPU is the CPU's row of the same contact. The CSR's rows are filled
with integer atomics, then each sorted by contact: the same rows every run, and a marble's
velocity sums its contacts in the order the CPU's serial scatter does.
"""
from __future__ import annotations

import numpy as np

from .. import friction
from .. import problem as frictionless
from ..friction import INERTIA_FACTOR
from .launch import kernel
from .runtime import THREADS, cuda, shared
from .scan import exclusive_scan

# The CPU's range functions, called for one contact: the same source on this device
# (runtime.shared).
contact_mu = shared(friction.contact_mu)
contact_rows = shared(friction.contact_rows)
tangent_frames_range = shared(friction.tangent_frames_range)
assemble_range = shared(frictionless.assemble_range)

# scalars = (h s, the overlap fraction kept, the warm start's fraction, μ, μ_wall, μ_roll m,
# μ_spin m, the deepest overlap one step removes m): the problem's numbers
H, STABILISE, WARM, MU, MU_WALL, MU_ROLL, MU_SPIN, DEEPEST = range(8)
EMPTY = -1  # a free slot of the key table


@cuda.jit(device=True, inline=True)
def _hash(key, mask):
    return ((key * 2654435761) >> 7) & mask


@cuda.jit(device=True)
def _gather_marbles(bodies, order, slotted, rows, first, stride):
    """Per slot: the step's velocities V* (n, rows == 1 ? 3 : 6) and the masses, in the solve's
    numbering. bodies = (V_pred (n, 6 or 3) world numbering, inv_mass, radius);
    slotted = (V (n, 3 or 6), inv_mass, inv_inertia, radius)."""
    V_world, inv_mass, radius = bodies
    V, w, iw, r = slotted
    n = order.shape[0]
    width = V.shape[1]
    for s in range(first, n, stride):
        i = order[s]
        for k in range(width):
            V[s, k] = V_world[i, k]
        w[s] = inv_mass[i]
        r[s] = radius[i]
        if rows > 1:
            iw[s] = inv_mass[i] / (INERTIA_FACTOR * radius[i] * radius[i])


@cuda.jit(device=True)
def _frictional_row(A, V, radius, gap, h, system, c):
    """The frame, lever arms, A's diagonal and b of contact c's rows (friction.contact_rows),
    from the CPU's own per-contact bodies."""
    tangent_frames_range(A[2], A[3], A[4], c, c + 1)
    contact_rows(A, gap, radius, V, h, system, c, c + 1)


@cuda.jit(device=True)
def _rows_by_marble(body_a, body_b, csr, ishared, partial_i, grid):
    """csr = (start (n + 1,), items, sides (2m,)): each marble's contacts in contact order;
    side -1 where the marble is a, +1 where b (the sign of J's row at it)."""
    start, items, sides, fill = csr
    m = body_a.shape[0]
    n = start.shape[0] - 1
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, n + 1, stride):
        start[s] = 0
    grid.sync()
    for c in range(first, m, stride):
        if body_a[c] >= 0:
            cuda.atomic.add(start, body_a[c], 1)
        cuda.atomic.add(start, body_b[c], 1)
    grid.sync()
    total = exclusive_scan(start, n, start, partial_i, ishared, grid)
    for s in range(first, n, stride):
        fill[s] = start[s]
    if first == 0:
        start[n] = total
    grid.sync()
    for c in range(first, m, stride):
        a = body_a[c]
        if a >= 0:
            at = cuda.atomic.add(fill, a, 1)
            items[at] = c
            sides[at] = -1
        at = cuda.atomic.add(fill, body_b[c], 1)
        items[at] = c
        sides[at] = 1
    grid.sync()
    for s in range(first, n, stride):
        lo = start[s]
        for p in range(lo + 1, start[s + 1]):
            item = items[p]
            side = sides[p]
            q = p - 1
            while q >= lo and items[q] > item:
                items[q + 1] = items[q]
                sides[q + 1] = sides[q]
                q -= 1
            items[q + 1] = item
            sides[q + 1] = side
    grid.sync()


@cuda.jit(device=True)
def _warm_start(last, keys, rows, fraction, table, lam0, grid):
    """lam0 (m * rows) <- fraction × last step's impulses of the same key (first min(rows,
    last rows) entries), 0 for a new contact: the CPU's carry_over_rows through an
    open-addressing table of last step's keys (table = (keys, index), a power of two long)."""
    last_keys, last_lam, last_rows = last
    table_keys, table_index = table
    size = table_keys.shape[0]
    mask = size - 1
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for p in range(first, lam0.shape[0], stride):
        lam0[p] = 0.0
    if fraction <= 0.0 or last_keys.shape[0] == 0:
        grid.sync()
        return
    for p in range(first, size, stride):
        table_keys[p] = EMPTY
    grid.sync()
    for p in range(first, last_keys.shape[0], stride):
        key = last_keys[p]
        h = _hash(key, mask)
        while True:
            old = cuda.atomic.cas(table_keys, h, EMPTY, key)
            if old == EMPTY:
                table_index[h] = p
                break
            h = (h + 1) & mask
    grid.sync()
    common = min(rows, last_rows)
    for c in range(first, keys.shape[0], stride):
        key = keys[c]
        h = _hash(key, mask)
        while table_keys[h] != EMPTY:
            if table_keys[h] == key:
                p = table_index[h]
                for j in range(common):
                    value = last_lam[p * last_rows + j]
                    lam0[c * rows + j] = value if fraction == 1.0 else value * fraction
                break
            h = (h + 1) & mask
    grid.sync()


@cuda.jit(device=True)
def _prepare(contacts, bodies, order, slotted, scalars, rows, grid):
    """The slotted marbles, and the overlaps kept by the stabilisation fraction, cut to the
    deepest one push removes (solver.backend.stabilised)."""
    gap = contacts[3]
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    _gather_marbles(bodies, order, slotted, rows, first, stride)
    keep = scalars[STABILISE]
    deepest = scalars[DEEPEST]
    for c in range(first, gap.shape[0], stride):
        if gap[c] < 0.0:
            if keep != 1.0:
                gap[c] = keep * gap[c]
            if gap[c] < -deepest:
                gap[c] = -deepest
    grid.sync()


@kernel
def assemble_frictionless(contacts, bodies, order, slotted, problem, scalars, work, warm):
    """The frictionless problem of the step's contacts (module docstring), one cooperative
    launch. contacts = (body_a, body_b (m,) slots, normal (m, 3), gap (m,) m, keys (m,));
    bodies = (v* (n, 3) in the world's numbering, inv_mass, radius); order (n,) slot ->
    marble; slotted = (v* (n, 3), inv_mass, inv_inertia (unused), radius) by slot, written;
    problem = (A, diag, rhs), written (A over slots, solver/products.py); scalars: the tuple
    above; work = (csr, partial_i): csr = (start, items, sides, fill) written, partial_i
    scratch; warm = (last, table, λ0): last step's (keys, λ, rows), the key table scratch
    (_warm_start), λ0 written."""
    grid = cuda.cg.this_grid()
    ishared = cuda.shared.array(THREADS, np.int64)
    _prepare(contacts, bodies, order, slotted, scalars, 1, grid)
    body_a, body_b, normal, gap, keys = contacts
    A, diag, rhs = problem
    V = slotted[0]
    h = scalars[H]
    for c in range(cuda.grid(1), body_a.shape[0], cuda.gridsize(1)):
        assemble_range(A, gap, V, h, (diag, rhs), c, c + 1)
    csr, partial_i = work
    _rows_by_marble(body_a, body_b, csr, ishared, partial_i, grid)
    last, table, lam0 = warm
    _warm_start(last, keys, 1, scalars[WARM], table, lam0, grid)


@kernel
def assemble_frictional(contacts, bodies, order, slotted, problem, scalars, work, warm):
    """assemble_frictionless with friction: V* (n, 6); problem = (A, laws, diag, rhs), A the
    frictional tuple over slots (its t1, t2, arm_a, arm_b, inv_inertia written), laws =
    (mu, mu_roll, mu_spin) (m,) each, written from the world's coefficients."""
    grid = cuda.cg.this_grid()
    ishared = cuda.shared.array(THREADS, np.int64)
    A, laws, diag, rhs = problem
    rows = A[9]
    _prepare(contacts, bodies, order, slotted, scalars, rows, grid)
    body_a, body_b, normal, gap, keys = contacts
    mu, mu_roll, mu_spin = laws
    V = slotted[0]
    h = scalars[H]
    for c in range(cuda.grid(1), body_a.shape[0], cuda.gridsize(1)):
        _frictional_row(A, V, slotted[3], gap, h, (diag, rhs), c)
        mu[c] = contact_mu(body_a[c], scalars[MU], scalars[MU_WALL])
        mu_roll[c] = scalars[MU_ROLL]
        mu_spin[c] = scalars[MU_SPIN]
    csr, partial_i = work
    _rows_by_marble(body_a, body_b, csr, ishared, partial_i, grid)
    last, table, lam0 = warm
    _warm_start(last, keys, rows, scalars[WARM], table, lam0, grid)
