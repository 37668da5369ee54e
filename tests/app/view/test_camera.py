"""Camera maths, without Qt or OpenGL."""
import numpy as np
import pytest

from app.view.camera import MAX_ELEVATION, Camera


def project(cam: Camera, p, width, height):
    """World point -> (pixel x, pixel y, ndc z) through the same matrices OpenGL gets."""
    clip = cam.projection_matrix(width / height) @ cam.view_matrix() @ np.append(p, 1.0)
    ndc = clip[:3] / clip[3]
    return (ndc[0] + 1) * width / 2, (1 - ndc[1]) * height / 2, ndc[2]


def test_view_matrix_puts_eye_at_origin_and_target_straight_ahead():
    cam = Camera(target=(0.3, -0.2, 0.5), distance=2.5, azimuth=37.0, elevation=21.0)
    v = cam.view_matrix()
    np.testing.assert_allclose(v[:3, :3] @ v[:3, :3].T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(v @ np.append(cam.eye(), 1), [0, 0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(v @ np.append(cam.target, 1), [0, 0, -2.5, 1], atol=1e-12)
    # z is up on screen: a point above the target has positive eye-space y.
    assert (v @ np.array([*cam.target + [0, 0, 0.1], 1]))[1] > 0


def test_rays_and_projection_agree():
    """The numpy rays (picking, the pixel-test reference) go through the pixels to which the
    OpenGL matrices project points."""
    cam = Camera(target=(0, 0, 1), distance=3.0, azimuth=-70, elevation=25, fov_y=50)
    w, h = 320, 200
    rng = np.random.default_rng(1)
    for p in rng.uniform(-1, 1, size=(20, 3)) + [0, 0, 1]:
        px, py, z = project(cam, p, w, h)
        assert -1 < z < 1
        origin, d = cam.ray(px, py, w, h)
        off = (p - origin) - ((p - origin) @ d) * d
        assert np.linalg.norm(off) < 1e-9
    _, _, fwd = cam.basis()
    np.testing.assert_allclose(cam.ray(w / 2, h / 2, w, h)[1], fwd, atol=1e-12)
    grid = cam.pixel_rays(w, h)
    assert grid.shape == (h, w, 3)
    np.testing.assert_allclose(grid[0, 0], cam.ray(0.5, 0.5, w, h)[1])
    # Row 0 is the top of the image.
    assert grid[0, w // 2] @ cam.basis()[1] > 0 > grid[-1, w // 2] @ cam.basis()[1]


def test_orbit_turns_about_the_target_and_clamps_elevation():
    cam = Camera(target=(1, 2, 3), distance=2.0, azimuth=10.0, elevation=20.0)
    cam.orbit(50, 0)
    assert cam.azimuth == pytest.approx(10.0 - 50 * Camera.ORBIT_DEG_PER_PIXEL)
    assert cam.elevation == 20.0
    np.testing.assert_allclose(cam.target, [1, 2, 3])
    assert np.linalg.norm(cam.eye() - cam.target) == pytest.approx(2.0)
    cam.orbit(0, 30)
    assert cam.elevation == pytest.approx(20.0 + 30 * Camera.ORBIT_DEG_PER_PIXEL)
    cam.orbit(0, 10_000)
    assert cam.elevation == MAX_ELEVATION
    cam.orbit(0, -20_000)
    assert cam.elevation == -MAX_ELEVATION
    assert np.all(np.isfinite(cam.view_matrix()))


def test_orbit_drag_right_moves_the_eye_left():
    cam = Camera(azimuth=-90.0, elevation=0.0)
    right, _, _ = cam.basis()
    eye0 = cam.eye()
    cam.orbit(10, 0)
    assert (cam.eye() - eye0) @ right < 0


def test_pan_keeps_the_grabbed_point_under_the_cursor():
    cam = Camera(target=(0, 0, 0.5), distance=3.0, azimuth=-50, elevation=30, fov_y=45)
    w, h = 400, 300
    old_target = cam.target.copy()
    dir0 = cam.direction()
    cam.pan(40, -25, h)
    np.testing.assert_allclose(cam.direction(), dir0)   # panning never rotates
    assert cam.distance == 3.0
    px, py, _ = project(cam, old_target, w, h)
    assert px == pytest.approx(w / 2 + 40, abs=1e-6)
    assert py == pytest.approx(h / 2 - 25, abs=1e-6)


def test_zoom_scales_the_distance():
    cam = Camera(distance=4.0)
    t = cam.target.copy()
    cam.zoom(1)
    assert cam.distance == pytest.approx(4.0 * Camera.ZOOM_PER_STEP)
    cam.zoom(-2)
    assert cam.distance == pytest.approx(4.0 / Camera.ZOOM_PER_STEP)
    np.testing.assert_allclose(cam.target, t)
    v = cam.view_matrix()
    assert (v @ np.append(t, 1))[2] == pytest.approx(-cam.distance)


@pytest.mark.parametrize("aspect", [0.5, 1.0, 16 / 9])
def test_frame_fits_the_bounding_sphere(aspect):
    cam = Camera(aspect=aspect)
    centre, r = np.array([0.2, 0.0, 1.0]), 1.0
    cam.frame(centre, r)
    w, h = 1000 * aspect, 1000
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(2000, 3))
    pts = centre + r * pts / np.linalg.norm(pts, axis=1, keepdims=True)
    xs = np.array([project(cam, p, w, h) for p in pts])
    assert np.all((xs[:, 0] > 0) & (xs[:, 0] < w) & (xs[:, 1] > 0) & (xs[:, 1] < h))
    assert np.all((xs[:, 2] > -1) & (xs[:, 2] < 1))      # inside near/far too
    # ... and fills it: more than 70% of the limiting dimension.
    span = max(np.ptp(xs[:, 0]) / w, np.ptp(xs[:, 1]) / h)
    assert span > 0.7


def test_planar_frame_faces_the_xz_plane():
    cam = Camera()
    cam.frame((0, 0, 1), 1.0, planar=True)
    right, up, fwd = cam.basis()
    np.testing.assert_allclose(fwd, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(right, [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(up, [0, 0, 1], atol=1e-12)
