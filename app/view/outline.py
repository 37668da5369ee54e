"""The picked marble's outline: a ring hugging the marble's silhouette from outside, in a colour
no colour mode gives a marble, drawn over everything (depth test off), so the marble is found
inside a pile and behind the glass too.

The silhouette of a sphere seen from a point is a circle on the sphere: the one where the
tangent cone from the eye touches it, in the plane perpendicular to the line of sight at
r^2 / d from the centre towards the eye (d: the eye's distance), of radius r sqrt(d^2 - r^2) / d.
Every point of that plane outside the circle lies outside the cone, so a ring in the plane
from that radius outwards is seen just around the marble's image, whatever the perspective.
"""
from __future__ import annotations

import numpy as np
from OpenGL import GL

from .glsl import Mesh

OUTLINE_COLOUR = (1.0, 0.25, 0.85, 1.0)  # magenta: not on the heat scale, not the glass
OUTLINE_PIXELS = 3.0  # the ring's width on screen, px
SEGMENTS = 64  # of the ring; at 200 px across a segment's chord is within 0.1 px of the circle


def outline_ring(centre, radius: float, eye, viewproj: np.ndarray, size: tuple[int, int],
                 pixels: float = OUTLINE_PIXELS, segments: int = SEGMENTS) -> np.ndarray | None:
    """(6 segments, 6) float32 vertices (position m, normal) of GL_TRIANGLES: the ring around
    the silhouette of the sphere (centre (3,) m, radius m) seen from `eye` (3,) m, about
    `pixels` wide (its narrowest of two directions; the image of the circle is an ellipse) in an image of `size` (w, h) px under `viewproj` (4, 4) world -> clip. None
    when the eye is inside the sphere, the sphere is behind the eye or a number is not finite."""
    c = np.asarray(centre, dtype=np.float64)
    to_eye = np.asarray(eye, dtype=np.float64) - c
    d = float(np.linalg.norm(to_eye))
    if not (np.isfinite(c).all() and np.isfinite(d) and np.isfinite(radius)) or d <= radius:
        return None
    axis = to_eye / d
    middle = c + axis * radius * radius / d
    rho = radius * np.sqrt(d * d - radius * radius) / d
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    points = np.stack([middle, middle + rho * u, middle + rho * v])
    clip = np.c_[points, np.ones(3)] @ np.asarray(viewproj, dtype=np.float64).T
    if (clip[:, 3] <= 1e-9).any():
        return None
    screen = clip[:, :2] / clip[:, 3:] * (0.5 * np.asarray(size, dtype=np.float64))
    per_rho = min(np.linalg.norm(screen[1] - screen[0]), np.linalg.norm(screen[2] - screen[0]))
    if not per_rho > 0:
        return None
    angle = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    around = np.cos(angle)[:, None] * u + np.sin(angle)[:, None] * v  # (segments + 1, 3)
    inner = middle + rho * around
    outer = middle + (rho + pixels * rho / per_rho) * around
    quads = np.stack([inner[:-1], outer[:-1], inner[1:], inner[1:], outer[:-1], outer[1:]],
                     axis=1).reshape(-1, 3)
    out = np.empty((quads.shape[0], 6), dtype=np.float32)
    out[:, :3] = quads
    out[:, 3:] = axis
    return out


class Outline:
    """The ring's vertex buffer (SEGMENTS of them, rewritten for each rendering), in the
    current context; drawn with the renderer's flat-colour ("line") surface program."""

    def __init__(self) -> None:
        self.mesh = Mesh(np.zeros((6 * SEGMENTS, 6), dtype=np.float32), None, GL.GL_TRIANGLES)

    def draw(self, scene, prog: int, uniforms) -> None:
        """The outline of `scene.picked` (app.view.renderer.Scene; none for -1 or a marble the
        scene does not have) at its drawn size; uniforms: the renderer's glsl.Uniforms."""
        i = scene.picked
        if not 0 <= i < len(scene.x):
            return
        ring = outline_ring(scene.x[i], float(scene.radius[i]) * scene.marble_scale, scene.eye,
                            scene.viewproj, scene.size)
        if ring is None:
            return
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.mesh.vbo)
        GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, ring.nbytes, ring)
        GL.glUseProgram(prog)
        uniforms.set(prog, "u_viewproj", scene.viewproj)
        uniforms.set(prog, "u_model", np.eye(4))
        uniforms.set(prog, "u_colour", OUTLINE_COLOUR)
        GL.glDisable(GL.GL_DEPTH_TEST)
        self.mesh.draw()
        GL.glEnable(GL.GL_DEPTH_TEST)
