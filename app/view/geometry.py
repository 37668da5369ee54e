"""Geometry of the 3D view in numpy only (no Qt, no OpenGL).

Unit meshes are (vertices (k, 6) float32 = position, normal; triangle indices (t,) uint32), scaled
and placed by a 4×4 model matrix at draw time. Also the impostor polygon, line vertices, the
scissor rectangle of the marbles and what the camera frames; lengths are in metres.
"""
from __future__ import annotations

import math

import numpy as np


def sphere_mesh(n_lat: int = 32, n_lon: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Unit sphere about the origin, outward normals."""
    th = np.linspace(0.0, np.pi, n_lat + 1)
    ph = np.linspace(0.0, 2.0 * np.pi, n_lon + 1)
    t, p = np.meshgrid(th, ph, indexing="ij")
    pos = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1)
    verts = np.concatenate([pos, pos], axis=-1).reshape(-1, 6)
    return verts.astype(np.float32), _grid_indices(n_lat, n_lon)


def cylinder_mesh(n: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Open unit cylinder: radius 1 about the z axis, z from 0 to 1, outward normals."""
    ph = np.linspace(0.0, 2.0 * np.pi, n + 1)
    z = np.array([0.0, 1.0])
    zz, pp = np.meshgrid(z, ph, indexing="ij")
    pos = np.stack([np.cos(pp), np.sin(pp), zz], axis=-1)
    nrm = np.stack([np.cos(pp), np.sin(pp), np.zeros_like(zz)], axis=-1)
    verts = np.concatenate([pos, nrm], axis=-1).reshape(-1, 6)
    return verts.astype(np.float32), _grid_indices(1, n)


def disk_mesh(n: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """Unit disk in the plane z = 0, normal +z (a fan around the centre)."""
    ph = np.linspace(0.0, 2.0 * np.pi, n + 1)
    pos = np.zeros((n + 2, 3))
    pos[1:, 0], pos[1:, 1] = np.cos(ph), np.sin(ph)
    nrm = np.tile([0.0, 0.0, 1.0], (n + 2, 1))
    idx = np.stack([np.zeros(n), np.arange(1, n + 1), np.arange(2, n + 2)], axis=1)
    return (np.concatenate([pos, nrm], axis=1).astype(np.float32),
            idx.astype(np.uint32).reshape(-1))


def torus_mesh(tube: float, n: int = 96, m: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Torus of major radius 1 and minor radius `tube` about the y axis (lying in the x–z
    plane): the rim of the planar disk."""
    u = np.linspace(0.0, 2.0 * np.pi, n + 1)
    v = np.linspace(0.0, 2.0 * np.pi, m + 1)
    uu, vv = np.meshgrid(u, v, indexing="ij")
    ring = np.stack([np.cos(uu), np.zeros_like(uu), np.sin(uu)], axis=-1)
    nrm = np.cos(vv)[..., None] * ring + np.sin(vv)[..., None] * np.array([0.0, 1.0, 0.0])
    pos = ring + tube * nrm
    verts = np.concatenate([pos, nrm], axis=-1).reshape(-1, 6)
    return verts.astype(np.float32), _grid_indices(n, m)


def box_walls_mesh() -> tuple[np.ndarray, np.ndarray]:
    """Four walls of the box [−1, 1]² × [0, 1], outward normals."""
    verts, idx = [], []
    for axis, sign in ((0, 1.0), (0, -1.0), (1, 1.0), (1, -1.0)):
        other = 1 - axis
        nrm = np.zeros(3)
        nrm[axis] = sign
        base = len(verts)
        for s, z in ((-1.0, 0.0), (1.0, 0.0), (1.0, 1.0), (-1.0, 1.0)):
            p = np.zeros(3)
            p[axis], p[other], p[2] = sign, s, z
            verts.append(np.concatenate([p, nrm]))
        idx += [base, base + 1, base + 2, base, base + 2, base + 3]
    return np.array(verts, dtype=np.float32), np.array(idx, dtype=np.uint32)


def outward(verts: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Triangle indices reordered where needed so that every triangle is counter-clockwise seen
    from the side its vertex normals point to: face culling then tells the near side of a
    shell from the far side."""
    tri = idx.reshape(-1, 3).copy()
    p = verts[:, :3].astype(np.float64)
    face = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
    nrm = verts[tri, 3:6].astype(np.float64).sum(axis=1)
    flip = np.einsum("ij,ij->i", face, nrm) < 0
    tri[flip] = tri[flip][:, ::-1]
    return tri.reshape(-1)


def impostor_polygon() -> np.ndarray:
    """Corners (8, 2) float32 of the octagon circumscribing the unit circle, in triangle-strip
    order. The vertex shader scales it to the silhouette circle; an octagon wastes 5% of its
    area on fragments outside the sphere where a square wastes 27%, which matters when every
    fragment is shaded in software."""
    k = np.arange(8)
    a = (k + 0.5) * np.pi / 4
    ring = np.stack([np.cos(a), np.sin(a)], axis=1) / np.cos(np.pi / 8)
    strip = [0, 1, 7, 2, 6, 3, 5, 4]   # zig-zag across the convex polygon
    return ring[strip].astype(np.float32).reshape(-1)


def _grid_indices(rows: int, cols: int) -> np.ndarray:
    """Two triangles per cell of a (rows+1) × (cols+1) vertex grid."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    a = r * (cols + 1) + c
    b, cc, d = a + cols + 1, a + 1, a + cols + 2
    return np.stack([a, b, d, a, d, cc], axis=-1).astype(np.uint32).reshape(-1)


def lines(points: np.ndarray) -> np.ndarray:
    """Vertices (k, 6) for GL_LINES from a (k, 3) array of segment end points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return np.concatenate([pts, np.tile([0.0, 0.0, 1.0], (len(pts), 1))], axis=1).astype(np.float32)


def circle_segments(n: int = 96) -> np.ndarray:
    """End points (2n, 3) of n segments around the unit circle in the plane z = 0."""
    ph = np.linspace(0.0, 2.0 * np.pi, n + 1)
    p = np.stack([np.cos(ph), np.sin(ph), np.zeros_like(ph)], axis=1)
    return np.stack([p[:-1], p[1:]], axis=1).reshape(-1, 3)


def screen_rect(viewproj: np.ndarray, x: np.ndarray, radius: np.ndarray, w: int, h: int):
    """(x, y, width, height) in framebuffer pixels (origin bottom-left, as glScissor takes)
    containing every marble's image, from the projected corners of their world bounding box;
    None when that box reaches behind the eye (then no useful bound exists)."""
    ok = np.isfinite(x).all(axis=1) & np.isfinite(radius)
    if not ok.any():
        return 0, 0, 0, 0
    lo = (x[ok] - radius[ok, None]).min(axis=0)
    hi = (x[ok] + radius[ok, None]).max(axis=0)
    corners = np.array([[a, b, c, 1.0] for a in (lo[0], hi[0]) for b in (lo[1], hi[1])
                        for c in (lo[2], hi[2])])
    clip = corners @ viewproj.T
    if (clip[:, 3] <= 1e-9).any():
        return None
    ndc = clip[:, :2] / clip[:, 3:4]
    x0 = int(np.clip(np.floor((ndc[:, 0].min() + 1) * 0.5 * w) - 1, 0, w))
    x1 = int(np.clip(np.ceil((ndc[:, 0].max() + 1) * 0.5 * w) + 1, 0, w))
    y0 = int(np.clip(np.floor((ndc[:, 1].min() + 1) * 0.5 * h) - 1, 0, h))
    y1 = int(np.clip(np.ceil((ndc[:, 1].max() + 1) * 0.5 * h) + 1, 0, h))
    return x0, y0, x1 - x0, y1 - y0


def model(translate=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    """Model matrix (4, 4): scale (a number or 3 per-axis factors), then translate (3,) m."""
    m = np.diag([*np.broadcast_to(np.asarray(scale, dtype=np.float64), (3,)), 1.0])
    m[:3, 3] = translate
    return m


def plane_basis(normal) -> np.ndarray:
    """Rows e1, e2, n (3, 3): an orthonormal right-handed frame of the plane with normal
    `normal` (3,), any length. e1 is world x projected into the plane (world y when the plane
    stands across x), so the checker of an incline runs along its slope; the floor's basis is
    the identity."""
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    seed = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = seed - (seed @ n) * n
    e1 /= np.linalg.norm(e1)
    return np.array([e1, np.cross(n, e1), n])


def plane_model(point, normal, centre, radius: float) -> np.ndarray:
    """Model matrix (4, 4) placing the unit disk (z = 0, normal +z) on the plane through
    `point` (3,) m with `normal` (3,): centred on `centre` (3,) m projected onto the plane,
    scaled to `radius` m."""
    basis = plane_basis(normal)
    n = basis[2]
    c = np.asarray(centre, dtype=np.float64)
    m = np.eye(4)
    m[:3, :3] = radius * basis.T
    m[:3, 3] = c - ((c - np.asarray(point, dtype=np.float64)) @ n) * n
    return m


def slope_azimuth(normal) -> float | None:
    """Camera azimuth (degrees, as Camera.azimuth) that sees the plane of `normal` (3,) from
    the side, along its level line, with the downhill direction to the right; None for a
    level plane."""
    n = np.asarray(normal, dtype=np.float64)
    # Horizontal and in the plane. With the eye towards it, the camera's right (forward x up
    # = -level x z) is n's horizontal part: downhill.
    level = np.cross(n, [0.0, 0.0, 1.0])
    if np.linalg.norm(level) < 1e-9 * np.linalg.norm(n):
        return None
    return math.degrees(math.atan2(level[1], level[0]))


# A tilted plane is framed around its marbles, at least this far (m) around them: one marble
# on an incline is 0.1 m, and the slope it rolls down must show.
PLANE_VIEW_RADIUS = 0.5


def container_bounds(container: dict | None, x: np.ndarray, radius: np.ndarray):
    """Bounding sphere (centre (3,), radius) in metres of what the view should frame: the
    container if it is bounded, else (a floor, a tilted plane) the marbles, else a 1 m sphere
    at the origin."""
    kind = (container or {}).get("kind")
    if kind == "sphere":
        return np.asarray(container["center"], dtype=np.float64), float(container["radius"])
    if kind in ("box", "tube"):
        cx, cy = container["center"]
        z0, h = float(container["floor"]), float(container.get("height", 1.0))
        half = float(container["half_width"] if kind == "box" else container["radius"])
        across = half * (math.sqrt(2.0) if kind == "box" else 1.0)
        return np.array([cx, cy, z0 + 0.5 * h]), math.hypot(across, 0.5 * h)
    # A diverged solver can hand over NaN or far-flung positions: frame the finite ones only.
    finite = np.isfinite(x).all(axis=1) & np.isfinite(radius)
    x, radius = x[finite], radius[finite]
    if len(x):
        lo = (x - radius[:, None]).min(axis=0)
        hi = (x + radius[:, None]).max(axis=0)
        if kind == "floor":
            lo[2] = min(lo[2], float(container.get("height", 0.0)))
        if kind == "plane":
            return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), PLANE_VIEW_RADIUS)
        return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 1e-3)
    if kind == "plane":
        return np.asarray(container["point"], dtype=np.float64), PLANE_VIEW_RADIUS
    z = float((container or {}).get("height", 0.0))
    return np.array([0.0, 0.0, z + 0.5]), 1.0


def floor_height(container: dict | None, x: np.ndarray, radius: np.ndarray) -> float:
    """z in metres of the lowest supporting surface: where the floor is drawn and where the
    marbles' occlusion term is darkest."""
    kind = (container or {}).get("kind")
    if kind == "sphere":
        return float(container["center"][2]) - float(container["radius"])
    if kind in ("box", "tube"):
        return float(container["floor"])
    if kind == "floor":
        return float(container["height"])
    z = x[:, 2] - radius
    z = z[np.isfinite(z)]
    return float(z.min()) if len(z) else 0.0


def checker_period(scene_radius: float) -> float:
    """A round checker size, about a tenth of the scene: 10 cm squares for the 1 m bowl."""
    raw = max(scene_radius, 1e-3) / 10.0
    p = 10.0 ** math.floor(math.log10(raw))
    for k in (1.0, 2.0, 5.0, 10.0):
        if raw <= k * p * 1.5:
            return k * p
    return 10.0 * p


def light_matrices(direction: np.ndarray, centre: np.ndarray,
                   radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Orthographic world → clip transform (4, 4) of a directional light shining along
    −`direction` (3,), unit, covering the sphere of `radius` m about `centre` (3,) m; and an
    up vector (3,) for the impostors drawn into the shadow map."""
    L = direction
    up = np.array([1.0, 0.0, 0.0]) if abs(L[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    right = np.cross(up, L)
    right /= np.linalg.norm(right)
    up2 = np.cross(L, right)
    eye = centre + 2.0 * radius * L
    view = np.eye(4)
    view[0, :3], view[1, :3], view[2, :3] = right, up2, L
    view[:3, 3] = -view[:3, :3] @ eye
    near, far = 0.0, 4.0 * radius
    proj = np.diag([1.0 / radius, 1.0 / radius, -2.0 / (far - near), 1.0])
    proj[2, 3] = -(far + near) / (far - near)
    return proj @ view, up2
