"""Proximal Gauss-Seidel: with local r and no adaptation it is PSOR with ω = γ, iterate for
iterate; Erleben's step merit decays r towards 0 where the objective test converges."""
from dataclasses import replace

import numpy as np
import pytest

from solver import metrics
from tests.solver.blocks import packed_box, problem_of
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
    """The diagnosis behind the objective test (docs/solver-lab.md): ρ = ‖Δλ‖∞ shrinks
    with R, so each rejection makes the next ρ smaller and R decays towards 0 until λ stops
    moving. Survey seed 180 (one marble, 6 contacts, singular A)."""
    problem = random_seed_problem(180)
    erleben = solve(name, problem, 20000, abs_tol=1e-10, merit="step")
    assert erleben.status == metrics.MAX_ITERATIONS and erleben.residual > 1e-3
    assert erleben.info["final_scale"] < 1e-12
    default = solve(name, problem, 20000, abs_tol=1e-10)
    assert default.status == metrics.ABSOLUTE and default.info["final_scale"] > 0.5


@pytest.fixture(scope="module")
def packed():
    return problem_of(packed_box(5000), 2)


def test_prox_gs_in_blocks_is_the_sweep_in_the_partition_order(packed):
    """Without adaptation nothing but ρ is reduced over the groups: the serial iterates."""
    serial = replace(packed, partition=None)
    one = solve("prox-gs", serial, 30, adapt=False, abs_tol=0.0)
    two = solve("prox-gs", packed, 30, adapt=False, abs_tol=0.0)
    assert np.any(one.lam > 0.0) and np.array_equal(one.lam, two.lam)


def test_adaptive_prox_gs_in_blocks_converges_as_the_serial_one(packed):
    """With adaptation the merits are summed by group (df) and reduced (ρ), and a rejected
    iterate is rolled back: the sweep in blocks converges to the same solution. r = 20 kg is
    about four times 1 / A_cc here, so iterates are rejected."""
    serial = replace(packed, partition=None)
    one = solve("prox-gs", serial, 3000, r="global", r_global=20.0, abs_tol=1e-9)
    two = solve("prox-gs", packed, 3000, r="global", r_global=20.0, abs_tol=1e-9)
    assert one.status == two.status == metrics.ABSOLUTE
    assert two.info["rejected"] > 0 and two.info["accepted"] > 0
    scale = np.abs(one.lam).max()
    assert np.abs(one.lam - two.lam).max() < 1e-6 * scale
