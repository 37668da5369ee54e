"""Contact generation: a hashed uniform grid broadphase and sphere/sphere, sphere/wall narrowphase.

A contact is generated for every pair whose gap is below its speculative margin
``h (|v_a| + |v_b|) + eps`` (SOLVERS.md §1): a pair that may close its gap within the step gets a
contact now, and ``e = u + d/h`` then stops it exactly at touching. Contact ``c`` is the pair
``(body_a[c], body_b[c])`` with ``body_a = -1`` for a container wall; ``normal`` points from a to b.

The grid is linear in the number of marbles: cells are as wide as the largest interaction range,
so only the 27 cells around a marble can hold partners.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .world import ContainerGeometry

# Relative part of the margin: contacts within 1% of the smallest radius are kept even at rest, so
# a resting pile keeps its contacts from step to step (warm starting relies on that).
MARGIN_EPS_FRACTION = 0.01
# The speculative margin is capped at two diameters: a marble faster than that per step may
# tunnel, but a dragged marble cannot blow the grid up to O(n^2) candidate pairs.
MARGIN_CAP_DIAMETERS = 2.0


@njit(cache=True, nogil=True)
def _cell_hash(cx, cy, cz, mask):
    return ((cx * 73856093) ^ (cy * 19349663) ^ (cz * 83492791)) & mask


@njit(cache=True, nogil=True)
def _generate(x, speed, radius, h, eps, margin_cap, planes, spheres, tubes,
              body_a, body_b, normal, gap, feature):
    """Fill the contact arrays (up to their capacity) and return the number of contacts found.
    If the return value exceeds the capacity the caller grows the arrays and calls again."""
    n = x.shape[0]
    capacity = body_a.shape[0]
    count = 0
    if n == 0:
        return 0
    rmax = 0.0
    vmax = 0.0
    for i in range(n):
        rmax = max(rmax, radius[i])
        vmax = max(vmax, speed[i])
    reach = 2.0 * rmax + min(2.0 * h * vmax + eps, margin_cap)
    inv_cell = 1.0 / reach

    table = 1
    while table < 2 * n:
        table *= 2
    mask = table - 1
    cell = np.empty((n, 3), dtype=np.int64)
    key = np.empty(n, dtype=np.int64)
    start = np.zeros(table + 1, dtype=np.int64)
    for i in range(n):
        for k in range(3):
            cell[i, k] = np.int64(np.floor(x[i, k] * inv_cell))
        key[i] = _cell_hash(cell[i, 0], cell[i, 1], cell[i, 2], mask)
        start[key[i] + 1] += 1
    for s in range(table):
        start[s + 1] += start[s]
    fill = start[:-1].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[fill[key[i]]] = i
        fill[key[i]] += 1

    n_planes = planes.shape[0]
    n_spheres = spheres.shape[0]
    for i in range(n):
        xi0 = x[i, 0]
        xi1 = x[i, 1]
        xi2 = x[i, 2]
        for dx in range(-1, 2):
            for dy in range(-1, 2):
                for dz in range(-1, 2):
                    cx = cell[i, 0] + dx
                    cy = cell[i, 1] + dy
                    cz = cell[i, 2] + dz
                    hk = _cell_hash(cx, cy, cz, mask)
                    for s in range(start[hk], start[hk + 1]):
                        j = order[s]
                        # j > i visits each pair once; the cell test drops hash collisions, which
                        # would otherwise list a pair twice.
                        if j <= i or cell[j, 0] != cx or cell[j, 1] != cy or cell[j, 2] != cz:
                            continue
                        d0 = x[j, 0] - xi0
                        d1 = x[j, 1] - xi1
                        d2 = x[j, 2] - xi2
                        dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
                        g = dist - radius[i] - radius[j]
                        if g < min(h * (speed[i] + speed[j]) + eps, margin_cap) and dist > 0.0:
                            if count < capacity:
                                body_a[count] = i
                                body_b[count] = j
                                normal[count, 0] = d0 / dist
                                normal[count, 1] = d1 / dist
                                normal[count, 2] = d2 / dist
                                gap[count] = g
                                feature[count] = -1
                            count += 1
        wall_margin = min(h * speed[i] + eps, margin_cap)
        for p in range(n_planes):
            g = ((xi0 - planes[p, 0]) * planes[p, 3] + (xi1 - planes[p, 1]) * planes[p, 4]
                 + (xi2 - planes[p, 2]) * planes[p, 5]) - radius[i]
            if g < wall_margin:
                if count < capacity:
                    body_a[count] = -1
                    body_b[count] = i
                    normal[count, 0] = planes[p, 3]
                    normal[count, 1] = planes[p, 4]
                    normal[count, 2] = planes[p, 5]
                    gap[count] = g
                    feature[count] = p
                count += 1
        for q in range(n_spheres):
            d0 = xi0 - spheres[q, 0]
            d1 = xi1 - spheres[q, 1]
            d2 = xi2 - spheres[q, 2]
            dist = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            g = spheres[q, 3] - dist - radius[i]
            if g < wall_margin and dist > 0.0:
                if count < capacity:
                    body_a[count] = -1
                    body_b[count] = i
                    normal[count, 0] = -d0 / dist
                    normal[count, 1] = -d1 / dist
                    normal[count, 2] = -d2 / dist
                    gap[count] = g
                    feature[count] = n_planes + q
                count += 1
        for t in range(tubes.shape[0]):
            d0 = xi0 - tubes[t, 0]
            d1 = xi1 - tubes[t, 1]
            dist = np.sqrt(d0 * d0 + d1 * d1)
            g = tubes[t, 2] - dist - radius[i]
            if g < wall_margin and dist > 0.0:
                if count < capacity:
                    body_a[count] = -1
                    body_b[count] = i
                    normal[count, 0] = -d0 / dist
                    normal[count, 1] = -d1 / dist
                    normal[count, 2] = 0.0
                    gap[count] = g
                    feature[count] = n_planes + n_spheres + t
                count += 1
    return count


@dataclass(frozen=True)
class Contacts:
    """m contacts. body_a, body_b: (m,) int64 marble indices (body_a = -1: a container wall);
    normal: (m, 3) unit vectors from a to b; gap: (m,) metres, negative when overlapping;
    key: (m,) int64, the same for the same pair (or marble and wall) from step to step."""

    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    key: np.ndarray

    @property
    def m(self) -> int:
        return self.body_a.shape[0]


class Collider:
    """Reusable contact generator whose buffers grow geometrically, so a steady pile allocates
    nothing new in the broadphase from step to step."""

    def __init__(self, geometry: ContainerGeometry, capacity: int = 1024):
        self.geometry = geometry
        self._alloc(capacity)

    def _alloc(self, capacity: int) -> None:
        self.body_a = np.empty(capacity, dtype=np.int64)
        self.body_b = np.empty(capacity, dtype=np.int64)
        self.normal = np.empty((capacity, 3), dtype=np.float64)
        self.gap = np.empty(capacity, dtype=np.float64)
        self.feature = np.empty(capacity, dtype=np.int64)

    def collide(self, x: np.ndarray, v: np.ndarray, radius: np.ndarray, h: float) -> Contacts:
        """x, v: (n, 3) positions (m) and the velocities (m/s) the step will move with;
        radius: (n,) m; h: step (s). Returns copies, valid after later calls."""
        speed = np.sqrt(np.einsum("ij,ij->i", v, v))
        rmin = float(radius.min()) if radius.size else 0.0
        rmax = float(radius.max()) if radius.size else 0.0
        eps = MARGIN_EPS_FRACTION * rmin
        cap = MARGIN_CAP_DIAMETERS * 2.0 * rmax
        geo = self.geometry
        while True:
            m = _generate(x, speed, radius, h, eps, cap, geo.planes, geo.spheres, geo.tubes,
                          self.body_a, self.body_b, self.normal, self.gap, self.feature)
            if m <= self.body_a.shape[0]:
                break
            self._alloc(max(2 * self.body_a.shape[0], int(m * 1.25)))
        n = x.shape[0]
        a = self.body_a[:m].copy()
        b = self.body_b[:m].copy()
        # Marble pairs are keyed above every wall key: key = (a + walls) * n + b for marbles,
        # key = wall * n + b for walls.
        walls = geo.n_features
        key = np.where(a >= 0, (a + walls) * n + b, self.feature[:m] * n + b)
        return Contacts(a, b, self.normal[:m].copy(), self.gap[:m].copy(), key)

