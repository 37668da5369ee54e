"""The grid broadphase finds exactly the pairs an O(n^2) search finds, with correct geometry."""
import numpy as np
import pytest

from solver.collide import (INTERLEAVE, MARGIN_CAP_DIAMETERS, MARGIN_EPS_FRACTION, Collider,
                            key_bound)
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


def brute_force_walls(x, v, radius, h, geo):
    """(feature, marble) pairs within the margin of a plane or sphere wall, by direct formula."""
    speed = np.linalg.norm(v, axis=1)
    eps = MARGIN_EPS_FRACTION * radius.min()
    cap = MARGIN_CAP_DIAMETERS * 2 * radius.max()
    out = set()
    for i in range(len(x)):
        margin = min(h * speed[i] + eps, cap)
        for p, plane in enumerate(geo.planes):
            if np.dot(x[i] - plane[:3], plane[3:]) - radius[i] < margin:
                out.add((p, i))
        for q, sphere in enumerate(geo.spheres):
            if sphere[3] - np.linalg.norm(x[i] - sphere[:3]) - radius[i] < margin:
                out.add((len(geo.planes) + q, i))
    return out


def contact_sets(contacts, n):
    marble = contacts.body_a >= 0
    pairs = {(int(a), int(b)) for a, b in zip(contacts.body_a[marble], contacts.body_b[marble])}
    walls = {(int(k // n), int(b)) for k, b in zip(contacts.key[~marble], contacts.body_b[~marble])}
    return pairs, walls


def clusters(rng, centres, per_cluster):
    """Marbles in small dense clusters around far-apart centres: a sparse bounding box."""
    x = np.concatenate([c + rng.uniform(-0.4, 0.4, size=(per_cluster, 3)) for c in centres])
    return x, rng.normal(scale=0.5, size=x.shape), rng.uniform(0.05, 0.1, size=len(x))


@pytest.mark.parametrize("centres", [
    # Bounding box with far more cells than 8 per marble: cells share buckets (filtered path).
    [[0, 0, 0], [40, 0, 0], [0, 40, 3], [5, 5, 40]],
    # Beyond 2^20 cells along x: coordinates are clamped and far cells merge.
    [[0, 0, 0], [3e5, 0, 0], [6e5, 1, 1]],
], ids=["hashed", "clamped"])
def test_sparse_grids_find_the_brute_force_pairs(centres):
    rng = np.random.default_rng(11)
    x, v, radius = clusters(rng, np.array(centres, float), 60)
    geo = container_geometry({"kind": "floor", "height": -0.3})
    contacts = Collider(geo).collide(x, v, radius, 0.02)
    pairs, walls = contact_sets(contacts, len(x))
    assert pairs == brute_force_pairs(x, v, radius, 0.02)
    assert walls == brute_force_walls(x, v, radius, 0.02, geo)
    assert len(pairs) > 100  # the clusters really are dense enough to test something


@pytest.mark.parametrize("container", [
    {"kind": "sphere", "center": [0, 0, 1], "radius": 1.0},
    {"kind": "box", "center": [0, 0], "half_width": 0.7, "floor": 0.0},
])
def test_wall_contacts_match_the_brute_force_search(container):
    rng = np.random.default_rng(5)
    n = 400
    x = rng.uniform(-0.8, 0.8, size=(n, 3)) + [0, 0, 1.0]
    v = rng.normal(scale=1.0, size=(n, 3))
    radius = np.full(n, 0.1)
    geo = container_geometry(container)
    contacts = Collider(geo).collide(x, v, radius, 0.02)
    pairs, walls = contact_sets(contacts, n)
    assert pairs == brute_force_pairs(x, v, radius, 0.02)
    assert walls == brute_force_walls(x, v, radius, 0.02, geo)


def undeal(m, streams):
    """Positions in the returned arrays of grid-order contacts 0..m-1 (see collide._deal)."""
    length = -(-m // streams)
    position = np.empty(m, dtype=np.int64)
    k = 0
    for j in range(length):
        for s in range(streams):
            c = s * length + j
            if c < m:
                position[c] = k
                k += 1
    return position


def test_contacts_sweep_the_pile_bottom_up():
    """In grid order, every contact belongs to the cell layer of the marble that found it, the
    lower of its two, and layers are visited from the bottom up; the returned order deals that
    sequence from INTERLEAVE runs."""
    rng = np.random.default_rng(2)
    n = 500
    x = rng.uniform(-0.6, 0.6, size=(n, 3)) * [1, 1, 2] + [0, 0, 1.3]
    v = rng.normal(scale=0.3, size=(n, 3))
    radius = np.full(n, 0.1)
    contacts = Collider(container_geometry({"kind": "floor", "height": 0.0})).collide(
        x, v, radius, 0.02)
    # The cell width and layer numbering of the grid, as documented in collide.py.
    speed = np.sqrt(np.einsum("ij,ij->i", v, v))
    reach = 0.2 + min(2 * 0.02 * speed.max() + MARGIN_EPS_FRACTION * 0.1,
                      MARGIN_CAP_DIAMETERS * 0.2)
    layer = np.floor((x[:, 2] - x[:, 2].min()) * (1.0 / reach)).astype(np.int64)
    grid_order = undeal(contacts.m, INTERLEAVE)
    a = contacts.body_a[grid_order]
    b = contacts.body_b[grid_order]
    lowest = np.where(a >= 0, np.minimum(layer[np.maximum(a, 0)], layer[b]), layer[b])
    assert np.all(np.diff(lowest) >= 0)
    assert lowest[0] == 0 and lowest[-1] >= 4  # the sequence spans the whole pile
    # Marble pairs are at most one layer apart (a neighbour cell).
    marble = a >= 0
    assert np.all(np.abs(layer[a[marble]] - layer[b[marble]]) <= 1)


def test_collider_reuses_its_buffers_and_returns_independent_arrays():
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, size=(200, 3))
    radius = np.full(200, 0.1)
    collider = Collider(container_geometry({"kind": "floor", "height": -2.0}), capacity=16)
    first = collider.collide(x, np.zeros_like(x), radius, 0.02)
    saved = first.body_a.copy(), first.gap.copy()
    buffers = collider.body_a, collider._packed, collider._start
    second = collider.collide(x + 0.01, np.zeros_like(x), radius, 0.02)
    assert collider.body_a is buffers[0] and collider._packed is buffers[1]
    assert collider._start is buffers[2]
    np.testing.assert_array_equal(first.body_a, saved[0])  # not overwritten by the 2nd call
    np.testing.assert_array_equal(first.gap, saved[1])
    np.testing.assert_array_equal(np.sort(second.key), np.sort(first.key))  # same pairs


@pytest.mark.parametrize("container", [{"kind": "floor", "height": 0.0},
                                       {"kind": "box", "center": [0, 0], "half_width": 0.3,
                                        "floor": 0.0}])
def test_every_key_is_below_the_key_bound(container):
    # A dense heap touching every wall: the largest keys a pile can produce are all there.
    rng = np.random.default_rng(3)
    n = 60
    x = rng.uniform([-0.3, -0.3, 0.0], [0.3, 0.3, 0.3], size=(n, 3))
    geo = container_geometry(container)
    c = Collider(geo).collide(x, np.zeros((n, 3)), np.full(n, 0.06), 0.02)
    walls = geo.n_features
    assert c.m > n and c.key.min() >= 0 and c.key.max() < key_bound(n, walls)
    # The pair (n - 2, n - 1) is the largest key there is, one below the bound.
    assert key_bound(n, walls) - 1 == (n - 2 + walls) * n + n - 1
