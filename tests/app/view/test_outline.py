"""The picked marble's outline: the ring's geometry against the tangent cone of the sphere, and
the rendered ring against a numpy ray cast of the marble's silhouette, over the marble in
front of it, and nowhere when nothing is picked."""
from __future__ import annotations

import numpy as np
from scipy.ndimage import distance_transform_edt

from app.view.camera import Camera
from app.view.outline import OUTLINE_COLOUR, OUTLINE_PIXELS, SEGMENTS, outline_ring
from app.view.picking import ray_spheres
from tests.app.view.test_widget import (H, W, fixed_camera, fixed_scene, make_view,  # noqa: F401
                                        reference, render)

RGB = np.round(255 * np.array(OUTLINE_COLOUR[:3])).astype(int)


def outline_pixels(image: np.ndarray) -> np.ndarray:
    """(h, w) bool: pixels of the outline's colour."""
    return np.abs(image.astype(int) - RGB).max(axis=-1) <= 2


def to_pixels(cam: Camera, points: np.ndarray) -> np.ndarray:
    clip = np.c_[points, np.ones(len(points))] @ (cam.projection_matrix() @ cam.view_matrix()).T
    ndc = clip[:, :2] / clip[:, 3:]
    return np.c_[(ndc[:, 0] + 1) / 2 * W, (1 - ndc[:, 1]) / 2 * H]


def test_the_ring_starts_on_the_silhouette_and_is_a_few_pixels_wide():
    cam = fixed_camera()
    cam.aspect = W / H
    centre, radius = np.array([0.3, -0.2, 0.4]), 0.35
    ring = outline_ring(centre, radius, cam.eye(), cam.projection_matrix() @ cam.view_matrix(),
                        (W, H))
    assert ring.shape == (6 * SEGMENTS, 6) and ring.dtype == np.float32
    points = ring[:, :3].astype(float)
    # A point's line of sight passes the centre at the radius (tangent: on the silhouette)
    # for the inner edge, farther out for the outer one.
    sight = points - cam.eye()
    sight /= np.linalg.norm(sight, axis=1)[:, None]
    to_centre = centre - cam.eye()
    miss = np.linalg.norm(to_centre - (sight @ to_centre)[:, None] * sight, axis=1)
    inner = np.isclose(miss, radius, rtol=1e-5)
    assert inner.sum() == 3 * SEGMENTS and (miss[~inner] > radius * 1.001).all()
    # Outer and inner corners of a quad (inner, outer, ...): OUTLINE_PIXELS apart on screen,
    # within what the ellipse of the circle's image makes of it.
    quads = points.reshape(SEGMENTS, 6, 3)
    apart = np.linalg.norm(to_pixels(cam, quads[:, 1]) - to_pixels(cam, quads[:, 0]), axis=1)
    assert (apart >= 0.95 * OUTLINE_PIXELS).all() and (apart <= 1.5 * OUTLINE_PIXELS).all()


def test_no_ring_from_inside_behind_or_for_nan():
    cam = fixed_camera()
    vp = cam.projection_matrix() @ cam.view_matrix()
    assert outline_ring(cam.eye() + 0.01, 0.5, cam.eye(), vp, (W, H)) is None
    behind = cam.eye() - 3.0 * cam.basis()[2]
    assert outline_ring(behind, 0.2, cam.eye(), vp, (W, H)) is None
    assert outline_ring([np.nan, 0.0, 0.0], 0.2, cam.eye(), vp, (W, H)) is None


def test_the_picked_marble_is_outlined_around_its_silhouette(make_view):  # noqa: F811
    """Marble 5, partly hidden behind marble 0: the ring of the outline's colour surrounds its
    whole silhouette as a numpy ray cast gives it (the part behind marble 0 too), a few pixels
    wide, just outside; nothing else changes; and nothing is outlined without a pick."""
    cam = fixed_camera()
    x, radius, colour = fixed_scene(cam)
    view = make_view(shadows=False)
    view.set_marbles(x, radius, colour)
    view.camera = fixed_camera()
    plain = render(view)
    assert not outline_pixels(plain).any()
    view.set_picked(5)
    picked = render(view)
    ring = outline_pixels(picked)
    rays = cam.pixel_rays(W, H).reshape(-1, 3)
    alone = ray_spheres(cam.eye(), rays, x[5:], radius[5:])[0].reshape(H, W) >= 0
    away = distance_transform_edt(~alone)  # px from marble 5's whole silhouette
    inside = distance_transform_edt(alone)  # px from outside it
    # Outside the silhouette but for the rounding of pixel centres on its edge.
    assert (inside[ring] <= 1.0).all() and (away[ring] <= OUTLINE_PIXELS + 1.5).all()
    band = (away >= 1.5) & (away <= OUTLINE_PIXELS - 0.5)
    assert band.sum() > 100 and ring[band].mean() > 0.97
    in_front = reference(cam, x, radius) == 0
    assert (ring & in_front).sum() > 20  # drawn over marble 0, which hides part of 5
    changed = np.abs(picked.astype(int) - plain.astype(int)).max(axis=-1) > 0
    assert not (changed & ~ring & (away > OUTLINE_PIXELS + 1.5)).any()
    view.set_picked(-1)
    assert not outline_pixels(render(view)).any()
    view.set_picked(len(x))  # a marble the frame does not have: nothing, no failure
    assert not outline_pixels(render(view)).any()
