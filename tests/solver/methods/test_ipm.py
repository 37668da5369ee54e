"""ipm: the interior point on the cone complementarity form against answers found by hand (two
decoupled contacts, one sticking, one sliding), against the LCP's velocities (pgs to rounding)
without friction, against socp's answer on the frozen frictional bowl of 30; rolling rows handed
to newton; a bad setting refused."""
import numpy as np
import pytest

import scenes
from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.methods.ipm import _Scaling, _cone_step
from solver.params import ParamError
from solver.step import Simulation
from tests.solver.methods.conftest import settled
from tests.solver.methods.test_friction_solvers import enumerate_solutions, random_block, target_q
from tests.solver.methods.test_socp import two_contacts


def ipm(problem, iterations=200, **params):
    """The interior point alone (no newton polish) unless `polish` is given."""
    return registry.get("ipm").solve(problem.copy(), np.zeros(problem.size), registry.settings(
        "ipm", iterations, True, {"abs_tol": 1e-12, "polish": 0, **params}))


@pytest.mark.parametrize("form, coupling", [("lifted", "frozen"), ("shifted", "frozen"),
                                            ("shifted", "newton")])
def test_two_contacts_by_hand(form, coupling):
    """W = I, μ = ½ (test_socp.two_contacts): contact 0 sticks with λ = (1, -0.2, 0), contact 1
    slides with λ = (1, -0.5, 0) against u_t = 1.5. The shifted form with s held in each step
    reaches the cones' boundary (the gap at rounding) with the slide's s still 1e-11 off; the
    lifted form and the shifted one with s's derivative end at rounding."""
    result = ipm(two_contacts(), form=form, coupling=coupling)
    np.testing.assert_allclose(result.lam, [1.0, -0.2, 0.0, 1.0, -0.5, 0.0], atol=1e-9)
    assert result.residual < 1e-9
    if (form, coupling) != ("shifted", "frozen"):
        assert result.status == metrics.ABSOLUTE


def test_a_separating_contact_and_a_frictionless_one_by_hand():
    """Contact 0 (μ = ½) is pulled apart (q_n = 1 > 0): λ = 0; contact 1 has μ = 0, so its
    cone is R+ on the normal alone: λ = (2, 0, 0) whatever its tangential push."""
    q = np.array([1.0, 0.3, 0.0, -2.0, 5.0, 0.0])
    result = ipm(MatrixProblem.from_dense(np.eye(6), q, np.array([0.5, 0.0])))
    np.testing.assert_allclose(result.lam, [0.0, 0.0, 0.0, 2.0, 0.0, 0.0], atol=1e-9)


def test_a_contact_sticking_at_its_cones_edge_is_finished_by_the_polish():
    """The sticking contact of test_friction_solvers' random block (seed 0, μ = 1) whose answer
    has ‖λ_t‖ = μ λ_n: x on the cone's edge with y = 0, not strictly complementary. The
    interior point's gap reaches rounding with the residual still above 1e-11; newton from its
    answer ends at the enumerated solution."""
    rng = np.random.default_rng(0)
    W = random_block(rng, 0.0)
    q = target_q(rng, "stick", W[0, 0], W[1, 1], 1.0)
    problem = MatrixProblem.from_dense(W, q, np.array([1.0]))
    (answer,) = enumerate_solutions(W, q, 1.0)
    assert abs(np.hypot(answer[1], answer[2]) - answer[0]) < 1e-9  # on the cone's edge
    alone = ipm(problem, abs_tol=1e-11)
    assert alone.status != metrics.ABSOLUTE and alone.residual > 1e-11
    polished = ipm(problem, abs_tol=1e-11, polish=20)
    assert polished.status == metrics.ABSOLUTE and polished.info["polish_iterations"] >= 1
    np.testing.assert_allclose(polished.lam, answer, atol=1e-9)


def test_the_nesterov_todd_point_scales_x_and_z_to_one_point():
    """Θ x = Θ⁻¹ z for random points inside the cone, and the step to the boundary lands on it."""
    rng = np.random.default_rng(1)

    def inside(k):
        y = rng.normal(size=(k, 3))
        y[:, 0] = np.hypot(y[:, 1], y[:, 2]) + rng.uniform(0.1, 1.0, k)
        return y

    x, z = inside(8), inside(8)
    scaling = _Scaling(x, z, np.ones(1), np.ones(1))
    np.testing.assert_allclose(scaling.apply(x), scaling.apply(z, inverse=True), atol=1e-12)
    theta = scaling.matrices()
    np.testing.assert_allclose(np.einsum("kij,kj->ki", theta @ theta, x), z, atol=1e-12)
    d = rng.normal(size=(8, 3))
    alpha = _cone_step(x, d)
    edge = x + alpha[:, None] * d
    finite = np.isfinite(alpha)
    np.testing.assert_allclose(edge[finite, 0], np.hypot(edge[finite, 1], edge[finite, 2]),
                               atol=1e-12)


def test_frictionless_agrees_with_pgs():
    """The LCP as the cone R+ per contact: the velocities are pgs's to 1e-10 (λ of a pile is
    not unique; its velocities are)."""
    problem = settled("bowl", 60, overrides={"n": 40})
    result = ipm(problem)
    assert result.residual < 1e-10
    reference = registry.get("pgs").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("pgs", 50000, False,
                                                            {"abs_tol": 1e-13}))
    assert reference.residual < 1e-11
    np.testing.assert_allclose(problem.velocity(result.lam), problem.velocity(reference.lam),
                               atol=1e-10)


@pytest.fixture(scope="module")
def bowl30():
    """The frictional bowl of 30 (μ = μ_wall = ½) frozen at step 500 of 20 pgs sweeps with a
    full warm start: its solution has sliding contacts that pgs and newton miss."""
    sim = Simulation(scenes.build("bowl", {"n": 30, "mu": 0.5, "mu_wall": 0.5}),
                     registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(500):
        sim.step()
    return sim.problem.copy()


def test_frozen_bowl_of_30_reaches_socps_solution(bowl30):
    """The interior point alone stalls short of rounding (its gap reaches rounding while
    z - Z(x) is still ~1e-8, docs/solvers.md) but within 1e-7 of FCLIB's error, at the
    velocities of socp's answer (the fixed point on s and its polish, ~1e-8): the solution
    with sliding contacts, not newton's static pseudo-solution."""
    result = ipm(bowl30, iterations=1500)
    error = bowl30.fclib_error(result.lam)
    assert error < 1e-7
    reference = registry.get("socp").solve(bowl30.copy(), np.zeros(bowl30.size),
                                           registry.settings("socp", 60, False,
                                                             {"abs_tol": 1e-13}))
    assert bowl30.fclib_error(reference.lam) < 1e-7
    u = (bowl30.apply(result.lam) + bowl30.rhs).reshape(-1, 3)
    v = (bowl30.apply(reference.lam) + bowl30.rhs).reshape(-1, 3)
    # The contacts' velocities u = W λ + q, on the loaded contacts (a separated one's slip
    # does not enter the law).
    loaded = reference.lam[0::3] > 1e-9
    np.testing.assert_allclose(u[loaded], v[loaded], atol=5e-6)
    slip = np.hypot(v[:, 1], v[:, 2])
    sliding = loaded & (slip > 1e-6)
    assert np.count_nonzero(sliding) > 0  # the answer's slips are the reference's, not 0
    np.testing.assert_allclose(np.hypot(u[:, 1], u[:, 2])[sliding], slip[sliding], rtol=5e-2)


def test_rolling_rows_go_to_newton_and_say_so():
    """ipm solves 3-row contacts; a problem with rolling rows is newton's, with the same
    settings, so a run that switches to ipm on the heap goes on."""
    sim = Simulation(scenes.build("bowl", {"n": 10, "mu": 0.5, "mu_roll": 0.01}),
                     registry.settings("pgs", 5))
    for _ in range(30):
        sim.step()
    problem = sim.problem.copy()
    assert problem.rows == 6
    result = registry.get("ipm").solve(problem.copy(), np.zeros(problem.size),
                                       registry.settings("ipm", 30, True, {"abs_tol": 1e-10}))
    newton = registry.get("newton").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("newton", 30, True,
                                                            {"abs_tol": 1e-10}))
    assert result.info["delegated_to_newton"] == 1
    np.testing.assert_array_equal(result.lam, newton.lam)


def test_a_bad_setting_is_refused_in_one_line():
    with pytest.raises(ParamError, match="boundary") as err:
        registry.settings("ipm", 10, True, {"boundary": "1.5"})
    assert "\n" not in str(err.value)
    with pytest.raises(ParamError, match="coupling"):
        registry.settings("ipm", 10, True, {"coupling": "both"})
