"""Contact generation: a uniform grid broadphase and sphere/sphere, sphere/wall narrowphase.

A pair gets a contact when its gap is below its speculative margin h (|v_a| + |v_b|) + eps: a
pair that may close its gap within the step gets a contact now, and e = u + d/h then stops it
exactly at touching. Contact c is (body_a[c], body_b[c]) with body_a < body_b, or body_a = -1 for
a wall; the normal points from a to b. Cells are as wide as the largest interaction range, so
each pair is looked for from one side only (own cell + 13 forward neighbours), in cell order:
bottom layer first, each marble's walls before its neighbours, so a sweep follows gravity up the
pile; the contacts are then dealt round-robin from INTERLEAVE runs of that order. Buffers
persist and grow, so a steady pile allocates only the arrays returned. Details: docs/solvers.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .partition import assign_blocks, order_blocks
from .world import ContainerGeometry

# Relative part of the margin: contacts within 1% of the smallest radius are kept even at rest, so
# a resting pile keeps its contacts from step to step (warm starting relies on that).
MARGIN_EPS_FRACTION = 0.01
# The speculative margin is capped at two diameters: a marble faster than that per step may
# tunnel, but a dragged marble cannot blow the grid up to O(n^2) candidate pairs.
MARGIN_CAP_DIAMETERS = 2.0
# Cell coordinates are clamped to this many cells per axis, so the z-major cell number fits an
# int64 however far a marble flies. Clamping merges far cells, which only adds candidates that the
# exact distance test then drops; it never loses a pair.
_MAX_CELLS_PER_AXIS = 1 << 20
# The table has one bucket per cell of the bounding box when the box has at most this many cells
# per marble; otherwise about 2 buckets per marble, and cell numbers share buckets.
_DENSE_CELLS_PER_MARBLE = 8
# Contacts are handed out in this many interleaved runs of the bottom-up order. A Gauss-Seidel
# sweep is latency-bound when consecutive contacts share a marble (each update waits for the
# previous one's velocity write); dealing from 4 runs, far apart in the pile, lets the processor
# overlap 4 updates. Measured on the settled bowl and box n=10000 (PGS, 20 sweeps): about 10 ns
# per contact update in plain grid order, about 6 ns dealt from 4 runs.
INTERLEAVE = 4


@njit(cache=True, nogil=True)
def _table_size(n, cells):
    """Power of two: >= cells when that is affordable (no two cells share a bucket), else >= 2n."""
    want = cells if cells <= _DENSE_CELLS_PER_MARBLE * n else 2 * n
    table = 1
    while table < want:
        table *= 2
    return table


@njit(cache=True, nogil=True)
def _cell_coordinate(value, low, inv_cell):
    c = np.int64(np.floor((value - low) * inv_cell))
    if c < 0:  # only rounding can get here
        c = 0
    if c >= _MAX_CELLS_PER_AXIS:
        c = _MAX_CELLS_PER_AXIS - 1
    return c


@njit(cache=True, nogil=True)
def _grid(marbles, rule, scratch, grid):
    """Bucket the marbles into the grid; return margins = (h, eps, cap): the step (s), the
    margin's fixed part and its cap (m).

    marbles = (x, v, radius): (n, 3) positions (m), (n, 3) velocities (m/s), (n,) radii (m).
    rule = (h, eps_fraction, cap_diameters): the step (s), the margin's fixed part as a
    fraction of the smallest radius and its cap in diameters of the largest marble.
    scratch = (speed, lin), filled: (n,) speeds (m/s) and (n,) int64 cell numbers.
    grid = (start, order, packed, sorted_lin, dims), the bucketed marbles, filled: start
    (table + 1,) int64 where each bucket's marbles begin, then, sorted by bucket, order (n,)
    int64 marble indices, packed (n, 5) x, y, z (m), radius (m), speed (m/s), sorted_lin (n,)
    int64 cell numbers; dims (4,) int64 <- (nx, ny, nz, table). When `start` is shorter than
    table + 1, dims[3] = -table and nothing is bucketed: the caller grows it and calls again."""
    x, v, radius = marbles
    h, eps_fraction, cap_diameters = rule
    speed, lin = scratch
    start, order, packed, sorted_lin, dims = grid
    n = x.shape[0]
    rmax = 0.0
    rmin = np.inf
    vmax = 0.0
    lo0 = np.inf
    lo1 = np.inf
    lo2 = np.inf
    for i in range(n):
        s = np.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        speed[i] = s
        vmax = max(vmax, s)
        rmax = max(rmax, radius[i])
        rmin = min(rmin, radius[i])
        lo0 = min(lo0, x[i, 0])
        lo1 = min(lo1, x[i, 1])
        lo2 = min(lo2, x[i, 2])
    eps = eps_fraction * rmin
    cap = cap_diameters * 2.0 * rmax
    reach = 2.0 * rmax + min(2.0 * h * vmax + eps, cap)
    inv_cell = 1.0 / reach
    nx = np.int64(1)
    ny = np.int64(1)
    nz = np.int64(1)
    for i in range(n):
        nx = max(nx, _cell_coordinate(x[i, 0], lo0, inv_cell) + 1)
        ny = max(ny, _cell_coordinate(x[i, 1], lo1, inv_cell) + 1)
        nz = max(nz, _cell_coordinate(x[i, 2], lo2, inv_cell) + 1)
    # nx * ny * nz < 2^60: no overflow.
    table = _table_size(n, nx * ny * nz)
    dims[0] = nx
    dims[1] = ny
    dims[2] = nz
    dims[3] = table
    if start.shape[0] < table + 1:
        dims[3] = -table
        return h, eps, cap
    mask = table - 1
    start[: table + 1] = 0
    for i in range(n):
        cx = _cell_coordinate(x[i, 0], lo0, inv_cell)
        cy = _cell_coordinate(x[i, 1], lo1, inv_cell)
        cz = _cell_coordinate(x[i, 2], lo2, inv_cell)
        c = cx + nx * (cy + ny * cz)
        lin[i] = c
        start[(c & mask) + 1] += 1
    for s in range(table):
        start[s + 1] += start[s]
    # Counting sort, stable: start[k] is used as the fill pointer of bucket k, then restored.
    for i in range(n):
        k = lin[i] & mask
        t = start[k]
        start[k] = t + 1
        order[t] = i
        packed[t, 0] = x[i, 0]
        packed[t, 1] = x[i, 1]
        packed[t, 2] = x[i, 2]
        packed[t, 3] = radius[i]
        packed[t, 4] = speed[i]
        sorted_lin[t] = lin[i]
    for s in range(table, 0, -1):
        start[s] = start[s - 1]
    start[0] = 0
    return h, eps, cap


# long: one pass over the sorted marbles; the wall tests are written out because a call
# taking the arrays cost ~60 ns per marble, a third of the bowl's contact generation.
@njit(cache=True, nogil=True)
def _generate(margins, walls, grid, visiting, first, last, buffers, out):
    """Fill the contact buffers from index out[0] (up to out[1]) with the contacts found from
    the sorted marbles visit[first:last] in that order (slots first..last - 1 when `visit` is
    empty: the serial core visits them all) and return how many were found. If that exceeds
    out[1] - out[0] the caller grows the buffers and calls again.

    margins = (h, eps, cap): the step (s), the margin's fixed part and its cap (m); a pair
    gets a contact when its gap is below min(h (|v_a| + |v_b|) + eps, cap).
    walls = (planes, spheres, tubes), the container's features (ContainerGeometry): planes
    (P, 6) a point and the unit normal into the container (m), spheres (S, 4) centre and
    radius (m) of a sphere holding the marbles inside, tubes (U, 3) axis x, y and radius (m) of
    a vertical tube holding them inside.
    grid = (start, order, packed, sorted_lin, dims): the bucketed marbles (`_grid`).
    visiting = (visit, block_of): visit (n,) int64 the slots block by block, block_of (n,)
    int64 the block of each slot; both empty: no blocks.
    buffers = (body_a, body_b, normal, gap, keys, partner), the contact set: (capacity,) int64
    marbles (body_a -1: a wall), (capacity, 3) unit normals from a to b, (capacity,) gaps (m),
    (capacity,) int64 keys and, in blocks, partner (capacity,) int64 the block of contact c's
    other marble (the own one for a wall). Keys: a marble b and wall feature f get f * n + b;
    marble pairs a < b get (a + W) * n + b, W = P + S + U.
    out = (out_lo, out_hi): the part of the buffers this call writes."""
    h, eps, cap = margins
    planes, spheres, tubes = walls
    start, order, packed, sorted_lin, dims = grid
    visit, block_of = visiting
    body_a, body_b, normal, gap, keys, partner = buffers
    out_lo, out_hi = out
    n = order.shape[0]
    blocked = block_of.shape[0] > 0
    nx = dims[0]
    ny = dims[1]
    nz = dims[2]
    table = dims[3]
    mask = table - 1
    # Dense: one bucket per cell, so the three cells of a row are consecutive buckets and one
    # range covers them, with no filtering.
    dense = nx * ny * nz <= table
    n_planes = planes.shape[0]
    n_spheres = spheres.shape[0]
    n_tubes = tubes.shape[0]
    n_walls = n_planes + n_spheres + n_tubes
    capacity = out_hi
    count = out_lo
    for k in range(first, last):
        s = visit[k] if visit.shape[0] > 0 else k
        i = order[s]
        own = block_of[s] if blocked else 0
        xi0 = packed[s, 0]
        xi1 = packed[s, 1]
        xi2 = packed[s, 2]
        ri = packed[s, 3]
        vi = packed[s, 4]
        # Walls first: a marble's support from below is solved before what it carries. Written
        # out here, not in a helper: a call taking the arrays cost about 60 ns per marble even
        # when inlined by Numba (a third of the bowl's contact generation).
        wall_margin = min(h * vi + eps, cap)
        for p in range(n_planes):
            g = ((xi0 - planes[p, 0]) * planes[p, 3] + (xi1 - planes[p, 1]) * planes[p, 4]
                 + (xi2 - planes[p, 2]) * planes[p, 5]) - ri
            if g < wall_margin:
                if count < capacity:
                    body_a[count] = -1
                    body_b[count] = i
                    normal[count, 0] = planes[p, 3]
                    normal[count, 1] = planes[p, 4]
                    normal[count, 2] = planes[p, 5]
                    gap[count] = g
                    keys[count] = p * n + i
                    if blocked:
                        partner[count] = own
                count += 1
        for q in range(n_spheres):
            d0 = xi0 - spheres[q, 0]
            d1 = xi1 - spheres[q, 1]
            d2 = xi2 - spheres[q, 2]
            dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            g = spheres[q, 3] - dist - ri
            # At the centre the wall has no nearest point; only a marble wider than the
            # sphere needs a contact there.
            if g < wall_margin and (dist > 0.0 or g < 0.0):
                if count < capacity:
                    body_a[count] = -1
                    body_b[count] = i
                    if dist > 0.0:
                        normal[count, 0] = -d0 / dist
                        normal[count, 1] = -d1 / dist
                        normal[count, 2] = -d2 / dist
                    else:  # a marble wider than the sphere, at its centre: push it up
                        normal[count, 0] = 0.0
                        normal[count, 1] = 0.0
                        normal[count, 2] = 1.0
                    gap[count] = g
                    keys[count] = (n_planes + q) * n + i
                    if blocked:
                        partner[count] = own
                count += 1
        for u in range(n_tubes):
            d0 = xi0 - tubes[u, 0]
            d1 = xi1 - tubes[u, 1]
            dist = np.sqrt(d0 * d0 + d1 * d1)
            g = tubes[u, 2] - dist - ri
            if g < wall_margin and (dist > 0.0 or g < 0.0):
                if count < capacity:
                    body_a[count] = -1
                    body_b[count] = i
                    # On the axis of a tube narrower than the marble: push along x.
                    normal[count, 0] = -d0 / dist if dist > 0.0 else 1.0
                    normal[count, 1] = -d1 / dist if dist > 0.0 else 0.0
                    normal[count, 2] = 0.0
                    gap[count] = g
                    keys[count] = (n_planes + n_spheres + u) * n + i
                    if blocked:
                        partner[count] = own
                count += 1
        c = sorted_lin[s]
        cx = c % nx
        cy = (c // nx) % ny
        cz = c // (nx * ny)
        x_lo = cx - 1 if cx > 0 else cx
        x_hi = cx + 1 if cx + 1 < nx else cx
        # The own cell (partners after s) and the 13 neighbours with (dz, dy, dx) > 0 in
        # lexicographic order: every pair of neighbouring cells is visited from one side.
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
                # Dense: the row's cells are consecutive buckets, one range. Otherwise one
                # bucket per cell, filtered by the exact cell number.
                for xx in range(lo, lo + 1 if dense else x_hi + 1):
                    cell = row + xx
                    if dense:
                        begin = start[cell]
                        end = start[row + x_hi + 1]
                    else:
                        begin = start[cell & mask]
                        end = start[(cell & mask) + 1]
                    if cell == c:
                        begin = s + 1  # the own cell's bucket is contiguous and holds s
                    for t in range(begin, end):
                        if not dense and sorted_lin[t] != cell:
                            continue
                        d0 = packed[t, 0] - xi0
                        d1 = packed[t, 1] - xi1
                        d2 = packed[t, 2] - xi2
                        dist2 = d0 * d0 + d1 * d1 + d2 * d2
                        margin = min(h * (vi + packed[t, 4]) + eps, cap)
                        # Most candidates are far: reject them without the square root. The
                        # slack leaves the decision to the exact test below.
                        reach = ri + packed[t, 3] + margin
                        if dist2 > 1.000001 * reach * reach:
                            continue
                        dist = np.sqrt(dist2)
                        g = dist - ri - packed[t, 3]
                        if g < margin:
                            if count < capacity:
                                j = order[t]
                                inv = 1.0 / dist if dist > 0.0 else 0.0
                                # body_a < body_b and the normal from a to b, whichever of
                                # the two was visited first.
                                if j < i:
                                    inv = -inv
                                    body_a[count] = j
                                    body_b[count] = i
                                    keys[count] = (j + n_walls) * n + i
                                else:
                                    body_a[count] = i
                                    body_b[count] = j
                                    keys[count] = (i + n_walls) * n + j
                                normal[count, 0] = d0 * inv
                                normal[count, 1] = d1 * inv
                                normal[count, 2] = d2 * inv
                                if dist == 0.0:
                                    # Coincident centres have no direction between them:
                                    # lift the higher-numbered marble straight up, the
                                    # same way every time, so the pair separates.
                                    normal[count, 2] = 1.0
                                gap[count] = g
                                if blocked:
                                    partner[count] = block_of[t]
                            count += 1
    return count - out_lo


@njit(cache=True, nogil=True)
def _deal(buffers, m, streams):
    """The first m contacts of the contact set `buffers` (`_generate`) as new arrays (body_a,
    body_b, normal, gap, keys; partner is not read), dealt round-robin from `streams`
    consecutive runs of the grid order: run s is contacts [s L, (s + 1) L),
    L = ceil(m / streams), and the output takes one from each run in turn."""
    body_a, body_b, normal, gap, keys, _ = buffers
    out_a = np.empty(m, np.int64)
    out_b = np.empty(m, np.int64)
    out_normal = np.empty((m, 3), np.float64)
    out_gap = np.empty(m, np.float64)
    out_keys = np.empty(m, np.int64)
    length = (m + streams - 1) // streams
    k = 0
    for j in range(length):
        for s in range(streams):
            c = s * length + j
            if c >= m:
                break
            out_a[k] = body_a[c]
            out_b[k] = body_b[c]
            out_normal[k, 0] = normal[c, 0]
            out_normal[k, 1] = normal[c, 1]
            out_normal[k, 2] = normal[c, 2]
            out_gap[k] = gap[c]
            out_keys[k] = keys[c]
            k += 1
    return out_a, out_b, out_normal, out_gap, out_keys


def key_bound(n: int, walls: int) -> int:
    """Every contact key of n marbles in a container of `walls` wall features lies in
    [0, key_bound): marble i and wall p have p n + i, marbles i < j have (i + walls) n + j."""
    return (n - 1 + walls) * n if n > 0 else 0


@dataclass(frozen=True)
class Contacts:
    """m contacts. body_a, body_b: (m,) int64 marble indices (body_a = -1: a container wall);
    normal: (m, 3) unit vectors from a to b; gap: (m,) metres, negative when overlapping;
    key: (m,) int64, the same for the same pair (or marble and wall) from step to step;
    partition: (ranges, phases) of a step in blocks (solver/partition.py), None when serial."""

    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    key: np.ndarray
    partition: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def m(self) -> int:
        return self.body_a.shape[0]


class Collider:
    """Reusable contact generator. Its grid and contact buffers persist and grow geometrically,
    so a steady pile allocates nothing in the broadphase from step to step except the returned
    contact arrays themselves."""

    def __init__(self, geometry: ContainerGeometry, capacity: int = 1024):
        self.geometry = geometry
        self._walls = (geometry.planes, geometry.spheres, geometry.tubes)
        self._alloc(capacity)
        self._start = np.zeros(2, dtype=np.int64)
        self._dims = np.zeros(4, dtype=np.int64)
        self._grid_for(0)
        self._last_blocks = 1

    def _alloc(self, capacity: int) -> None:
        self.body_a = np.empty(capacity, dtype=np.int64)
        self.body_b = np.empty(capacity, dtype=np.int64)
        self.normal = np.empty((capacity, 3), dtype=np.float64)
        self.gap = np.empty(capacity, dtype=np.float64)
        self.key = np.empty(capacity, dtype=np.int64)
        self.partner = np.empty(capacity, dtype=np.int64)
        self._buffers = (self.body_a, self.body_b, self.normal, self.gap, self.key, self.partner)

    def _grid_for(self, n: int) -> None:
        self._n = n
        self._speed = np.empty(n, dtype=np.float64)
        self._lin = np.empty(n, dtype=np.int64)
        self._order = np.empty(n, dtype=np.int64)
        self._packed = np.empty((n, 5), dtype=np.float64)
        self._sorted_lin = np.empty(n, dtype=np.int64)
        self._block_of = np.empty(n, dtype=np.int64)
        self._visit = np.empty(n, dtype=np.int64)
        self._scratch = (self._speed, self._lin)
        self._visiting = (self._visit, self._block_of)
        self._bucket()

    def _bucket(self) -> None:
        """The grid tuple of `_grid` and `_generate`, after any of its arrays is replaced."""
        self._bucketed = (self._start, self._order, self._packed, self._sorted_lin, self._dims)

    @property
    def order(self) -> np.ndarray:
        """(n,) int64: the marbles of the last `collide` sorted by grid cell (z-major, stable
        by index), the order the contacts were found in; reused by the next call."""
        return self._order

    def block_order(self) -> np.ndarray:
        """(n,) int64, new: the marbles of the last `collide` block by block, each block's in
        cell order (its visiting order); `order` itself after a serial collide. Numbered so,
        the marbles of one block are contiguous in memory (solver/locality.py)."""
        if self._last_blocks == 1:
            return self._order.copy()
        return self._order[self._visit]

    def collide(self, x: np.ndarray, v: np.ndarray, radius: np.ndarray, h: float,
                blocks: int = 1) -> Contacts:
        """x, v: (n, 3) positions (m) and the velocities (m/s) the step will move with;
        radius: (n,) m; h: step (s); blocks: 1 for the serial core's order, else the contacts
        of that many slabs, generated in parallel and laid out in groups (solver/partition.py).
        Returns copies, valid after later calls."""
        n = x.shape[0]
        if n == 0:
            return Contacts(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 3)),
                            np.zeros(0), np.zeros(0, np.int64))
        if n != self._n:
            self._grid_for(n)
        rule = (float(h), MARGIN_EPS_FRACTION, MARGIN_CAP_DIAMETERS)
        marbles = (x, v, radius)
        while True:
            margins = _grid(marbles, rule, self._scratch, self._bucketed)
            if self._dims[3] > 0:
                break
            self._start = np.zeros(2 * int(-self._dims[3]) + 1, dtype=np.int64)
            self._bucket()
        self._last_blocks = blocks
        if blocks > 1:
            return self._blocks(margins, blocks)
        while True:
            m = _generate(margins, self._walls, self._bucketed, self._SERIAL, 0, n,
                          self._buffers, (0, self.body_a.shape[0]))
            if m <= self.body_a.shape[0]:
                break
            self._alloc(max(2 * self.body_a.shape[0], int(m * 1.25)))
        return Contacts(*_deal(self._buffers, m, INTERLEAVE))

    # `_generate`'s visiting tuple for the serial core: no visiting order, no blocks.
    _SERIAL = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def _blocks(self, margins: tuple[float, float, float], blocks: int) -> Contacts:
        """The contacts of `blocks` slabs, found in parallel, each slab into its own segment of
        the buffers, then laid out in groups."""
        starts = np.zeros(blocks + 1, dtype=np.int64)
        assign_blocks(self._sorted_lin, self._dims, blocks, self._block_of, self._visit, starts)
        found = np.zeros(blocks, dtype=np.int64)
        while True:
            segment = self.body_a.shape[0] // blocks
            generate_blocks(margins, self._walls, self._bucketed, self._visiting, starts,
                            segment, self._buffers, found)
            if found.max() <= segment:
                break
            self._alloc(max(2 * self.body_a.shape[0], int(found.max() * blocks * 1.25)))
        *arrays, ranges, phases = order_blocks(self._buffers, found, segment, INTERLEAVE)
        return Contacts(*arrays, partition=(ranges, phases))


@njit(parallel=True, cache=True, nogil=True)
def generate_blocks(margins, walls, grid, visiting, starts, segment, buffers, found):
    """_generate (same tuples) for every block at once: block k visits
    visit[starts[k]:starts[k + 1]] and writes from k * segment; found (blocks,) int64 <- how
    many it found (more than `segment`: call again with larger buffers)."""
    for b in prange(found.shape[0]):
        k = np.int64(b)  # a prange index is unsigned; mixed with signed it would be a float
        found[k] = _generate(margins, walls, grid, visiting, starts[k], starts[k + 1], buffers,
                             (k * segment, (k + 1) * segment))
