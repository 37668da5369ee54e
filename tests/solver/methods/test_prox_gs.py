"""Proximal Gauss-Seidel: with local r and no adaptation it is PSOR with ω = γ, iterate for
iterate; Erleben's step merit decays r towards 0 where the objective test converges."""
import numpy as np
import pytest

from solver import metrics
from tests.solver.methods.reference import random_seed_problem, solve

@pytest.mark.parametrize("gamma", [0.7, 1.0, 1.5])
def test_prox_gs_local_without_adaptation_is_psor(gamma, bowl500):
    p = bowl500
    rng = np.random.default_rng(3)
    lam0 = rng.uniform(0.0, 1.0, p.m)
    for r in ("local", "blocked"):
        prox = solve("prox-gs", p, 40, lam0=lam0, r=r, gamma=gamma, adapt=False, abs_tol=0.0)
        psor = solve("psor", p, 40, lam0=lam0, omega=gamma, abs_tol=0.0)
        np.testing.assert_allclose(prox.trace, psor.trace, rtol=1e-12, atol=0)
        np.testing.assert_allclose(prox.lam, psor.lam, rtol=1e-12, atol=1e-15)
    # ...and the iterates differ as soon as γ differs from ω: the test can tell them apart.
    other = solve("psor", p, 40, lam0=lam0, omega=gamma * 0.9, abs_tol=0.0)
    assert not np.allclose(other.lam, prox.lam, rtol=1e-6)


@pytest.mark.parametrize("name", ["prox-gs", "prox-jacobi"])
def test_erlebens_merit_decays_r_to_zero_where_the_objective_test_converges(name):
    """The diagnosis behind the objective test (README, Solver laboratory): ρ = ‖Δλ‖∞ shrinks
    with R, so each rejection makes the next ρ smaller and R decays towards 0 until λ stops
    moving. Survey seed 180 (one marble, 6 contacts, singular A)."""
    problem = random_seed_problem(180)
    erleben = solve(name, problem, 20000, abs_tol=1e-10, merit="step")
    assert erleben.status == metrics.MAX_ITERATIONS and erleben.residual > 1e-3
    assert erleben.info["final_scale"] < 1e-12
    default = solve(name, problem, 20000, abs_tol=1e-10)
    assert default.status == metrics.ABSOLUTE and default.info["final_scale"] > 0.5
