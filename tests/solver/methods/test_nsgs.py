"""nsgs: exact local solves. On the program's problems (spheres, diagonal blocks) the closed
form is the cone step, so nsgs is pgs iterate for iterate; on coupled blocks it is not."""
import numpy as np

from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from tests.solver.methods.coulomb import coulomb_violation, random_block


def solve(name, problem, iterations, **params):
    return registry.get(name).solve(problem, np.zeros(problem.size if hasattr(problem, "size")
                                                      else problem.m),
                                    registry.settings(name, iterations, True, params))


def test_nsgs_is_pgs_on_spheres(frictional_bowl, settled_bowl_problem):
    for p in (frictional_bowl, settled_bowl_problem):
        a, b = solve("nsgs", p, 60, abs_tol=0.0), solve("pgs", p, 60, abs_tol=0.0)
        np.testing.assert_array_equal(a.trace, b.trace)
        np.testing.assert_array_equal(a.lam, b.lam)


def test_nsgs_solves_a_lone_coupled_contact_in_one_sweep_where_pgs_needs_more():
    rng = np.random.default_rng(3)
    W = random_block(rng, 0.5)
    q = np.array([-1.0, 0.4, -0.3])
    p = MatrixProblem.from_dense(W, q, np.array([0.3]))
    one = solve("nsgs", p, 1, abs_tol=0.0)
    assert coulomb_violation(W, q, 0.3, one.lam) < 1e-12 and one.residual < 1e-12
    assert one.info["local_failures"] == 0
    assert solve("pgs", p, 1, abs_tol=0.0).residual > 1e-3


def test_nsgs_converges_on_a_coupled_pile():
    """Four contacts with coupled blocks and couplings between contacts (a random SPD W): the
    exact local solves converge to a solution of every contact's law."""
    rng = np.random.default_rng(8)
    B = rng.normal(size=(12, 14))
    W = B @ B.T / 14 + 0.2 * np.eye(12)
    q = rng.normal(size=12)
    q[0::3] = -np.abs(q[0::3])
    p = MatrixProblem.from_dense(W, q, np.full(4, 0.3))
    result = solve("nsgs", p, 5000, abs_tol=1e-11)
    assert result.status == metrics.ABSOLUTE
    u = W @ result.lam + q
    for c in range(4):
        k = slice(3 * c, 3 * c + 3)
        local_q = u[k] - W[k, k] @ result.lam[k]
        assert coulomb_violation(W[k, k], local_q, 0.3, result.lam[k]) < 1e-9


def test_on_the_programs_own_export_every_local_problem_takes_the_closed_form(frictional_bowl):
    """W = J M^-1 Jᵀ assembled into a file carries off-diagonal rounding in its blocks; nsgs
    treats them as the diagonal blocks they are (the closed form, pgs's iterates to rounding)
    and says so."""
    W = MatrixProblem.from_problem(frictional_bowl)
    blocks = W.blocks
    off = np.abs(blocks - blocks * np.eye(3)).max(axis=(1, 2))
    assert off.max() > 0.0  # rounding the exact test would have sent to enumeration
    result = solve("nsgs", W, 40, abs_tol=0.0)
    live = int(np.count_nonzero(frictional_bowl.diag[0::3] > 0.0))
    assert result.info["local_closed_form"] == 40 * live
    assert result.info["local_enumerated"] == result.info["local_failures"] == 0
    pgs = solve("pgs", frictional_bowl, 40, abs_tol=0.0)
    np.testing.assert_allclose(result.trace, pgs.trace, rtol=1e-9, atol=1e-14)


def test_a_block_coupled_beyond_rounding_is_enumerated():
    rng = np.random.default_rng(5)
    W = np.diag([1.0, 3.5, 3.5]) + 1e-9 * rng.normal(size=(3, 3))
    W = 0.5 * (W + W.T)
    p = MatrixProblem.from_dense(W, np.array([-1.0, 0.2, 0.1]), np.array([0.3]))
    result = solve("nsgs", p, 3, abs_tol=0.0)
    assert result.info["local_enumerated"] == 3 and result.info["local_closed_form"] == 0
