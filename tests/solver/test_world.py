"""World state and container geometry."""
from __future__ import annotations

import json

import numpy as np
import pytest

from solver.world import DT, GRAVITY, World, container_geometry, marble_mass


def test_a_world_is_contiguous_float64_and_broadcasts_per_marble_values():
    world = World([[0, 0, 1], [0, 0, 2]], np.zeros((2, 3)), 0.1, 0.5, {"kind": "floor",
                                                                        "height": 0.0})
    for a in (world.x, world.v, world.radius, world.inv_mass, world.gravity):
        assert a.dtype == np.float64 and a.flags.c_contiguous
    assert world.radius.shape == (2,) and world.dt == DT.default
    np.testing.assert_array_equal(world.gravity, GRAVITY)
    assert world.colour.shape == (2, 3) and world.colour.dtype == np.float32


def test_mass_energies_and_a_fixed_marble():
    world = World([[0, 0, 1], [0, 0, 2]], [[1, 0, 0], [0, 0, 0]], 0.1, [0.5, 0.0],
                  {"kind": "floor", "height": 0.0})
    assert world.mass.tolist() == [2.0, np.inf]
    assert world.kinetic_energy() == pytest.approx(0.5 * 2.0 * 1.0)
    assert world.potential_energy() == pytest.approx(2.0 * 9.81 * 1.0)  # the fixed one: none
    copy = world.copy()
    copy.x[0, 0] = 5.0
    assert world.x[0, 0] == 0.0 and json.dumps(copy.container) == json.dumps(world.container)


def test_glass_marble_mass():
    assert marble_mass(0.1) == pytest.approx(2500 * 4 / 3 * np.pi * 1e-3)


@pytest.mark.parametrize("container, planes, spheres, tubes", [
    ({"kind": "floor", "height": 1.0}, [[0, 0, 1, 0, 0, 1]], [], []),
    ({"kind": "sphere", "center": [0, 0, 1], "radius": 2}, [], [[0, 0, 1, 2]], []),
    ({"kind": "tube", "center": [1, 2], "radius": 0.5, "floor": 0, "height": 3},
     [[1, 2, 0, 0, 0, 1]], [], [[1, 2, 0.5]]),
])
def test_containers_become_plain_arrays(container, planes, spheres, tubes):
    geo = container_geometry(container)
    np.testing.assert_array_equal(geo.planes.reshape(-1, 6), np.reshape(planes, (-1, 6)))
    np.testing.assert_array_equal(geo.spheres.reshape(-1, 4), np.reshape(spheres, (-1, 4)))
    np.testing.assert_array_equal(geo.tubes.reshape(-1, 3), np.reshape(tubes, (-1, 3)))


def test_a_box_has_a_floor_and_four_inward_walls():
    geo = container_geometry({"kind": "box", "center": [0, 0], "half_width": 1, "floor": 0,
                              "height": 2})
    assert geo.n_features == 5
    normals = geo.planes[:, 3:]
    np.testing.assert_array_equal(normals.sum(axis=0), [0, 0, 1])  # the walls cancel out
    for point, normal in zip(geo.planes[:, :3], normals):
        assert np.dot(np.zeros(3) + [0, 0, 0.5] - point, normal) > 0  # the centre is inside


@pytest.mark.parametrize("container, fragment", [
    ({"kind": "cone"}, "unknown container kind 'cone'"),
    ({"kind": "sphere", "center": [0, 0], "radius": 1}, "'center' must be 3 finite numbers"),
    ({"kind": "sphere", "center": [0, 0, 0], "radius": -1}, "'radius' must be a positive"),
    ({"kind": "floor", "height": float("nan")}, "'height' must be a finite number"),
    # What a JSON file can hold that is not a number: null, true, a string, a list.
    ({"kind": "floor", "height": None}, "'height' must be a finite number, got None"),
    ({"kind": "floor", "height": True}, "'height' must be a finite number, got True"),
    ({"kind": "floor", "height": "0"}, "'height' must be a finite number, got '0'"),
    ({"kind": "sphere", "center": [0, None, 1], "radius": 1}, "'center' must be 3 finite"),
    ({"kind": "sphere", "center": [0, False, 1], "radius": 1}, "'center' must be 3 finite"),
    ({"kind": "tube", "center": [0, 0], "radius": 0.1, "floor": [0]}, "'floor' must be"),
    ({"kind": "box", "center": [0, 0], "half_width": 1, "floor": 0, "height": -1},
     "'height' must be a positive"),
    ({"kind": "box", "center": [0, 0], "half_width": 1}, "'floor' is missing"),
    ({"kind": "floor", "height": 0, "radius": 1}, "unknown key 'radius'; valid: kind, height"),
    ({"kind": "floor", "height": 0, "planar": 1}, "'planar' must be true or false"),
    ({"kind": ["sphere"]}, "unknown container kind"),
    ([{"kind": "floor", "height": 0}], "must be an object"),
])
def test_malformed_containers_are_refused(container, fragment):
    with pytest.raises(ValueError, match=fragment):
        container_geometry(container)


def test_outside_container_by_kind():
    from solver.world import outside_container
    x = np.array([[0.0, 0.0, 0.5], [0.0, 0.0, -0.2], [3.0, 0.0, 0.5], [np.nan, 0.0, 0.0]])
    containers = {
        "sphere": ({"kind": "sphere", "center": [0, 0, 0], "radius": 1.0}, [0, 0, 1, 1]),
        "floor": ({"kind": "floor", "height": 0.0}, [0, 1, 0, 1]),
        "box": ({"kind": "box", "center": [0, 0], "half_width": 1.0, "floor": 0.0,
                 "height": 1.0}, [0, 1, 1, 1]),
        "tube": ({"kind": "tube", "center": [0, 0], "radius": 1.0, "floor": 0.0,
                  "height": 1.0}, [0, 1, 1, 1]),
    }
    for kind, (container, expected) in containers.items():
        world = World(x, np.zeros_like(x), 0.1, 1.0, container)
        np.testing.assert_array_equal(outside_container(world), np.array(expected, bool), kind)


def test_largest_resolved_dt_is_a_fall_of_one_radius():
    from solver.world import largest_resolved_dt
    world = World(np.zeros((2, 3)), np.zeros((2, 3)), [0.1, 0.05], 1.0,
                  {"kind": "floor", "height": -1.0})
    h = largest_resolved_dt(world)
    assert 9.81 * h ** 2 == pytest.approx(0.05)
    world.gravity[:] = 0.0
    assert largest_resolved_dt(world) == np.inf


def test_planar_and_height_are_optional():
    for container in ({"kind": "floor", "height": 0.0, "planar": True},
                      {"kind": "tube", "center": [0, 0], "radius": 0.1, "floor": 0.0},
                      {"kind": "box", "center": [0, 0], "half_width": 1, "floor": 0,
                       "planar": False}):
        world = World(np.zeros((1, 3)), np.zeros((1, 3)), 0.1, 1.0, container)
        assert world.planar == container.get("planar", False)
