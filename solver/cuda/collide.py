"""Contact generation on the GPU, one cooperative launch: the grid's bounds, the marbles
bucketed by cell (a counting sort), each bucket put in marble order, then the contacts counted,
their offsets summed and the contacts written, marble by marble in cell order.

The same grid, margins, keys and contacts as the CPU collider (solver/collide.py): cells as wide
as the largest interaction range, z-major cell numbers bucketed by `cell & (table - 1)`, each
marble's walls first, then its partners in its own cell (after it) and the 13 forward
neighbour cells. The buckets' table is fixed by n (a power of two >= 2n), so nothing is sized
on the device. Positions within a bucket come from integer atomics, in any order; sorting each
bucket by marble index makes the order, and every contact's place, the same every run.

Contacts name marbles by their slot in the sorted order (`order[slot]` is the marble), the
numbering the solve runs in; keys name them by their own index, as the CPU's do.
"""
from __future__ import annotations

import math

import numpy as np

from ..collide import MARGIN_CAP_DIAMETERS, MARGIN_EPS_FRACTION
from .launch import kernel
from .runtime import THREADS, cuda
from .scan import block_extreme, exclusive_scan

MAX_CELLS_PER_AXIS = 1 << 20
# geom (float64) slots: the grid's origin, its inverse cell width, the margin's parts, h
LO0, LO1, LO2, INV_CELL, EPS, CAP, H = 0, 1, 2, 3, 4, 5, 6
GEOM = 7
# dims (int64) slots: cells per axis, the buckets' mask, the contacts found, overflow
NX, NY, NZ, MASK, FOUND, OVERFLOW = 0, 1, 2, 3, 4, 5
DIMS = 6
BOUNDS = 6  # per-block partial bounds: lo x, y, z, -r max, r min, -speed max (all minima)


def table_size(n: int) -> int:
    """Buckets of the grid for n marbles: a power of two >= 2n."""
    table = 2
    while table < 2 * n:
        table *= 2
    return table


@cuda.jit(device=True, inline=True)
def _cell(value, low, inv_cell):
    c = np.int64(math.floor((value - low) * inv_cell))
    if c < 0:
        c = 0
    if c >= MAX_CELLS_PER_AXIS:
        c = MAX_CELLS_PER_AXIS - 1
    return c


@cuda.jit(device=True)
def _bounds(marbles, speed, partial, geom, fshared, grid):
    """geom <- the grid's origin (the lowest corner of the centres), its inverse cell width
    and the margins, as the CPU's _grid computes them; speed <- |v| per marble."""
    x, v, radius = marbles
    n = x.shape[0]
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    lo = cuda.local.array(BOUNDS, np.float64)
    for k in range(BOUNDS):
        lo[k] = np.inf
    for i in range(start, n, stride):
        s = math.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        speed[i] = s
        lo[0] = min(lo[0], x[i, 0])
        lo[1] = min(lo[1], x[i, 1])
        lo[2] = min(lo[2], x[i, 2])
        lo[3] = min(lo[3], -radius[i])
        lo[4] = min(lo[4], radius[i])
        lo[5] = min(lo[5], -s)
    for k in range(BOUNDS):
        value = block_extreme(fshared, lo[k], True)
        if cuda.threadIdx.x == 0:
            partial[cuda.blockIdx.x * BOUNDS + k] = value
    grid.sync()
    if cuda.grid(1) == 0:
        for k in range(BOUNDS):
            lo[k] = np.inf
        for b in range(cuda.gridDim.x):
            for k in range(BOUNDS):
                lo[k] = min(lo[k], partial[b * BOUNDS + k])
        rmax, rmin, vmax = -lo[3], lo[4], -lo[5]
        h = geom[H]
        eps = MARGIN_EPS_FRACTION * rmin
        cap = MARGIN_CAP_DIAMETERS * 2.0 * rmax
        geom[LO0] = lo[0]
        geom[LO1] = lo[1]
        geom[LO2] = lo[2]
        geom[INV_CELL] = 1.0 / (2.0 * rmax + min(2.0 * h * vmax + eps, cap))
        geom[EPS] = eps
        geom[CAP] = cap
    grid.sync()


@cuda.jit(device=True)
def _dims(x, geom, dims, ishared, partial_i, grid):
    """dims[NX, NY, NZ] <- cells per axis (the largest coordinate + 1)."""
    n = x.shape[0]
    top0 = np.int64(0)
    top1 = np.int64(0)
    top2 = np.int64(0)
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        top0 = max(top0, _cell(x[i, 0], geom[LO0], geom[INV_CELL]))
        top1 = max(top1, _cell(x[i, 1], geom[LO1], geom[INV_CELL]))
        top2 = max(top2, _cell(x[i, 2], geom[LO2], geom[INV_CELL]))
    for k in range(3):
        mine = top0 if k == 0 else (top1 if k == 1 else top2)
        value = -block_extreme(ishared, -mine, True)
        if cuda.threadIdx.x == 0:
            partial_i[cuda.blockIdx.x * 3 + k] = value
    grid.sync()
    if cuda.grid(1) == 0:
        for k in range(3):
            top = np.int64(0)
            for b in range(cuda.gridDim.x):
                top = max(top, partial_i[b * 3 + k])
            dims[k] = top + 1
    grid.sync()


@cuda.jit(device=True)
def _bucket(marbles, speed, geom, dims, grid_arrays, ishared, partial_i, grid):
    """The counting sort by bucket, each bucket then in marble order: order (n,) slot ->
    marble, start (table + 1,) each bucket's first slot, sorted_lin and packed (x, y, z, r,
    speed) by slot."""
    x, v, radius = marbles
    lin, start, fill, order, sorted_lin, packed, slot_of = grid_arrays
    n = x.shape[0]
    table = start.shape[0] - 1
    mask = table - 1
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for b in range(first, table + 1, stride):
        start[b] = 0
    grid.sync()
    nx = dims[NX]
    ny = dims[NY]
    for i in range(first, n, stride):
        cx = _cell(x[i, 0], geom[LO0], geom[INV_CELL])
        cy = _cell(x[i, 1], geom[LO1], geom[INV_CELL])
        cz = _cell(x[i, 2], geom[LO2], geom[INV_CELL])
        c = cx + nx * (cy + ny * cz)
        lin[i] = c
        cuda.atomic.add(start, c & mask, 1)
    grid.sync()
    exclusive_scan(start, table, start, partial_i, ishared, grid)
    for b in range(first, table, stride):
        fill[b] = start[b]
    if first == 0:
        start[table] = n
    grid.sync()
    for i in range(first, n, stride):
        order[cuda.atomic.add(fill, lin[i] & mask, 1)] = i
    grid.sync()
    for b in range(first, table, stride):
        # Insertion sort of the bucket by marble index: the CPU's stable order.
        lo = start[b]
        hi = start[b + 1]
        for s in range(lo + 1, hi):
            key = order[s]
            t = s - 1
            while t >= lo and order[t] > key:
                order[t + 1] = order[t]
                t -= 1
            order[t + 1] = key
    grid.sync()
    for s in range(first, n, stride):
        i = order[s]
        slot_of[i] = s
        sorted_lin[s] = lin[i]
        packed[s, 0] = x[i, 0]
        packed[s, 1] = x[i, 1]
        packed[s, 2] = x[i, 2]
        packed[s, 3] = radius[i]
        packed[s, 4] = speed[i]
    grid.sync()


# long: the CPU's _generate for one marble, counting or writing (the same loop both times, so
# the counts and the contacts agree).
@cuda.jit(device=True)
def _marble_contacts(s, geom, dims, walls, grid_arrays, out, at, write):
    """Contacts of the marble in slot s (walls, then partners in cell order); written from
    `at` when `write`; returns how many."""
    planes, spheres, tubes = walls
    lin, start, fill, order, sorted_lin, packed, slot_of = grid_arrays
    body_a, body_b, normal, gap, keys = out
    n = order.shape[0]
    table = start.shape[0] - 1
    mask = table - 1
    nx = dims[NX]
    ny = dims[NY]
    nz = dims[NZ]
    h = geom[H]
    eps = geom[EPS]
    cap = geom[CAP]
    n_planes = planes.shape[0]
    n_spheres = spheres.shape[0]
    n_walls = n_planes + n_spheres + tubes.shape[0]
    i = order[s]
    xi0 = packed[s, 0]
    xi1 = packed[s, 1]
    xi2 = packed[s, 2]
    ri = packed[s, 3]
    vi = packed[s, 4]
    count = 0
    wall_margin = min(h * vi + eps, cap)
    for p in range(n_planes):
        g = ((xi0 - planes[p, 0]) * planes[p, 3] + (xi1 - planes[p, 1]) * planes[p, 4]
             + (xi2 - planes[p, 2]) * planes[p, 5]) - ri
        if g < wall_margin:
            if write:
                c = at + count
                body_a[c] = -1
                body_b[c] = s
                normal[c, 0] = planes[p, 3]
                normal[c, 1] = planes[p, 4]
                normal[c, 2] = planes[p, 5]
                gap[c] = g
                keys[c] = p * n + i
            count += 1
    for q in range(n_spheres):
        d0 = xi0 - spheres[q, 0]
        d1 = xi1 - spheres[q, 1]
        d2 = xi2 - spheres[q, 2]
        dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        g = spheres[q, 3] - dist - ri
        if g < wall_margin and (dist > 0.0 or g < 0.0):
            if write:
                c = at + count
                body_a[c] = -1
                body_b[c] = s
                if dist > 0.0:
                    normal[c, 0] = -d0 / dist
                    normal[c, 1] = -d1 / dist
                    normal[c, 2] = -d2 / dist
                else:
                    normal[c, 0] = 0.0
                    normal[c, 1] = 0.0
                    normal[c, 2] = 1.0
                gap[c] = g
                keys[c] = (n_planes + q) * n + i
            count += 1
    for u in range(tubes.shape[0]):
        d0 = xi0 - tubes[u, 0]
        d1 = xi1 - tubes[u, 1]
        dist = math.sqrt(d0 * d0 + d1 * d1)
        g = tubes[u, 2] - dist - ri
        if g < wall_margin and (dist > 0.0 or g < 0.0):
            if write:
                c = at + count
                body_a[c] = -1
                body_b[c] = s
                normal[c, 0] = -d0 / dist if dist > 0.0 else 1.0
                normal[c, 1] = -d1 / dist if dist > 0.0 else 0.0
                normal[c, 2] = 0.0
                gap[c] = g
                keys[c] = (n_planes + n_spheres + u) * n + i
            count += 1
    cell = sorted_lin[s]
    cx = cell % nx
    cy = (cell // nx) % ny
    cz = cell // (nx * ny)
    x_lo = cx - 1 if cx > 0 else cx
    x_hi = cx + 1 if cx + 1 < nx else cx
    for dz in range(0, 2):
        z = cz + dz
        if z >= nz:
            continue
        for dy in range(-1 if dz > 0 else 0, 2):
            y = cy + dy
            if y < 0 or y >= ny:
                continue
            row = nx * (y + ny * z)
            lo = cx if (dz == 0 and dy == 0) else x_lo
            for xx in range(lo, x_hi + 1):
                other = row + xx
                first = start[other & mask]
                last = start[(other & mask) + 1]
                if other == cell:
                    first = s + 1
                for t in range(first, last):
                    if sorted_lin[t] != other:
                        continue
                    d0 = packed[t, 0] - xi0
                    d1 = packed[t, 1] - xi1
                    d2 = packed[t, 2] - xi2
                    dist2 = d0 * d0 + d1 * d1 + d2 * d2
                    margin = min(h * (vi + packed[t, 4]) + eps, cap)
                    reach = ri + packed[t, 3] + margin
                    if dist2 > 1.000001 * reach * reach:
                        continue
                    dist = math.sqrt(dist2)
                    g = dist - ri - packed[t, 3]
                    if g < margin:
                        if write:
                            c = at + count
                            j = order[t]
                            inv = 1.0 / dist if dist > 0.0 else 0.0
                            if j < i:
                                inv = -inv
                                body_a[c] = t
                                body_b[c] = s
                                keys[c] = (j + n_walls) * n + i
                            else:
                                body_a[c] = s
                                body_b[c] = t
                                keys[c] = (i + n_walls) * n + j
                            normal[c, 0] = d0 * inv
                            normal[c, 1] = d1 * inv
                            normal[c, 2] = d2 * inv
                            if dist == 0.0:
                                normal[c, 2] = 1.0
                            gap[c] = g
                        count += 1
    return count


@kernel
def collide(marbles, walls, h, geom, dims, grid_arrays, scratch, out):
    """Every phase of contact generation in one cooperative launch (module docstring).
    marbles = (x (n, 3) m, v (n, 3) m/s the step's velocities, radius (n,) m); walls =
    (planes, spheres, tubes) as solver/world.py's ContainerGeometry; h: the step, s; geom
    (GEOM,) float64 and dims (DIMS,) int64 written; grid_arrays = (lin,
    start, fill, order, sorted_lin, packed, slot_of); scratch = (speed (n,), partial_f,
    partial_i, counts (n + 1,)); out = (body_a, body_b, normal, gap, keys), capacity rows.
    dims[FOUND] <- the contacts found; dims[OVERFLOW] <- 1 when they did not fit (nothing is
    written then: grow `out` and launch again)."""
    grid = cuda.cg.this_grid()
    fshared = cuda.shared.array(THREADS, np.float64)
    ishared = cuda.shared.array(THREADS, np.int64)
    speed, partial_f, partial_i, counts = scratch
    x = marbles[0]
    n = x.shape[0]
    if cuda.grid(1) == 0:
        geom[H] = h
    _bounds(marbles, speed, partial_f, geom, fshared, grid)
    _dims(x, geom, dims, ishared, partial_i, grid)
    _bucket(marbles, speed, geom, dims, grid_arrays, ishared, partial_i, grid)
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, n, stride):
        counts[s] = _marble_contacts(s, geom, dims, walls, grid_arrays, out, 0, False)
    grid.sync()
    found = exclusive_scan(counts, n, counts, partial_i, ishared, grid)
    capacity = out[0].shape[0]
    if first == 0:
        counts[n] = found
        dims[FOUND] = found
        dims[OVERFLOW] = 1 if found > capacity else 0
    if found > capacity:
        return
    for s in range(first, n, stride):
        _marble_contacts(s, geom, dims, walls, grid_arrays, out, counts[s], True)
