"""The two ends of a serial step against their numpy expressions, bit for bit."""
import numpy as np

from solver.locality import WORLD_ORDER
from solver.motion import integrate, predict
from tests.solver.blocks import packed_box, problem_of


def test_predict_without_drag_is_v_plus_h_g():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(200, 3))
    g = np.array([0.0, 0.0, -9.81])
    out = np.empty_like(v)
    predict(v, g, 0.01, 1.0, False, out)
    assert np.array_equal(out, v + 0.01 * g)
    predict(v, g, 0.01, 0.5, True, out)
    want = 0.5 * v + 0.01 * g
    want[:, 1] = 0.0
    assert np.array_equal(out, want)


def test_integrate_is_the_problems_velocity_then_a_position_step():
    world = packed_box(600)
    p = problem_of(world, 1)
    lam = np.random.default_rng(4).uniform(0.0, 1e-3, p.m)
    x, v = world.x.copy(), np.empty_like(world.x)
    integrate(p.body_a, p.body_b, p.normal, p.inv_mass, lam, p.v_pred, p.dt, False, x, v, v,
              WORLD_ORDER)
    want_v = p.velocity(lam)
    assert np.array_equal(v, want_v)
    assert np.array_equal(x, world.x + p.dt * want_v)
