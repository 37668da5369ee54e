"""The OpenGL side of the 3D view: draws a `Scene` into a framebuffer object, reads it back.

Each marble is one instanced polygon covering its exact perspective silhouette; shaders/
marble.frag intersects the view ray with the sphere and writes the hit's normal, colour and true
depth into a G-buffer, which one full-screen pass shades. A directional key light casts shadows
through a shadow map made by the same impostors seen orthographically from the light. The
container is drawn after the marbles as glass (the bowl, the tube, the box walls) or as a rim
(the planar disk), over a checker floor (tilted for a plane), so marbles inside stay visible;
the picked marble's outline goes over everything.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import shiboken6
from OpenGL import GL
from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot
from PySide6.QtGui import QOffscreenSurface, QOpenGLContext, QSurfaceFormat

from .geometry import (box_walls_mesh, checker_period, circle_segments, container_bounds,
                       cylinder_mesh, disk_mesh, floor_height, light_matrices, lines, model,
                       plane_basis, plane_model, screen_rect, sphere_mesh, torus_mesh)
from .glsl import (GBuffer, GLFailure, Impostors, Mesh, Target, Uniforms, blend_over,
                   check_version, no_context_message, program, shadow_map, surface_format)
from .network import NetworkMesh, ribbon_vertices
from .outline import Outline
from .render_thread import share_priority

SHADOW_MAP_SIZE = 512  # texels; 4.5 mm each over the 1 m bowl, ample for 10 cm marbles

# Key light, pointing from the scene towards the light: high, from the front left of the default
# camera, so shadows fall back and to the right where they are visible.
_LIGHT_DIR = np.array([-0.35, -0.55, 1.0]) / np.linalg.norm([-0.35, -0.55, 1.0])

_BG_TOP = (0.09, 0.10, 0.13)
_BG_BOTTOM = (0.30, 0.32, 0.36)
_FLOOR_COLOUR = (0.62, 0.60, 0.57, 1.0)
_GLASS_COLOUR = (0.72, 0.82, 0.90, 0.06)
_RIM_COLOUR = (0.80, 0.86, 0.92, 0.55)


def create_context(fmt: QSurfaceFormat, parent: QObject) -> QOpenGLContext | None:
    """A new OpenGL context asked for with format `fmt`, a child of `parent`, in the calling
    thread; None if the platform gives none (tests replace this function to stage that)."""
    context = QOpenGLContext(parent)
    context.setFormat(fmt)
    return context if context.create() else None


@dataclass(frozen=True)
class Scene:
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
    orientation: np.ndarray  # (n, 4) unit quaternions (w, x, y, z), body -> world
    marbles_version: int
    container: dict | None
    container_version: int
    drag_line: np.ndarray | None  # (2, 3): the dragged marble's centre and the cursor target
    debug_flat: bool
    shadows: bool
    exact_quads: bool
    soft_shadows: bool = True  # the marbles' shadow edges filtered over ~3 texels
    # The contact network, (ends (m, 2, 3), width (m,), colour (m, 3)), or None; with it the
    # marbles are drawn at `marble_scale` of their radius (lab.session.network.MARBLE_SCALE).
    network: tuple | None = None
    marble_scale: float = 1.0
    picked: int = -1  # the marble outlined (app.view.outline), -1: none


@dataclass(frozen=True)
class Result:
    """One rendering: pixels (h, w, 4) uint8 BGRA, top row first (black if it failed), when it
    began (perf_counter s) and how long it took (s), and the renderer's failure if any."""

    seq: int
    marbles_version: int
    pixels: np.ndarray
    started: float
    seconds: float
    ok: bool
    failure: str | None


@dataclass(frozen=True)
class _Frame:
    """What the passes of one rendering share: the sphere the shadow map covers (centre (3,) m,
    radius m), the floor's height (m), whether shadows are drawn, and the light's world → clip
    transform (4, 4) with the up vector (3,) of the shadow-pass quads."""

    scene: Scene
    centre: np.ndarray
    bound: float
    floor_z: float
    shadows: bool
    light_vp: np.ndarray
    light_up: np.ndarray

    @property
    def variant(self) -> str:
        """Which lit shader variant the surfaces and the marbles use."""
        return "lit+shadows" if self.shadows else "lit"

    def marble_uniforms(self) -> dict:
        """Uniforms of the marble programs seen from the camera."""
        s = self.scene
        return dict(u_viewproj=s.viewproj, u_eye=s.eye, u_ortho=False, u_quad_up=s.up,
                    u_exact=bool(s.exact_quads), u_view_axis=s.forward)

    def lighting(self) -> dict:
        """Uniforms of the lit programs: the key light and the shadow-map lookup."""
        texel = 2.0 * 1.05 * self.bound / SHADOW_MAP_SIZE
        # Shadow lookups: pushed 1.5 texels along the normal, compared with a depth bias of
        # 0.15% of the light's depth range, against self-shadowing acne on the lit side.
        return dict(u_light_dir=_LIGHT_DIR, u_eye=self.scene.eye, u_shadow_map=0,
                    u_light_viewproj=self.light_vp, u_shadow_offset=1.5 * texel,
                    u_shadow_bias=0.0015)


class Renderer(QObject):
    """Owns the OpenGL context and every GL object, draws a `Scene` into a framebuffer object
    and reads the pixels back. Lives in the render thread (see render_thread.RENDER_THREAD);
    the widget talks to it only through queued (or blocking) calls."""

    rendered = Signal(object)  # Result, for the widget (queued across the threads)

    def __init__(self) -> None:
        super().__init__()
        self.surface: QOffscreenSurface | None = None  # set by the Link after create()
        self._context: QOpenGLContext | None = None
        self._gl_ready = False
        self.failure: str | None = None
        self._target = Target()
        self._impostors: Impostors | None = None
        self._items: list[dict] = []
        self._marbles_version = -1
        self._container_version = -1
        self._shadow_dirty = True
        self._shadows_ok = True
        self.last: Result | None = None
        self.thread_id = 0  # native id of the thread that created the context

    @Slot()
    def create(self) -> None:
        """Called blocking from the widget: make the context in this thread (a failure is kept
        in `failure`); in the render thread, lower the priority of the driver's rasteriser
        threads, which exist by now, like this thread's (see render_thread.RENDER_NICE)."""
        self.thread_id = threading.get_native_id()
        try:
            self._context = create_context(surface_format(), self)
        except Exception as exc:
            self.failure = f"initialisation failed: {type(exc).__name__}: {exc}".splitlines()[0]
        if self._context is None and self.failure is None:
            self.failure = no_context_message()
        if self.thread_id != threading.main_thread().native_id:
            share_priority("llvmpipe-")

    @Slot(object)
    def render(self, scene: Scene) -> None:
        """Queued from the widget: render and send the result back."""
        self.last = self._render(scene)
        self.rendered.emit(self.last)

    @Slot(object)
    def render_now(self, scene: Scene) -> None:
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

    def _render(self, scene: Scene) -> Result:
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
                    self._target.ensure(w, h)
                    self._paint(scene)
                    pixels = self._target.read_back()
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
        return Result(scene.seq, scene.marbles_version, pixels, started,
                      time.perf_counter() - started, ok, self.failure)

    # --- GL life cycle -------------------------------------------------------------------
    def _init_gl(self) -> None:
        """Check the context made by `create` and make every GL object (once, at the first
        rendering)."""
        try:
            if self._context is None or self.surface is None or not self.surface.isValid():
                raise GLFailure(no_context_message())
            check_version(self._context)
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
        """Every GL object, in the current context."""
        self._create_programs()
        self._impostors = Impostors()
        self._marbles_version = -1
        # Core profile needs a bound VAO even for the attribute-less background triangle.
        self._empty_vao = GL.glGenVertexArrays(1)
        # Drag spring: one dynamic line segment.
        self._drag_line = Mesh(np.zeros((2, 6), dtype=np.float32), None, GL.GL_LINES)
        self._shadow_tex, self._shadow_fbo, complete = shadow_map(SHADOW_MAP_SIZE)
        if not complete:
            self._shadows_ok = False  # not fatal: draw without shadows
        self._shadow_dirty = True
        self._gbuffer = GBuffer()
        self._container_version = -1

    def _create_programs(self) -> None:
        """Compile and link every shader program (raises GLFailure)."""
        # Shader variants are separate programs (see lighting.glsl for why not uniforms).
        self._marble_progs = {
            "depth": program("marble.vert", "marble.frag", ("DEPTH_ONLY",)),
            "flat": program("marble.vert", "marble.frag", ("FLAT",)),
            "gbuffer": program("marble.vert", "marble.frag"),
        }
        self._shade_progs = {
            "lit": program("background.vert", "marble_shade.frag"),
            "lit+shadows": program("background.vert", "marble_shade.frag", ("SHADOWS",)),
            "lit+shadows+soft": program("background.vert", "marble_shade.frag",
                                        ("SHADOWS", "SOFT_SHADOWS")),
        }
        self._surface_progs = {
            "lit": program("surface.vert", "surface.frag"),
            "lit+shadows": program("surface.vert", "surface.frag", ("SHADOWS",)),
            "glass": program("surface.vert", "surface.frag", ("GLASS",)),
            "line": program("surface.vert", "surface.frag", ("LINE",)),
        }
        self._bg_prog = program("background.vert", "background.frag")
        self._network = NetworkMesh()
        self._outline = Outline()
        self._uniforms = Uniforms()

    def _set(self, prog: int, name: str, value) -> None:
        self._uniforms.set(prog, name, value)

    # --- scene resources ----------------------------------------------------------------------
    def _delete_items(self) -> None:
        for item in self._items:
            item["mesh"].delete()
        self._items = []

    def _build_items(self, container: dict | None) -> None:
        """GL meshes for `container`: a list of draw items, each with a pass ("floor",
        "opaque", "glass" or "line"), a model matrix and a colour."""
        self._delete_items()
        c = container or {}
        kind = c.get("kind")
        planar = bool(c.get("planar"))
        items = self._items

        def add(pass_, mesh, matrix, colour, **extra):
            items.append(dict(pass_=pass_, mesh=mesh, model=matrix, colour=colour, **extra))

        if kind == "sphere":
            centre, r = np.asarray(c["center"], dtype=np.float64), float(c["radius"])
            if planar:
                add("opaque", Mesh(*torus_mesh(0.025), GL.GL_TRIANGLES),
                    model(centre, r), (0.78, 0.80, 0.84, 1.0))
                # A faint pane behind the plane of motion, so the disk reads as a disk.
                pane = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]],
                                dtype=np.float64)
                pane = model(centre + [0.0, 0.12 * r, 0.0], r) @ pane
                add("glass", Mesh(*disk_mesh(), GL.GL_TRIANGLES), pane,
                    (0.55, 0.62, 0.72, 0.22))
            else:
                add("floor", None, None, _FLOOR_COLOUR, fade=(centre, 2.6 * r))
                add("glass", Mesh(*sphere_mesh(), GL.GL_TRIANGLES), model(centre, r),
                    _GLASS_COLOUR)
        elif kind == "box":
            cx, cy = c["center"]
            a, z0, h = float(c["half_width"]), float(c["floor"]), float(c.get("height", 1.0))
            add("floor", None, None, _FLOOR_COLOUR, fade=(np.array([cx, cy, z0]), 3.0 * a + h))
            add("glass", Mesh(*box_walls_mesh(), GL.GL_TRIANGLES),
                model((cx, cy, z0), (a, a, h)), _GLASS_COLOUR)
            top = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
            seg = []
            for i in range(4):
                p, q = top[i], top[(i + 1) % 4]
                seg += [[*p, 1.0], [*q, 1.0], [*p, 0.0], [*p, 1.0]]
            add("line", Mesh(lines(seg), None, GL.GL_LINES), model((cx, cy, z0), (a, a, h)),
                _RIM_COLOUR)
        elif kind == "tube":
            cx, cy = c["center"]
            r, z0, h = float(c["radius"]), float(c["floor"]), float(c.get("height", 1.0))
            add("floor", None, None, _FLOOR_COLOUR, fade=(np.array([cx, cy, z0]), 4.0 * r + h))
            add("glass", Mesh(*cylinder_mesh(), GL.GL_TRIANGLES),
                model((cx, cy, z0), (r, r, h)), _GLASS_COLOUR)
            add("line", Mesh(lines(circle_segments()), None, GL.GL_LINES),
                model((cx, cy, z0 + h), (r, r, 1.0)), _RIM_COLOUR)
        elif kind == "floor":
            add("floor", None, None, _FLOOR_COLOUR, fade=None)
        elif kind == "plane":  # a tilted floor: a disk around the marbles, on the plane
            add("floor", None, None, _FLOOR_COLOUR, fade=None,
                plane=(np.asarray(c["point"], dtype=np.float64),
                       np.asarray(c["normal"], dtype=np.float64)))
        # Every floor is a unit disk mesh, scaled and placed at draw time.
        for item in items:
            if item["pass_"] == "floor":
                item["mesh"] = Mesh(*disk_mesh(), GL.GL_TRIANGLES)

    # --- drawing ------------------------------------------------------------------------------
    def _paint(self, scene: Scene) -> None:
        """Draw `scene` into the framebuffer object, one pass after the other."""
        self._sync(scene)
        frame = self._frame(scene)
        n = self._impostors.count
        GL.glDisable(GL.GL_CULL_FACE)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthFunc(GL.GL_LESS)
        GL.glDepthMask(GL.GL_TRUE)
        GL.glDisable(GL.GL_BLEND)
        if frame.shadows and self._shadow_dirty:
            self._shadow_pass(frame)
        if n and not scene.debug_flat:
            self._gbuffer_pass(frame)
        self._begin_image(scene)
        if not scene.debug_flat:
            self._background_pass()
            self._surface_pass(frame)
        if n and scene.debug_flat:
            self._draw_marbles("flat", **frame.marble_uniforms())
        elif n:
            self._shade_pass(frame)
        if scene.network is not None:
            self._network.upload(ribbon_vertices(*scene.network, scene.eye))
            self._network.draw(scene.viewproj, self._uniforms)
        if not scene.debug_flat:
            self._line_pass(frame)
            self._glass_pass(frame)
        self._outline.draw(scene, self._surface_progs["line"], self._uniforms)
        # Leave a neutral state for the next frame.
        GL.glBindVertexArray(0)
        GL.glUseProgram(0)
        GL.glDisable(GL.GL_DEPTH_TEST)

    def _sync(self, scene: Scene) -> None:
        """Rebuild the container meshes and upload the marbles when the scene's are newer."""
        if scene.container_version != self._container_version:
            self._build_items(scene.container)
            self._container_version = scene.container_version
            self._shadow_dirty = True
        if scene.marbles_version != self._marbles_version:
            self._impostors.upload(scene.x, scene.radius * scene.marble_scale, scene.colour,
                                   scene.orientation)
            self._marbles_version = scene.marbles_version
            self._shadow_dirty = True

    def _frame(self, scene: Scene) -> _Frame:
        """What the passes share: the scene's bounds, floor, light and shadows switch."""
        x, radius = scene.x, scene.radius
        n = self._impostors.count
        centre, bound = container_bounds(scene.container, x, radius)
        if n:
            # Marbles flung a little outside the container still get shadows; ones flung far
            # away (or NaN after a divergence) must not stretch the shadow map over kilometres.
            far_out = np.linalg.norm(x - centre, axis=1) + radius
            far_out = far_out[np.isfinite(far_out)]
            if len(far_out):
                bound = min(max(bound, float(far_out.max())), 3.0 * bound)
        shadows = scene.shadows and self._shadows_ok and not scene.debug_flat and n > 0
        light_vp, light_up = light_matrices(_LIGHT_DIR, centre, 1.05 * bound)
        return _Frame(scene, centre, bound, floor_height(scene.container, x, radius), shadows,
                      light_vp, light_up)

    def _draw_marbles(self, variant: str, **uniforms) -> None:
        """All marbles with marble program `variant` ("depth", "flat" or "gbuffer")."""
        prog = self._marble_progs[variant]
        GL.glUseProgram(prog)
        for k, v in uniforms.items():
            self._set(prog, k, v)
        self._impostors.draw()

    def _shadow_pass(self, frame: _Frame) -> None:
        """The marbles' depth seen from the light. It depends only on the marbles and the
        scene bounds, not on the camera: orbiting a paused scene reuses it."""
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._shadow_fbo)
        GL.glViewport(0, 0, SHADOW_MAP_SIZE, SHADOW_MAP_SIZE)
        GL.glClear(GL.GL_DEPTH_BUFFER_BIT)
        self._draw_marbles("depth", u_viewproj=frame.light_vp, u_ortho=True,
                           u_ray_dir=-_LIGHT_DIR, u_quad_up=frame.light_up, u_exact=True)
        self._shadow_dirty = False

    def _gbuffer_pass(self, frame: _Frame) -> None:
        """Deferred shading: ray cast the marbles into the G-buffer; `_shade_pass` lights the
        visible pixels later."""
        w, h = frame.scene.size
        self._gbuffer.ensure(w, h)
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._gbuffer.fbo)
        GL.glViewport(0, 0, w, h)
        GL.glClearColor(0.0, 0.0, 0.0, 0.0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
        self._draw_marbles("gbuffer", **frame.marble_uniforms())

    def _begin_image(self, scene: Scene) -> None:
        """Clear the framebuffer object to opaque black; shadow map on texture unit 0."""
        w, h = scene.size
        GL.glBindFramebuffer(GL.GL_FRAMEBUFFER, self._target.fbo)
        GL.glViewport(0, 0, w, h)
        GL.glClearColor(0.0, 0.0, 0.0, 1.0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        GL.glBindTexture(GL.GL_TEXTURE_2D, self._shadow_tex)

    def _background_pass(self) -> None:
        """A vertical gradient behind everything (no depth test, no depth written)."""
        GL.glDisable(GL.GL_DEPTH_TEST)
        GL.glDepthMask(GL.GL_FALSE)
        GL.glUseProgram(self._bg_prog)
        self._set(self._bg_prog, "u_top", _BG_TOP)
        self._set(self._bg_prog, "u_bottom", _BG_BOTTOM)
        GL.glBindVertexArray(self._empty_vao)
        GL.glDrawArrays(GL.GL_TRIANGLES, 0, 3)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthMask(GL.GL_TRUE)

    def _surface_pass(self, frame: _Frame) -> None:
        """The lit, shadowed surfaces: the checker floor fading out at its edge, and opaque
        container parts (the planar disk's rim)."""
        sp = self._surface_progs[frame.variant]
        GL.glUseProgram(sp)
        for k, v in frame.lighting().items():
            self._set(sp, k, v)
        self._set(sp, "u_viewproj", frame.scene.viewproj)
        GL.glEnable(GL.GL_BLEND)
        blend_over()
        for item in self._items:
            if item["pass_"] == "floor":
                self._draw_floor(sp, item, frame)
            elif item["pass_"] == "opaque":
                self._set(sp, "u_model", item["model"])
                self._set(sp, "u_colour", item["colour"])
                self._set(sp, "u_checker", 0.0)
                self._set(sp, "u_fade_radius", 0.0)
                item["mesh"].draw()
        GL.glDisable(GL.GL_BLEND)

    def _draw_floor(self, sp: int, item: dict, frame: _Frame) -> None:
        """The checker floor: level at the floor's height, or (item "plane": point, normal) on
        a tilted plane, its checker squares laid along the plane."""
        fade = item["fade"]
        if fade is None:  # a bare floor or plane: around the marbles
            fc = np.array([frame.centre[0], frame.centre[1], frame.floor_z])
            fr = 3.0 * frame.bound
        else:
            fc, fr = fade
        plane = item.get("plane")
        if plane is None:
            matrix, basis = model((fc[0], fc[1], frame.floor_z), fr), np.eye(3)
        else:
            matrix, basis = plane_model(*plane, frame.centre, fr), plane_basis(plane[1])
            fc = matrix[:3, 3]
        self._set(sp, "u_model", matrix)
        self._set(sp, "u_colour", item["colour"])
        self._set(sp, "u_checker", float(checker_period(frame.bound)))
        self._set(sp, "u_checker_u", basis[0])
        self._set(sp, "u_checker_v", basis[1])
        self._set(sp, "u_fade_centre", np.asarray(fc, dtype=np.float64))
        self._set(sp, "u_fade_radius", float(fr))
        item["mesh"].draw()

    def _shade_pass(self, frame: _Frame) -> None:
        """Light the marble pixels of the G-buffer (one full-screen triangle)."""
        scene = frame.scene
        w, h = scene.size
        # The pass costs per pixel even where it finds no marble: restrict it to the marbles'
        # screen rectangle.
        box = screen_rect(scene.viewproj, scene.x, scene.radius, w, h)
        if box is not None:
            GL.glEnable(GL.GL_SCISSOR_TEST)
            GL.glScissor(*box)
        soft = frame.shadows and scene.soft_shadows
        prog = self._shade_progs[frame.variant + ("+soft" if soft else "")]
        GL.glUseProgram(prog)
        for k, v in frame.lighting().items():
            self._set(prog, k, v)
        for unit, (name, tex) in enumerate(zip(("u_normal", "u_albedo", "u_depth"),
                                               self._gbuffer.textures), start=1):
            GL.glActiveTexture(GL.GL_TEXTURE0 + unit)
            GL.glBindTexture(GL.GL_TEXTURE_2D, tex)
            self._set(prog, name, unit)
        GL.glActiveTexture(GL.GL_TEXTURE0)
        self._set(prog, "u_inv_viewproj", np.linalg.inv(scene.viewproj))
        self._set(prog, "u_viewport", np.array([w, h], dtype=np.float64))
        self._set(prog, "u_floor_z", float(frame.floor_z))
        self._set(prog, "u_ao_height",
                  float(max(0.6 * frame.bound, 4.0 * float(scene.radius.max()))))
        GL.glBindVertexArray(self._empty_vao)
        GL.glDrawArrays(GL.GL_TRIANGLES, 0, 3)
        GL.glDisable(GL.GL_SCISSOR_TEST)

    def _line_pass(self, frame: _Frame) -> None:
        """The drag spring, then the container's rim lines, which like the glass write no
        depth."""
        GL.glEnable(GL.GL_BLEND)
        blend_over()
        lp = self._surface_progs["line"]
        GL.glUseProgram(lp)
        self._set(lp, "u_viewproj", frame.scene.viewproj)
        if frame.scene.drag_line is not None:
            seg = lines(frame.scene.drag_line)
            GL.glBindBuffer(GL.GL_ARRAY_BUFFER, self._drag_line.vbo)
            GL.glBufferSubData(GL.GL_ARRAY_BUFFER, 0, seg.nbytes, seg)
            self._set(lp, "u_model", np.eye(4))
            self._set(lp, "u_colour", (1.0, 0.9, 0.3, 0.9))
            # Always on top: the spring must stay visible inside a pile.
            GL.glDisable(GL.GL_DEPTH_TEST)
            self._drag_line.draw()
            GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glDepthMask(GL.GL_FALSE)
        for item in self._items:
            if item["pass_"] == "line":
                self._set(lp, "u_model", item["model"])
                self._set(lp, "u_colour", item["colour"])
                item["mesh"].draw()
        GL.glDepthMask(GL.GL_TRUE)
        GL.glDisable(GL.GL_BLEND)

    def _glass_pass(self, frame: _Frame) -> None:
        """Glass after everything opaque, without writing depth, far side first."""
        GL.glEnable(GL.GL_BLEND)
        blend_over()
        GL.glDepthMask(GL.GL_FALSE)
        gp = self._surface_progs["glass"]
        GL.glUseProgram(gp)
        self._set(gp, "u_viewproj", frame.scene.viewproj)
        self._set(gp, "u_light_dir", _LIGHT_DIR)
        self._set(gp, "u_eye", frame.scene.eye)
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

