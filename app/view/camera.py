"""Orbit camera of the 3D view, in the manner of MuJoCo's viewer; pure numpy, no Qt, no OpenGL.

World units are metres and ``z`` is up. The camera looks at ``target`` from ``distance`` metres
away, in the direction given by ``azimuth`` (degrees, about ``z``, measured from ``+x``) and
``elevation`` (degrees above the ``x–y`` plane). Azimuth −90° and elevation 0° put the eye on the
``−y`` side looking along ``+y``, with ``x`` to the right and ``z`` up: the view of the planar
scenes, which live in the ``x–z`` plane.

Matrices are numpy float64 4×4 in the usual column-vector convention (``clip = P @ V @ [x, 1]``);
upload them to OpenGL transposed (numpy is row-major). Pixel coordinates follow Qt: origin at the
top-left corner of the widget, ``y`` down, and the centre of pixel ``(i, j)`` at
``(i + 0.5, j + 0.5)``.
The ray helpers here are the single definition of "which ray goes through this pixel", shared by
picking and by the pixel test that checks the GPU impostors against a numpy ray cast.
"""
from __future__ import annotations

import math

import numpy as np

_UP = np.array([0.0, 0.0, 1.0])
# Elevation stays strictly inside (−90°, 90°): at the poles the view direction is parallel to the
# world up vector and the camera's right vector is undefined.
MAX_ELEVATION = 89.0


class Camera:
    """Orbit camera. target: (3,) m; distance: m; azimuth, elevation, fov_y: degrees;
    aspect: viewport width / height; scene_radius: m, the size of what is shown, which sets the
    near and far clipping planes."""

    # Mouse sensitivities: degrees of orbit per pixel of drag, distance factor per wheel notch.
    ORBIT_DEG_PER_PIXEL = 0.4
    ZOOM_PER_STEP = 0.9

    def __init__(self, target=(0.0, 0.0, 0.0), distance: float = 3.0, azimuth: float = -60.0,
                 elevation: float = 25.0, fov_y: float = 45.0, aspect: float = 4.0 / 3.0,
                 scene_radius: float = 1.0) -> None:
        self.target = np.array(target, dtype=np.float64).reshape(3)
        self.distance = float(distance)
        self.azimuth = float(azimuth)
        self.elevation = float(elevation)
        self.fov_y = float(fov_y)
        self.aspect = float(aspect)
        self.scene_radius = float(scene_radius)

    # --- geometry ---------------------------------------------------------------------------
    def direction(self) -> np.ndarray:
        """Unit vector (3,) from the target towards the eye."""
        az, el = math.radians(self.azimuth), math.radians(self.elevation)
        return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])

    def eye(self) -> np.ndarray:
        """Eye position (3,) in metres."""
        return self.target + self.distance * self.direction()

    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(right, up, forward): orthonormal (3,) world vectors of the camera; forward points from
        the eye into the scene."""
        forward = -self.direction()
        right = np.cross(forward, _UP)
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        return right, up, forward

    def near_far(self) -> tuple[float, float]:
        """Clipping distances in metres. The near plane is a fixed fraction of the distance:
        with a 24-bit depth buffer this resolves about 1e-5 of the distance at the target, far
        finer than any marble, while only clipping what is almost at the eye."""
        near = 0.01 * self.distance
        far = self.distance + 6.0 * self.scene_radius + 1.0
        return near, far

    def view_matrix(self) -> np.ndarray:
        """World → eye coordinates (4, 4); the eye looks along −z of eye space."""
        right, up, forward = self.basis()
        eye = self.eye()
        m = np.eye(4)
        m[0, :3], m[1, :3], m[2, :3] = right, up, -forward
        m[:3, 3] = -m[:3, :3] @ eye
        return m

    def projection_matrix(self, aspect: float | None = None) -> np.ndarray:
        """Eye → clip coordinates (4, 4), OpenGL conventions (NDC z in [−1, 1])."""
        aspect = self.aspect if aspect is None else float(aspect)
        near, far = self.near_far()
        f = 1.0 / math.tan(math.radians(self.fov_y) / 2.0)
        m = np.zeros((4, 4))
        m[0, 0] = f / aspect
        m[1, 1] = f
        m[2, 2] = (far + near) / (near - far)
        m[2, 3] = 2.0 * far * near / (near - far)
        m[3, 2] = -1.0
        return m

    # --- rays ------------------------------------------------------------------------------
    def ray_directions(self, px, py, width: float, height: float) -> np.ndarray:
        """Unit world directions (..., 3) of the rays from the eye through widget pixel
        coordinates px, py (arrays of any matching shape; pixel centres are at +0.5) of a
        viewport of width × height pixels."""
        px, py = np.broadcast_arrays(np.asarray(px, dtype=np.float64),
                                     np.asarray(py, dtype=np.float64))
        tan_y = math.tan(math.radians(self.fov_y) / 2.0)
        tan_x = tan_y * (width / height)
        ndc_x = 2.0 * px / width - 1.0
        ndc_y = 1.0 - 2.0 * py / height
        right, up, forward = self.basis()
        d = (ndc_x[..., None] * tan_x * right + ndc_y[..., None] * tan_y * up + forward)
        return d / np.linalg.norm(d, axis=-1, keepdims=True)

    def ray(self, px: float, py: float, width: float,
            height: float) -> tuple[np.ndarray, np.ndarray]:
        """(origin (3,), unit direction (3,)) of the ray through one widget pixel position."""
        return self.eye(), self.ray_directions(px, py, width, height).reshape(3)

    def pixel_rays(self, width: int, height: int) -> np.ndarray:
        """Directions (height, width, 3) through the centre of every pixel, row 0 at the top."""
        j, i = np.mgrid[0:height, 0:width]
        return self.ray_directions(i + 0.5, j + 0.5, width, height)

    # --- mouse -----------------------------------------------------------------------------
    def orbit(self, dx: float, dy: float) -> None:
        """Rotate about the target by a mouse drag of (dx, dy) pixels (y down). The scene
        follows the mouse: dragging right turns it to the right, dragging down tilts its top
        towards the viewer (the eye rises)."""
        self.azimuth = (self.azimuth - self.ORBIT_DEG_PER_PIXEL * dx + 180.0) % 360.0 - 180.0
        self.elevation = float(np.clip(self.elevation + self.ORBIT_DEG_PER_PIXEL * dy,
                                       -MAX_ELEVATION, MAX_ELEVATION))

    def pan(self, dx: float, dy: float, viewport_height: float) -> None:
        """Slide the target in the image plane by a drag of (dx, dy) pixels (y down) so that the
        point under the cursor at the target's depth stays under the cursor."""
        metres_per_pixel = (2.0 * self.distance * math.tan(math.radians(self.fov_y) / 2.0)
                            / max(float(viewport_height), 1.0))
        right, up, _ = self.basis()
        self.target = self.target + metres_per_pixel * (-dx * right + dy * up)

    def zoom(self, steps: float) -> None:
        """Move towards the target by `steps` wheel notches (positive = closer); the distance is
        scaled geometrically so zooming feels the same at every scale."""
        self.distance = float(np.clip(self.distance * self.ZOOM_PER_STEP ** steps,
                                      1e-3, 1e4))

    # --- framing ---------------------------------------------------------------------------
    def frame(self, center, radius: float, planar: bool = False) -> None:
        """Aim at a bounding sphere (center (3,) m, radius m) so that it fills the view with a
        small margin; planar scenes are seen face on (eye on −y, looking at the x–z plane)."""
        radius = max(float(radius), 1e-6)
        self.target = np.array(center, dtype=np.float64).reshape(3)
        self.scene_radius = radius
        half_y = math.radians(self.fov_y) / 2.0
        half_x = math.atan(math.tan(half_y) * self.aspect)
        # A sphere of radius R fits inside a cone of half-angle a from distance R / sin a.
        self.distance = 1.15 * radius / math.sin(min(half_x, half_y))
        if planar:
            self.azimuth, self.elevation = -90.0, 0.0
        else:
            self.azimuth, self.elevation = -60.0, 28.0
