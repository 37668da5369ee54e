"""Physics against known answers: resting stacks, free fall, anticipation and stabilisation."""
import numpy as np
import pytest

import scenes
from solver import registry
from solver.step import Simulation
from solver.world import World
from tests.solver.reference import enumerate_lcp

G = 9.81


def first_problem(world):
    sim = Simulation(world, "pgs", iterations=1)
    sim.step()
    return sim.problem


def test_resting_column_carries_the_weight_above_each_contact():
    world = scenes.build("column")
    h = world.dt
    sim = Simulation(world, "pgs", iterations=5000, params={"abs_tol": 1e-10})
    report = sim.step()
    assert report.result.status == "absolute" and report.result.residual < 1e-10
    problem = sim.problem
    mass = world.mass
    assert problem.m == 7  # floor plus six marble pairs; the tube is not touched
    for c in range(problem.m):
        b = problem.body_b[c]  # the upper body of the contact
        above = mass[world.x[:, 2] >= world.x[b, 2] - 1e-9].sum()
        assert sim.lam[c] == pytest.approx(above * G * h, rel=1e-8)
    floor = problem.body_a == -1
    assert sim.lam[floor].sum() == pytest.approx(mass.sum() * G * h, rel=1e-8)
    assert np.abs(world.v).max() < 1e-8  # it stays at rest


def test_mass_ratio_pair_at_rest():
    world = scenes.build("mass-ratio")
    m = world.mass[0]
    problem = first_problem(world.copy())
    lam = enumerate_lcp(problem.dense(), problem.rhs)
    floor = problem.body_a == -1
    h = world.dt
    assert lam[floor][0] == pytest.approx(1001 * m * G * h, rel=1e-10)
    assert lam[~floor][0] == pytest.approx(1000 * m * G * h, rel=1e-10)
    # PSOR gets there too, given enough iterations (it is slow here, not wrong).
    result = registry.METHODS["psor"].solve(
        problem, np.zeros(problem.m), registry.settings("psor", 200000, False))
    np.testing.assert_allclose(result.lam, lam, rtol=1e-6)


def test_free_fall_is_symplectic_euler_exactly():
    x0 = np.array([[0.0, 0.0, 10.0]])
    v0 = np.array([[0.3, 0.0, 1.0]])
    world = World(x0.copy(), v0.copy(), 0.1, 1.0, {"kind": "floor", "height": -1e6})
    sim = Simulation(world, "pgs")
    h, k = world.dt, 25
    for _ in range(k):
        sim.step()
    expected = x0 + v0 * k * h - np.array([0, 0, G]) * h * h * k * (k + 1) / 2
    np.testing.assert_allclose(world.x, expected, rtol=0, atol=1e-12)
    assert world.time == pytest.approx(k * h)


def test_drag_decays_the_free_fall_velocity_exactly():
    """With linear drag c the step is v <- e^(-c h) v + h g, x <- x + h v: after k steps
    v_k = f^k v0 + h g (1 - f^k) / (1 - f), f = e^(-c h), heading for the terminal g / c."""
    c = 0.5
    x0 = np.array([[0.0, 0.0, 10.0]])
    v0 = np.array([[0.3, 0.0, 1.0]])
    world = World(x0.copy(), v0.copy(), 0.1, 1.0, {"kind": "floor", "height": -1e6}, damping=c)
    sim = Simulation(world, "pgs")
    h, k = world.dt, 200
    f = np.exp(-c * h)
    g = np.array([0, 0, -G])
    speeds = [v0 * f ** j + h * g * (1 - f ** j) / (1 - f) for j in range(1, k + 1)]
    for _ in range(k):
        sim.step()
    np.testing.assert_allclose(world.v, speeds[-1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(world.x, x0 + h * np.sum(speeds, axis=0), rtol=0, atol=1e-9)
    assert world.v[0, 0] < 0.3 * 0.9  # the drag acted on the horizontal motion too


def head_on(gap, speed):
    r = 0.1
    x = np.array([[-r - gap / 2, 0, 5.0], [r + gap / 2, 0, 5.0]])
    v = np.array([[speed, 0, 0], [-speed, 0, 0]])
    return World(x, v, r, 1.0, {"kind": "floor", "height": -100.0}, dt=0.02)


def test_approaching_marbles_stop_at_contact_without_overlap():
    world = head_on(gap=0.1, speed=5.0)  # they would close 0.2 m in one step
    sim = Simulation(world, "pgs", iterations=50)
    sim.step()
    dist = np.linalg.norm(world.x[1] - world.x[0])
    assert dist == pytest.approx(0.2, abs=1e-12)  # touching, not overlapping
    # They still approach, at exactly the speed that closes the gap in this step.
    assert world.v[1, 0] - world.v[0, 0] == pytest.approx(-0.1 / 0.02)


def test_overlapping_pair_separates_in_one_step():
    world = head_on(gap=-0.03, speed=0.0)
    sim = Simulation(world, "pgs", iterations=50)
    sim.step()
    assert np.linalg.norm(world.x[1] - world.x[0]) == pytest.approx(0.2, abs=1e-12)


def test_planar_scene_stays_in_its_plane():
    world = scenes.build("disk")
    sim = Simulation(world, "pgs")
    for _ in range(50):
        sim.step()
    assert np.all(world.x[:, 1] == 0.0) and np.all(world.v[:, 1] == 0.0)
