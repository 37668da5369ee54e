"""The warp of the last image to a moved camera: the plane through the target maps exactly,
an unmoved camera maps onto itself, and a corner behind the camera gives no warp."""
from __future__ import annotations

import numpy as np

from app.view.camera import Camera
from app.view.reproject import plane_quads, to_pixels


def viewproj(cam):
    return cam.projection_matrix() @ cam.view_matrix()


def test_the_target_plane_lands_where_the_new_camera_sees_it():
    cam = Camera(target=(0.0, 0.0, 0.5), distance=3.0)
    cam.aspect = 4 / 3
    size = (400.0, 300.0)
    right, up, _ = cam.basis()
    before = viewproj(cam)
    same = plane_quads(before, before, cam.target, right, up, 0.5, size)
    np.testing.assert_allclose(same[0], same[1])
    assert np.allclose(to_pixels(before, cam.target[None], size), [[200.0, 150.0]])
    cam.orbit(40, 0)
    old, new = plane_quads(before, viewproj(cam), cam.target, right, up, 0.5, size)
    assert not np.allclose(old, new)
    # a point of the plane, found through the homography of the four corners, is where the
    # new camera projects it
    point = cam.target + 0.2 * right - 0.3 * up
    a = []
    for (x, y), (u, v) in zip(old, new):
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y, -u])
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y, -v])
    h = np.linalg.svd(np.array(a))[2][-1].reshape(3, 3)
    p = h @ np.r_[to_pixels(before, point[None], size)[0], 1.0]
    np.testing.assert_allclose(p[:2] / p[2], to_pixels(viewproj(cam), point[None], size)[0],
                               atol=1e-6)
    cam.zoom(1.0)
    old, new = plane_quads(before, viewproj(cam), cam.target, right, up, 0.5, size)
    assert np.ptp(new[:, 0]) > np.ptp(old[:, 0])  # zoomed in: the square looks larger


def test_a_corner_behind_the_camera_gives_no_warp():
    cam = Camera(target=(0.0, 0.0, 0.0), distance=1.0)
    right, up, _ = cam.basis()
    before = viewproj(cam)
    assert plane_quads(before, before, cam.target, right, up, 50.0, (100.0, 100.0)) is not None
    cam.azimuth += 90.0  # now looking along the plane: half of it is behind the camera
    assert plane_quads(before, viewproj(cam), cam.target, right, up, 50.0,
                       (100.0, 100.0)) is None
