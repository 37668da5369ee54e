"""Projected conjugate gradient (pcg, and ppcg, its Jacobi-preconditioned form): the sources'
claims on the resting column and the mass-ratio pair, the safeguard, and the CG family's lead
over PSOR on the settled bowl."""
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
    pcg = solve("pcg", problem, 10 * k, abs_tol=1e-10)  # default restart rule: clip
    assert pcg.status == metrics.ABSOLUTE and pcg.iterations <= k, pcg.iterations
    assert pcg.info["safeguards"] == 0  # every step lowers f: the sources' PCG, unchanged
    # Jacobi preconditioning changes the path: an intermediate iterate can go negative, the
    # projection clips it and CG restarts (ppcg takes 11 at k = 7). SOLVERS.md's literal rule
    # restarts whenever {λ > 0} changes, which the first step from λ = 0 always does.
    for name, params in (("ppcg", {}), ("pcg", {"restart": "active"}),
                         ("ppcg", {"restart": "active"})):
        other = solve(name, problem, 10 * k, abs_tol=1e-10, **params)
        assert other.status == metrics.ABSOLUTE and other.iterations <= 2 * k


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
