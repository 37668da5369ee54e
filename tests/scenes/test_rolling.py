"""Scenes with friction against the mechanics of a rolling sphere: the incline (rolling without
slipping, sliding, rolling resistance, Coulomb's friction angle), the bowling ball, and the heap
coming to rest. Every answer is worked out by hand from I = 2/5 m r^2 (docs/friction.md)."""
import math

import numpy as np
import pytest

import scenes
from scenes.rolling import pyramid_positions
from solver.methods import registry
from solver.step import Simulation, max_penetration

G = 9.81
R = 0.1  # the scenes' marble radius, m

# Every friction solver and law: (solver, parameters, iterations). A lone contact is solved
# exactly by one Gauss-Seidel sweep; Jacobi (β = 0.3) needs more to converge.
LAWS = [("naive", {}, 50), ("pgs", {}, 50), ("psor", {}, 50), ("jacobi", {}, 200),
        ("pgs", {"friction": "box"}, 50), ("pgs", {"friction": "ccp"}, 50)]
IDS = ["naive", "pgs", "psor", "jacobi", "pgs-box", "pgs-ccp"]


def simulate(scene, overrides, law, seconds, dt=None, warm_start=0.0, v0=None):
    solver, params, iterations = law
    world = scenes.build(scene, overrides)
    if dt is not None:
        world.dt = dt
    if v0 is not None:
        world.v[0] = v0
    sim = Simulation(world, registry.settings(solver, iterations, False, params), warm_start)
    for _ in range(int(round(seconds / world.dt))):
        sim.step()
    return world


def incline_frame(angle):
    """(downhill unit vector, plane normal, axis of rolling downhill) of the incline scene."""
    t = math.radians(angle)
    down = np.array([math.cos(t), 0.0, -math.sin(t)])
    normal = np.array([math.sin(t), 0.0, math.cos(t)])
    return down, normal, np.cross(normal, down)


def test_scene_geometry():
    incline = scenes.build("incline", {"angle": 30.0})
    assert incline.n == 1 and max_penetration(incline) == 0.0
    _, normal, _ = incline_frame(30.0)
    assert incline.x[0] @ normal == pytest.approx(R)
    assert len(pyramid_positions(1)) == 1
    for layers in (2, 5):
        x = pyramid_positions(layers)
        assert len(x) == sum(k * k for k in range(1, layers + 1))
        d = np.linalg.norm(x[:, None] - x[None], axis=2) + np.eye(len(x)) * 9.0
        assert d.min() == pytest.approx(2 * R)  # touching, never overlapping
        level = np.round((x[:, 2] - R) / (math.sqrt(2.0) * R)).astype(int)
        for i in np.flatnonzero(level > 0):  # each sits on four below it
            below = (level == level[i] - 1) & np.isclose(d[i], 2 * R)
            assert below.sum() == 4
    heap = scenes.build("heap", {"n": 300})
    assert heap.n == 300 and max_penetration(heap) == 0.0
    assert heap.x[:, 2].min() > R
    assert scenes.build("pyramid").mu > 0 and scenes.build("heap").mu_roll > 0


@pytest.mark.parametrize("law", LAWS, ids=IDS)
@pytest.mark.parametrize("angle, mu", [(20.0, 0.3), (18.0, 0.1)])
def test_incline_rolls_without_slipping(law, angle, mu):
    """tan θ <= 7/2 μ: the contact sticks, a = 5/7 g sin θ and ω = v / r."""
    assert math.tan(math.radians(angle)) <= 3.5 * mu
    world = simulate("incline", {"angle": angle, "mu": mu}, law, 1.0)
    down, _, axis = incline_frame(angle)
    v = world.v[0] @ down
    assert v / world.time == pytest.approx(5.0 / 7.0 * G * math.sin(math.radians(angle)),
                                           rel=0.01)
    assert world.omega[0] @ axis * R == pytest.approx(v, rel=0.01)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
@pytest.mark.parametrize("angle, mu", [(40.0, 0.1), (20.0, 0.1)])
def test_incline_slides(law, angle, mu):
    """tan θ > 7/2 μ: the contact slips, a = g (sin θ − μ cos θ), and friction spins the marble
    up at 5 μ g cos θ / (2 r). The marble stays on the plane, except under ccp: Anitescu's
    relaxation makes a sliding contact separate at μ |u_t|, so the marble hovers h μ |u_t|
    above the plane (the velocity it slides at, times one step)."""
    theta = math.radians(angle)
    assert math.tan(theta) > 3.5 * mu
    world = simulate("incline", {"angle": angle, "mu": mu}, law, 1.0)
    down, normal, axis = incline_frame(angle)
    v = world.v[0] @ down
    spin = world.omega[0] @ axis
    assert v / world.time == pytest.approx(G * (math.sin(theta) - mu * math.cos(theta)),
                                           rel=0.01)
    assert spin / world.time == pytest.approx(5 * mu * G * math.cos(theta) / (2 * R), rel=0.01)
    lift = world.x[0] @ normal - R
    if law[1].get("friction") == "ccp":
        assert lift == pytest.approx(world.dt * mu * (v - spin * R), rel=0.02)
    else:
        assert abs(lift) < 1e-9


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_bowling_ball_slides_then_rolls(law):
    """Launched at v0 without spin, friction μ m g slows it and spins it up until v = ω r:
    from t = 2 v0 / (7 μ g) on it rolls at 5/7 v0 (dt = 1 ms resolves that time to 1%)."""
    v0, mu = 2.0, 0.3
    t_roll = 2 * v0 / (7 * mu * G)
    solver, params, iterations = law
    world = scenes.build("incline", {"angle": 0.0, "mu": mu})
    world.dt = 1e-3
    world.v[0] = [v0, 0.0, 0.0]
    sim = Simulation(world, registry.settings(solver, iterations, False, params))
    rolling_from = None
    while world.time < 2 * t_roll:
        sim.step()
        slip = world.v[0, 0] - world.omega[0, 1] * R
        if rolling_from is None and abs(slip) < 1e-6 * v0:
            rolling_from = world.time
    assert rolling_from == pytest.approx(t_roll, rel=0.01)
    assert world.v[0, 0] == pytest.approx(5.0 / 7.0 * v0, rel=0.01)
    assert world.omega[0, 1] * R == pytest.approx(5.0 / 7.0 * v0, rel=0.01)


@pytest.mark.parametrize("friction, factor", [("cone", 1.0), ("box", 1.0 / math.sqrt(2.0))])
def test_diagonal_bowling_ball_shows_the_box_laws_extra_friction(friction, factor):
    """Launched diagonally to the contact's tangent frame, the Coulomb disk gives the same
    friction in every direction; the box clamps each tangent to μ λ_n, so a diagonal slip feels
    √2 μ and rolls √2 times sooner (why cone is the default)."""
    v0, mu = 2.0, 0.3
    world = scenes.build("incline", {"angle": 0.0, "mu": mu})
    world.dt = 1e-3
    world.v[0] = [v0 / math.sqrt(2.0), v0 / math.sqrt(2.0), 0.0]
    sim = Simulation(world, registry.settings("pgs", 20, False, {"friction": friction}))
    rolling_from = None
    while rolling_from is None and world.time < 1.0:
        sim.step()
        contact_point = world.v[0] + np.cross(world.omega[0], [0.0, 0.0, -R])
        if np.linalg.norm(contact_point) < 1e-6 * v0:
            rolling_from = world.time
    assert rolling_from == pytest.approx(factor * 2 * v0 / (7 * mu * G), rel=0.01)


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_coulomb_friction_angle_with_rolling_locked(law):
    """A rolling resistance of one radius locks rolling on slopes up to 45 degrees, so the
    marble is a block under Coulomb's law: below the friction angle (tan θ < μ) it stays where
    it is; above it slides with a = g (sin θ − μ cos θ) without turning."""
    stay = simulate("incline", {"angle": 15.0, "mu": 0.3, "mu_roll": R}, law, 10.0,
                    warm_start=1.0)
    start = scenes.build("incline", {"angle": 15.0}).x[0]
    assert np.linalg.norm(stay.x[0] - start) < 1e-3 * R
    theta = math.radians(30.0)
    slide = simulate("incline", {"angle": 30.0, "mu": 0.3, "mu_roll": R}, law, 1.0)
    down, _, axis = incline_frame(30.0)
    v = slide.v[0] @ down
    assert v / slide.time == pytest.approx(G * (math.sin(theta) - 0.3 * math.cos(theta)),
                                           rel=0.01)
    assert abs(slide.omega[0] @ axis) * R < 0.01 * v


@pytest.mark.parametrize("law", LAWS, ids=IDS)
def test_rolling_resistance_slows_the_rolling_marble(law):
    """Rolling with resistance μ_r (a length): I α = r F − μ_r N and a = r α give
    a = 5/7 g (sin θ − μ_r / r cos θ), still without slipping."""
    theta = math.radians(20.0)
    world = simulate("incline", {"angle": 20.0, "mu": 0.5, "mu_roll": 0.01}, law, 1.0)
    down, _, axis = incline_frame(20.0)
    v = world.v[0] @ down
    expected = 5.0 / 7.0 * G * (math.sin(theta) - 0.01 / R * math.cos(theta))
    assert v / world.time == pytest.approx(expected, rel=0.01)
    assert world.omega[0] @ axis * R == pytest.approx(v, rel=0.01)


def angle_of_repose(x):
    """Degrees: the slope of a straight line through the highest marble centre of each ring
    2 r wide around the heap's middle, leaving out the summit's ring and the outermost one."""
    middle = np.median(x[:, :2], axis=0)
    ring = (np.hypot(*(x[:, :2] - middle).T) // (2 * R)).astype(int)
    tops = np.array([[k, x[ring == k, 2].max()] for k in np.unique(ring)])
    inner = tops[1:-1]
    slope = np.polyfit(inner[:, 0] * 2 * R, inner[:, 1], 1)[0]
    return math.degrees(math.atan(-slope))


def test_heap_comes_to_rest_as_a_cone():
    """The default heap (pgs, 20 iterations, full warm start): after 15 s no marble moves faster
    than 1 cm/s during the last second, and the column (vertical sides) has slumped into a
    cone several layers high: flanks below 45 degrees, and not flat (above 5 degrees).
    docs/friction.md gives the angles measured."""
    world = scenes.build("heap")
    sim = Simulation(world, registry.settings("pgs", 20, False), 1.0)
    fastest = 0.0
    for step in range(750):
        sim.step()
        if step >= 700:
            fastest = max(fastest, np.linalg.norm(world.v, axis=1).max())
    assert fastest < 0.01
    assert world.x[:, 2].max() > 5 * R
    assert 5.0 < angle_of_repose(world.x) < 45.0
