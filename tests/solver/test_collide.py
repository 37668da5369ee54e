"""The grid broadphase finds exactly the pairs an O(n^2) search finds, with correct geometry."""
import numpy as np
import pytest

from solver.collide import MARGIN_CAP_DIAMETERS, MARGIN_EPS_FRACTION, Collider
from solver.world import container_geometry


def brute_force_pairs(x, v, radius, h):
    speed = np.linalg.norm(v, axis=1)
    eps = MARGIN_EPS_FRACTION * radius.min()
    cap = MARGIN_CAP_DIAMETERS * 2 * radius.max()
    out = set()
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            g = np.linalg.norm(x[j] - x[i]) - radius[i] - radius[j]
            if g < min(h * (speed[i] + speed[j]) + eps, cap):
                out.add((i, j))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_grid_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 300
    x = rng.uniform(-1, 1, size=(n, 3))
    v = rng.normal(scale=2.0, size=(n, 3))
    radius = rng.uniform(0.03, 0.08, size=n)
    geo = container_geometry({"kind": "sphere", "center": [0, 0, 0], "radius": 5.0})
    contacts = Collider(geo, capacity=8).collide(x, v, radius, 0.02)  # forces regrowth
    pairs = {(int(a), int(b)) for a, b in zip(contacts.body_a, contacts.body_b) if a >= 0}
    assert pairs == brute_force_pairs(x, v, radius, 0.02)
    marble = contacts.body_a >= 0
    d = x[contacts.body_b[marble]] - x[contacts.body_a[marble]]
    dist = np.linalg.norm(d, axis=1)
    np.testing.assert_allclose(contacts.normal[marble], d / dist[:, None], atol=1e-12)
    np.testing.assert_allclose(contacts.gap[marble], dist - radius[contacts.body_a[marble]]
                               - radius[contacts.body_b[marble]], atol=1e-12)
    assert len(set(contacts.key.tolist())) == contacts.m


@pytest.mark.parametrize("container, x, gap, normal", [
    ({"kind": "sphere", "center": [0, 0, 1], "radius": 1.0}, [0, 0, 0.1], 0.0, [0, 0, 1]),
    ({"kind": "floor", "height": 0.5}, [3, 4, 0.55], -0.05, [0, 0, 1]),
    ({"kind": "tube", "center": [1, 0], "radius": 0.2, "floor": -9}, [1.12, 0, 0], -0.02,
     [-1, 0, 0]),
    ({"kind": "box", "center": [0, 0], "half_width": 1.0, "floor": -9}, [0.9, 0, 0], 0.0,
     [-1, 0, 0]),
])
def test_wall_contacts(container, x, gap, normal):
    c = Collider(container_geometry(container)).collide(
        np.array([x], float), np.zeros((1, 3)), np.array([0.1]), 0.02)
    assert c.m == 1 and c.body_a[0] == -1 and c.body_b[0] == 0
    assert c.gap[0] == pytest.approx(gap, abs=1e-12)
    np.testing.assert_allclose(c.normal[0], normal, atol=1e-12)


def test_far_pairs_get_no_contact_and_fast_ones_do():
    geo = container_geometry({"kind": "floor", "height": -100.0})
    x = np.array([[0.0, 0, 0], [0.5, 0, 0]])  # gap 0.3
    radius = np.full(2, 0.1)
    assert Collider(geo).collide(x, np.zeros((2, 3)), radius, 0.02).m == 0
    v = np.array([[8.0, 0, 0], [-8.0, 0, 0]])  # closes 0.32 m in one step: speculative contact
    c = Collider(geo).collide(x, v, radius, 0.02)
    assert c.m == 1 and c.gap[0] == pytest.approx(0.3)
