"""One step against known answers (resting stacks, free fall, drag, anticipation and
stabilisation), warm starting by contact key, and a diverging solve leaving the world finite."""
import numpy as np
import pytest

import scenes
from solver import metrics
from solver.methods import registry
from solver.options import PUSH_SPEED
from solver.step import Simulation
from solver.world import World
from tests.solver.methods.reference import enumerate_lcp

G = 9.81


def simulation(world, solver="pgs", iterations=20, warm_start=0.0, **params):
    return Simulation(world, registry.settings(solver, iterations, overrides=params), warm_start)


def first_problem(world):
    sim = simulation(world, iterations=1)
    sim.step(trace=True)
    return sim.problem


def test_resting_column_carries_the_weight_above_each_contact():
    world = scenes.build("column")
    h = world.dt
    sim = simulation(world, iterations=5000, abs_tol=1e-10)
    report = sim.step(trace=True)
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
    sim = simulation(world)
    h, k = world.dt, 25
    for _ in range(k):
        sim.step(trace=True)
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
    sim = simulation(world)
    h, k = world.dt, 200
    f = np.exp(-c * h)
    g = np.array([0, 0, -G])
    speeds = [v0 * f ** j + h * g * (1 - f ** j) / (1 - f) for j in range(1, k + 1)]
    for _ in range(k):
        sim.step(trace=True)
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
    sim = simulation(world, iterations=50)
    sim.step(trace=True)
    dist = np.linalg.norm(world.x[1] - world.x[0])
    assert dist == pytest.approx(0.2, abs=1e-12)  # touching, not overlapping
    # They still approach, at exactly the speed that closes the gap in this step.
    assert world.v[1, 0] - world.v[0, 0] == pytest.approx(-0.1 / 0.02)


def test_an_overlap_within_one_push_separates_in_one_step():
    world = head_on(gap=-0.015, speed=0.0)  # 0.75 m/s to remove it in a step: under the cap
    sim = simulation(world, iterations=50)
    sim.step(trace=True)
    assert np.linalg.norm(world.x[1] - world.x[0]) == pytest.approx(0.2, abs=1e-12)


def test_a_deeper_overlap_is_removed_at_the_push_speed():
    """0.03 m would be 1.5 m/s in one step: the pair parts at PUSH_SPEED, 0.02 m a step."""
    world = head_on(gap=-0.03, speed=0.0)
    sim = simulation(world, iterations=50)
    sim.step(trace=True)
    assert world.v[1, 0] - world.v[0, 0] == pytest.approx(PUSH_SPEED.default, rel=1e-9)
    assert np.linalg.norm(world.x[1] - world.x[0]) == pytest.approx(0.19, abs=1e-12)
    sim.step(trace=True)  # parting at 1 m/s already: no impulse, the pair flies apart
    assert np.linalg.norm(world.x[1] - world.x[0]) == pytest.approx(0.21, abs=1e-12)


def test_planar_scene_stays_in_its_plane():
    world = scenes.build("disk")
    sim = simulation(world)
    for _ in range(50):
        sim.step(trace=True)
    assert np.all(world.x[:, 1] == 0.0) and np.all(world.v[:, 1] == 0.0)


@pytest.mark.parametrize("warm", [False, True])
def test_warm_start_matches_pairs_between_steps(warm):
    sim = simulation(scenes.build("column"), iterations=5000, warm_start=warm, abs_tol=1e-10)
    cold = sim.step(trace=True).result.iterations
    first = sim.lam.copy()
    later = [sim.step(trace=True).result.iterations for _ in range(3)]
    np.testing.assert_allclose(sim.lam, first, rtol=1e-8)  # the same resting column
    if warm:  # carried-over impulses are (almost) the solution already
        assert max(later) < cold / 10
    else:
        assert min(later) == cold


def test_divergent_solver_in_the_step_leaves_the_world_finite():
    world = scenes.build("bowl")
    sim = simulation(world)
    for _ in range(100):
        sim.step()
    sim.set_solver(registry.settings("jacobi", 200, overrides={"beta": 1.0}))
    statuses = {sim.step().result.status for _ in range(5)}
    assert metrics.DIVERGENCE in statuses
    assert np.all(np.isfinite(world.x)) and np.all(np.isfinite(world.v))


def floor_world(x, inv_mass, v=None, radius=0.1):
    x = np.asarray(x, dtype=np.float64)
    return World(x, np.zeros_like(x) if v is None else v, radius, inv_mass,
                 {"kind": "floor", "height": 0.0})


def test_a_fixed_marble_feels_no_gravity_and_carries_the_one_on_top():
    r = 0.1
    # A fixed marble in mid-air (given a velocity, which it must not keep), a free one resting
    # on it, and a free one falling on its own.
    world = floor_world([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0 + 2 * r], [1.0, 0.0, 1.0]],
                        [0.0, 1.0, 1.0], v=np.array([[0.3, 0.0, 0.2], [0, 0, 0], [0, 0, 0]]))
    sim = simulation(world, iterations=50)
    for _ in range(50):
        sim.step()
    np.testing.assert_array_equal(world.x[0], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(world.v[0], [0.0, 0.0, 0.0])
    assert world.x[1, 2] == pytest.approx(1.0 + 2 * r, abs=1e-3)  # held up by the fixed one
    assert world.x[2, 2] == pytest.approx(r, abs=2e-3)  # fell to the floor


def test_contacts_between_fixed_bodies_are_dropped_and_every_solver_runs():
    r = 0.1
    # Two fixed marbles touching each other and the floor: rows with A_cc = 0, and one free
    # marble resting on the first.
    world = floor_world([[0.0, 0.0, r], [2 * r, 0.0, r], [0.0, 0.0, 3 * r]], [0.0, 0.0, 1.0])
    for name in registry.METHODS:
        w = world.copy()
        sim = simulation(w, solver=name, iterations=200)
        sim.step()
        p = sim.problem
        assert p.m == 1 and p.body_a[0] == 0 and p.body_b[0] == 2, name
        assert sim.lam[0] == pytest.approx(G * w.dt, rel=1e-6), name  # the free marble's weight
        np.testing.assert_array_equal(w.x[:2], world.x[:2])


@pytest.mark.parametrize("height", [0.5, 0.1])  # in the air; on the floor
def test_coincident_marbles_separate_over_steps_at_the_push_speed(height):
    """Two marbles at one point part along +z (the higher-numbered one lifted) within 20
    steps, never faster than the push speed plus a step of gravity's: on the floor each
    marble's speed, in the air (where both fall) their speed apart."""
    from solver.step import max_penetration
    r = 0.1
    world = floor_world([[0.0, 0.0, height], [0.0, 0.0, height]], [1.0, 1.0])
    assert max_penetration(world) == pytest.approx(2 * r)
    sim = simulation(world, iterations=50)
    assert PUSH_SPEED.default == 1.0  # m/s: the pair leaves at 10 m/s uncapped
    cap = 1.0 + G * world.dt
    for step in range(1, 21):
        sim.step()
        if height == r:
            assert np.linalg.norm(world.v, axis=1).max() <= cap, step
        else:
            assert np.linalg.norm(world.v[1] - world.v[0]) <= cap, step
        if world.x[1, 2] - world.x[0, 2] >= 2 * r * (1 - 1e-9):
            break
    assert world.x[1, 2] - world.x[0, 2] >= 2 * r * (1 - 1e-9), step
    assert step >= 2 * r / (1.0 * world.dt) - 1  # over steps, not one
    np.testing.assert_array_equal(world.x[:, :2], 0.0)


def _settled_box_with_a_fixed_marble_on_its_floor():
    """The box of 30 settled by 150 pgs steps, and a fixed marble put on its floor at the
    centre, overlapping the marbles there by up to 0.09 m."""
    from solver.step import max_penetration
    world = scenes.build("box", {"n": 30})
    sim = simulation(world)
    for _ in range(150):
        sim.step()
    fixed = World(np.vstack([world.x, [[0.0, 0.0, 0.1]]]), np.vstack([world.v, np.zeros((1, 3))]),
                  0.1, np.append(world.inv_mass, 0.0), world.container,
                  np.vstack([world.colour, world.colour[:1]]))
    assert max_penetration(fixed) > 0.08
    return fixed


@pytest.mark.parametrize("solver", ["pgs", "psor", "nsgs", "coloured-gs", "prox-gs", "pcg",
                                    "mprgp"])
def test_a_fixed_marble_put_into_a_settled_box_pushes_it_apart_without_exploding(solver):
    from lab.session.run import OK, run_steps
    world = _settled_box_with_a_fixed_marble_on_its_floor()
    report = run_steps(simulation(world, solver=solver, iterations=20), 150)
    assert report["physics"]["status"] == OK, report["physics"]


def _restarted(sim, warm_start):
    """A new Simulation on a copy of sim's world, given sim's impulses."""
    again = simulation(sim.world.copy(), warm_start=warm_start)
    again.set_impulses(*sim.impulses())
    return again


@pytest.mark.parametrize("warm_start", [0.5, 1.0])
def test_a_restart_with_the_exported_impulses_is_the_same_run(warm_start):
    sim = simulation(scenes.build("disk"), warm_start=warm_start)
    for _ in range(10):
        sim.step()
    again = _restarted(sim, warm_start)
    cold = simulation(sim.world.copy(), warm_start=warm_start)  # no impulses: another run
    for _ in range(10):
        for s in (sim, again, cold):
            s.step()
    assert np.array_equal(again.world.x, sim.world.x) and np.array_equal(again.world.v,
                                                                          sim.world.v)
    assert not np.array_equal(cold.world.v, sim.world.v)


def test_exported_impulses_are_copies_keyed_by_pair():
    sim = simulation(scenes.build("column"), warm_start=1.0)
    sim.step()
    keys, lam = sim.impulses()
    np.testing.assert_array_equal(keys, sim.problem.key)
    np.testing.assert_array_equal(lam, sim.lam)
    keys[:] = 0
    lam[:] = -1.0
    assert sim.impulses()[1].min() >= 0.0 and np.unique(sim.impulses()[0]).size == sim.problem.m


@pytest.mark.parametrize("keys, lam, fragment", [
    ([1, 2], [0.1], "must be (k,) and (k,) or"),
    ([[1, 2]], [[0.1, 0.2]], "must be (k,) and (k,) or"),
    ([1.0, 2.0], [0.1, 0.2], "keys must be integers"),
    ([1, 2], [True, False], "impulses must be real numbers"),
    ([-1, 2], [0.1, 0.2], "contact key -1 is outside [0, 56)"),   # 7 marbles, 2 walls: 8 * 7
    ([1, 56], [0.1, 0.2], "contact key 56 is outside"),
    ([3, 3], [0.1, 0.2], "appears twice"),
    ([1, 2], [0.1, np.nan], "nan"),
    ([1, 2], [0.1, -0.5], "-0.5"),
])
def test_impulses_that_do_not_fit_the_world_are_refused(keys, lam, fragment):
    sim = simulation(scenes.build("column"))  # 7 marbles in a tube: a floor and the tube wall
    with pytest.raises(ValueError) as err:
        sim.set_impulses(np.array(keys), np.array(lam))
    assert fragment in str(err.value)
    sim.set_impulses(np.array([0, 55]), np.array([0.0, 1.0]))  # the extreme keys are fine


@pytest.mark.parametrize("scene, params, threads", [
    ("bowl", {"n": 60, "mu": 0.5}, 1),
    ("box", {"n": 2500}, 2),  # in blocks: solved in the grid's numbering
])
def test_a_rewound_simulation_repeats_its_steps_bit_for_bit(scene, params, threads):
    sim = Simulation(scenes.build(scene, params), registry.settings("pgs", 20, False), 1.0,
                     threads=threads)
    kept = []
    for _ in range(8):
        sim.step()
        kept.append(sim.checkpoint())
    sim.rewind(kept[2])
    assert sim.steps == 3 and sim.problem is kept[2].problem
    np.testing.assert_array_equal(sim.lam, kept[2].lam)
    for k in range(3, 8):
        sim.step()
        for name in ("x", "v", "omega", "orientation"):
            assert np.array_equal(getattr(sim.world, name), getattr(kept[k], name)), (k, name)
    assert sim.world.time == kept[7].time


def test_a_checkpoint_of_another_pile_is_refused():
    small = simulation(scenes.build("box", {"n": 20}))
    small.step()
    other = simulation(scenes.build("box", {"n": 30}))
    with pytest.raises(ValueError, match="a checkpoint of 20 marbles cannot rewind a world "
                                         "of 30"):
        other.rewind(small.checkpoint())
