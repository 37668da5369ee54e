"""MarbleView under Xvfb + Mesa llvmpipe: the impostors and their swirls against a numpy ray
cast, picking, mouse gestures, container drawing, changing marble counts and OpenGL failures
reported, not raised."""
from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication

import shaders
from app.view import MarbleView, glsl, render_thread, renderer
from app.view.camera import Camera
from app.view.picking import ray_spheres

W, H = 240, 180

# Tolerance of the pixel test: at most this fraction of pixels may be classified differently
# from the numpy ray cast, and every such pixel must lie within one pixel of a silhouette or of
# a boundary between two marbles in the reference (rounding of pixel centres on an edge).
MAX_MISMATCH_FRACTION = 0.005

PALETTE = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1]],
                   dtype=np.float32)


def fixed_camera() -> Camera:
    # A wide field of view makes perspective distortion strong at the image edges.
    return Camera(target=(0.0, 0.0, 0.0), distance=3.0, azimuth=-70.0, elevation=20.0,
                  fov_y=60.0, aspect=W / H, scene_radius=2.0)


def place(cam: Camera, ndc_x: float, ndc_y: float, depth: float) -> np.ndarray:
    """World point at normalised screen position (ndc_x, ndc_y), `depth` m in front of the eye."""
    right, up, fwd = cam.basis()
    tan_y = np.tan(np.radians(cam.fov_y) / 2)
    tan_x = tan_y * W / H
    return cam.eye() + depth * (fwd + ndc_x * tan_x * right + ndc_y * tan_y * up)


def fixed_scene(cam: Camera):
    """Six marbles: a big central one, two that intersect, one cut by the left image edge, one
    in the bottom-right corner, one partly hidden behind the central one."""
    right, _, fwd = cam.basis()
    c1 = place(cam, 0.42, 0.35, 2.4)
    x = np.array([place(cam, 0.0, -0.1, 3.0),
                  c1,
                  c1 + 0.25 * right + 0.1 * fwd,
                  place(cam, -0.97, -0.15, 1.3),
                  place(cam, 0.86, -0.8, 1.8),
                  place(cam, -0.22, 0.1, 4.5)])
    radius = np.array([0.45, 0.22, 0.2, 0.3, 0.2, 0.7])
    return x, radius, PALETTE.copy()


def image_array(img: QImage) -> np.ndarray:
    """(h, w, 3) uint8 RGB of a QImage."""
    img = img.convertToFormat(QImage.Format.Format_RGB888)
    w, h, stride = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=h * stride).reshape(h, stride)
    return buf[:, : 3 * w].reshape(h, w, 3).copy()


def framebuffer_alpha(view: MarbleView) -> np.ndarray:
    """Alpha channel (h, w) uint8 of the framebuffer as last read back. The image shown
    (RGB32) does not show it, but that format requires it to be 255."""
    return view.pixels[..., 3]


def classify_swirl(rgb: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """Label per pixel of a flat rendering: 2 i + 1 where marble i shows its swirl (palette
    colour i), 2 i on its clear glass (half that colour), −1 for black, −2 for anything else."""
    colours = np.vstack([np.stack([0.5 * palette, palette], axis=1).reshape(-1, 3) * 255.0,
                         [[0, 0, 0]]])
    dist = np.abs(rgb[:, :, None, :].astype(float) - colours[None, None]).sum(-1)
    label = np.argmin(dist, axis=-1)
    label = np.where(label == len(colours) - 1, -1, label)
    return np.where(dist.min(-1) > 24, -2, label)


def classify(rgb: np.ndarray, palette: np.ndarray) -> np.ndarray:
    """Label per pixel: index of the marble (swirl or glass), −1 for black, −2 for anything
    else."""
    label = classify_swirl(rgb, palette)
    return np.where(label >= 0, label // 2, label)


def reference(cam: Camera, x, radius, w=W, h=H) -> np.ndarray:
    idx, _ = ray_spheres(cam.eye(), cam.pixel_rays(w, h).reshape(-1, 3), x, radius)
    return idx.reshape(h, w)


def shader_constant(name: str) -> float:
    """A `const float|int NAME = value;` of shaders/marble.frag: the swirl's shape."""
    found = re.search(rf"const (?:float|int) {name} = ([-+0-9.eE]+);",
                      shaders.source("marble.frag"))
    return float(found.group(1))


def rotation_matrices(q: np.ndarray) -> np.ndarray:
    """(n, 3, 3) body -> world rotations of unit quaternions q (n, 4) (w, x, y, z)."""
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def meets_a_vane(o: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(k,) bool: whether the body-frame ray o + s d, s > 0 (o (k, 3) on the unit sphere, d
    (k, 3) unit), meets one of the cat's-eye vanes of marble.frag: the planes through body z
    at angles k VANE_ANGLE, each cut to the ellipse of half-axes VANE_WIDTH (across z) and
    VANE_LENGTH (along z)."""
    hit = np.zeros(len(o), dtype=bool)
    width, length = shader_constant("VANE_WIDTH"), shader_constant("VANE_LENGTH")
    for k in range(int(shader_constant("VANES"))):
        phi = k * shader_constant("VANE_ANGLE")
        across = np.array([np.cos(phi), np.sin(phi), 0.0])
        normal = np.array([-np.sin(phi), np.cos(phi), 0.0])
        with np.errstate(divide="ignore", invalid="ignore"):
            s = -(o @ normal) / (d @ normal)
            q = o + s[:, None] * d
            inside = (q @ across / width) ** 2 + (q[:, 2] / length) ** 2 < 1.0
        hit |= (s > 0) & inside
    return hit


def swirl_reference(cam: Camera, x, radius, orientation, w=W, h=H) -> np.ndarray:
    """Labels as classify_swirl gives them, from a numpy ray cast: the hit point and the ray
    taken into the marble's body frame, where the vanes are fixed."""
    dirs = cam.pixel_rays(w, h).reshape(-1, 3)
    idx, t = ray_spheres(cam.eye(), dirs, x, radius)
    label = np.full(idx.shape, -1)
    on = idx >= 0
    i = idx[on]
    normal = (cam.eye() + t[on, None] * dirs[on] - x[i]) / radius[i, None]
    to_body = rotation_matrices(orientation)[i].transpose(0, 2, 1)  # world -> body
    o = np.einsum("kij,kj->ki", to_body, normal)
    d = np.einsum("kij,kj->ki", to_body, dirs[on])
    label[on] = 2 * i + meets_a_vane(o, d)
    return label.reshape(h, w)


def quaternion(axis, degrees: float) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation by `degrees` about `axis`."""
    a = np.asarray(axis, dtype=np.float64)
    half = np.radians(degrees) / 2
    return np.concatenate([[np.cos(half)], np.sin(half) * a / np.linalg.norm(a)])


def edge_mask(label: np.ndarray) -> np.ndarray:
    """Pixels within one pixel (8-neighbourhood) of a change of label."""
    lab = np.pad(label, 1, mode="edge")
    h, w = label.shape
    diff = np.zeros((h, w), dtype=bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            diff |= lab[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] != label
    return diff


def compare(got: np.ndarray, want: np.ndarray) -> tuple[float, int]:
    """(fraction of pixels that differ, number of differing pixels away from any edge)."""
    bad = got != want
    return bad.mean(), int((bad & ~edge_mask(want)).sum())


@pytest.fixture
def make_view(qtbot):
    def make(w=W, h=H, **kwargs) -> MarbleView:
        view = MarbleView(**kwargs)
        qtbot.addWidget(view)
        view.resize(w, h)
        view.show()
        qtbot.waitExposed(view)
        return view
    return make


def render(view: MarbleView) -> np.ndarray:
    img = view.grab_frame()
    # The image is shown as opaque RGB32, which needs alpha 255: translucent glass must not
    # leave alpha below 1 behind, or screenshots show wrapped-around colours.
    assert (framebuffer_alpha(view) == 255).all(), "framebuffer alpha below 1"
    assert view.failure is None, view.failure
    assert (img.width(), img.height()) == (view.width(), view.height())
    return image_array(img)


def flat_view(make_view, x, radius, colour, orientation=None) -> MarbleView:
    view = make_view(debug_flat=True)
    view.set_marbles(x, radius, colour, orientation)
    view.camera = fixed_camera()
    return view


def test_reference_scene_covers_the_hard_cases():
    """The fixed scene really has a marble cut by the image edge, two marbles that intersect
    and one partly hidden, so the pixel test below exercises them."""
    cam = fixed_camera()
    x, radius, _ = fixed_scene(cam)
    want = reference(cam, x, radius)
    assert (want[:, 0] == 3).any()                          # touches the left edge
    assert (want[-1, :] == 4).any() or (want[:, -1] == 4).any()
    assert np.linalg.norm(x[1] - x[2]) < radius[1] + radius[2]
    # Intersecting: 1 and 2 share a boundary in the image.
    pairs = np.stack([want[:, :-1], want[:, 1:]], -1).reshape(-1, 2)
    assert ((pairs == [1, 2]).all(1) | (pairs == [2, 1]).all(1)).any()
    full, _ = ray_spheres(cam.eye(), cam.pixel_rays(W, H).reshape(-1, 3), x[5:], radius[5:])
    assert 0 < (want == 5).sum() < (full >= 0).sum()         # partly hidden
    for i in range(6):
        assert (want == i).sum() > 50


@pytest.mark.parametrize("threaded", [True, False], ids=["render-thread", "gui-thread"])
def test_impostors_match_numpy_ray_cast(make_view, monkeypatch, threaded):
    """Silhouettes and depth order of the GPU impostors equal an exact ray cast of the spheres,
    up to MAX_MISMATCH_FRACTION of pixels, all on edges; whether the view renders in its own
    thread (the default) or, where the platform has no threaded OpenGL, in the GUI thread."""
    monkeypatch.setattr(render_thread, "RENDER_THREAD", threaded)
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    got = classify(render(view), PALETTE)
    gui_thread = QApplication.instance().thread()
    assert (view._link.renderer.thread() is not gui_thread) == threaded
    want = reference(cam, x, radius)
    fraction, off_edge = compare(got, want)
    assert (got != -2).all(), "pixels of unexpected colour: blending or shading leaked in"
    assert off_edge == 0, f"{off_edge} pixels differ away from any edge"
    assert fraction <= MAX_MISMATCH_FRACTION, f"{100 * fraction:.2f}% of pixels differ"


# Turned marbles: each about another axis, none of them near a symmetry of the vanes.
TURNS = np.array([quaternion(axis, deg) for axis, deg in (
    ([1, 0, 0], 90), ([0.3, 1, 0.2], 50), ([1, 1, 1], 130), ([0, 0.5, 1], -70),
    ([1, -0.4, 0.3], 35), ([0.2, 0.9, -0.5], 160))])


def test_swirls_turned_by_the_orientation_match_numpy(make_view):
    """Each marble's swirl, turned by its orientation, is where a numpy ray cast in the body
    frame puts it: swirl and glass pixels of every marble as in the reference, up to
    MAX_MISMATCH_FRACTION of pixels, all on an edge (of a silhouette or of a vane)."""
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour, TURNS)
    got = classify_swirl(render(view), PALETTE)
    want = swirl_reference(cam, x, radius, TURNS)
    for i in range(6):  # every marble shows both, so the check is not empty
        assert (want == 2 * i + 1).sum() > 20 and (want == 2 * i).sum() > 20
    assert (got != -2).all(), "pixels of unexpected colour"
    fraction, off_edge = compare(got, want)
    assert off_edge == 0, f"{off_edge} pixels differ away from any edge"
    assert fraction <= MAX_MISMATCH_FRACTION, f"{100 * fraction:.2f}% of pixels differ"


def test_turning_a_marble_moves_its_swirl(make_view):
    """The check above fails if the orientation were ignored: the unturned swirls differ
    from the turned ones over many pixels, and the rendering follows the turned ones. And
    the lit (deferred) rendering shows the swirl where the reference puts it: more saturated
    than the glass around it."""
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    still = swirl_reference(cam, x, radius, np.tile([1.0, 0.0, 0.0, 0.0], (6, 1)))
    turned = swirl_reference(cam, x, radius, TURNS)
    moved = (still != turned) & ~edge_mask(still) & ~edge_mask(turned)
    assert moved.sum() > 150
    view = flat_view(make_view, x, radius, colour)
    assert compare(classify_swirl(render(view), PALETTE), still)[1] == 0  # unturned: as before
    view.set_marbles(x, radius, colour, TURNS)
    got = classify_swirl(render(view), PALETTE)
    assert (got[moved] == turned[moved]).all()
    view.debug_flat = False
    view.shadows = False
    view.update()
    lit = render(view).astype(int)
    saturation = lit.max(-1) - lit.min(-1)
    inner = ~edge_mask(turned)
    swirl = inner & (turned >= 0) & (turned % 2 == 1)
    glass = inner & (turned >= 0) & (turned % 2 == 0)
    assert saturation[swirl].mean() > saturation[glass].mean() + 40


def test_naive_impostors_fail_the_same_check(make_view):
    """The check discriminates: a screen-parallel quad of half-size r (the usual shortcut)
    clips marbles off the view axis, most visibly the one at the image edge."""
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    view.exact_quads = False
    got = classify(render(view), PALETTE)
    want = reference(cam, x, radius)
    fraction, off_edge = compare(got, want)
    assert off_edge > 0 or fraction > MAX_MISMATCH_FRACTION
    assert ((got == -1) & (want == 3)).sum() > 20   # the edge marble is clipped


def test_lit_marbles_cover_exactly_the_ray_cast_pixels(make_view):
    """The shaded (deferred) path draws the same silhouettes as the flat one: every pixel the
    ray cast gives to a marble differs from the empty background, and no other pixel does
    (same tolerance as the pixel test). This covers the G-buffer and its scissored shading
    pass, whose rectangle must not cut off the marble at the image edge."""
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = make_view(shadows=False)
    view.set_marbles(x[:0], radius[:0], colour[:0])
    view.camera = fixed_camera()
    empty = render(view).astype(int)
    view.set_marbles(x, radius, colour)
    lit = render(view).astype(int)
    got = np.where(np.abs(lit - empty).max(-1) > 6, 0, -1)
    want = np.where(reference(cam, x, radius) >= 0, 0, -1)
    fraction, off_edge = compare(got, want)
    assert off_edge == 0, f"{off_edge} pixels differ away from any edge"
    assert fraction <= MAX_MISMATCH_FRACTION


def test_marbles_sink_into_the_floor_by_their_true_depth(make_view):
    """Shaded marbles half below the floor show only what is above it, and intersect each
    other along the true curve: the impostors' gl_FragDepth against the floor's real depth.
    Reference: the numpy ray cast, hiding hits below z = 0 (the eye is above the floor)."""
    view = make_view(shadows=False)   # a shadow would change floor pixels too
    view.set_container({"kind": "floor", "height": 0.0})
    x = np.array([[0.0, 0.0, 0.0], [0.22, 0.05, 0.05]])
    radius = np.array([0.2, 0.15])
    colour = PALETTE[:2].copy()
    cam = Camera(target=(0.05, 0.0, 0.0), distance=1.2, azimuth=-75.0, elevation=15.0,
                 fov_y=50.0, scene_radius=1.0)
    view.set_marbles(x, radius, colour)
    view.camera = cam
    lit = render(view).astype(int)
    # A marble pixel is one that changes with the marbles' colours, however it is lit (clear
    # glass on the shadow side is dark and barely tinted); the floor does not change.
    view.set_marbles(x, radius, PALETTE[[2, 4]].copy())
    recoloured = render(view).astype(int)
    got = np.where(np.abs(lit - recoloured).max(-1) > 12, 0, -1)
    dirs = cam.pixel_rays(W, H).reshape(-1, 3)
    idx, t = ray_spheres(cam.eye(), dirs, x, radius)
    hit_z = cam.eye()[2] + np.where(idx >= 0, t, 0.0) * dirs[:, 2]
    want = np.where((idx >= 0) & (hit_z >= 0.0), 0, -1).reshape(H, W)
    assert (want == 0).sum() > 2000
    assert ((idx >= 0) & (hit_z < 0)).sum() > 500          # a real part is under the floor
    fraction, off_edge = compare(got, want)
    assert off_edge == 0, f"{off_edge} pixels differ away from any edge"
    assert fraction <= MAX_MISMATCH_FRACTION


def test_pick_returns_the_marble_under_the_pixel(make_view):
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    want = reference(cam, x, radius)
    for i in range(6):
        rows, cols = np.nonzero(want == i)
        k = len(rows) // 2
        index, point = view.pick(cols[k] + 0.5, rows[k] + 0.5)
        assert index == i
        assert np.linalg.norm(point - x[i]) == pytest.approx(radius[i])
        # The hit is on the side facing the camera.
        assert (point - x[i]) @ (cam.eye() - x[i]) > 0
    rows, cols = np.nonzero(want == -1)
    assert view.pick(cols[0] + 0.5, rows[0] + 0.5) == (-1, None)


def test_changing_marble_count_reuses_and_grows_the_buffer(make_view):
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    render(view)
    cap = view._link.renderer._impostors.capacity
    assert cap >= 6
    # Fewer marbles: the same buffer, and no stale marble left on screen.
    view.set_marbles(x[:2], radius[:2], colour[:2])
    got = classify(render(view), PALETTE)
    assert view._link.renderer._impostors.capacity == cap
    fraction, off_edge = compare(got, reference(cam, x[:2], radius[:2]))
    assert off_edge == 0 and fraction <= MAX_MISMATCH_FRACTION
    # Many more: grows once, geometrically.
    rng = np.random.default_rng(3)
    big = rng.uniform(-0.5, 0.5, (5000, 3))
    view.set_marbles(big, np.full(5000, 0.01), np.tile(PALETTE[:1], (5000, 1)))
    render(view)
    assert view._link.renderer._impostors.capacity >= 5000
    view.set_marbles(x, radius, colour)
    got = classify(render(view), PALETTE)
    fraction, off_edge = compare(got, reference(cam, x, radius))
    assert off_edge == 0 and fraction <= MAX_MISMATCH_FRACTION


def test_a_frames_float32_positions_reach_the_renderer_as_they_are(make_view):
    """No float64 round trip between the frame and the shader's float32 instance buffer: the
    frame's own array is what a rendering takes."""
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    x32 = np.array(x, dtype=np.float32)
    x32.flags.writeable = False  # as lab.session.frame hands it over
    view.set_marbles(x32, radius, colour)
    drawn = view._scene().x
    assert drawn.dtype == np.float32 and np.shares_memory(drawn, x32)
    got = classify(render(view), PALETTE)
    fraction, off_edge = compare(got, reference(cam, x, radius))
    assert off_edge == 0 and fraction <= MAX_MISMATCH_FRACTION


def send_mouse(view, kind, pos, button, buttons, modifiers=Qt.KeyboardModifier.NoModifier):
    p = QPointF(*pos)
    ev = QMouseEvent(kind, p, view.mapToGlobal(p), button, buttons, modifiers)
    QApplication.sendEvent(view, ev)


def test_ctrl_drag_emits_drag_signals_on_a_camera_facing_plane(make_view, qtbot):
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    want = reference(cam, x, radius)
    rows, cols = np.nonzero(want == 0)
    start = (cols[len(cols) // 2] + 0.5, rows[len(rows) // 2] + 0.5)
    _, grab = view.pick(*start)
    ctrl, left = Qt.KeyboardModifier.ControlModifier, Qt.MouseButton.LeftButton
    started, moved, ended = [], [], []
    view.dragStarted.connect(started.append)
    view.dragMoved.connect(lambda i, p: moved.append((i, p)))
    view.dragEnded.connect(ended.append)
    azimuth = cam.azimuth
    send_mouse(view, QEvent.Type.MouseButtonPress, start, left, left, ctrl)
    end = (start[0] + 30, start[1] - 20)
    send_mouse(view, QEvent.Type.MouseMove, end, Qt.MouseButton.NoButton, left, ctrl)
    send_mouse(view, QEvent.Type.MouseButtonRelease, end, left, Qt.MouseButton.NoButton, ctrl)
    assert started == [0] and ended == [0]
    assert len(moved) == 1 and moved[0][0] == 0
    target = moved[0][1]
    assert isinstance(target, np.ndarray) and target.shape == (3,)
    _, _, fwd = view.camera.basis()
    assert (target - grab) @ fwd == pytest.approx(0.0, abs=1e-9)   # on the grab plane
    origin, d = view.camera.ray(*end, W, H)
    off = (target - origin) - ((target - origin) @ d) * d
    assert np.linalg.norm(off) < 1e-9                               # under the cursor
    assert view.camera.azimuth == azimuth                           # no orbit meanwhile


def test_plain_drags_move_the_camera_and_ctrl_on_empty_space_does_not_drag(make_view):
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = flat_view(make_view, x, radius, colour)
    started = []
    view.dragStarted.connect(started.append)
    left, right = Qt.MouseButton.LeftButton, Qt.MouseButton.RightButton
    none = Qt.MouseButton.NoButton
    az, el = view.camera.azimuth, view.camera.elevation
    send_mouse(view, QEvent.Type.MouseButtonPress, (120, 90), left, left)
    send_mouse(view, QEvent.Type.MouseMove, (140, 100), none, left)
    send_mouse(view, QEvent.Type.MouseButtonRelease, (140, 100), left, none)
    assert view.camera.azimuth < az and view.camera.elevation > el
    target = view.camera.target.copy()
    send_mouse(view, QEvent.Type.MouseButtonPress, (120, 90), right, right)
    send_mouse(view, QEvent.Type.MouseMove, (100, 90), none, right)
    send_mouse(view, QEvent.Type.MouseButtonRelease, (100, 90), right, none)
    r, _, _ = view.camera.basis()
    assert (view.camera.target - target) @ r > 0    # dragged left: the scene follows
    distance = view.camera.distance
    wheel = QWheelEvent(QPointF(120, 90), view.mapToGlobal(QPointF(120, 90)), QPoint(0, 0),
                        QPoint(0, 120), none, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view, wheel)
    assert view.camera.distance == pytest.approx(distance * view.camera.ZOOM_PER_STEP)
    # Ctrl+left on the background orbits instead of dragging nothing.
    ctrl = Qt.KeyboardModifier.ControlModifier
    send_mouse(view, QEvent.Type.MouseButtonPress, (2, 2), left, left, ctrl)
    send_mouse(view, QEvent.Type.MouseButtonRelease, (2, 2), left, none, ctrl)
    assert started == []


CONTAINERS = [
    {"kind": "sphere", "center": [0.0, 0.0, 1.0], "radius": 1.0},
    {"kind": "sphere", "center": [0.0, 0.0, 1.0], "radius": 1.0, "planar": True},
    {"kind": "floor", "height": 0.0},
    {"kind": "box", "center": [0.0, 0.0], "half_width": 0.5, "floor": 0.0, "height": 0.8},
    {"kind": "tube", "center": [0.0, 0.0], "radius": 0.12, "floor": 0.0, "height": 1.5},
    {"kind": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.5, 0.0, 0.866]},
]


@pytest.mark.parametrize("container", CONTAINERS, ids=lambda c: c["kind"] + (
    "-planar" if c.get("planar") else ""))
def test_every_container_draws_shaded_marbles(make_view, container):
    """Each container kind draws without a GL error, frames the scene, and the marbles show
    shaded (several tones of one colour) with the container drawn around them."""
    view = make_view()
    view.set_container(container)
    planar = bool(container.get("planar"))
    x = np.array([[0.0, 0.0, 0.1], [0.05, 0.0, 0.3]])
    if container["kind"] == "sphere":
        x = np.array([[0.0, 0.0, 0.15], [0.3, 0.0, 0.3]])
    view.set_marbles(x, np.full(2, 0.1), np.array([[0.9, 0.2, 0.1]] * 2, dtype=np.float32))
    rgb = render(view).astype(int)
    reddish = (rgb[..., 0] > rgb[..., 1] + 40) & (rgb[..., 0] > rgb[..., 2] + 40)
    assert reddish.sum() > 100, "marbles not visible"
    tones = np.unique(rgb[reddish][:, 0] // 16)
    assert len(tones) >= 4, "marbles look flat: no shading"
    assert len(np.unique(rgb.reshape(-1, 3), axis=0)) > 50
    if planar:
        _, _, fwd = view.camera.basis()
        np.testing.assert_allclose(fwd, [0, 1, 0], atol=1e-12)


def test_a_broken_shader_reports_gl_failed_instead_of_raising(make_view, qtbot, monkeypatch,
                                                               capsys):
    original = shaders.source

    def broken(name):
        if name == "marble.frag":
            return "#version 330 core\nvoid main() { this is not glsl; }\n"
        return original(name)

    monkeypatch.setattr(shaders, "source", broken)
    view = MarbleView()
    qtbot.addWidget(view)
    view.resize(W, H)
    with qtbot.waitSignal(view.glFailed, timeout=5000) as blocker:
        view.show()
    message = blocker.args[0]
    assert "marble.frag" in message and "compile" in message
    assert "\n" not in message
    assert message in capsys.readouterr().err
    # It keeps working as a widget: repaints, new frames and picking do not raise.
    view.set_marbles(np.zeros((1, 3)), [0.1], [[1, 0, 0]])
    img = view.grab_frame()
    assert view.failure == message
    assert (image_array(img) == 0).all()   # black, the size of the widget
    assert (img.width(), img.height()) == (W, H)


def test_a_too_old_opengl_reports_gl_failed(make_view, qtbot, monkeypatch):
    monkeypatch.setattr(glsl, "REQUIRED_GL", (99, 0))
    view = MarbleView()
    qtbot.addWidget(view)
    view.resize(W, H)
    with qtbot.waitSignal(view.glFailed, timeout=5000) as blocker:
        view.show()
    assert "OpenGL 99.0 core is required" in blocker.args[0]


def test_switching_to_a_floor_scene_frames_its_own_marbles(make_view):
    view = make_view()
    view.set_container(CONTAINERS[0])
    view.set_marbles(np.array([[0.0, 0.0, 0.2]]), [0.1], [[1, 0, 0]])
    render(view)
    # The new scene's container arrives before its first frame: the camera must not stay on
    # the old marbles.
    view.set_container({"kind": "floor", "height": 0.0})
    new = np.array([[5.0, 5.0, 0.1], [5.0, 5.0, 0.3]])
    view.set_marbles(new, [0.1, 0.1], [[0, 1, 0], [0, 0, 1]])
    np.testing.assert_allclose(view.camera.target, [5.0, 5.0, 0.2], atol=1e-9)
    assert view.camera.scene_radius < 1.0
    render(view)


def test_a_tilted_plane_is_seen_from_the_side_and_followed(make_view):
    """An incline is framed from the side (downhill to the right), and the camera follows its
    marble as it rolls away, keeping the user's angles and distance."""
    view = make_view()
    normal = np.array([0.5, 0.0, np.sqrt(0.75)])
    view.set_container({"kind": "plane", "point": [0.0, 0.0, 0.0], "normal": normal.tolist()})
    view.set_marbles(0.1 * normal[None], [0.1], [[1, 0, 0]])
    right, _, _ = view.camera.basis()
    np.testing.assert_allclose(right, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(view.camera.target, 0.1 * normal, atol=1e-12)
    view.camera.orbit(20, 5)
    angles = (view.camera.azimuth, view.camera.elevation, view.camera.distance)
    down = np.array([np.sqrt(0.75), 0.0, -0.5])  # along the plane, downhill
    far = 0.1 * normal + 3.0 * down
    view.set_marbles(far[None], [0.1], [[1, 0, 0]])
    np.testing.assert_allclose(view.camera.target, far, atol=1e-12)
    assert (view.camera.azimuth, view.camera.elevation, view.camera.distance) == angles
    rgb = render(view).astype(int)
    reddish = (rgb[..., 0] > rgb[..., 1] + 40) & (rgb[..., 0] > rgb[..., 2] + 40)
    assert reddish.sum() > 100   # still in view


def test_the_same_container_again_keeps_the_camera(make_view):
    view = make_view()
    view.set_container({"kind": "sphere", "center": np.array([0.0, 0.0, 1.0]), "radius": 1.0})
    view.camera.orbit(30, 10)
    azimuth = view.camera.azimuth
    # A reset of the same scene resends its container (here with lists instead of arrays).
    view.set_container({"kind": "sphere", "center": [0.0, 0.0, 1.0], "radius": 1.0})
    assert view.camera.azimuth == azimuth
    view.set_container({"kind": "sphere", "center": [0.0, 0.0, 1.0], "radius": 2.0})
    assert view.camera.azimuth != azimuth
    assert view.camera.scene_radius == 2.0
    render(view)


def test_nan_and_empty_frames_are_harmless(make_view):
    """A diverged solver can send NaN or far-flung positions; a scene can be empty. Neither may
    break the camera, the drawing or picking."""
    view = make_view()
    view.set_container({"kind": "floor", "height": 0.0})
    x = np.array([[0.0, 0.0, 0.1], [np.nan, 0.0, 0.1], [1e9, 0.0, 0.0]])
    view.set_marbles(x, np.full(3, 0.1), np.full((3, 3), 0.5))
    view.reset_camera()
    assert np.all(np.isfinite(view.camera.view_matrix()))
    render(view)
    view.pick(W / 2, H / 2)
    view.set_marbles(np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)))
    rgb = render(view)
    assert rgb.std() > 0   # the floor and background are still drawn
    assert view.pick(W / 2, H / 2) == (-1, None)


def test_no_context_at_all_reports_gl_failed(qtbot, monkeypatch):
    """Mesa always grants a context here, so the case of Qt failing to create one is staged."""
    monkeypatch.setattr(renderer, "create_context", lambda fmt, parent: None)
    view = MarbleView()
    qtbot.addWidget(view)
    view.resize(W, H)
    with qtbot.waitSignal(view.glFailed, timeout=5000) as blocker:
        view.show()
    assert blocker.args[0] == "could not create an OpenGL 3.3 core context"


def test_soft_shadow_edges_on_the_marbles_are_smooth_not_stair_stepped(make_view):
    """A small marble shadows a big one. With one filtered lookup of the 512-texel shadow map
    the shadow's edge steps from texel to texel (stair-stepped); four lookups on a
    rotated grid (SOFT_SHADOWS) spread it over about three texels. The darkening the shadow
    causes is the same in sum; its steepest change across the receiver drops by a third."""
    from app.view.renderer import _LIGHT_DIR

    view = make_view()
    x = np.array([[0.0, 0.0, 0.0], 0.9 * _LIGHT_DIR + [0.12, 0.0, 0.0]])
    radius = np.array([0.5, 0.18])
    view.set_marbles(x, radius, np.array([[0.8, 0.8, 0.8], [0.8, 0.2, 0.2]], dtype=np.float32))
    cam = Camera(target=(0.0, 0.0, 0.2), distance=1.6, azimuth=-60.0, elevation=35.0,
                 fov_y=30.0, scene_radius=1.0)
    view.camera = cam
    soft = render(view).astype(float)
    view.soft_shadows = False
    hard = render(view).astype(float)
    view.shadows = False
    unshadowed = render(view).astype(float)
    idx, _ = ray_spheres(cam.eye(), cam.pixel_rays(W, H).reshape(-1, 3), x, radius)
    receiver = (idx == 0).reshape(H, W)
    for _ in range(3):  # away from its silhouette, whose edge is no shadow's
        receiver &= ~edge_mask(receiver)
    steepest = {}
    for name, image in (("soft", soft), ("hard", hard)):
        darkening = (unshadowed - image).sum(axis=-1)
        gy, gx = np.gradient(darkening)
        steepest[name] = np.hypot(gx, gy)[receiver].max()
        assert darkening[receiver].sum() > 5e5  # a real shadow on the receiver
    assert steepest["soft"] < 0.75 * steepest["hard"], steepest
    assert abs((unshadowed - soft)[receiver].sum() / (unshadowed - hard)[receiver].sum() - 1) < 0.03
