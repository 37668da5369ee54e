"""Numpy ray casts against spheres and planes (picking, dragging), without Qt or OpenGL."""
import math

import numpy as np
import pytest

from app.view.picking import pick_sphere, ray_plane, ray_spheres


def test_ray_spheres_finds_the_nearest_front_surface():
    origin = np.zeros(3)
    centres = np.array([[0, 0, 5.0], [0, 0, 3.0], [0, 0, -2.0], [3, 0, 3]])
    radii = np.array([1.0, 0.5, 1.0, 0.5])
    dirs = np.array([[0, 0, 1.0], [0, 0, -1.0], [1, 0, 0], [1, 0, 1] / np.sqrt(2)])
    idx, t = ray_spheres(origin, dirs, centres, radii)
    assert idx.tolist() == [1, 2, -1, 3]
    assert t[0] == pytest.approx(2.5) and t[1] == pytest.approx(1.0)
    assert np.isinf(t[2])
    # A sphere containing the origin is not hit from inside; one behind is ignored.
    idx, _ = ray_spheres(origin, [[0, 0, 1.0]], [[0, 0, 0.1], [0, 0, -3]], [1.0, 1.0])
    assert idx.tolist() == [-1]


def test_pick_sphere_and_ray_plane():
    i, p = pick_sphere([0, 0, 0], [0, 1, 0], [[0, 4, 0], [0, 2, 0.3]], [0.5, 0.5])
    assert i == 1
    assert np.linalg.norm(p - [0, 2, 0.3]) == pytest.approx(0.5)
    assert pick_sphere([0, 0, 0], [1, 0, 0], [[0, 4, 0]], [0.5]) == (-1, None)
    q = ray_plane([0, 0, 0], [0, 0.6, 0.8], [0, 0, 2], [0, 0, 1])
    np.testing.assert_allclose(q, [0, 1.5, 2.0])
    assert ray_plane([0, 0, 0], [1, 0, 0], [0, 0, 2], [0, 0, 1]) is None
    assert ray_plane([0, 0, 0], [0, 0, -1], [0, 0, 2], [0, 0, 1]) is None
    assert math.isfinite(float(np.sum(q)))
