"""Naive impulses: they never shrink, so complementarity fails where an impulse must."""
import numpy as np

from solver import metrics
from solver.problem import ContactProblem
from tests.solver.methods.reference import enumerate_lcp, solve

def v_shaped_problem():
    """A marble at rest in a V of two walls tilted 30 degrees from the floor: A_01 > 0, so the
    first wall's impulse overshoots and must later shrink."""
    s, c = np.sin(np.pi / 6), np.cos(np.pi / 6)
    normal = np.array([[s, 0, c], [-s, 0, c]])
    return ContactProblem(np.array([-1, -1]), np.array([0, 0]), normal, np.zeros(2),
                          np.array([1.0]), np.array([[0.0, 0.0, -9.81 * 0.02]]), 0.02)


def test_naive_fails_complementarity_where_an_impulse_must_shrink():
    problem = v_shaped_problem()
    exact = enumerate_lcp(problem.dense(), problem.rhs)
    naive = solve("naive", problem, 500)
    pgs = solve("pgs", problem, 500, abs_tol=1e-12)
    assert pgs.residual < 1e-12 and np.allclose(pgs.lam, exact)
    e = problem.error(naive.lam)
    assert e.min() > -1e-12  # no penetration: naive does stop the marble...
    parts = metrics.parts(naive.lam, e)
    assert parts["complementarity"] > 1e-3  # ...but pushes on a wall it is leaving
    assert naive.residual > 1e-3 and naive.status == metrics.MAX_ITERATIONS
