"""The contact network's ribbons: along their segment, facing the eye, as wide as asked; and
drawn by the view where the segment is, in its colour, with the marbles shrunk."""
from __future__ import annotations

import numpy as np

from app.view import MarbleView
from app.view.camera import Camera
from app.view.network import FLOATS, ribbon_vertices
from app.view.picking import ray_spheres
from lab.session.network import MARBLE_SCALE
from tests.app.view.test_widget import image_array


def test_ribbons_lie_along_their_segments_and_face_the_eye():
    ends = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0], [0.0, 1.0, 2.0]],
                     [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]])  # the last one degenerate
    width = np.array([0.2, 0.4, 0.3])
    colour = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    eye = np.array([0.5, -3.0, 0.0])
    v = ribbon_vertices(ends, width, colour, eye)
    assert v.shape == (12, FLOATS) and v.dtype == np.float32
    for k in range(2):
        tri = v[6 * k:6 * k + 6]
        pos = tri[:, :3].astype(float)
        along = ends[k, 1] - ends[k, 0]
        t = (pos - ends[k, 0]) @ along / (along @ along)
        off = pos - ends[k, 0] - t[:, None] * along
        assert set(np.round(t, 6)) == {0.0, 1.0}  # corners at the two ends
        np.testing.assert_allclose(np.linalg.norm(off, axis=1), width[k] / 2, rtol=1e-6)
        view = eye - ends[k].mean(axis=0)
        assert np.allclose(off @ along, 0.0, atol=1e-6) and np.allclose(off @ view, 0.0,
                                                                         atol=1e-5)
        assert np.all(tri[:, 3:6] == colour[k]) and set(tri[:, 6]) == {-1.0, 1.0}


def test_the_view_draws_the_network_where_the_contacts_are(qtbot):
    view = MarbleView()
    qtbot.addWidget(view)
    view.resize(240, 180)
    view.show()
    qtbot.waitExposed(view)
    x = np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]])
    radius = np.array([0.3, 0.3])
    view.set_marbles(x, radius, np.array([[0.5, 0.5, 0.5]] * 2, dtype=np.float32))
    view.camera = Camera(target=(0.0, 0.0, 0.0), distance=3.0, azimuth=-90.0, elevation=0.0,
                         fov_y=45.0, aspect=240 / 180, scene_radius=1.0)
    plain = image_array(view.grab_frame()).astype(int)
    red = (1.0, 0.0, 0.0)
    view.set_network((x[None], np.array([0.15]), np.array([red], dtype=np.float32)))
    with_network = image_array(view.grab_frame()).astype(int)
    assert view.failure is None
    centre = with_network[90, 120]  # the middle of the segment, between the marbles
    assert centre[0] > 150 and centre[1] < 60 and centre[2] < 60
    assert np.abs(plain[90, 120] - centre).max() > 100
    # The marbles shrink to MARBLE_SCALE: what only their full size covered is not marble.
    cam = view.camera
    rays = cam.pixel_rays(240, 180).reshape(-1, 3)
    full = ray_spheres(cam.eye(), rays, x, radius)[0].reshape(180, 240) >= 0
    small = ray_spheres(cam.eye(), rays, x, MARBLE_SCALE * radius)[0].reshape(180, 240) >= 0
    ring = full & ~small
    ring[80:101] = False  # the ribbon's band
    changed = np.abs(plain - with_network).max(axis=-1) > 12
    assert ring.sum() > 500 and changed[ring].mean() > 0.9
    view.set_network(None)
    assert np.abs(image_array(view.grab_frame()).astype(int) - plain).max() <= 2
