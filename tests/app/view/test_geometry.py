"""The view's numpy geometry: meshes, the impostor polygon, the scissor rectangle and framing."""
import numpy as np
import pytest

from app.view.camera import Camera
from app.view.geometry import (PLANE_VIEW_RADIUS, box_walls_mesh, checker_period,
                               container_bounds, cylinder_mesh, disk_mesh, floor_height,
                               impostor_polygon, outward, plane_basis, plane_model, screen_rect,
                               slope_azimuth, sphere_mesh, torus_mesh)
from app.view.picking import ray_spheres


@pytest.mark.parametrize("mesh", [sphere_mesh(), cylinder_mesh(), disk_mesh(), torus_mesh(0.1),
                                  box_walls_mesh()],
                         ids=["sphere", "cylinder", "disk", "torus", "box"])
def test_outward_turns_every_triangle_towards_its_normals(mesh):
    verts, idx = mesh
    tri = outward(verts, idx).reshape(-1, 3)
    p = verts[:, :3].astype(np.float64)
    face = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
    area = np.linalg.norm(face, axis=1)
    facing = np.einsum("ij,ij->i", face, verts[tri, 3:6].sum(axis=1))
    assert (facing[area > 1e-12] > 0).all()
    assert sorted(map(tuple, np.sort(tri, axis=1))) == sorted(
        map(tuple, np.sort(idx.reshape(-1, 3), axis=1)))   # the same triangles


def test_impostor_polygon_circumscribes_the_unit_circle():
    """Every edge of the octagon is tangent to the unit circle, so it covers the circle."""
    strip = impostor_polygon().reshape(-1, 2)
    ring = strip[np.argsort(np.arctan2(strip[:, 1], strip[:, 0]))].astype(np.float64)
    a, b = ring, np.roll(ring, -1, axis=0)
    edge = b - a
    distance = np.abs(a[:, 0] * edge[:, 1] - a[:, 1] * edge[:, 0]) / np.linalg.norm(edge, axis=1)
    np.testing.assert_allclose(distance, 1.0, atol=1e-6)


def test_screen_rect_holds_every_marble_and_none_behind_the_eye():
    cam = Camera(target=(0, 0, 0), distance=3.0, azimuth=-60, elevation=20, fov_y=50,
                 aspect=320 / 200)
    viewproj = cam.projection_matrix() @ cam.view_matrix()
    x = np.array([[0.3, -0.2, 0.1], [-0.4, 0.3, 0.2], [np.nan, 0.0, 0.0]])
    radius = np.array([0.1, 0.2, 0.1])
    x0, y0, w, h = screen_rect(viewproj, x, radius, 320, 200)
    rays = cam.pixel_rays(320, 200)
    idx, _ = ray_spheres(cam.eye(), rays.reshape(-1, 3), x[:2], radius[:2])
    rows, cols = np.nonzero(idx.reshape(200, 320) >= 0)
    gl_rows = 199 - rows   # glScissor counts rows from the bottom
    assert x0 <= cols.min() and cols.max() < x0 + w
    assert y0 <= gl_rows.min() and gl_rows.max() < y0 + h
    assert w * h < 320 * 200
    assert screen_rect(viewproj, cam.eye()[None], np.array([0.5]), 320, 200) is None


def test_framing_and_floor_per_container_kind():
    x = np.array([[0.0, 0.0, 0.5], [0.0, 0.0, np.nan]])
    radius = np.array([0.1, 0.1])
    bowl = {"kind": "sphere", "center": [0.0, 0.0, 1.0], "radius": 1.0}
    centre, r = container_bounds(bowl, x, radius)
    np.testing.assert_allclose(centre, [0, 0, 1])
    assert r == 1.0
    assert floor_height(bowl, x, radius) == 0.0
    tube = {"kind": "tube", "center": [0.0, 0.0], "radius": 0.1, "floor": 0.2, "height": 1.0}
    centre, r = container_bounds(tube, x, radius)
    np.testing.assert_allclose(centre, [0, 0, 0.7])
    assert r == pytest.approx(np.hypot(0.1, 0.5))
    assert floor_height(tube, x, radius) == 0.2
    # A floor frames the finite marbles only, down to the floor.
    centre, r = container_bounds({"kind": "floor", "height": 0.0}, x, radius)
    assert np.isfinite(centre).all() and 0.3 < r < 1.0
    assert floor_height(None, x, radius) == pytest.approx(0.4)
    assert checker_period(1.0) == pytest.approx(0.1)
    assert checker_period(0.025) == pytest.approx(0.002)


@pytest.mark.parametrize("normal", [[0, 0, 1], [0.5, 0, 0.866], [0.95, 0.1, 0.2], [0, -1, 0.3]])
def test_a_plane_disk_lies_on_the_plane_around_the_marbles(normal):
    """plane_basis is orthonormal and right-handed with the unit normal last (the identity for
    a level floor); plane_model puts the unit disk on the plane, centred on the foot of the
    given centre, scaled to the radius, its normal along the plane's."""
    basis = plane_basis(normal)
    np.testing.assert_allclose(basis @ basis.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(basis) == pytest.approx(1.0)
    n = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    np.testing.assert_allclose(basis[2], n, atol=1e-12)
    point, centre = np.array([0.3, -0.2, 0.1]), np.array([1.0, 2.0, 3.0])
    m = plane_model(point, normal, centre, 2.5)
    rim = (m @ np.array([[np.cos(a), np.sin(a), 0.0, 1.0] for a in np.linspace(0, 6, 7)]).T).T
    assert np.allclose((rim[:, :3] - point) @ n, 0.0)                  # on the plane
    foot = m[:3, 3]
    assert (foot - point) @ n == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(np.cross(centre - foot, n), 0.0, atol=1e-12)  # below the centre
    np.testing.assert_allclose(np.linalg.norm(rim[:, :3] - foot, axis=1), 2.5)
    disk_normal = m[:3, :3] @ [0.0, 0.0, 1.0]
    np.testing.assert_allclose(disk_normal / np.linalg.norm(disk_normal), n, atol=1e-12)
    if normal == [0, 0, 1]:
        np.testing.assert_allclose(basis, np.eye(3))


def test_a_slope_is_seen_from_the_side_downhill_to_the_right():
    for normal in ([0.5, 0.0, 0.866], [-0.3, 0.4, 0.8], [0.0, -0.7, 0.7]):
        cam = Camera(target=(0, 0, 0), distance=2.0, azimuth=slope_azimuth(normal),
                     elevation=20.0)
        right, _, forward = cam.basis()
        downhill = np.array([normal[0], normal[1], 0.0])
        downhill /= np.linalg.norm(downhill)
        np.testing.assert_allclose(right, downhill, atol=1e-12)
        assert abs(forward @ normal) < 0.95   # not looking down the normal
    assert slope_azimuth([0.0, 0.0, 2.0]) is None


def test_a_plane_frames_its_marbles_at_least_its_view_radius():
    plane = {"kind": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.5, 0.0, 0.866]}
    one = np.array([[0.05, 0.0, 0.087]])
    centre, r = container_bounds(plane, one, np.array([0.1]))
    np.testing.assert_allclose(centre, one[0])
    assert r == PLANE_VIEW_RADIUS
    spread = np.array([[0.0, 0.0, 0.1], [4.0, 0.0, -2.0]])
    centre, r = container_bounds(plane, spread, np.array([0.1, 0.1]))
    assert r > 2.0 and centre[0] == pytest.approx(2.0)
    centre, r = container_bounds(plane, np.zeros((0, 3)), np.zeros(0))
    np.testing.assert_allclose(centre, [0, 0, 0])
    assert r == PLANE_VIEW_RADIUS
