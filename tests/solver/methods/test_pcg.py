"""Projected conjugate gradient (pcg, and ppcg, its Jacobi-preconditioned form): the sources'
claims on the resting column and the mass-ratio pair, the safeguard, and the CG family's lead
over PSOR on the settled bowl."""
import numpy as np
import pytest

from solver import metrics
from tests.solver.methods.conftest import settled
from tests.solver.methods.reference import random_seed_problem, solve

@pytest.mark.parametrize("name", ["pcg", "ppcg"])
def test_pcg_safeguard_ends_the_cycle_of_projected_steps(name):
    """Survey seed 77 (one marble, 8 contacts, A of rank 3): the projected CG step raises f at
    every clipped step and the iterates cycle for ever; the safeguard solves it in 3."""
    problem = random_seed_problem(77)
    plain = solve(name, problem, 20000, abs_tol=1e-10, safeguard=False)
    assert plain.status == metrics.MAX_ITERATIONS and plain.residual > 0.1
    safe = solve(name, problem, 20000, abs_tol=1e-10)
    assert safe.status == metrics.ABSOLUTE and safe.iterations <= 5
    assert safe.info["safeguards"] >= 1


@pytest.mark.parametrize("k", [2, 3, 5, 7])
def test_pcg_solves_a_resting_column_of_k_marbles_in_k_iterations(k):
    # The exact resting column (touching marbles at rest: the scene's first step), so that no
    # rounding left by a settling run decides the count.
    problem = settled("column", 1, "ppcg", 500, True, {"n": k}, abs_tol=1e-13)
    assert problem.m == k  # the floor and k - 1 marble pairs
    # Textbook (preconditioned) CG on an SPD system of size k: k iterations, no restart. Jacobi
    # preconditioning leaves a component that should stay 0 at -1.5e-14 N s after 3 iterations
    # (k = 7); clipping that is rounding, not an active-set change, so it must not restart CG
    # (it did: ppcg took 11).
    for name in ("pcg", "ppcg"):
        result = solve(name, problem, 10 * k, abs_tol=1e-10)  # default restart rule: clip
        assert result.status == metrics.ABSOLUTE, name
        assert result.iterations <= k, (name, result.iterations)
        assert result.info["restarts"] == 0 and result.info["safeguards"] == 0
    # The sources' literal rule (restart=active) restarts whenever {λ > 0} changes, which the
    # first step from λ = 0 always does.
    for name in ("pcg", "ppcg"):
        other = solve(name, problem, 10 * k, abs_tol=1e-10, restart="active")
        assert other.status == metrics.ABSOLUTE and other.iterations <= 2 * k


@pytest.mark.parametrize("steps", [1, 10, 150])
@pytest.mark.parametrize("name", ["pcg", "ppcg"])
def test_the_safeguard_does_not_fire_on_the_resting_column(name, steps):
    """A column run with pgs, later steps included: the sources' PCG (safeguard=0) converges in
    7 iterations; so must the default, with the same iterates, and the safeguard must not fire
    on rounding afterwards either (it fired 1-2 times in 40 iterations at steps 1 and 10 on
    changes of f of 1e-31 J). Past convergence the steps are rounding and are not taken."""
    problem = settled("column", steps)
    assert problem.m == 7
    plain = solve(name, problem, 40, abs_tol=1e-10, safeguard=False)
    guarded = solve(name, problem, 40, abs_tol=1e-10)
    assert plain.iterations == guarded.iterations == 7
    np.testing.assert_array_equal(plain.lam, guarded.lam)
    past = solve(name, problem, 40, abs_tol=0.0)
    assert past.info["safeguards"] == 0
    assert past.trace[7:].max() < 1e-13
    assert past.info["rounding_steps"] >= 1  # after convergence every step is rounding


@pytest.mark.parametrize("name", ["pcg", "ppcg"])
def test_the_iterates_stay_at_the_floor_after_convergence(name, bowl500):
    """CG run past convergence works on rounding: its steps are noise, and the sources' PCG
    (safeguard=0) jumps back up to 4e-9 m/s within 1500 iterations on the settled bowl (5e-4
    within 3000). The default takes a
    step only when it lowers f by more than rounding, so λ stays at the floor."""
    def after_floor(**params):
        trace = solve(name, bowl500, 1500, abs_tol=0.0, **params).trace
        first = int(np.flatnonzero(trace < 1e-13)[0])
        return trace[first:].max()

    assert after_floor() < 1e-12
    assert after_floor(safeguard=False) > 1e-10


def test_pcg_solves_the_mass_ratio_pair_in_two_and_pgs_stalls():
    problem = settled("mass-ratio", 20, "ppcg", 500, True, abs_tol=1e-13)
    assert problem.m == 2
    pcg = solve("pcg", problem, 10, abs_tol=1e-10)
    assert pcg.status == metrics.ABSOLUTE and pcg.iterations <= 2
    assert pcg.info["safeguards"] == 0
    pgs = solve("pgs", problem, 200000, trace=True, abs_tol=1e-10)
    assert pgs.status == metrics.ABSOLUTE
    assert pgs.iterations >= 50 * pcg.iterations
    literal = solve("pcg", problem, 10, abs_tol=1e-10, restart="active")
    assert literal.status == metrics.ABSOLUTE and literal.iterations <= 4


@pytest.mark.parametrize("name", ["pcg", "ppcg", "mprgp"])
def test_cg_family_beats_psor_in_iterations_to_1e_8_on_the_settled_bowl(name, bowl500):
    def iterations_to(method, **params):
        result = solve(method, bowl500, 20000, abs_tol=1e-8, **params)
        assert result.status == metrics.ABSOLUTE
        return result.iterations

    assert iterations_to(name) < iterations_to("psor")
