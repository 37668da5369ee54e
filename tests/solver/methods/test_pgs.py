"""Projected Gauss-Seidel: a sweep is Gauss-Seidel on the dense LCP, the velocities it carries
stay those of its impulses, and it improves on the iterate it starts from."""
import numpy as np

from solver.methods.gauss_seidel import relaxed_sweeps
from solver.methods.pgs import prepare
from tests.solver.methods.reference import random_problem, solve

def test_pgs_improves_on_the_iterate_it_starts_from(settled_bowl_problem):
    result = solve("pgs", settled_bowl_problem, 50)
    assert result.trace[-1] < 0.5 * result.trace[0]
    assert result.lam.min() >= 0.0


def dense_projected_sor(A, b, lam, omega, sweeps):
    """The textbook projected SOR on the dense matrix, contact by contact."""
    lam = lam.copy()
    for _ in range(sweeps):
        for c in range(len(b)):
            e = A[c] @ lam + b[c]
            lam[c] = max(0.0, lam[c] - omega * e / A[c, c])
    return lam


def test_a_sweep_is_projected_sor_on_the_dense_matrix():
    problem = random_problem(np.random.default_rng(3), 4, 9)
    A, b = problem.dense(), problem.rhs
    for omega in (1.0, 1.4):
        lam = np.zeros(problem.m)
        v, bias, step = np.empty_like(problem.v_pred), np.empty(problem.m), np.empty(problem.m)
        prepare(problem.A, lam, problem.v_pred, (problem.gap, problem.diag),
                (problem.dt, omega), (v, bias, step), problem.partition)
        relaxed_sweeps(problem.A, (bias, step), v, lam, 6, problem.partition)
        np.testing.assert_allclose(lam, dense_projected_sor(A, b, np.zeros(problem.m), omega, 6),
                                   rtol=1e-10, atol=1e-13)
        # The velocities the sweep carries are those its impulses leave.
        np.testing.assert_allclose(v, problem.velocity(lam), atol=1e-12)
