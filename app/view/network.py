"""The contact network in the 3D view: one camera-facing ribbon per contact (lab.session.network
gives the ends, widths and colours), rebuilt for every rendering, since a ribbon turns with the
camera. The ribbons are built in numpy (`ribbon_vertices`) and drawn with one call."""
from __future__ import annotations

import ctypes

import numpy as np
from OpenGL import GL

from .glsl import program

FLOATS = 7  # per vertex: position xyz, colour rgb, across
# Two triangles per ribbon, from its four corners (start -, start +, end -, end +).
_CORNERS = np.array([0, 1, 2, 2, 1, 3])


def ribbon_vertices(ends: np.ndarray, width: np.ndarray, colour: np.ndarray,
                    eye: np.ndarray) -> np.ndarray:
    """(6 m, FLOATS) float32 triangle vertices of m ribbons: ends (m, 2, 3) m, width (m,) m,
    colour (m, 3), seen from `eye` (3,) m. Each ribbon lies along its segment and faces the
    eye (its sides are along segment × view direction); degenerate segments are dropped."""
    ends = np.asarray(ends, dtype=np.float64).reshape(-1, 2, 3)
    along = ends[:, 1] - ends[:, 0]
    middle = ends.mean(axis=1)
    side = np.cross(along, np.asarray(eye, dtype=np.float64) - middle)
    norm = np.linalg.norm(side, axis=1)
    keep = (norm > 1e-12) & np.all(np.isfinite(ends), axis=(1, 2))
    ends, side, norm = ends[keep], side[keep], norm[keep]
    half = (0.5 * np.asarray(width, dtype=np.float64)[keep] / norm)[:, None] * side
    corners = np.stack([ends[:, 0] - half, ends[:, 0] + half, ends[:, 1] - half,
                        ends[:, 1] + half], axis=1)  # (k, 4, 3)
    across = np.array([-1.0, 1.0, -1.0, 1.0])
    out = np.empty((corners.shape[0], 6, FLOATS), dtype=np.float32)
    out[:, :, 0:3] = corners[:, _CORNERS]
    out[:, :, 3:6] = np.asarray(colour, dtype=np.float32)[keep][:, None, :]
    out[:, :, 6] = across[_CORNERS]
    return out.reshape(-1, FLOATS)


class NetworkMesh:
    """The ribbons' program and vertex buffer (grown as needed), in the current context."""

    def __init__(self) -> None:
        self.program = program("network.vert", "network.frag")
        self.vao = GL.glGenVertexArrays(1)
        self.vbo = GL.glGenBuffers(1)
        self.capacity = 0
        self.count = 0
        GL.glBindVertexArray(self.vao)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        for loc, size, off in ((0, 3, 0), (1, 3, 12), (2, 1, 24)):
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, size, GL.GL_FLOAT, GL.GL_FALSE, 4 * FLOATS,
                                     ctypes.c_void_p(off))
        GL.glBindVertexArray(0)

    def upload(self, vertices: np.ndarray) -> None:
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        if vertices.shape[0] > self.capacity:
            self.capacity = max(vertices.shape[0], 2 * self.capacity, 600)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, 4 * FLOATS * self.capacity, None,
                            GL.GL_DYNAMIC_DRAW)
        if vertices.size:
            GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, vertices.nbytes, vertices)
        self.count = int(vertices.shape[0])

    def draw(self, viewproj: np.ndarray, uniforms) -> None:
        """The ribbons uploaded last, depth-tested against what is drawn (uniforms: the
        renderer's glsl.Uniforms)."""
        if not self.count:
            return
        GL.glUseProgram(self.program)
        uniforms.set(self.program, "u_viewproj", viewproj)
        GL.glBindVertexArray(self.vao)
        GL.glDrawArrays(GL.GL_TRIANGLES, 0, self.count)
