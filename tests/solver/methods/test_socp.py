"""socp: the conic relaxation and the fixed point on s against answers found by hand (two
decoupled contacts, one sticking, one sliding), the relaxation's KKT conditions on a random
problem, and the LCP's velocities (pgs run to rounding) without friction."""
import numpy as np
import pytest

from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.methods.socp import Relaxation
from tests.solver.methods.conftest import settled


def socp(problem, lam0=None, iterations=60, **params):
    lam0 = np.zeros(problem.size) if lam0 is None else lam0
    return registry.get("socp").solve(problem.copy(), lam0, registry.settings(
        "socp", iterations, False, {"abs_tol": 1e-11, **params}))


def two_contacts():
    """W = I, μ = ½: contact 0 pushed sideways by 0.2 sticks (λ = (1, -0.2, 0)); contact 1
    pushed by 2 slides with u_t = 2 - ½ = 1.5 (λ = (1, -0.5, 0)); s = μ‖u_t‖ = (0, 0.75)."""
    q = np.array([-1.0, 0.2, 0.0, -1.0, 2.0, 0.0])
    return MatrixProblem.from_dense(np.eye(6), q, np.array([0.5, 0.5]))


def test_two_contacts_by_hand():
    result = socp(two_contacts())
    np.testing.assert_allclose(result.lam, [1.0, -0.2, 0.0, 1.0, -0.5, 0.0], atol=1e-9)
    assert result.status == metrics.ABSOLUTE


def test_the_fixed_point_is_the_known_shift():
    problem = two_contacts()
    relaxation = Relaxation(problem)
    lam, status = relaxation.solve(np.array([0.0, 0.75]))
    assert status == "Solved"
    np.testing.assert_allclose(relaxation.shift(lam), [0.0, 0.75], atol=1e-9)
    # From s = 0 the relaxation's answer is not Coulomb's: the sliding contact lifts off.
    lam0, _ = relaxation.solve(np.zeros(2))
    assert relaxation.shift(lam0)[1] > 0.75 + 1e-3 or abs(lam0[3] - 1.0) > 1e-3


def test_plain_map_without_anderson_also_converges():
    result = socp(two_contacts(), anderson=0, iterations=200)
    np.testing.assert_allclose(result.lam, [1.0, -0.2, 0.0, 1.0, -0.5, 0.0], atol=1e-9)


def test_relaxation_kkt_conditions():
    rng = np.random.default_rng(3)
    m = 6
    H = rng.normal(size=(3 * m, 3 * m - 4))
    W = H @ H.T  # positive semidefinite and singular, as a pile's
    q = rng.normal(size=3 * m)
    mu = rng.uniform(0.2, 1.0, m)
    problem = MatrixProblem.from_dense(W, q, mu)
    lam, status = Relaxation(problem).solve(np.zeros(m))
    assert status == "Solved"
    u = (W @ lam + q).reshape(m, 3)
    lam = lam.reshape(m, 3)
    scale = 1e-7 * (1.0 + np.abs(q).max())
    # λ in K, u in its dual K* = {‖u_t‖ <= u_n / μ}, complementary per contact.
    assert np.all(mu * lam[:, 0] - np.hypot(lam[:, 1], lam[:, 2]) >= -scale)
    assert np.all(u[:, 0] / mu - np.hypot(u[:, 1], u[:, 2]) >= -scale)
    assert np.all(np.abs(np.sum(lam * u, axis=1)) <= scale)
    assert np.abs(lam).max() > 1e-3  # not the trivial answer


@pytest.mark.parametrize("scene, steps, overrides", [("bowl", 60, {"n": 40}),
                                                      ("box", 300, {"n": 200})])
def test_frictionless_agrees_with_pgs(scene, steps, overrides):
    """One conic solve (the LCP's QP) and its newton polish: on the box the interior point
    alone ends 4e-6 m/s short; polished, the velocities are pgs's to 1e-10."""
    problem = settled(scene, steps, overrides=overrides)
    result = socp(problem, iterations=3, abs_tol=1e-12)
    assert result.status == metrics.ABSOLUTE and result.info["conic_solves"] == 1
    reference = registry.get("pgs").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("pgs", 50000, False,
                                                            {"abs_tol": 1e-13}))
    assert reference.residual < 1e-11
    # λ of a pile is not unique; its velocities are.
    np.testing.assert_allclose(problem.velocity(result.lam), problem.velocity(reference.lam),
                               atol=1e-10)


def test_the_polish_is_newton_from_the_interior_points_answer():
    """polish 0 leaves the conic answer as it is; the polish goes on from it (its trace the
    conic solve's, then newton's), and ends where newton from that answer ends."""
    problem = settled("box", 300, overrides={"n": 200})

    def traced(**params):
        return registry.get("socp").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("socp", 3, True,
                                                            {"abs_tol": 1e-12, **params}))

    bare = traced(polish=0)
    assert bare.residual > 1e-8 and "polish_iterations" not in bare.info
    polished = traced()
    k = polished.info["polish_iterations"]
    assert polished.iterations == bare.iterations + k and len(polished.trace) == k + 2
    assert polished.trace[1] == bare.residual
    newton = registry.get("newton").solve(problem.copy(), bare.lam.copy(), registry.settings(
        "newton", 20, True, {"abs_tol": 1e-12, "prox": 1e-3}))
    np.testing.assert_array_equal(polished.lam, newton.lam)


def test_expanding_map_is_reported():
    # patience 1: the first iteration whose map residual grows ends the solve and says so.
    problem = settled("bowl", 40, overrides={"n": 20, "mu": 0.5, "mu_wall": 0.5})
    result = socp(problem, iterations=200, patience=1, anderson=0, polish=0)
    # The plain map on this pile grows within a dozen steps.
    assert result.info["expansions"] == 1 and result.info["not_contracting"] == 1
    assert result.status == metrics.RELATIVE and result.iterations < 200


def test_a_conic_solve_cut_by_the_time_limit_is_the_budget_spent(monkeypatch):
    """Each conic solve is given what the solve's time limit leaves; one that Clarabel ends
    "MaxTime" is no answer: the solve keeps the last answer and ends max_iterations."""
    from solver.methods import socp as module

    problem = two_contacts()
    real = Relaxation.solve
    calls = []

    def timed(self, s, scale=1.0, start=None, seconds=None):
        calls.append(seconds)
        if len(calls) == 3:
            return np.full(problem.size, 7.0), "MaxTime"
        return real(self, s, scale, start, seconds)

    monkeypatch.setattr(module.Relaxation, "solve", timed)
    settings = registry.settings("socp", 50, True, {"abs_tol": 1e-300, "anderson": 0,
                                                     "polish": 0})
    settings = type(settings)(settings.method, settings.iterations, True, settings.params,
                              time_limit=100.0)
    result = registry.get("socp").solve(problem.copy(), np.zeros(problem.size), settings)
    assert result.status == metrics.MAX_ITERATIONS and result.iterations == 3
    assert not np.any(result.lam == 7.0)
    assert calls[0] <= 100.0 and calls[1] < calls[0]  # what is left, less each time
