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
