"""The two ends of a step against their numpy expressions, bit for bit, and the same values
over a partition's shares as inline (one block)."""
import numpy as np
import pytest

from solver.locality import WORLD_ORDER
from solver.motion import integrate, predict
from solver.partition import one_block
from tests.solver.blocks import packed_box, problem_of


def test_predict_without_drag_is_v_plus_h_g():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(200, 3))
    g = np.array([0.0, 0.0, -9.81])
    out = np.empty_like(v)
    predict(v, g, 0.01, 1.0, False, out, 1)
    assert np.array_equal(out, v + 0.01 * g)
    predict(v, g, 0.01, 0.5, True, out, 1)
    want = 0.5 * v + 0.01 * g
    want[:, 1] = 0.0
    assert np.array_equal(out, want)


@pytest.mark.parametrize("parts", [2, 3])
def test_predict_in_shares_is_the_inline_one(parts):
    v = np.random.default_rng(0).normal(size=(5001, 3))
    g = np.array([0.0, 0.0, -9.81])
    for planar in (False, True):
        one, two = np.empty_like(v), np.full_like(v, np.nan)
        predict(v, g, 0.01, 0.97, planar, one, 1)
        predict(v, g, 0.01, 0.97, planar, two, parts)
        assert np.array_equal(one, two)


def test_integrate_is_the_problems_velocity_then_a_position_step():
    world = packed_box(600)
    p = problem_of(world, 1)
    lam = np.random.default_rng(4).uniform(0.0, 1e-3, p.m)
    x, v = world.x.copy(), np.empty_like(world.x)
    integrate(p.A, lam, p.v_pred, (p.dt, False), (x, v, v), WORLD_ORDER, p.partition)
    want_v = p.velocity(lam)
    assert np.array_equal(v, want_v)
    assert np.array_equal(x, world.x + p.dt * want_v)


def test_integrate_in_blocks_is_the_inline_one_on_the_same_contacts():
    world = packed_box(5000)
    p = problem_of(world, 2)
    serial = one_block(p.m)
    lam = np.random.default_rng(1).uniform(0.0, 1e-3, p.m)
    x1, x2 = world.x.copy(), world.x.copy()
    v1, v2 = np.empty_like(x1), np.full_like(x2, np.nan)
    integrate(p.A, lam, p.v_pred, (p.dt, False), (x1, v1, v1), WORLD_ORDER, serial)
    integrate(p.A, lam, p.v_pred, (p.dt, False), (x2, v2, v2), WORLD_ORDER, p.partition)
    assert np.array_equal(v1, v2) and np.array_equal(x1, x2) and not np.array_equal(x1, world.x)
    # Solved in another numbering, where marble s is order[s]: the world's rows written
    # directly are the inline step's in that numbering, copied back.
    order = np.random.default_rng(2).permutation(world.n)
    rank = np.argsort(order)
    a = np.where(p.body_a >= 0, rank[np.maximum(p.body_a, 0)], -1)
    b = rank[p.body_b]
    x3, v3 = world.x[order], np.empty_like(x1)
    renumbered = (a, b, p.normal, p.inv_mass[order])
    integrate(renumbered, lam, p.v_pred[order], (p.dt, False), (x3, v3, v3), WORLD_ORDER, serial)
    x4, v4 = world.x.copy(), np.full_like(x1, np.nan)
    integrate(renumbered, lam, p.v_pred[order], (p.dt, False), (x4, v4, np.empty_like(x1)), order,
              p.partition)
    assert np.array_equal(x4[order], x3) and np.array_equal(v4[order], v3)
