"""The Gauss-Seidel driver over an explicit W: on the explicit form of the program's own
problems it is the geometry sweep; on coupled blocks its fixed points obey Coulomb's law."""
import numpy as np
import pytest

from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.methods.laws import CONE, NSGS, PROX
from solver.methods.matrix_sweeps import matrix_sweeps
from solver.methods.operator import local_steps
from tests.solver.methods.coulomb import coulomb_violation, random_block


def solve(name, problem, iterations, lam0=None, **params):
    lam0 = np.zeros(problem.size) if lam0 is None else lam0
    return registry.get(name).solve(problem, lam0.copy(),
                                    registry.settings(name, iterations, True, params))


@pytest.mark.parametrize("name, params", [("pgs", {}), ("psor", {}), ("naive", {}),
                                          ("pgs", {"friction": "box"}),
                                          ("pgs", {"friction": "ccp"}), ("jacobi", {})])
def test_the_explicit_form_is_solved_as_the_geometry(name, params, frictional_bowl):
    p = frictional_bowl
    mp = MatrixProblem.from_problem(p)
    geo = solve(name, p, 40, abs_tol=0.0, **params)
    mat = solve(name, mp, 40, abs_tol=0.0, **params)
    np.testing.assert_allclose(mat.trace, geo.trace, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(mat.lam, geo.lam, rtol=1e-9, atol=1e-12)


def single(W, q, mu):
    return MatrixProblem.from_dense(W, q, np.array([mu]))


def sweep(problem, law, count, omega=1.0):
    lam = np.zeros(problem.size)
    u = problem.error(lam)
    counts = np.zeros(3, dtype=np.int64)
    matrix_sweeps(problem.columns, (local_steps(problem, omega), 1.0, problem.mu), (law, False),
                  u, lam, count, counts)
    return lam, u, counts[0]


@pytest.mark.parametrize("seed", range(12))
def test_a_coupled_contact(seed):
    """nsgs solves it in one sweep; the cone law (tangents after the normal) and Erleben's map
    (all rows from the same velocities) converge to a Coulomb solution; u stays W λ + q."""
    rng = np.random.default_rng(seed)
    W = random_block(rng, 0.3)
    q = np.array([-rng.uniform(0.5, 2), *rng.normal(size=2)])
    mu = rng.uniform(0.1, 0.8)
    p = single(W, q, mu)
    lam, u, failed = sweep(p, NSGS, 1)
    assert failed == 0 and coulomb_violation(W, q, mu, lam) < 1e-10
    for law in (CONE, PROX):
        lam, u, _ = sweep(p, law, 400)
        assert coulomb_violation(W, q, mu, lam) < 1e-9, law
        np.testing.assert_allclose(u, W @ lam + q, atol=1e-12)


def test_the_cone_law_and_erlebens_map_differ_on_a_coupled_block():
    W = np.array([[1.0, 0.4, 0.0], [0.4, 2.0, 0.0], [0.0, 0.0, 2.0]])
    p = single(W, np.array([-1.0, 0.3, 0.0]), 0.5)
    assert not np.allclose(sweep(p, CONE, 1)[0], sweep(p, PROX, 1)[0])
