"""newton: the nonsmooth Newton solver against answers found another way: the LCP's unique
velocities (pgs run to rounding), Coulomb's law to rounding on the pyramid where the Coulomb
sweeps stall, and a start that is already the answer."""
import numpy as np
import pytest

import scenes
from solver import metrics
from solver.methods import registry
from solver.step import Simulation
from tests.solver.methods.conftest import settled


def newton(problem, lam0=None, iterations=400, **params):
    lam0 = np.zeros(problem.size) if lam0 is None else lam0
    return registry.get("newton").solve(problem.copy(), lam0, registry.settings(
        "newton", iterations, False, {"abs_tol": 1e-13, **params}))


@pytest.fixture(scope="module")
def pyramid():
    """The first step's problem of the five-layer pyramid at μ = 0.73, 1.2 times its statics
    threshold: a solution where nothing moves exists."""
    sim = Simulation(scenes.build("pyramid", {"mu": 0.73}), registry.settings("pgs", 20),
                     warm_start=1.0)
    sim.step()
    return sim.problem.copy()


def test_frictionless_velocities_are_the_lcps():
    problem = settled("bowl", 60, overrides={"n": 40})
    result = newton(problem)
    assert result.status == metrics.ABSOLUTE and result.residual < 1e-13
    reference = registry.get("pgs").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("pgs", 20000, False,
                                                            {"abs_tol": 1e-14}))
    assert reference.residual < 1e-11
    # A pile's λ is not unique (W is singular); the velocities it gives are.
    u = problem.apply(result.lam) + problem.rhs
    u_ref = problem.apply(reference.lam) + problem.rhs
    assert np.max(np.abs(u - u_ref)) < 1e-9


def test_the_pyramid_is_solved_to_rounding(pyramid):
    result = newton(pyramid)
    assert result.status == metrics.ABSOLUTE
    assert pyramid.fclib_error(result.lam) < 1e-12
    u = (pyramid.apply(result.lam) + pyramid.rhs).reshape(pyramid.m, pyramid.rows)
    lam = result.lam.reshape(pyramid.m, pyramid.rows)
    loaded = lam[:, 0] > 1e-9
    assert loaded.sum() >= pyramid.n  # every marble's weight goes down through its contacts
    # Coulomb's law checked directly: a loaded contact does not approach, and where it slides
    # its friction is on the disk's edge, against the slip.
    assert np.max(np.abs(u[loaded, 0])) < 1e-12
    slip = np.linalg.norm(u[loaded, 1:], axis=1)
    sliding = slip > 1e-10
    friction = lam[loaded, 1:][sliding]
    mu = np.asarray(pyramid.mu)[loaded][sliding]
    assert np.allclose(np.linalg.norm(friction, axis=1), mu * lam[loaded, 0][sliding],
                       rtol=1e-9)
    along = np.einsum("ij,ij->i", friction, u[loaded, 1:][sliding])
    assert np.all(along <= 0.0)
    assert result.info["newton_steps"] > 0


def test_pgs_stalls_where_newton_converges(pyramid):
    pgs = registry.get("pgs").solve(pyramid.copy(), np.zeros(pyramid.size),
                                    registry.settings("pgs", 2000, False))
    assert pyramid.fclib_error(pgs.lam) > 1e3 * pyramid.fclib_error(newton(pyramid).lam)


def test_a_solution_as_start_needs_no_step(pyramid):
    solved = newton(pyramid).lam
    again = newton(pyramid, lam0=solved)
    assert again.status == metrics.ABSOLUTE
    assert again.iterations <= 1
    assert np.max(np.abs(again.lam - solved)) <= 1e-12 * np.max(np.abs(solved))


def test_without_the_proximal_term_a_resting_pile_is_still_solved(pyramid):
    """prox 0 makes H singular where rows stick: the solve must fall back to a regular
    proximal problem rather than fail."""
    result = newton(pyramid, prox=0.0)
    assert result.status in (metrics.ABSOLUTE, metrics.MAX_ITERATIONS)
    assert np.all(np.isfinite(result.lam))
    assert result.residual < 1e-2 * result.residual_initial
