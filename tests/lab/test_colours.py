"""The colour modes' numbers against answers found another way: the slip of a marble sliding
down an incline (Coulomb's law in closed form), of a spinning marble on a frictionless floor
(rigid-body kinematics), and the normal impulses of a resting column with friction."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from lab.colours import (IMPULSE_SCALE, SLIP_RANGE, contact_slip, heat, marble_colours,
                         marble_maximum, slip_heat)
from lab.spec import RunSpec
from lab.session import Session

G = 9.81


def stepped(scene: str, steps: int, **assignments) -> Session:
    s = Session(RunSpec.create(scene, "pgs", 20, assignments=assignments))
    s.start()
    for _ in range(steps):
        s.step()
    return s


def test_a_marble_sliding_down_an_incline_slips_at_the_rate_coulomb_gives():
    """tan θ > 7/2 μ: friction μ m g cos θ slows the centre and spins the marble up, so the
    contact point slides faster and faster at g (sin θ − 7/2 μ cos θ); after t it slips at that
    times t. It is the hottest colour; a rolling marble and one at rest slip not at all."""
    steps = 25
    s = stepped("incline", steps, angle=45.0, mu=0.1)
    theta, t = math.radians(45.0), steps * s.world.dt
    slip = contact_slip(s.sim.problem, s.sim.lam, s.world)
    assert slip.shape == (1,)
    assert slip[0] == pytest.approx(G * (math.sin(theta) - 3.5 * 0.1 * math.cos(theta)) * t,
                                    rel=1e-3)
    np.testing.assert_array_equal(marble_colours("slip", s.world, s.sim.problem, s.sim.lam),
                                  heat(np.ones(1)))
    for angle in (20.0, 0.0):  # tan 20° = 0.36 <= 7/2 0.3: rolls; level: rests
        s = stepped("incline", steps, angle=angle, mu=0.3)
        assert contact_slip(s.sim.problem, s.sim.lam, s.world)[0] < 1e-9
        np.testing.assert_array_equal(
            marble_colours("slip", s.world, s.sim.problem, s.sim.lam), heat(np.zeros(1)))


@pytest.mark.parametrize("omega_y, want", [(2.0, 0.8), (10.0, 0.0), (-3.0, 1.3)])
def test_the_slip_of_a_spinning_marble_on_a_frictionless_floor(omega_y, want):
    """Without friction the floor exerts no torque: the marble keeps v = 1 m/s along x and
    ω about y, and its lowest point moves at v + ω × (−r z) = 1 − r ω_y (r = 0.1 m)."""
    s = stepped("pyramid", 1, layers=1, mu=0.0)
    w = s.world
    w.v[0], w.omega[0] = [1.0, 0.0, 0.0], [0.0, omega_y, 0.0]
    s.step()
    assert s.sim.problem.m == 1 and not w.frictional
    assert contact_slip(s.sim.problem, s.sim.lam, w)[0] == pytest.approx(want, abs=1e-12)


def test_each_marble_takes_the_largest_value_of_its_contacts():
    problem = SimpleNamespace(body_a=np.array([-1, 0, 1, 0]), body_b=np.array([0, 1, 2, 2]))
    per_contact = np.array([5.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(marble_maximum(problem, per_contact, 4), [5.0, 3.0, 3.0, 0.0])


def test_slip_heat_is_logarithmic_between_the_ends_of_its_range():
    lo, hi = SLIP_RANGE
    values = slip_heat(np.array([0.0, lo, math.sqrt(lo * hi), hi, 10 * hi]))
    np.testing.assert_allclose(values[:4], [0.0, 0.0, 0.5, 1.0], atol=1e-12)
    assert values[4] > 1.0   # clamped by heat


def test_impulse_colours_take_the_normal_rows_of_a_frictional_problem():
    """A resting column with friction: each marble carries the weight above it and its own,
    so its contacts' normal impulses add up to (2 k + 1) weights per step (k marbles above);
    the tangent rows, zero here, must not be mistaken for contacts."""
    s = Session(RunSpec.create("column", "pgs", 5000, assignments={"mu": 0.5,
                                                                    "abs_tol": 1e-10}))
    s.start()
    s.step()
    p, lam, w = s.sim.problem, s.sim.lam, s.world
    assert p.frictional and lam.size == 3 * p.m
    weight = G * w.dt * w.mass
    above = np.arange(w.n - 1, -1, -1)
    want = (2 * above + 1) * weight
    colours = marble_colours("impulse", w, p, lam)
    np.testing.assert_allclose(colours, heat(want / (IMPULSE_SCALE * weight)), atol=1e-6)
