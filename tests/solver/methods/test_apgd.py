"""APGD: without friction it solves the LCP; with friction it solves Anitescu's relaxation
(its own known answers: the optimality conditions of the convex problem, the unique velocities
the ccp sweeps also find), not Coulomb's law: a slide separates at u_n = μ ‖u_t‖."""
import numpy as np
import pytest

from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from tests.solver.methods.reference import enumerate_lcp, random_problem


def solve(problem, iterations, lam0=None, name="apgd", **params):
    size = problem.size if getattr(problem, "frictional", False) else problem.m
    lam0 = np.zeros(size) if lam0 is None else lam0
    return registry.get(name).solve(problem, lam0.copy(),
                                    registry.settings(name, iterations, True, params))


def relaxation_violation(W, q, mu, lam):
    """The conditions of min ½λᵀWλ + qᵀλ over the cones, per contact: λ in K, u = Wλ + q in
    its dual (u_n >= μ ‖u_t‖), λ·u = 0 (relative to the scales of λ and u)."""
    u = W @ lam + q
    scale = (1 + np.abs(lam).max()) * (1 + np.abs(u).max())
    worst = 0.0
    for c in range(len(mu)):
        lc, uc = lam[3 * c:3 * c + 3], u[3 * c:3 * c + 3]
        worst = max(worst, np.hypot(*lc[1:]) - mu[c] * lc[0], mu[c] * np.hypot(*uc[1:]) - uc[0],
                    abs(lc @ uc) / scale)
    return worst


@pytest.mark.parametrize("precondition", [True, False])
@pytest.mark.parametrize("seed", range(8))
def test_without_friction_it_solves_the_lcp(seed, precondition):
    p = random_problem(np.random.default_rng(seed), 4, 7)
    A = p.dense()
    reference = enumerate_lcp(A, p.rhs)
    result = solve(p, 20000, abs_tol=1e-11, precondition=precondition)
    assert result.status == metrics.ABSOLUTE and result.residual < 1e-10
    np.testing.assert_allclose(A @ result.lam, A @ reference, atol=1e-8)


def coupled_pile(seed, contacts=3):
    """A random well-posed relaxation: W (3c, 3c) symmetric positive definite, q with
    approaching normals, μ (c,) in [0.1, 1)."""
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(3 * contacts, 4 * contacts))
    W = B @ B.T / (4 * contacts) + 0.1 * np.eye(3 * contacts)
    q = rng.normal(size=3 * contacts)
    q[0::3] = -np.abs(q[0::3])
    return W, q, rng.uniform(0.1, 1.0, contacts)


@pytest.mark.parametrize("precondition", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_it_solves_the_relaxation_of_a_coupled_pile(seed, precondition):
    W, q, mu = coupled_pile(seed)
    result = solve(MatrixProblem.from_dense(W, q, mu), 20000, abs_tol=1e-11,
                   precondition=precondition)
    assert result.status == metrics.ABSOLUTE
    assert relaxation_violation(W, q, mu, result.lam) < 1e-9


@pytest.mark.parametrize("iterations", [1, 5])
@pytest.mark.parametrize("seed", range(4))
def test_preconditioning_is_the_plain_method_on_the_scaled_problem(seed, iterations):
    """The preconditioned method on (W, q, μ) is the sources' on (S W S, S q, μ s_n/s_t), S
    one scale 1/sqrt(W_jj) per sub-block: the same start estimate, steps, backtracks and
    restarts, so the same last L (to rounding). Blocks scaled far apart make every misplaced
    power of S show."""
    W, q, mu = coupled_pile(seed, 4)
    units = np.repeat(np.exp(np.random.default_rng(seed).uniform(-3, 3, 8)), [1, 2] * 4)
    W = W * units[:, None] * units[None, :]
    q = q * units
    d = np.diag(W)
    s = np.empty(12)
    s[0::3] = 1.0 / np.sqrt(d[0::3])
    s[1::3] = s[2::3] = 1.0 / np.sqrt(np.maximum(d[1::3], d[2::3]))
    scaled = MatrixProblem.from_dense(W * s[:, None] * s[None, :], q * s, mu * s[0::3] / s[1::3])
    plain = solve(scaled, iterations, abs_tol=0.0, precondition=False)
    pre = solve(MatrixProblem.from_dense(W, q, mu), iterations, abs_tol=0.0)
    assert pre.products == plain.products
    for key in ("backtracks", "restarts"):
        assert pre.info[key] == plain.info[key]
    assert pre.info["lipschitz"] == pytest.approx(plain.info["lipschitz"], rel=1e-9)
    unscaled = solve(MatrixProblem.from_dense(W, q, mu), iterations, abs_tol=0.0,
                     precondition=False)
    assert unscaled.info["lipschitz"] != pytest.approx(pre.info["lipschitz"], rel=1e-3)


def test_preconditioning_lets_one_step_serve_the_rolling_rows():
    """A bowl with rolling resistance: the rolling rows' A_jj (1/(kg m²)) are a hundred times
    the normal's, so the sources' single step 1/L barely moves the other rows; one scale per
    sub-block makes the step fit them all (docs/solvers.md measures the piles)."""
    from tests.solver.methods.conftest import settled
    p = settled("bowl", 60, overrides={"n": 40, "mu": 0.5, "mu_roll": 0.01, "mu_spin": 0.01})
    assert p.rows == 6 and p.diag[3::6].max() > 50 * p.diag[0::6].max()
    runs = {pre: solve(p, 20000, abs_tol=1e-6, precondition=pre) for pre in (True, False)}
    assert all(r.status == metrics.ABSOLUTE for r in runs.values())
    assert 4 * runs[True].iterations < runs[False].iterations, {
        pre: r.iterations for pre, r in runs.items()}
    np.testing.assert_allclose(p.error(runs[True].lam), p.error(runs[False].lam), atol=1e-4)


def test_a_slide_separates_at_mu_times_the_slip():
    """A marble sliding on a floor: Coulomb's law keeps u_n = 0; the relaxation lifts it off at
    u_n = μ ‖u_t‖ with the friction at its bound."""
    W = np.diag([1.0, 3.5, 3.5])
    q = np.array([-0.2, 3.0, 0.0])
    p = MatrixProblem.from_dense(W, q, np.array([0.5]))
    result = solve(p, 2000, abs_tol=1e-13)
    u = W @ result.lam + q
    assert u[0] == pytest.approx(0.5 * np.hypot(u[1], u[2]), rel=1e-9)
    assert np.hypot(*result.lam[1:]) == pytest.approx(0.5 * result.lam[0], rel=1e-9)
    assert result.residual > 0.1  # far from Coulomb's solution
    coulomb = solve(p, 50, name="nsgs", abs_tol=1e-13)
    assert coulomb.status == metrics.ABSOLUTE and abs((W @ coulomb.lam + q)[0]) < 1e-13


def test_it_finds_the_velocities_of_the_ccp_sweeps(frictional_bowl):
    """The relaxation is convex: its velocities u = Aλ + b are unique (the impulses are not on a
    pile), so APGD and pgs with the ccp law agree on them."""
    p = frictional_bowl
    apgd = solve(p, 20000, abs_tol=1e-10)
    ccp = solve(p, 40000, name="pgs", friction="ccp", abs_tol=1e-10)
    assert apgd.status == ccp.status == metrics.ABSOLUTE, (apgd.residual, ccp.residual)
    np.testing.assert_allclose(p.error(apgd.lam), p.error(ccp.lam), atol=1e-8)


def test_counts_and_restarts(frictional_bowl):
    p = frictional_bowl
    result = solve(p, 200, abs_tol=0.0)
    i = result.info
    assert result.products == 2 + 200 + i["backtracks"]
    assert i["restarts"] > 0 and i["lipschitz"] > 0
    assert solve(p, 200, abs_tol=0.0, restart=False).info["restarts"] == 0
    # The best iterate is returned: its relaxation residual is the smallest seen.
    assert i["relaxation_residual"] <= solve(p, 100, abs_tol=0.0).info["relaxation_residual"]


def test_rolling_rows_make_the_relaxation_lift_off_further():
    """A marble spinning on a floor (50 rad/s about y, slipping at 5 m/s) with rolling
    resistance: both bounds are reached, and the relaxation's contact separates at u_n = μ ‖u_t‖
    + μ_r ‖u_r‖, the dual of the set the impulses live in."""
    from tests.solver.methods.test_sweeps import floor_contact
    p = floor_contact((0.0, 0.0, 0.0), w=(0.0, 50.0, 0.0), mu=0.5, mu_roll=0.01)
    lam = solve(p, 2000, abs_tol=1e-13).lam
    u = p.error(lam)
    assert np.hypot(lam[1], lam[2]) == pytest.approx(0.5 * lam[0], rel=1e-9)
    assert np.hypot(lam[3], lam[4]) == pytest.approx(0.01 * lam[0], rel=1e-9)
    assert u[0] == pytest.approx(0.5 * np.hypot(u[1], u[2]) + 0.01 * np.hypot(u[3], u[4]),
                                 rel=1e-9)


def test_relaxation_error_is_the_measure_of_apgds_best_iterate(frictional_bowl):
    """The public measure is the one apgd stops on: at its returned (best) iterate it equals
    the solver's own count, and it is 0 at a solution of the relaxation that is no Coulomb
    solution (the lone slide of test_a_slide_separates_at_mu_times_the_slip)."""
    from solver.methods.apgd import relaxation_error
    result = solve(frictional_bowl, 150, abs_tol=0.0)
    assert relaxation_error(frictional_bowl, result.lam) == pytest.approx(
        result.info["relaxation_residual"], rel=1e-12, abs=1e-300)
    assert relaxation_error(frictional_bowl, np.zeros(frictional_bowl.size)) > 1e-3
    W = np.diag([1.0, 3.5, 3.5])
    q = np.array([-0.2, 3.0, 0.0])
    p = MatrixProblem.from_dense(W, q, np.array([0.5]))
    # The slide's closed form: λ = λ_n (1, -μ, 0) and u_n = μ u_t give
    # λ_n - 0.2 = 0.5 (3 - 3.5 × 0.5 λ_n), λ_n = 1.7 / 1.875.
    lam_n = 1.7 / 1.875
    lam = np.array([lam_n, -0.5 * lam_n, 0.0])
    assert relaxation_error(p, lam) < 1e-14 and p.residual(lam) > 0.1
    assert relaxation_error(p, lam * 1.01) > 1e-3
