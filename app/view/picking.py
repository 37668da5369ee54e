"""Ray casts against marbles and planes in numpy: mouse picking, dragging, and the reference
image that the GPU impostors are tested against. No Qt, no OpenGL.

Units are metres; directions are unit vectors. The sphere test uses the same "closest
approach" formulation as shaders/marble.frag.
"""
from __future__ import annotations

import numpy as np

# Rays × spheres per chunk: bounds the temporary (m, n) arrays to a few tens of megabytes.
_CHUNK = 2_000_000


def ray_spheres(origin, directions, centres, radii) -> tuple[np.ndarray, np.ndarray]:
    """First sphere hit by each ray.

    origin: (3,) m, shared by all rays; directions: (m, 3) unit vectors; centres: (n, 3) m;
    radii: (n,) m. Returns (index (m,) int64, −1 where the ray misses every sphere;
    t (m,) float64 metres along the ray to the front surface, +inf on a miss). Spheres that
    contain the origin or lie behind it are ignored.
    """
    origin = np.asarray(origin, dtype=np.float64).reshape(3)
    d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    r = np.asarray(radii, dtype=np.float64).reshape(-1)
    m, n = d.shape[0], c.shape[0]
    index = np.full(m, -1, dtype=np.int64)
    best = np.full(m, np.inf)
    if m == 0 or n == 0:
        return index, best
    oc = c - origin                                   # (n, 3) origin → centre
    oc2 = np.einsum("ij,ij->i", oc, oc)
    outside = oc2 > r * r
    step = max(1, _CHUNK // n)
    for lo in range(0, m, step):
        dd = d[lo:lo + step]
        b = dd @ oc.T          # (k, n): distance along each ray to its closest approach
        # Squared distance from the centre to the ray. |oc|² − b² cancels when the eye is far
        # away, which costs nothing in float64 (the float32 shader forms the perpendicular
        # vector instead).
        perp2 = oc2[None, :] - b * b
        disc = r[None, :] ** 2 - perp2
        t = b - np.sqrt(np.maximum(disc, 0.0))
        valid = (disc >= 0.0) & (t > 0.0) & outside[None, :]
        t = np.where(valid, t, np.inf)
        k = np.argmin(t, axis=1)
        tk = t[np.arange(t.shape[0]), k]
        hit = np.isfinite(tk)
        index[lo:lo + step] = np.where(hit, k, -1)
        best[lo:lo + step] = tk
    return index, best


def pick_sphere(origin, direction, centres, radii) -> tuple[int, np.ndarray | None]:
    """The marble under one ray: (index, hit point (3,) m on its surface), or (−1, None)."""
    idx, t = ray_spheres(origin, np.asarray(direction, dtype=np.float64).reshape(1, 3),
                         centres, radii)
    if idx[0] < 0:
        return -1, None
    o = np.asarray(origin, dtype=np.float64).reshape(3)
    return int(idx[0]), o + t[0] * np.asarray(direction, dtype=np.float64).reshape(3)


def ray_plane(origin, direction, point, normal) -> np.ndarray | None:
    """Where a ray meets the plane through `point` with `normal` (all (3,), m): the point (3,),
    or None when the ray is parallel to the plane or the plane is behind the origin."""
    o = np.asarray(origin, dtype=np.float64).reshape(3)
    d = np.asarray(direction, dtype=np.float64).reshape(3)
    nrm = np.asarray(normal, dtype=np.float64).reshape(3)
    denom = float(d @ nrm)
    if abs(denom) < 1e-12:
        return None
    t = float((np.asarray(point, dtype=np.float64).reshape(3) - o) @ nrm) / denom
    if t <= 0.0:
        return None
    return o + t * d
