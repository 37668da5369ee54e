"""A step's per-marble and per-contact passes in parallel are bit for bit the serial ones."""
from __future__ import annotations

import numpy as np

from solver.blocked import blocked_assemble, blocked_integrate, blocked_predict
from solver.problem import _assemble
from solver.locality import WORLD_ORDER
from solver.motion import integrate, predict
from tests.solver.blocks import packed_box, problem_of


def test_predict_is_the_serial_one():
    v = np.random.default_rng(0).normal(size=(5001, 3))
    g = np.array([0.0, 0.0, -9.81])
    for planar in (False, True):
        one, two = np.empty_like(v), np.full_like(v, np.nan)
        predict(v, g, 0.01, 0.97, planar, one)
        blocked_predict(v, g, 0.01, 0.97, planar, two)
        assert np.array_equal(one, two)


def test_assemble_and_integrate_are_the_serial_ones():
    world = packed_box(5000)
    p = problem_of(world, 2)
    diag, rhs = np.empty(p.m), np.empty(p.m)
    _assemble(p.body_a, p.body_b, p.normal, p.gap, p.inv_mass, p.v_pred, p.dt, diag, rhs)
    blocked_diag, blocked_rhs = np.full(p.m, np.nan), np.full(p.m, np.nan)
    blocked_assemble(p.body_a, p.body_b, p.normal, p.gap, p.inv_mass, p.v_pred, p.dt,
                     blocked_diag, blocked_rhs)
    assert np.array_equal(diag, blocked_diag) and np.array_equal(rhs, blocked_rhs)
    lam = np.random.default_rng(1).uniform(0.0, 1e-3, p.m)
    x1, x2 = world.x.copy(), world.x.copy()
    v1, v2 = np.empty_like(x1), np.full_like(x2, np.nan)
    integrate(p.body_a, p.body_b, p.normal, p.inv_mass, lam, p.v_pred, p.dt, False, x1, v1,
              v1, WORLD_ORDER)
    blocked_integrate(p.body_a, p.body_b, p.normal, p.inv_mass, lam, p.v_pred, p.dt, False, x2,
                      v2, v2, WORLD_ORDER, *p.partition)
    assert np.array_equal(v1, v2) and np.array_equal(x1, x2) and not np.array_equal(x1, world.x)
    # Solved in another numbering, where marble s is order[s]: the world's rows written
    # directly are the serial step's in that numbering, copied back.
    order = np.random.default_rng(2).permutation(world.n)
    rank = np.argsort(order)
    a = np.where(p.body_a >= 0, rank[np.maximum(p.body_a, 0)], -1)
    b = rank[p.body_b]
    x3, v3 = world.x[order], np.empty_like(x1)
    integrate(a, b, p.normal, p.inv_mass[order], lam, p.v_pred[order], p.dt, False, x3, v3, v3,
              WORLD_ORDER)
    x4, v4 = world.x.copy(), np.full_like(x1, np.nan)
    blocked_integrate(a, b, p.normal, p.inv_mass[order], lam, p.v_pred[order], p.dt, False, x4,
                      v4, np.empty_like(x1), order, *p.partition)
    assert np.array_equal(x4[order], x3) and np.array_equal(v4[order], v3)
