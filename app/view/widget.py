"""The 3D view widget: marbles in their container, an orbit camera and mouse picking.

Rendered off screen: a `Renderer` (usually in the shared render thread) draws into a framebuffer
object of the widget's size and reads the pixels back into a ``QImage`` that this plain (raster)
``QWidget`` paints. So the window holds no OpenGL widget: repainting the plots or the HUD is
raster work that reuses the last image, and only a new frame or a camera move runs OpenGL.

The widget only displays and forwards mouse gestures; it holds no physics. Any OpenGL failure is
reported once through ``glFailed`` and on stderr; the widget then paints black and never raises.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QImage, QPainter, QPolygonF, QTransform
from PySide6.QtWidgets import QWidget

from lab.session.network import MARBLE_SCALE

from .camera import Camera
from .geometry import container_bounds, slope_azimuth
from .picking import pick_sphere, ray_plane
from .render_thread import Link
from .reproject import plane_quads
from .renderer import Renderer, Result, Scene


CLICK_SLOP = 3.0  # px a click may move between press and release and still pick
# While the camera moves, renderings have this share of the pixels along each side (a quarter
# of them) and are shown stretched: with software OpenGL a large pile's full rendering takes
# hundreds of ms, and an orbit or a zoom must show within 100 ms. SETTLE_MS after the last
# move the full-size rendering follows.
PREVIEW_SCALE = 0.5
SETTLE_MS = 250


class MarbleView(QWidget):
    """Draws marbles (ray-cast impostors) in a container and turns mouse gestures into camera
    moves and drag signals.

    The scene is rendered off screen (see the module docstring) when a paint finds the image
    out of date (``update()``, which new marbles, a camera move and a resize call) and no
    rendering is under way; ``frameRendered`` reports each finished rendering, which replaces
    the image. Any other repaint (a widget drawn over the view, an expose) shows the last
    image without OpenGL. ``grab_frame()`` renders now, waits, and returns the image.

    Mouse: left-drag orbits, right-drag (or Shift+left-drag) pans (on a tilted plane the
    camera follows the marbles instead), the wheel zooms, Ctrl+left-drag on a marble drags it
    (``dragStarted`` / ``dragMoved`` / ``dragEnded``).

    ``debug_flat``: draw only the marbles in their unshaded colour on black, without floor,
    container or shadows (the pixel test compares this against a numpy ray cast).
    ``shadows``: render the key light's shadow map (on by default); ``soft_shadows``: filter
    the marbles' shadow edges over about three texels of the map (on by default).
    """

    glFailed = Signal(str)
    dragStarted = Signal(int)
    dragMoved = Signal(int, object)
    dragEnded = Signal(int)
    # A left click (press and release without moving, no Ctrl): the marble under it, or -1.
    marbleClicked = Signal(int)
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
        self.soft_shadows = True
        # False draws the naive impostor (parallel to the image, circumscribing radius r, not
        # the silhouette), which clips marbles off the view axis; it exists only so the pixel
        # test can show that it fails.
        self.exact_quads = True
        self.failure: str | None = None
        self._x = np.zeros((0, 3), dtype=np.float32)
        self._radius = np.zeros(0)
        self._colour = np.zeros((0, 3), dtype=np.float32)
        self._orientation = np.zeros((0, 4))
        self._marbles_version = 0
        self._container: dict | None = None
        self._container_version = 0
        self._frame_on_marbles = False
        self._network: tuple | None = None  # see set_network
        self._picked = -1  # see set_picked
        self._drag: dict | None = None
        self._press_pos: QPointF | None = None
        self._click_at: QPointF | None = None
        self._link: Link | None = None
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
        self._moving_until = 0.0  # perf_counter s until which the camera counts as moving
        # The camera each rendering asked for was seen from (seq -> Camera state), and that of
        # the image shown: a moved camera shows the image warped at once (app.view.reproject).
        self._cameras: dict[int, tuple] = {}
        self._image_camera: tuple | None = None
        self.camera_moves = 0  # camera_moved calls
        self.camera_shown = 0  # the camera_moves the last paint showed (warped or rendered)
        self.shown_preview = False  # the image shown is a preview (PREVIEW_SCALE)
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.timeout.connect(self.update)
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
        """Container dict as in solver/world.py (kinds sphere/floor/plane/box/tube, optional
        "planar"); None draws none. A different container re-frames the camera."""
        changed = _container_key(container) != _container_key(self._container)
        self._container = None if container is None else dict(container)
        if changed:
            self._container_version += 1
            self.reset_camera()
            # A floor or plane does not bound the scene: frame the marbles of the new scene
            # when they arrive (those held now may still be the previous scene's).
            self._frame_on_marbles = (self._container or {}).get("kind") in ("floor", "plane")
        self.update()

    def set_marbles(self, x, radius, colour, orientation=None) -> None:
        """Newest frame: x (n, 3) float32 m (as the frame and the shader's instance buffer
        hold it: a frame's float32 array is kept, not copied), radius (n,) m, colour (n, 3) RGB
        0..1, orientation (n, 4) unit quaternions (w, x, y, z) body -> world, which turn each
        marble's swirl (None: unrotated). Keeps references (the caller must not mutate them
        afterwards) and schedules a new image."""
        x = np.asarray(x, dtype=np.float32).reshape(-1, 3)
        n = x.shape[0]
        self._x = x
        self._radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,))
        self._colour = np.asarray(colour, dtype=np.float32).reshape(n, 3)
        if orientation is None:
            orientation = np.broadcast_to(np.array([1.0, 0.0, 0.0, 0.0]), (n, 4))
        self._orientation = np.asarray(orientation).reshape(n, 4)
        self._marbles_version += 1
        if self._frame_on_marbles and n:
            self._frame_on_marbles = False
            self.reset_camera()
        elif n and (self._container or {}).get("kind") == "plane":
            # Marbles on a tilted plane roll away down it for ever: the camera follows them
            # (its angles and distance stay as the user left them).
            self.camera.target = container_bounds(self._container, x, self._radius)[0]
        self.update()

    def set_network(self, network: tuple | None) -> None:
        """The contact network to draw, (ends (m, 2, 3) m, width (m,) m, colour (m, 3)), or
        None for none; while it is shown the marbles shrink to lab.session.network.MARBLE_SCALE of
        their radius (picking still uses their true size)."""
        if (network is None) != (self._network is None):
            self._marbles_version += 1  # the marbles' drawn radius changes
        self._network = network
        self.update()

    def set_picked(self, index: int) -> None:
        """Outline marble `index` of those set last (app.view.outline); -1 outlines none."""
        index = int(index)
        if index != self._picked:
            self._picked = index
            self.update()

    @property
    def picked(self) -> int:
        return self._picked

    @property
    def marbles_version(self) -> int:
        """How many times set_marbles has been called."""
        return self._marbles_version

    def interacting(self) -> bool:
        """The camera moved within the last SETTLE_MS: renderings are previews, and a
        window should hand no new frame meanwhile (the camera's renderings go first)."""
        return time.perf_counter() < self._moving_until

    def camera_moved(self) -> None:
        """The user moved the camera: render a preview at once, the full size once it rests."""
        self._moving_until = time.perf_counter() + SETTLE_MS / 1000.0
        self._settle.start(SETTLE_MS + 5)
        self.camera_moves += 1
        self.update()

    def reset_camera(self, moved: bool = False) -> None:
        """Frame the container (or, on a bare floor or plane, the marbles); planar scenes face
        the x–z plane, a tilted plane is seen along its level line. `moved`: the user asked
        for it (camera_moved)."""
        container = self._container or {}
        centre, r = container_bounds(container, self._x, self._radius)
        self.camera.aspect = self.width() / max(self.height(), 1)
        self.camera.frame(centre, r, planar=bool(container.get("planar")))
        if container.get("kind") == "plane":
            azimuth = slope_azimuth(container["normal"])
            if azimuth is not None:  # from the side, so the slope shows, downhill to the right
                self.camera.azimuth = azimuth
        if moved:
            self.camera_moved()
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
        warp = self._warp() if image is not None else None
        if image is None:
            painter.fillRect(self.rect(), Qt.GlobalColor.black)
        elif warp is not None:  # the camera moved since: the image seen from it, at once
            painter.fillRect(self.rect(), Qt.GlobalColor.black)
            painter.setTransform(warp)
            painter.drawImage(self.rect(), image)
        elif (image.width(), image.height()) == self.pixel_size():
            painter.drawImage(0, 0, image)
        else:  # resized or a preview: the image stretched, until the full one is rendered
            painter.drawImage(self.rect(), image)
        painter.end()
        seen = self._image_camera
        if warp is not None or (seen is not None and seen[0] == self.camera_moves):
            self.camera_shown = self.camera_moves

    def _warp(self) -> QTransform | None:
        """The map from the image's camera to the current one (None: the same, or no map)."""
        seen = self._image_camera
        if seen is None or seen[0] == self.camera_moves:
            return None
        _, viewproj, target, right, up, distance = seen
        cam = self.camera
        cam.aspect = self.width() / max(self.height(), 1)
        quads = plane_quads(viewproj, cam.projection_matrix() @ cam.view_matrix(), target,
                            right, up, 0.25 * distance, (self.width(), self.height()))
        if quads is None:
            return None
        old, new = (QPolygonF([QPointF(float(x), float(y)) for x, y in q]) for q in quads)
        warp = QTransform.quadToQuad(old, new)
        return warp if isinstance(warp, QTransform) else None

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

    def _ensure_link(self) -> Link:
        if self._link is None:
            self._link = Link(Renderer(), self._on_rendered)
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

    def _scene(self) -> Scene:
        self._seq += 1
        w, h = self.pixel_size()
        cam = self.camera
        cam.aspect = w / h
        if self.interacting():
            w, h = max(1, round(w * PREVIEW_SCALE)), max(1, round(h * PREVIEW_SCALE))
        right, up, forward = cam.basis()
        self._cameras[self._seq] = (self.camera_moves, cam.projection_matrix() @ cam.view_matrix(),
                                    cam.target.copy(), right, up, cam.distance)
        drag_line = None
        if self._drag is not None and self._drag.get("target") is not None:
            i = self._drag["index"]
            if i < len(self._x):
                drag_line = np.stack([self._x[i], np.asarray(self._drag["target"], dtype=float)])
        return Scene(seq=self._seq, size=(w, h),
                      viewproj=cam.projection_matrix() @ cam.view_matrix(), eye=cam.eye(),
                      up=up, forward=forward, x=self._x, radius=self._radius,
                      colour=self._colour, orientation=self._orientation,
                      marbles_version=self._marbles_version,
                      container=self._container, container_version=self._container_version,
                      drag_line=drag_line, debug_flat=self.debug_flat, shadows=self.shadows,
                      exact_quads=self.exact_quads, soft_shadows=self.soft_shadows,
                      network=self._network,
                      marble_scale=1.0 if self._network is None else MARBLE_SCALE,
                      picked=self._picked)

    def _on_rendered(self, result: Result) -> None:
        if result.seq == self._in_flight:
            self._in_flight = 0
        if result.seq > self._shown:
            self._show(result)
        if self._stale and not self._in_flight:
            super().update()  # the scene changed meanwhile: the next paint asks again

    def _show(self, result: Result) -> None:
        self._shown = result.seq
        self._image_camera = self._cameras.get(result.seq, self._image_camera)
        for seq in [s for s in self._cameras if s <= result.seq]:
            del self._cameras[seq]
        if result.failure is not None:
            self._fail(result.failure)
        self._set_pixels(result.pixels)
        self.shown_preview = (self.image.width(), self.image.height()) != self.pixel_size()
        self.paint_started = result.started
        self.render_seconds = result.seconds
        self.paints += 1
        super().update()  # repaint with the new image (not out of date: QWidget's own)
        if result.ok:
            self.frameRendered.emit(result.seconds, result.marbles_version)

    def _show_black(self, scene: Scene) -> None:
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
        self._click_at = pos if event.button() == Qt.MouseButton.LeftButton else None
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
            self.camera_moved()
        elif buttons & Qt.MouseButton.LeftButton:
            self.camera.orbit(dx, dy)
            self.camera_moved()
        elif buttons & Qt.MouseButton.MiddleButton:
            self.camera.zoom(-dy / 40.0)
            self.camera_moved()
        self.update()
        event.accept()

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._drag is not None:
            index = self._drag["index"]
            self._drag = None
            self.dragEnded.emit(index)
            self.update()
        elif (event.button() == Qt.MouseButton.LeftButton and self._click_at is not None
              and (event.position() - self._click_at).manhattanLength() <= CLICK_SLOP
              and not event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.marbleClicked.emit(self.pick(event.position().x(), event.position().y())[0])
        self._click_at = None
        self._press_pos = None
        event.accept()

    def wheelEvent(self, event) -> None:
        # angleDelta is in eighths of a degree; one notch of a common wheel is 15°.
        self.camera.zoom(event.angleDelta().y() / 120.0)
        self.camera_moved()
        event.accept()


def _container_key(container: dict | None) -> str:
    """Canonical text of a container, for telling a new one from the same one sent again (its
    values may be numpy arrays, whose == does not give a single truth value)."""
    return json.dumps(container, sort_keys=True,
                      default=lambda v: np.asarray(v, dtype=np.float64).tolist())
