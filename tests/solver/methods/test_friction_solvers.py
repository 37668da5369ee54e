"""What every frictional solver must show: the exact answer on one contact, agreement
on piles, Coulomb's law at rest on an incline. Coulomb solvers are measured against Coulomb's
law; apgd against its own relaxation (Anitescu's), whose sliding contacts separate."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scenes
from solver import metrics
from solver.explicit import MatrixProblem
from solver.friction import FrictionalProblem
from solver.methods import registry
from solver.step import Simulation
from solver.world import World
from tests.solver.methods.coulomb import coulomb_violation, enumerate_solutions, random_block
from tests.solver.methods.test_apgd import relaxation_violation

SOLVERS = registry.friction_solvers()
COULOMB = [name for name in SOLVERS if name != "apgd"]
ITERATIONS = {"jacobi": 20000, "prox-jacobi": 20000, "mass-split": 20000}  # others: 5000
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
R = 0.1



def solve(name, problem, tol=1e-12, **params):
    return registry.get(name).solve(problem, np.zeros(problem.size), registry.settings(
        name, ITERATIONS.get(name, 5000), True, {"abs_tol": tol, **params}))


def target_q(rng, case, a, b, mu):
    """q = (q_n, q_t) of a contact with diagonal block diag(a, b, b) in the given case."""
    if case == "separate":
        return np.array([rng.uniform(0.0, 1.0), *rng.normal(size=2)])
    ln = rng.uniform(0.05, 1.0)
    direction = rng.normal(size=2)
    direction /= np.linalg.norm(direction)
    factor = rng.uniform(0.0, 0.95) if case == "stick" else rng.uniform(1.05, 4.0)
    return np.array([-ln * a, *(factor * mu * ln * b * direction)])


def expected(q, a, b, mu):
    """Coulomb's answer for a diagonal block, by hand: separate when q_n >= 0; else λ_n =
    -q_n/a, stick with λ_t = -q_t/b inside the disk μ λ_n, or slide at μ λ_n against q_t."""
    if q[0] >= 0:
        return np.zeros(3)
    ln = -q[0] / a
    lt = -q[1:] / b
    if np.linalg.norm(lt) > mu * ln:
        lt = -mu * ln * q[1:] / np.linalg.norm(q[1:])
    return np.array([ln, *lt])


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), case=st.sampled_from(["separate", "stick", "slide"]),
       mu=st.floats(0.05, 1.5), mass=st.floats(0.1, 10.0))
def test_every_solver_solves_a_marble_on_a_floor(seed, case, mu, mass):
    """A marble of radius R on a floor (normal z, t1 = x, t2 = y), no spin, velocities set so
    that u = A λ + q has the chosen answer: A = diag(w, 7/2 w, 7/2 w), q = (v_z, v_x, v_y)."""
    rng = np.random.default_rng(seed)
    w = 1.0 / mass
    q = target_q(rng, case, w, 3.5 * w, mu)
    V = np.array([[q[1], q[2], q[0], 0.0, 0.0, 0.0]])
    p = FrictionalProblem(np.array([-1]), np.array([0]), np.array([[0.0, 0.0, 1.0]]),
                          np.zeros(1), np.array([R]), np.array([w]), V, 0.02, np.array([mu]),
                          np.zeros(1), np.zeros(1))
    answer = expected(q, w, 3.5 * w, mu)
    for name in SOLVERS:
        result = solve(name, p)
        if name == "apgd":
            # Its own answer, unless it started on Coulomb's (every solver stops there): a
            # separating contact that slips fast (q_n < μ ‖q_t‖) is Coulomb's solution at λ = 0,
            # where the relaxation would push.
            assert (result.residual < 1e-12
                    or relaxation_violation(p.dense(), p.rhs, p.mu, result.lam) < 1e-10), case
            if case == "stick":  # no slip: the relaxation's answer is Coulomb's
                np.testing.assert_allclose(result.lam, answer, rtol=1e-8, atol=1e-12)
            continue
        assert result.status == metrics.ABSOLUTE, (name, case, result.residual)
        np.testing.assert_allclose(result.lam, answer, rtol=1e-9, atol=1e-12, err_msg=name)


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), case=st.sampled_from(["separate", "stick", "slide"]),
       mu=st.floats(0.05, 1.0), coupling=st.sampled_from([0.0, 0.1, 0.2]))
def test_every_solver_solves_a_coupled_contact_of_another_tool(seed, case, mu, coupling):
    """Random symmetric positive definite blocks with normal-tangent coupling (an explicit W):
    every Coulomb solver but naive (whose normal impulse only grows, so a coupling that asks
    for less cannot be met) satisfies Coulomb's law and finds the enumerated solution."""
    rng = np.random.default_rng(seed)
    W = random_block(rng, coupling)
    q = target_q(rng, case, W[0, 0], W[1, 1], mu)
    p = MatrixProblem.from_dense(W, q, np.array([mu]))
    found = enumerate_solutions(W, q, mu)
    for name in SOLVERS:
        if name == "naive" and coupling:
            continue
        result = solve(name, p, tol=1e-11)
        if name == "apgd":
            assert result.residual < 1e-11 or relaxation_violation(W, q, p.mu, result.lam) < 1e-9
            continue
        assert result.status == metrics.ABSOLUTE, (name, result.residual)
        assert coulomb_violation(W, q, mu, result.lam) < 1e-8, name
        if len(found) == 1:
            np.testing.assert_allclose(result.lam, found[0], rtol=1e-7, atol=1e-9, err_msg=name)


def tetrahedron():
    """Four marbles: three on a floor, apart, and one resting on them (μ = 0.5): 6 contacts, 18
    rows and 24 velocities, and A definite, so the impulses are unique."""
    rho = 1.4 * R
    x = [[rho * math.cos(a), rho * math.sin(a), R] for a in (0, 2 * math.pi / 3, 4 * math.pi / 3)]
    x.append([0.0, 0.0, R + math.sqrt(4 * R * R - rho * rho)])
    world = World(np.array(x), np.zeros((4, 3)), R, 1.0, {"kind": "floor", "height": 0.0})
    world.mu = world.mu_wall = 0.5
    sim = Simulation(world, registry.settings("pgs", 20), 1.0)
    sim.step()
    return sim.problem.copy()


def converged(problem, tol):
    out = {}
    for name in COULOMB:
        result = solve(name, problem, tol=tol)
        if result.status == metrics.ABSOLUTE:
            out[name] = result
    return out


def test_on_a_definite_pile_the_converged_solvers_agree_on_the_impulses():
    p = tetrahedron()
    assert np.linalg.eigvalsh(p.dense()).min() > 0.1
    done = converged(p, 1e-11)
    assert set(done) == set(COULOMB) - {"naive"}
    reference = done["pgs"].lam[0::3]
    for name, result in done.items():
        np.testing.assert_allclose(result.lam[0::3], reference, rtol=1e-6, err_msg=name)
    apgd = solve("apgd", p, tol=1e-11)
    assert apgd.status == metrics.ABSOLUTE  # all stick: the relaxation's answer is Coulomb's
    np.testing.assert_allclose(apgd.lam[0::3], reference, rtol=1e-6)


def test_on_the_bowl_the_velocities_agree_where_the_impulses_cannot(frictional_bowl):
    """60 marbles in the bowl: A is singular (a pile has more contact rows than it can move
    independently), so Coulomb's solutions form a family: the converged solvers' normal impulses
    differ by up to tens of percent, by vectors A cannot see, while the velocities u = A λ + b
    and every marble's velocity agree."""
    p = frictional_bowl
    done = converged(p, 1e-10)
    assert set(done) == set(COULOMB) - {"naive"}
    ref = done["pgs"]
    spread = 0.0
    for name, result in done.items():
        assert p.fclib_error(result.lam) < 1e-9, name
        np.testing.assert_allclose(p.error(result.lam), p.error(ref.lam), atol=1e-8, err_msg=name)
        np.testing.assert_allclose(p.velocity(result.lam), p.velocity(ref.lam), atol=1e-8)
        diff = result.lam - ref.lam
        spread = max(spread, np.abs(diff[0::3]).max() / np.abs(ref.lam[0::3]).max())
        assert np.abs(p.apply(diff)).max() < 1e-8 * (1 + np.abs(diff).max())
    assert spread > 0.01  # the impulses really are not unique


@pytest.mark.parametrize("name", SOLVERS)
def test_a_marble_below_the_friction_angle_stays_at_rest(name):
    """A marble on the incline at 15°, μ = 0.3 (friction angle 16.7°) with rolling locked
    (μ_r = r: a sphere rolls on any slope otherwise): every step converged, and it never moves
    faster than 1e-6 m/s over 5 s."""
    world = scenes.build("incline", {"angle": 15.0, "mu": 0.3, "mu_roll": R})
    # socp: each iteration an interior-point solve; 30 reach 1e-11 here (2000 took minutes).
    iterations = 30 if name == "socp" else ITERATIONS.get(name, 2000)
    sim = Simulation(world, registry.settings(name, iterations, False, {"abs_tol": 1e-11}),
                     warm_start=1.0)
    fastest = 0.0
    for _ in range(250):
        report = sim.step()
        assert report.result.status == metrics.ABSOLUTE or name == "naive", report.result
        fastest = max(fastest, float(np.linalg.norm(world.v[0])))
    assert fastest < 1e-6
