"""The last image seen from a camera that has moved since: the screen-space map that shows it at
once, before the rendering with the new camera arrives (what a VR compositor's time warp does).

A rendering of a large pile with software OpenGL takes hundreds of ms; an orbit or a zoom must
show within 100 ms. The image is mapped by the homography that takes the plane through the
camera's target, facing the old camera, from the old view to the new one: exact for that plane
(where the user looks), approximate off it. Qt-free: the widget turns the two quads into a
QTransform.
"""
from __future__ import annotations

import numpy as np


def to_pixels(viewproj: np.ndarray, points: np.ndarray, size: tuple[float, float]):
    """World points (k, 3) m -> pixel coordinates (k, 2) (origin top left, y down) of a
    view of `size` (w, h) px; None when a point is behind the camera."""
    h = np.c_[points, np.ones(len(points))] @ np.asarray(viewproj, dtype=np.float64).T
    if np.any(h[:, 3] <= 1e-9):
        return None
    ndc = h[:, :2] / h[:, 3:4]
    w, hh = size
    return np.c_[(ndc[:, 0] + 1.0) * 0.5 * w, (1.0 - ndc[:, 1]) * 0.5 * hh]


def plane_quads(old_viewproj, new_viewproj, target, right, up, half: float,
                size: tuple[float, float]):
    """(old (4, 2), new (4, 2)) pixel corners of the square of side 2 `half` m centred on
    `target` in the plane spanned by the old camera's `right` and `up`, as each camera sees
    it; None when a corner is behind either camera (no warp then)."""
    t, r, u = (np.asarray(v, dtype=np.float64).reshape(3) for v in (target, right, up))
    corners = np.array([t - half * r + half * u, t + half * r + half * u,
                        t + half * r - half * u, t - half * r - half * u])
    old = to_pixels(old_viewproj, corners, size)
    new = to_pixels(new_viewproj, corners, size)
    if old is None or new is None:
        return None
    return old, new
