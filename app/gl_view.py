"""The 3D view: ray-cast impostor marbles in their container, an orbit camera and mouse picking.

OpenGL 3.3 core through PyOpenGL, rendered off screen: a ``QOpenGLContext`` on a
``QOffscreenSurface`` draws into a framebuffer object of the widget's size, the pixels are read
back into a ``QImage`` and a plain (raster) ``QWidget`` paints that image. So the window holds no
OpenGL widget and is not composed through OpenGL: repainting the plots or the HUD is raster
work that reuses the last image, and only a new frame or a camera move runs OpenGL. Each marble is one instanced quad that
covers its exact perspective silhouette; shaders/marble.frag intersects the view ray with the
sphere, shades the hit and writes its true depth. A directional key light casts shadows through a
shadow map made by the same impostors seen orthographically from the light. The container is
drawn after the marbles as glass (the bowl, the tube, the box walls) or as a rim (the planar
disk), over a checker floor, so marbles inside stay visible.

This module only displays and forwards mouse gestures: it holds no physics. ``set_marbles`` just
keeps the newest frame (references to the caller's arrays, which the worker never mutates after
emitting them) and schedules a new image; the upload and the drawing happen at the next paint
(``render``), once per drawn frame however many frames arrived in between.

Any OpenGL failure (no 3.3 context, a shader that does not compile or link, a GL error while
drawing) is reported once through ``glFailed`` and on stderr; the widget then paints nothing and
never raises.
"""
from __future__ import annotations

import atexit
import ctypes
import json
import math
import os
import re
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
from OpenGL import GL
import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QPointF, Qt, QThread, Signal, Slot
from PySide6.QtGui import (QImage, QOffscreenSurface, QOpenGLContext, QPainter,
                           QSurfaceFormat)
from PySide6.QtWidgets import QWidget

import shaders
from app.camera import Camera
from app.picking import pick_sphere, ray_plane

# The version the view asks for, and the lowest it accepts from the driver (tests raise the
# latter to simulate a driver without OpenGL 3.3).
REQUEST_GL = (3, 3)
REQUIRED_GL = (3, 3)

# Instance layout: centre xyz (m), radius (m), colour rgb; float32, interleaved.
_INSTANCE_FLOATS = 7
_INSTANCE_STRIDE = 4 * _INSTANCE_FLOATS

# Key light, pointing from the scene towards the light: high, from the front left of the default
# camera, so shadows fall back and to the right where they are visible.
_LIGHT_DIR = np.array([-0.35, -0.55, 1.0]) / np.linalg.norm([-0.35, -0.55, 1.0])

_BG_TOP = (0.09, 0.10, 0.13)
_BG_BOTTOM = (0.30, 0.32, 0.36)
_FLOOR_COLOUR = (0.62, 0.60, 0.57, 1.0)
_GLASS_COLOUR = (0.72, 0.82, 0.90, 0.06)
_RIM_COLOUR = (0.80, 0.86, 0.92, 0.55)


class GLFailure(Exception):
    """An OpenGL problem with a one-line, user-readable message."""


def surface_format() -> QSurfaceFormat:
    """The context the view asks for: OpenGL 3.3 core, 24-bit depth, no multisampling (the
    impostors already have exact edges, and MSAA is costly in software rendering)."""
    fmt = QSurfaceFormat()
    fmt.setRenderableType(QSurfaceFormat.RenderableType.OpenGL)
    fmt.setVersion(*REQUEST_GL)
    fmt.setProfile(QSurfaceFormat.OpenGLContextProfile.CoreProfile)
    fmt.setDepthBufferSize(24)
    fmt.setSamples(0)
    return fmt


# --------------------------------------------------------------------------------------------
# Shader loading
# --------------------------------------------------------------------------------------------
_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def load_shader_text(name: str, defines: tuple[str, ...] = ()) -> str:
    """Source of shader `name` from the shaders package, with ``#include "file"`` lines replaced
    by that file (GLSL has no include; this keeps the shared lighting code in one place) and
    ``#define NAME 1`` inserted after ``#version`` for each variant flag in `defines`."""
    text = _INCLUDE.sub(lambda m: shaders.source(m.group(1)), shaders.source(name))
    if defines:
        head, sep, rest = text.partition("\n")
        if not head.lstrip().startswith("#version"):
            head, sep, rest = "", "", text
        text = head + sep + "".join(f"#define {d} 1\n" for d in defines) + rest
    return text


def _first_error_line(log: str) -> str:
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    for ln in lines:
        if "error" in ln.lower():
            return ln
    return lines[0] if lines else "no log"


def _compile(kind, name: str, defines: tuple[str, ...] = ()) -> int:
    try:
        text = load_shader_text(name, defines)
    except Exception as exc:  # missing file, bad encoding: still a clear message
        raise GLFailure(f"cannot read shader {name}: {exc}") from None
    shader = GL.glCreateShader(kind)
    GL.glShaderSource(shader, text)
    GL.glCompileShader(shader)
    if not GL.glGetShaderiv(shader, GL.GL_COMPILE_STATUS):
        log = GL.glGetShaderInfoLog(shader)
        log = log.decode(errors="replace") if isinstance(log, bytes) else str(log)
        GL.glDeleteShader(shader)
        raise GLFailure(f"shader {name} failed to compile: {_first_error_line(log)}")
    return shader


def _program(vert: str, frag: str, defines: tuple[str, ...] = ()) -> int:
    vs = _compile(GL.GL_VERTEX_SHADER, vert)
    try:
        fs = _compile(GL.GL_FRAGMENT_SHADER, frag, defines)
    except GLFailure:
        GL.glDeleteShader(vs)
        raise
    prog = GL.glCreateProgram()
    GL.glAttachShader(prog, vs)
    GL.glAttachShader(prog, fs)
    GL.glLinkProgram(prog)
    GL.glDeleteShader(vs)
    GL.glDeleteShader(fs)
    if not GL.glGetProgramiv(prog, GL.GL_LINK_STATUS):
        log = GL.glGetProgramInfoLog(prog)
        log = log.decode(errors="replace") if isinstance(log, bytes) else str(log)
        GL.glDeleteProgram(prog)
        raise GLFailure(f"shaders {vert} + {frag} failed to link: {_first_error_line(log)}")
    return prog


# --------------------------------------------------------------------------------------------
# Container geometry (numpy only): unit meshes as (vertices (k, 6) float32 = position, normal;
# triangle indices (t,) uint32)
# --------------------------------------------------------------------------------------------
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


def _lines(points: np.ndarray) -> np.ndarray:
    """Vertices (k, 6) for GL_LINES from a (k, 3) array of segment end points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return np.concatenate([pts, np.tile([0.0, 0.0, 1.0], (len(pts), 1))], axis=1).astype(np.float32)


def _circle_segments(n: int = 96) -> np.ndarray:
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


def _model(translate=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    m = np.diag([*np.broadcast_to(np.asarray(scale, dtype=np.float64), (3,)), 1.0])
    m[:3, 3] = translate
    return m


def container_bounds(container: dict | None, x: np.ndarray, radius: np.ndarray):
    """Bounding sphere (centre (3,), radius) in metres of what the view should frame: the
    container if it is bounded, else (a floor) the marbles, else a 1 m sphere at the origin."""
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
        return 0.5 * (lo + hi), max(0.5 * float(np.linalg.norm(hi - lo)), 1e-3)
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


def _blend_over() -> None:
    """Blend colour "over" what is drawn, but leave the destination alpha at 1: the image is
    shown as opaque RGB32, whose fourth byte Qt requires to be 0xff (a pixel with alpha < 1 would
    otherwise reach screenshots as wrapped-around colours)."""
    GL.glBlendFuncSeparate(GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA, GL.GL_ZERO, GL.GL_ONE)


class _Mesh:
    """A VAO with interleaved position/normal vertices and optional indices."""

    def __init__(self, verts: np.ndarray, idx: np.ndarray | None, primitive) -> None:
        self.primitive = primitive
        self.vao = GL.glGenVertexArrays(1)
        self.vbo = GL.glGenBuffers(1)
        self.ebo = GL.glGenBuffers(1) if idx is not None else 0
        GL.glBindVertexArray(self.vao)
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self.vbo)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, verts.nbytes, verts, GL.GL_STATIC_DRAW)
        for loc, off in ((0, 0), (1, 12)):
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, 3, GL.GL_FLOAT, GL.GL_FALSE, 24, ctypes.c_void_p(off))
        if idx is not None:
            idx = outward(verts, idx)
            GL.glBindBuffer(GL.GL_ELEMENT_ARRAY_BUFFER, self.ebo)
            GL.glBufferData(GL.GL_ELEMENT_ARRAY_BUFFER, idx.nbytes, idx, GL.GL_STATIC_DRAW)
            self.count = int(idx.size)
        else:
            self.count = int(verts.shape[0])
        GL.glBindVertexArray(0)

    def draw(self) -> None:
        GL.glBindVertexArray(self.vao)
        if self.ebo:
            GL.glDrawElements(self.primitive, self.count, GL.GL_UNSIGNED_INT, ctypes.c_void_p(0))
        else:
            GL.glDrawArrays(self.primitive, 0, self.count)

    def delete(self) -> None:
        GL.glDeleteVertexArrays(1, [self.vao])
        GL.glDeleteBuffers(1, [self.vbo])
        if self.ebo:
            GL.glDeleteBuffers(1, [self.ebo])


# --------------------------------------------------------------------------------------------
# The renderer
# --------------------------------------------------------------------------------------------
def create_context(fmt: QSurfaceFormat, parent: QObject) -> QOpenGLContext | None:
    """A new OpenGL context asked for with format `fmt`, a child of `parent`, in the calling
    thread; None if the platform gives none (tests replace this function to stage that)."""
    context = QOpenGLContext(parent)
    context.setFormat(fmt)
    return context if context.create() else None


@dataclass(frozen=True)
class _Scene:
    """Everything one rendering needs, taken from the widget in the GUI thread, so that the
    renderer never reads the widget. Arrays are the widget's own (replaced, never mutated);
    the versions tell the renderer when to upload marbles or rebuild the container."""

    seq: int
    size: tuple[int, int]  # device pixels
    viewproj: np.ndarray
    eye: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    x: np.ndarray
    radius: np.ndarray
    colour: np.ndarray
    marbles_version: int
    container: dict | None
    container_version: int
    drag_line: np.ndarray | None  # (2, 3): the dragged marble's centre and the cursor target
    debug_flat: bool
    shadows: bool
    exact_quads: bool


@dataclass(frozen=True)
class _Result:
    """One rendering: pixels (h, w, 4) uint8 BGRA, top row first (black if it failed), when it
    began (perf_counter s) and how long it took (s), and the renderer's failure if any."""

    seq: int
    marbles_version: int
    pixels: np.ndarray
    started: float
    seconds: float
    ok: bool
    failure: str | None


class _Renderer(QObject):
    """The OpenGL side of the view: owns the context and every GL object, draws a `_Scene`
    into a framebuffer object and reads the pixels back. Lives in the render thread (see
    `RENDER_THREAD`); the widget talks to it only through queued (or blocking) calls."""

    rendered = Signal(object)  # _Result, for the widget (queued across the threads)

    SHADOW_MAP_SIZE = 512  # texels; 4.5 mm each over the 1 m bowl, ample for 10 cm marbles

    def __init__(self) -> None:
        super().__init__()
        self.surface: QOffscreenSurface | None = None  # set by the widget after create()
        self._context: QOpenGLContext | None = None
        self._gl_ready = False
        self.failure: str | None = None
        self._fbo = 0
        self._fbo_buffers: list[int] = []
        self._fbo_size = (0, 0)
        self._instance_capacity = 0
        self._instance_count = 0
        self._items: list[dict] = []
        self._marbles_version = -1
        self._container_version = -1
        self._shadow_dirty = True
        self._shadows_ok = True
        self.last: _Result | None = None
        self.thread_id = 0  # native id of the thread that created the context

    @Slot()
    def create(self) -> None:
        """Called blocking from the widget: make the context in this thread (a failure is kept
        in `failure`); in the render thread, lower the priority of the driver's rasteriser
        threads, which exist by now, like this thread's (see RENDER_NICE)."""
        self.thread_id = threading.get_native_id()
        try:
            self._context = create_context(surface_format(), self)
        except Exception as exc:
            self.failure = f"initialisation failed: {type(exc).__name__}: {exc}".splitlines()[0]
        if self._context is None and self.failure is None:
            self.failure = (f"could not create an OpenGL {REQUIRED_GL[0]}.{REQUIRED_GL[1]} "
                            "core context")
        if self.thread_id != threading.main_thread().native_id:
            _share_priority("llvmpipe-")

    @Slot(object)
    def render(self, scene: _Scene) -> None:
        """Queued from the widget: render and send the result back."""
        self.last = self._render(scene)
        self.rendered.emit(self.last)

    @Slot(object)
    def render_now(self, scene: _Scene) -> None:
        """Called blocking from the widget, which reads `last` afterwards."""
        self.last = self._render(scene)

    @Slot()
    def release(self) -> None:
        """Called blocking when the widget goes away: free the context (and with it every GL
        object) in this thread, then hand this object to the GUI thread, where Python will
        delete it."""
        if self._context is not None:
            # Deleted now, in its own thread; its GL objects go with it (it shares none).
            shiboken6.delete(self._context)
            self._context = None
        self._gl_ready = False
        self.moveToThread(QCoreApplication.instance().thread())

    def _render(self, scene: _Scene) -> _Result:
        """Never raises: a failure is kept in `failure` and gives a black image."""
        started = time.perf_counter()
        w, h = scene.size
        pixels = None
        if self.failure is None and not self._gl_ready:
            self._init_gl()
        if self.failure is None:
            try:
                if not self._context.makeCurrent(self.surface):
                    raise GLFailure("cannot make the OpenGL context current")
                try:
                    self._ensure_target(w, h)
                    self._paint(scene)
                    pixels = self._read_back(w, h)
                finally:
                    self._context.doneCurrent()
            except GLFailure as exc:
                self.failure = str(exc)
            except Exception as exc:
                self.failure = f"drawing failed: {type(exc).__name__}: {exc}".splitlines()[0]
        ok = pixels is not None
        if not ok:
            pixels = np.zeros((h, w, 4), dtype=np.uint8)
            pixels[..., 3] = 255
        return _Result(scene.seq, scene.marbles_version, pixels, started,
                       time.perf_counter() - started, ok, self.failure)

    # --- GL life cycle -------------------------------------------------------------------
    def _init_gl(self) -> None:
        """Check the context made by `create` and make every GL object (once, at the first
        rendering)."""
        try:
            if self._context is None or self.surface is None or not self.surface.isValid():
                raise GLFailure(f"could not create an OpenGL {REQUIRED_GL[0]}.{REQUIRED_GL[1]} "
                                "core context")
            fmt = self._context.format()
            version = (fmt.majorVersion(), fmt.minorVersion())
            if version < REQUIRED_GL:
                raise GLFailure(
                    f"OpenGL {REQUIRED_GL[0]}.{REQUIRED_GL[1]} core is required, the driver "
                    f"offers {version[0]}.{version[1]}")
            if not self._context.makeCurrent(self.surface):
                raise GLFailure("cannot make the OpenGL context current")
            try:
                self._create_gl()
            finally:
                self._context.doneCurrent()
            self._gl_ready = True
        except GLFailure as exc:
            self.failure = str(exc)
        except Exception as exc:  # a GL error raised by PyOpenGL, or worse: report, never raise
            self.failure = f"initialisation failed: {type(exc).__name__}: {exc}".splitlines()[0]

    def _create_gl(self) -> None:
        # Shader variants are separate programs (see lighting.glsl for why not uniforms).
        self._marble_progs = {
            "depth": _program("marble.vert", "marble.frag", ("DEPTH_ONLY",)),
            "flat": _program("marble.vert", "marble.frag", ("FLAT",)),
            "gbuffer": _program("marble.vert", "marble.frag"),
        }
        self._shade_progs = {
            "lit": _program("background.vert", "marble_shade.frag"),
            "lit+shadows": _program("background.vert", "marble_shade.frag", ("SHADOWS",)),
        }
        self._surface_progs = {
            "lit": _program("surface.vert", "surface.frag"),
            "lit+shadows": _program("surface.vert", "surface.frag", ("SHADOWS",)),
            "glass": _program("surface.vert", "surface.frag", ("GLASS",)),
            "line": _program("surface.vert", "surface.frag", ("LINE",)),
        }
        self._bg_prog = _program("background.vert", "background.frag")
        self._uniforms: dict[tuple[int, str], int] = {}

        # Marble quad corners (per vertex) + instance attributes (per marble).
        self._marble_vao = GL.glGenVertexArrays(1)
        GL.glBindVertexArray(self._marble_vao)
        self._corner_vbo = GL.glGenBuffers(1)
        corners = impostor_polygon()
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._corner_vbo)
        GL.glBufferData(GL.GL_ARRAY_BUFFER, corners.nbytes, corners, GL.GL_STATIC_DRAW)
        GL.glEnableVertexAttribArray(0)
        GL.glVertexAttribPointer(0, 2, GL.GL_FLOAT, GL.GL_FALSE, 8, ctypes.c_void_p(0))
        self._instance_vbo = GL.glGenBuffers(1)
        self._instance_capacity = 0
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._instance_vbo)
        for loc, size, off in ((1, 3, 0), (2, 1, 12), (3, 3, 16)):
            GL.glEnableVertexAttribArray(loc)
            GL.glVertexAttribPointer(loc, size, GL.GL_FLOAT, GL.GL_FALSE, _INSTANCE_STRIDE,
                                     ctypes.c_void_p(off))
            GL.glVertexAttribDivisor(loc, 1)
        self._polygon_vertices = int(corners.size // 2)
        GL.glBindVertexArray(0)
        self._marbles_version = -1

        # Core profile needs a bound VAO even for the attribute-less background triangle.
        self._empty_vao = GL.glGenVertexArrays(1)

        # Drag spring: one dynamic line segment.
        self._drag_line = _Mesh(np.zeros((2, 6), dtype=np.float32), None, GL.GL_LINES)

        # Shadow map: a depth texture with hardware comparison (sampler2DShadow).
        self._shadow_tex = GL.glGenTextures(1)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._shadow_tex)
        size = self.SHADOW_MAP_SIZE
        GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, GL.GL_DEPTH_COMPONENT24, size, size, 0,
                        GL.GL_DEPTH_COMPONENT, GL.GL_FLOAT, None)
        for pname, value in ((GL.GL_TEXTURE_MIN_FILTER, GL.GL_LINEAR),
                             (GL.GL_TEXTURE_MAG_FILTER, GL.GL_LINEAR),
                             (GL.GL_TEXTURE_WRAP_S, GL.GL_CLAMP_TO_EDGE),
                             (GL.GL_TEXTURE_WRAP_T, GL.GL_CLAMP_TO_EDGE),
                             (GL.GL_TEXTURE_COMPARE_MODE, GL.GL_COMPARE_REF_TO_TEXTURE),
                             (GL.GL_TEXTURE_COMPARE_FUNC, GL.GL_LEQUAL)):
            GL.glTexParameteri(GL.GL_TEXTURE_2D, pname, value)
        self._shadow_fbo = GL.glGenFramebuffers(1)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._shadow_fbo)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_DEPTH_ATTACHMENT, GL.GL_TEXTURE_2D,
                                  self._shadow_tex, 0)
        GL.glDrawBuffer(GL.GL_NONE)
        GL.glReadBuffer(GL.GL_NONE)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, 0)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            self._shadows_ok = False  # not fatal: draw without shadows
        self._shadow_dirty = True

        # G-buffer of the deferred marble shading: normal, colour, depth; sized in _paint.
        self._gbuf_tex = tuple(int(t) for t in GL.glGenTextures(3))
        for tex in self._gbuf_tex:
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MIN_FILTER, GL.GL_NEAREST)
            GL.glTexParameteri(GL.GL_TEXTURE_2D, GL.GL_TEXTURE_MAG_FILTER, GL.GL_NEAREST)
        self._gbuf_fbo = GL.glGenFramebuffers(1)
        self._gbuf_size = (0, 0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, 0)
        self._container_version = -1

    # --- uniforms ---------------------------------------------------------------------------
    def _loc(self, prog: int, name: str) -> int:
        key = (prog, name)
        loc = self._uniforms.get(key)
        if loc is None:
            loc = self._uniforms[key] = GL.glGetUniformLocation(prog, name)
        return loc

    def _set(self, prog: int, name: str, value) -> None:
        loc = self._loc(prog, name)
        if loc < 0:
            return  # optimised away by the compiler
        if isinstance(value, bool):
            GL.glUniform1i(loc, int(value))
        elif isinstance(value, int):
            GL.glUniform1i(loc, value)
        elif isinstance(value, float):
            GL.glUniform1f(loc, value)
        else:
            a = np.asarray(value, dtype=np.float32)
            if a.shape == (2,):
                GL.glUniform2f(loc, *a.tolist())
            elif a.shape == (4, 4):
                GL.glUniformMatrix4fv(loc, 1, GL.GL_TRUE, a)
            elif a.shape == (3,):
                GL.glUniform3f(loc, *a.tolist())
            elif a.shape == (4,):
                GL.glUniform4f(loc, *a.tolist())
            else:
                raise ValueError(f"uniform {name}: unsupported shape {a.shape}")

    # --- scene resources ----------------------------------------------------------------------
    def _delete_items(self) -> None:
        for item in self._items:
            item["mesh"].delete()
        self._items = []

    def _build_items(self, container: dict | None) -> None:
        """GL meshes for `container`: a list of draw items, each with a pass ("floor",
        "glass" or "line"), a model matrix and a colour."""
        self._delete_items()
        c = container or {}
        kind = c.get("kind")
        planar = bool(c.get("planar"))
        items = self._items

        def add(pass_, mesh, model, colour, **extra):
            items.append(dict(pass_=pass_, mesh=mesh, model=model, colour=colour, **extra))

        if kind == "sphere":
            centre, r = np.asarray(c["center"], dtype=np.float64), float(c["radius"])
            if planar:
                add("opaque", _Mesh(*torus_mesh(0.025), GL.GL_TRIANGLES),
                    _model(centre, r), (0.78, 0.80, 0.84, 1.0))
                # A faint pane behind the plane of motion, so the disk reads as a disk.
                pane = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]],
                                dtype=np.float64)
                pane = _model(centre + [0.0, 0.12 * r, 0.0], r) @ pane
                add("glass", _Mesh(*disk_mesh(), GL.GL_TRIANGLES), pane,
                    (0.55, 0.62, 0.72, 0.22))
            else:
                add("floor", None, None, _FLOOR_COLOUR, fade=(centre, 2.6 * r))
                add("glass", _Mesh(*sphere_mesh(), GL.GL_TRIANGLES), _model(centre, r),
                    _GLASS_COLOUR)
        elif kind == "box":
            cx, cy = c["center"]
            a, z0, h = float(c["half_width"]), float(c["floor"]), float(c.get("height", 1.0))
            add("floor", None, None, _FLOOR_COLOUR, fade=(np.array([cx, cy, z0]), 3.0 * a + h))
            add("glass", _Mesh(*box_walls_mesh(), GL.GL_TRIANGLES),
                _model((cx, cy, z0), (a, a, h)), _GLASS_COLOUR)
            top = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
            seg = []
            for i in range(4):
                p, q = top[i], top[(i + 1) % 4]
                seg += [[*p, 1.0], [*q, 1.0], [*p, 0.0], [*p, 1.0]]
            add("line", _Mesh(_lines(seg), None, GL.GL_LINES), _model((cx, cy, z0), (a, a, h)),
                _RIM_COLOUR)
        elif kind == "tube":
            cx, cy = c["center"]
            r, z0, h = float(c["radius"]), float(c["floor"]), float(c.get("height", 1.0))
            add("floor", None, None, _FLOOR_COLOUR, fade=(np.array([cx, cy, z0]), 4.0 * r + h))
            add("glass", _Mesh(*cylinder_mesh(), GL.GL_TRIANGLES),
                _model((cx, cy, z0), (r, r, h)), _GLASS_COLOUR)
            add("line", _Mesh(_lines(_circle_segments()), None, GL.GL_LINES),
                _model((cx, cy, z0 + h), (r, r, 1.0)), _RIM_COLOUR)
        elif kind == "floor":
            add("floor", None, None, _FLOOR_COLOUR, fade=None)
        # Every floor shares one unit disk mesh, scaled at draw time.
        for item in items:
            if item["pass_"] == "floor":
                item["mesh"] = _Mesh(*disk_mesh(), GL.GL_TRIANGLES)

    def _upload_marbles(self, x: np.ndarray, radius: np.ndarray, colour: np.ndarray) -> None:
        n = x.shape[0]
        data = np.empty((n, _INSTANCE_FLOATS), dtype=np.float32)
        data[:, 0:3] = x
        data[:, 3] = radius
        data[:, 4:7] = colour
        GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._instance_vbo)
        if n > self._instance_capacity:
            # Grow geometrically and keep the buffer: scene switches reuse it, frames of the
            # same size only overwrite it.
            self._instance_capacity = max(n, 2 * self._instance_capacity, 64)
            GL.glBufferData(GL.GL_ARRAY_BUFFER, self._instance_capacity * _INSTANCE_STRIDE,
                            None, GL.GL_DYNAMIC_DRAW)
        if n:
            GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, data.nbytes, data)
        self._instance_count = n

    def _ensure_target(self, w: int, h: int) -> None:
        """(Re)allocate the framebuffer object drawn into: colour and depth, w × h pixels."""
        if self._fbo and self._fbo_size == (w, h):
            return
        if not self._fbo:
            self._fbo = int(GL.glGenFramebuffers(1))
            self._fbo_buffers = [int(b) for b in GL.glGenRenderbuffers(2)]
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._fbo)
        for rb, internal, attachment in zip(
                self._fbo_buffers, (GL.GL_RGBA8, GL.GL_DEPTH_COMPONENT24),
                (GL.GL_COLOR_ATTACHMENT0, GL.GL_DEPTH_ATTACHMENT)):
            GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, rb)
            GL.glRenderbufferStorage(GL.GL_RENDERBUFFER, internal, w, h)
            GL.glFramebufferRenderbuffer(GL.GL_FRAMEBUFFER, attachment, GL.GL_RENDERBUFFER, rb)
        GL.glBindRenderbuffer(GL.GL_RENDERBUFFER, 0)
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise GLFailure(f"framebuffer incomplete (status 0x{int(status):x})")
        self._fbo_size = (w, h)
        self._raw = np.empty((h, w, 4), dtype=np.uint8)

    def _read_back(self, w: int, h: int) -> np.ndarray:
        """The framebuffer's pixels as a new (h, w, 4) BGRA array, top row first (OpenGL's
        rows start at the bottom)."""
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self._fbo)
        GL.glReadBuffer(GL.GL_COLOR_ATTACHMENT0)
        GL.glPixelStorei(GL.GL_PACK_ALIGNMENT, 4)
        GL.glReadPixels(0, 0, w, h, GL.GL_BGRA, GL.GL_UNSIGNED_INT_8_8_8_8_REV,
                        self._raw.ctypes.data)
        # A new array each time: the GUI thread may still be showing the previous one.
        return np.ascontiguousarray(self._raw[::-1])

    def _ensure_gbuffer(self, w: int, h: int) -> None:
        """(Re)allocate the G-buffer textures for a w × h pixel viewport."""
        if self._gbuf_size == (w, h):
            return
        normal, albedo, depth = self._gbuf_tex
        # Normals as 10-bit unsigned (n/2 + 1/2): half the bytes of a float format, and fine
        # enough that highlights do not band.
        for tex, internal, fmt, typ in ((normal, GL.GL_RGB10_A2, GL.GL_RGBA,
                                         GL.GL_UNSIGNED_INT_2_10_10_10_REV),
                                        (albedo, GL.GL_RGBA8, GL.GL_RGBA, GL.GL_UNSIGNED_BYTE),
                                        (depth, GL.GL_DEPTH_COMPONENT24, GL.GL_DEPTH_COMPONENT,
                                         GL.GL_UNSIGNED_INT)):
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
            GL.glTexImage2D(GL.GL_TEXTURE_2D, 0, internal, w, h, 0, fmt, typ, None)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._gbuf_fbo)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT0, GL.GL_TEXTURE_2D,
                                  normal, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_COLOR_ATTACHMENT1, GL.GL_TEXTURE_2D,
                                  albedo, 0)
        GL.glFramebufferTexture2D(GL.GL_FRAMEBUFFER, GL.GL_DEPTH_ATTACHMENT, GL.GL_TEXTURE_2D,
                                  depth, 0)
        GL.glDrawBuffers(2, [GL.GL_COLOR_ATTACHMENT0, GL.GL_COLOR_ATTACHMENT1])
        status = GL.glCheckFramebufferStatus(GL.GL_FRAMEBUFFER)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._fbo)
        if status != GL.GL_FRAMEBUFFER_COMPLETE:
            raise GLFailure(f"G-buffer framebuffer incomplete (status 0x{int(status):x})")
        self._gbuf_size = (w, h)

    def _light_matrices(self, centre: np.ndarray, radius: float):
        """Orthographic world → light clip transform covering the bounding sphere, and an up
        vector for the shadow-pass quads."""
        L = _LIGHT_DIR
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

    def _draw_marbles(self, program: str, **uniforms) -> None:
        prog = self._marble_progs[program]
        GL.glUseProgram(prog)
        for k, v in uniforms.items():
            self._set(prog, k, v)
        GL.glBindVertexArray(self._marble_vao)
        GL.glDrawArraysInstanced(GL.GL_TRIANGLE_STRIP, 0, self._polygon_vertices,
                                 self._instance_count)

    def _paint(self, scene: "_Scene") -> None:
        if scene.container_version != self._container_version:
            self._build_items(scene.container)
            self._container_version = scene.container_version
            self._shadow_dirty = True
        if scene.marbles_version != self._marbles_version:
            self._upload_marbles(scene.x, scene.radius, scene.colour)
            self._marbles_version = scene.marbles_version
            self._shadow_dirty = True

        w, h = scene.size
        x, radius = scene.x, scene.radius
        viewproj, eye, up, forward = scene.viewproj, scene.eye, scene.up, scene.forward
        debug_flat = scene.debug_flat
        n = self._instance_count
        centre, bound = container_bounds(scene.container, x, radius)
        if n:
            # Marbles flung a little outside the container still get shadows; ones flung far
            # away (or NaN after a divergence) must not stretch the shadow map over kilometres.
            far_out = np.linalg.norm(x - centre, axis=1) + radius
            far_out = far_out[np.isfinite(far_out)]
            if len(far_out):
                bound = min(max(bound, float(far_out.max())), 3.0 * bound)
        floor_z = floor_height(scene.container, x, radius)
        shadows = scene.shadows and self._shadows_ok and not debug_flat and n > 0
        light_vp, light_up = self._light_matrices(centre, 1.05 * bound)

        GL.glDisable(GL.GL_CULL_FACE)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthFunc(GL.GL_LESS)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glDisable(GL.GL_BLEND)

        marble_uniforms = dict(u_viewproj=viewproj, u_eye=eye, u_ortho=False, u_quad_up=up,
                               u_exact=bool(scene.exact_quads), u_view_axis=forward)
        if shadows and self._shadow_dirty:
            # The shadow map depends only on the marbles and the scene bounds, not on the
            # camera: orbiting a paused scene reuses it.
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._shadow_fbo)
            GL.glViewport(0, 0, self.SHADOW_MAP_SIZE, self.SHADOW_MAP_SIZE)
            GL.glClear(GL.GL_DEPTH_BUFFER_BIT)
            self._draw_marbles("depth", u_viewproj=light_vp, u_ortho=True,
                               u_ray_dir=-_LIGHT_DIR, u_quad_up=light_up, u_exact=True)
            self._shadow_dirty = False
        if n and not debug_flat:
            # Deferred: ray cast into the G-buffer here, shade visible pixels further down.
            self._ensure_gbuffer(w, h)
            GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._gbuf_fbo)
            GL.glViewport(0, 0, w, h)
            GL.glClearColor(0.0, 0.0, 0.0, 0.0)
            GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
            self._draw_marbles("gbuffer", **marble_uniforms)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._fbo)
        GL.glViewport(0, 0, w, h)

        GL.glClearColor(0.0, 0.0, 0.0, 1.0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._shadow_tex)

        texel = 2.0 * 1.05 * bound / self.SHADOW_MAP_SIZE
        variant = "lit+shadows" if shadows else "lit"
        # Shadow lookups: pushed 1.5 texels along the normal, compared with a depth bias of
        # 0.15% of the light's depth range, against self-shadowing acne on the lit side.
        lighting = dict(u_light_dir=_LIGHT_DIR, u_eye=eye, u_shadow_map=0,
                        u_light_viewproj=light_vp, u_shadow_offset=1.5 * texel,
                        u_shadow_bias=0.0015)

        if not debug_flat:
            GL.glDisable(GL.GL_DEPTH_TEST)
            GL.glDepthMask(GL.GL_FALSE)
            GL.glUseProgram(self._bg_prog)
            self._set(self._bg_prog, "u_top", _BG_TOP)
            self._set(self._bg_prog, "u_bottom", _BG_BOTTOM)
            GL.glBindVertexArray(self._empty_vao)
            GL.glDrawArrays(GL.GL_TRIANGLES, 0, 3)
            GL.glEnable(GL.GL_DEPTH_TEST)
            GL.glDepthMask(GL.GL_TRUE)

            sp = self._surface_progs[variant]
            GL.glUseProgram(sp)
            for k, v in lighting.items():
                self._set(sp, k, v)
            self._set(sp, "u_viewproj", viewproj)
            GL.glEnable(GL.GL_BLEND)
            _blend_over()
            for item in self._items:
                if item["pass_"] == "floor":
                    fade = item["fade"]
                    if fade is None:  # a bare floor: around the marbles
                        fc, fr = np.array([centre[0], centre[1], floor_z]), 3.0 * bound
                    else:
                        fc, fr = fade
                    self._set(sp, "u_model", _model((fc[0], fc[1], floor_z), fr))
                    self._set(sp, "u_colour", item["colour"])
                    self._set(sp, "u_checker", float(_checker_period(bound)))
                    self._set(sp, "u_fade_centre", np.asarray(fc, dtype=np.float64))
                    self._set(sp, "u_fade_radius", float(fr))
                    item["mesh"].draw()
                elif item["pass_"] == "opaque":
                    self._set(sp, "u_model", item["model"])
                    self._set(sp, "u_colour", item["colour"])
                    self._set(sp, "u_checker", 0.0)
                    self._set(sp, "u_fade_radius", 0.0)
                    item["mesh"].draw()
            GL.glDisable(GL.GL_BLEND)

        if n and debug_flat:
            self._draw_marbles("flat", **marble_uniforms)
        elif n:
            # The full-screen shading pass costs per pixel even where it finds no marble:
            # restrict it to the marbles' screen rectangle.
            box = screen_rect(viewproj, x, radius, w, h)
            if box is not None:
                GL.glEnable(GL.GL_SCISSOR_TEST)
                GL.glScissor(*box)
            prog = self._shade_progs[variant]
            GL.glUseProgram(prog)
            for k, v in lighting.items():
                self._set(prog, k, v)
            for unit, (name, tex) in enumerate(zip(("u_normal", "u_albedo", "u_depth"),
                                                   self._gbuf_tex), start=1):
                GL.glActiveTexture(GL.GL_TEXTURE0 + unit)
                GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
                self._set(prog, name, unit)
            GL.glActiveTexture(GL.GL_TEXTURE0)
            self._set(prog, "u_inv_viewproj", np.linalg.inv(viewproj))
            self._set(prog, "u_viewport", np.array([w, h], dtype=np.float64))
            self._set(prog, "u_floor_z", float(floor_z))
            self._set(prog, "u_ao_height",
                      float(max(0.6 * bound, 4.0 * float(radius.max()))))
            GL.glBindVertexArray(self._empty_vao)
            GL.glDrawArrays(GL.GL_TRIANGLES, 0, 3)
            GL.glDisable(GL.GL_SCISSOR_TEST)

        if not debug_flat:
            GL.glEnable(GL.GL_BLEND)
            _blend_over()
            lp = self._surface_progs["line"]
            GL.glUseProgram(lp)
            self._set(lp, "u_viewproj", viewproj)
            if scene.drag_line is not None:
                seg = _lines(scene.drag_line)
                GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._drag_line.vbo)
                GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, seg.nbytes, seg)
                self._set(lp, "u_model", np.eye(4))
                self._set(lp, "u_colour", (1.0, 0.9, 0.3, 0.9))
                # Always on top: the spring must stay visible inside a pile.
                GL.glDisable(GL.GL_DEPTH_TEST)
                self._drag_line.draw()
                GL.glEnable(GL.GL_DEPTH_TEST)
            # Glass after everything opaque, without writing depth, far side first.
            GL.glDepthMask(GL.GL_FALSE)
            for item in self._items:
                if item["pass_"] == "line":
                    self._set(lp, "u_model", item["model"])
                    self._set(lp, "u_colour", item["colour"])
                    item["mesh"].draw()
            gp = self._surface_progs["glass"]
            GL.glUseProgram(gp)
            self._set(gp, "u_viewproj", viewproj)
            self._set(gp, "u_light_dir", _LIGHT_DIR)
            self._set(gp, "u_eye", eye)
            # Far side, then near side: blending in order for a convex shell. Culling (not a
            # test in the shader) keeps the hidden half from being shaded at all.
            GL.glEnable(GL.GL_CULL_FACE)
            for cull in (GL.GL_FRONT, GL.GL_BACK):
                GL.glCullFace(cull)
                for item in self._items:
                    if item["pass_"] == "glass":
                        self._set(gp, "u_model", item["model"])
                        self._set(gp, "u_colour", item["colour"])
                        item["mesh"].draw()
            GL.glDisable(GL.GL_CULL_FACE)
            GL.glCullFace(GL.GL_BACK)
            GL.glDepthMask(GL.GL_TRUE)
            GL.glDisable(GL.GL_BLEND)

        # Leave a neutral state for the next frame.
        GL.glBindVertexArray(0)
        GL.glUseProgram(0)
        GL.glDisable(GL.GL_DEPTH_TEST)


# --------------------------------------------------------------------------------------------
# The render thread
# --------------------------------------------------------------------------------------------
# True: every view renders in one thread of its own (shared by all views), so that the GUI
# thread neither runs OpenGL nor waits for it; with software rendering a frame takes tens of
# milliseconds of wall time, during which the plots and the HUD keep repainting. False (or a
# platform without threaded OpenGL): the views render in the GUI thread, from its event loop.
RENDER_THREAD = True
# The render thread runs with its nice value raised by this much (Linux), and so do the
# rasteriser threads of Mesa's software renderer llvmpipe (named llvmpipe-N; Qt's probe for
# threaded OpenGL starts them from the GUI thread): when the CPU is short, the 3D view yields
# to the simulation and to the plots instead of sharing it with them, and with CPU to spare it
# renders as before.
RENDER_NICE = 10

_thread: QThread | None = None


def _lower_priority() -> None:
    """Raise the calling thread's nice value by RENDER_NICE (Linux, where a nice value is a
    thread's own; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        try:
            tid = threading.get_native_id()
            nice = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(19, nice + RENDER_NICE))
        except OSError:
            pass


def _share_priority(prefix: str) -> None:
    """Give this process's threads whose name starts with `prefix` at least the calling
    thread's nice value (Linux; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        for t in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{t}/comm") as f:
                if f.read().startswith(prefix) and os.getpriority(os.PRIO_PROCESS, int(t)) < mine:
                    os.setpriority(os.PRIO_PROCESS, int(t), mine)
    except OSError:
        pass


def _render_thread() -> QThread | None:
    """The running render thread (started on first use), or None to render in the GUI
    thread."""
    global _thread
    if not RENDER_THREAD or not QOpenGLContext.supportsThreadedOpenGL():
        return None
    if _thread is None:
        _thread = QThread()
        _thread.setObjectName("render")
        _thread.started.connect(_lower_priority, Qt.ConnectionType.DirectConnection)
        _thread.start()
        app = QCoreApplication.instance()
        app.aboutToQuit.connect(_stop_render_thread)
        atexit.register(_stop_render_thread)
    return _thread


def _stop_render_thread() -> None:
    """Quit and join the render thread (on quitting; views still alive render nothing)."""
    global _thread
    thread, _thread = _thread, None
    if thread is not None:
        thread.quit()
        thread.wait()
        _stopped.append(thread)  # keep the QThread object: deleting it is only safe here


_stopped: list[QThread] = []


class _Channel(QObject):
    """The widget's side of its connections to the renderer (so that the widget itself is
    never the sender a renderer call waits on)."""

    create = Signal()
    render = Signal(object)
    render_now = Signal(object)
    release = Signal()


class _Link:
    """A widget's renderer, its surface and the connections to them; `close()` releases the
    renderer in its thread (blocking), once, and is safe to call from the widget's destroyed
    signal (it holds no reference to the widget)."""

    def __init__(self, on_rendered) -> None:
        self.renderer = _Renderer()
        self.channel = _Channel()
        thread = _render_thread()
        self.thread = thread
        if thread is not None:
            self.renderer.moveToThread(thread)
            queued, blocking = (Qt.ConnectionType.QueuedConnection,
                                Qt.ConnectionType.BlockingQueuedConnection)
        else:
            queued, blocking = (Qt.ConnectionType.QueuedConnection,
                                Qt.ConnectionType.DirectConnection)
        self.channel.create.connect(self.renderer.create, blocking)
        self.channel.render.connect(self.renderer.render, queued)
        self.channel.render_now.connect(self.renderer.render_now, blocking)
        self.channel.release.connect(self.renderer.release, blocking)
        self.renderer.rendered.connect(on_rendered, Qt.ConnectionType.QueuedConnection)
        self.channel.create.emit()
        # The surface is made in the GUI thread, as Qt requires; it can be used from any.
        self.surface = QOffscreenSurface()
        self.surface.setFormat(surface_format())
        self.surface.create()
        self.renderer.surface = self.surface  # before any rendering is queued
        self.closed = False

    def usable(self) -> bool:
        """False once closed, or once the render thread has stopped (a blocking call would
        then wait forever)."""
        return not self.closed and (self.thread is None or self.thread is _thread)

    def close(self) -> None:
        if self.closed:
            return
        if self.usable():
            self.channel.release.emit()
        self.closed = True
        if shiboken6.isValid(self.surface):  # at exit Qt may have deleted it already
            self.surface.destroy()


# --------------------------------------------------------------------------------------------
# The widget
# --------------------------------------------------------------------------------------------
class MarbleView(QWidget):
    """Draws marbles (ray-cast impostors) in a container and turns mouse gestures into camera
    moves and drag signals.

    The scene is rendered off screen (see the module docstring) when a paint finds the image
    out of date (``update()``, which new marbles, a camera move and a resize call) and no
    rendering is under way; ``frameRendered`` reports each finished rendering, which replaces
    the image. Any other repaint (a widget drawn over the view, an expose) shows the last
    image without OpenGL. ``grab_frame()`` renders now, waits, and returns the image.

    Mouse: left-drag orbits, right-drag (or Shift+left-drag) pans, the wheel zooms,
    Ctrl+left-drag on a marble drags it (``dragStarted`` / ``dragMoved`` / ``dragEnded``).

    ``debug_flat``: draw only the marbles in their unshaded colour on black, without floor,
    container or shadows (the pixel test compares this against a numpy ray cast).
    ``shadows``: render the key light's shadow map (on by default).
    """

    glFailed = Signal(str)
    dragStarted = Signal(int)
    dragMoved = Signal(int, object)
    dragEnded = Signal(int)
    # After each rendering that replaced the image: its cost in seconds (drawing and reading
    # back, in the render thread), for the window's pacing, and which marbles it shows (the
    # `marbles_version` that set_marbles had made when the rendering was asked for).
    frameRendered = Signal(float, int)
    # Failures are re-emitted from the event loop, so that a slot showing a modal dialog does
    # not run inside a paint event or a grab.
    _failedLater = Signal(str)

    def __init__(self, parent=None, *, debug_flat: bool = False, shadows: bool = True) -> None:
        super().__init__(parent)
        self.camera = Camera()
        self.debug_flat = bool(debug_flat)
        self.shadows = bool(shadows)
        # False draws the naive impostor (parallel to the image, circumscribing radius r, not
        # the silhouette), which clips marbles off the view axis; it exists only so the pixel
        # test can show that it fails.
        self.exact_quads = True
        self.failure: str | None = None
        self._x = np.zeros((0, 3))
        self._radius = np.zeros(0)
        self._colour = np.zeros((0, 3), dtype=np.float32)
        self._marbles_version = 0
        self._container: dict | None = None
        self._container_version = 0
        self._frame_on_marbles = False
        self._drag: dict | None = None
        self._press_pos: QPointF | None = None
        self._link: _Link | None = None
        self._seq = 0  # renderings asked for
        self._in_flight = 0  # seq of the rendering under way (0: none)
        self._shown = 0  # seq of the rendering shown
        self._stale = True  # the image does not show the current marbles / camera / size
        # The image shown: BGRA bytes, top row first, and the QImage over them (RGB32).
        self.pixels = np.zeros((0, 0, 4), dtype=np.uint8)
        self.image: QImage | None = None
        # When the rendering shown began (perf_counter s), what it cost (s), how many ran.
        self.paint_started = 0.0
        self.render_seconds = 0.0
        self.paints = 0
        self._failedLater.connect(self.glFailed, Qt.ConnectionType.QueuedConnection)
        # Every pixel is painted from the image: no background fill before each paint.
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMinimumSize(160, 120)

    def update(self, *args) -> None:
        """QWidget.update with the image marked out of date: the next paint renders anew.
        (Everything that changes what the view shows calls this.)"""
        self._stale = True
        super().update(*args)

    def shutdown(self) -> None:
        """Release the renderer and its OpenGL context (also done when the widget is
        destroyed); the view paints black afterwards."""
        if self._link is not None:
            self._link.close()

    # --- public API -------------------------------------------------------------------------
    def set_container(self, container: dict | None) -> None:
        """Container dict as in solver/world.py (kinds sphere/floor/box/tube, optional
        "planar"); None draws none. A different container re-frames the camera."""
        changed = _container_key(container) != _container_key(self._container)
        self._container = None if container is None else dict(container)
        if changed:
            self._container_version += 1
            self.reset_camera()
            # A floor does not bound the scene: frame the marbles of the new scene when they
            # arrive (those held now may still be the previous scene's).
            self._frame_on_marbles = (self._container or {}).get("kind") == "floor"
        self.update()

    def set_marbles(self, x, radius, colour) -> None:
        """Newest frame: x (n, 3) float64 m, radius (n,) m, colour (n, 3) RGB 0..1. Keeps
        references (the caller must not mutate them afterwards) and schedules a new image."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, 3)
        n = x.shape[0]
        self._x = x
        self._radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,))
        self._colour = np.asarray(colour, dtype=np.float32).reshape(n, 3)
        self._marbles_version += 1
        if self._frame_on_marbles and n:
            self._frame_on_marbles = False
            self.reset_camera()
        self.update()

    @property
    def marbles_version(self) -> int:
        """How many times set_marbles has been called."""
        return self._marbles_version

    def reset_camera(self) -> None:
        """Frame the container (or, on a bare floor, the marbles); planar scenes face the
        x–z plane."""
        centre, r = container_bounds(self._container, self._x, self._radius)
        self.camera.aspect = self.width() / max(self.height(), 1)
        self.camera.frame(centre, r, planar=bool((self._container or {}).get("planar")))
        self.update()

    def pick(self, px: float, py: float) -> tuple[int, np.ndarray | None]:
        """Marble under widget pixel coordinates (px, py) (origin top-left, logical pixels):
        (index, hit point (3,) m on its surface) or (−1, None). A numpy ray cast against the
        newest frame, independent of OpenGL."""
        origin, direction = self.camera.ray(px, py, max(self.width(), 1), max(self.height(), 1))
        return pick_sphere(origin, direction, self._x, self._radius)

    # --- failure ------------------------------------------------------------------------------
    def _fail(self, message: str) -> None:
        if self.failure is not None:
            return
        self.failure = message
        print(f"marbles: OpenGL: {message}", file=sys.stderr)
        self._failedLater.emit(message)

    # --- rendering --------------------------------------------------------------------------
    def pixel_size(self) -> tuple[int, int]:
        """(width, height) of the rendered image in device pixels."""
        dpr = self.devicePixelRatioF()
        return max(1, round(self.width() * dpr)), max(1, round(self.height() * dpr))

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self._stale and not self._in_flight:
            self._request()
        painter = QPainter(self)
        image = self.image
        if image is None:
            painter.fillRect(self.rect(), Qt.GlobalColor.black)
        elif (image.width(), image.height()) == self.pixel_size():
            painter.drawImage(0, 0, image)
        else:  # resized: the previous image, stretched, until the new one is rendered
            painter.drawImage(self.rect(), image)
        painter.end()

    def idle(self) -> bool:
        """No rendering under way and none due: the image shows the current scene."""
        return not self._in_flight and not self._stale

    def grab_frame(self) -> QImage:
        """Render the current scene now, wait for it, show it and return a copy of the image
        (black after an OpenGL failure)."""
        link = self._ensure_link()
        self._stale = False
        scene = self._scene()
        if link.usable():
            link.channel.render_now.emit(scene)
            self._show(link.renderer.last)
        else:
            self._show_black(scene)
        return self.image.copy()

    def _ensure_link(self) -> _Link:
        if self._link is None:
            self._link = _Link(self._on_rendered)
            # Release the renderer when the widget goes away (the link holds no reference to
            # the widget, so this runs whether Qt or Python deletes it).
            link = self._link
            self.destroyed.connect(lambda *_: link.close())
        return self._link

    def _request(self) -> None:
        """Ask the renderer for an image of the current scene (one at a time)."""
        link = self._ensure_link()
        self._stale = False
        scene = self._scene()
        if link.usable():
            self._in_flight = scene.seq
            link.channel.render.emit(scene)
        else:
            self._show_black(scene)

    def _scene(self) -> _Scene:
        self._seq += 1
        w, h = self.pixel_size()
        cam = self.camera
        cam.aspect = w / h
        _, up, forward = cam.basis()
        drag_line = None
        if self._drag is not None and self._drag.get("target") is not None:
            i = self._drag["index"]
            if i < len(self._x):
                drag_line = np.stack([self._x[i], np.asarray(self._drag["target"], dtype=float)])
        return _Scene(seq=self._seq, size=(w, h),
                      viewproj=cam.projection_matrix() @ cam.view_matrix(), eye=cam.eye(),
                      up=up, forward=forward, x=self._x, radius=self._radius,
                      colour=self._colour, marbles_version=self._marbles_version,
                      container=self._container, container_version=self._container_version,
                      drag_line=drag_line, debug_flat=self.debug_flat, shadows=self.shadows,
                      exact_quads=self.exact_quads)

    def _on_rendered(self, result: _Result) -> None:
        if result.seq == self._in_flight:
            self._in_flight = 0
        if result.seq > self._shown:
            self._show(result)
        if self._stale and not self._in_flight:
            super().update()  # the scene changed meanwhile: the next paint asks again

    def _show(self, result: _Result) -> None:
        self._shown = result.seq
        if result.failure is not None:
            self._fail(result.failure)
        self._set_pixels(result.pixels)
        self.paint_started = result.started
        self.render_seconds = result.seconds
        self.paints += 1
        super().update()  # repaint with the new image (not out of date: QWidget's own)
        if result.ok:
            self.frameRendered.emit(result.seconds, result.marbles_version)

    def _show_black(self, scene: _Scene) -> None:
        w, h = scene.size
        pixels = np.zeros((h, w, 4), dtype=np.uint8)
        pixels[..., 3] = 255
        self._shown = scene.seq
        self._set_pixels(pixels)

    def _set_pixels(self, pixels: np.ndarray) -> None:
        h, w = pixels.shape[:2]
        self.pixels = pixels
        # RGB32 is 0xffRRGGBB in native (little-endian: B, G, R, A) byte order, the order
        # llvmpipe keeps its pixels in and the one the raster engine copies without conversion.
        image = QImage(pixels.data, w, h, 4 * w, QImage.Format.Format_RGB32)
        image.setDevicePixelRatio(self.devicePixelRatioF())
        self.image = image

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._stale = True  # Qt repaints after a resize; that paint renders at the new size

    # --- mouse ------------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        pos = event.position()
        self._press_pos = pos
        if (event.button() == Qt.MouseButton.LeftButton
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            index, point = self.pick(pos.x(), pos.y())
            if index >= 0:
                _, _, forward = self.camera.basis()
                # The drag plane goes through the grab point and faces the camera, fixed for
                # the whole gesture so the marble does not drift in depth as the view changes.
                self._drag = dict(index=index, point=point, normal=forward, target=point)
                self.dragStarted.emit(index)
                self.update()
        event.accept()

    def mouseMoveEvent(self, event) -> None:
        pos = event.position()
        last = self._press_pos if self._press_pos is not None else pos
        dx, dy = pos.x() - last.x(), pos.y() - last.y()
        self._press_pos = pos
        buttons = event.buttons()
        if self._drag is not None:
            origin, direction = self.camera.ray(pos.x(), pos.y(), max(self.width(), 1),
                                                max(self.height(), 1))
            target = ray_plane(origin, direction, self._drag["point"], self._drag["normal"])
            if target is not None:
                self._drag["target"] = target
                self.dragMoved.emit(self._drag["index"], target)
        elif buttons & Qt.MouseButton.RightButton or (
                buttons & Qt.MouseButton.LeftButton
                and event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
            self.camera.pan(dx, dy, self.height())
        elif buttons & Qt.MouseButton.LeftButton:
            self.camera.orbit(dx, dy)
        elif buttons & Qt.MouseButton.MiddleButton:
            self.camera.zoom(-dy / 40.0)
        self.update()
        event.accept()

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._drag is not None:
            index = self._drag["index"]
            self._drag = None
            self.dragEnded.emit(index)
            self.update()
        self._press_pos = None
        event.accept()

    def wheelEvent(self, event) -> None:
        # angleDelta is in eighths of a degree; one notch of a common wheel is 15°.
        self.camera.zoom(event.angleDelta().y() / 120.0)
        self.update()
        event.accept()


def _container_key(container: dict | None) -> str:
    """Canonical text of a container, for telling a new one from the same one sent again (its
    values may be numpy arrays, whose == does not give a single truth value)."""
    return json.dumps(container, sort_keys=True,
                      default=lambda v: np.asarray(v, dtype=np.float64).tolist())


def _checker_period(scene_radius: float) -> float:
    """A round checker size, about a tenth of the scene: 10 cm squares for the 1 m bowl."""
    raw = max(scene_radius, 1e-3) / 10.0
    p = 10.0 ** math.floor(math.log10(raw))
    for k in (1.0, 2.0, 5.0, 10.0):
        if raw <= k * p * 1.5:
            return k * p
    return 10.0 * p
