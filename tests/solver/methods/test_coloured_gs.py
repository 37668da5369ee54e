"""Gauss-Seidel by colours on the CPU: PGS over the contacts in colour order (the same iterates
as pgs on the problem so reordered, λ back in the problem's order), the LCP's solution, and the
observer and info it reports."""
import dataclasses

import numpy as np
import pytest

from solver import metrics
from solver.colouring import colour_contacts, colour_order
from solver.methods import registry
from solver.methods.coloured_gs import reordered
from tests.solver.methods.reference import enumerate_lcp, random_problem, solve


@pytest.mark.parametrize("fixture", ["settled_bowl_problem", "frictional_bowl"])
def test_it_is_pgs_over_the_contacts_in_colour_order(fixture, request):
    p = request.getfixturevalue(fixture)
    colour, _ = colour_contacts(p.body_a, p.body_b, p.n)
    order, _ = colour_order(colour)
    assert not np.array_equal(order, np.arange(p.m))  # the order is not the problem's own
    rng = np.random.default_rng(1)
    lam0 = rng.uniform(0.0, 1e-3, p.size) * (np.arange(p.size) % p.rows == 0)
    got = solve("coloured-gs", p, 15, trace=False, lam0=lam0)
    rows = p.rows
    pgs = solve("pgs", reordered(p, order), 15, trace=False,
                lam0=lam0.reshape(-1, rows)[order].ravel())
    want = np.empty(p.size)
    want.reshape(-1, rows)[order] = pgs.lam.reshape(-1, rows)
    assert np.array_equal(got.lam, want)
    assert got.residual == pytest.approx(p.residual(got.lam), rel=1e-12)
    assert got.info == {"colours": colour.max() + 1}


@pytest.mark.parametrize("seed", range(6))
def test_it_converges_to_the_enumerated_solution(seed):
    rng = np.random.default_rng(seed)
    problem = random_problem(rng, n_bodies=5, m=8)
    A = problem.dense()
    reference = enumerate_lcp(A, problem.rhs)
    result = solve("coloured-gs", problem, 20000, abs_tol=1e-11)
    assert result.status == metrics.ABSOLUTE and result.lam.min() >= 0.0
    np.testing.assert_allclose(A @ result.lam, A @ reference, atol=1e-8)


def test_the_observer_sees_lambda_in_the_problems_order(frictional_bowl):
    p = frictional_bowl
    seen = []
    settings = registry.settings("coloured-gs", 5, True)
    settings = dataclasses.replace(settings, observer=lambda lam: seen.append(p.residual(lam)))
    result = registry.get("coloured-gs").solve(p, np.zeros(p.size), settings)
    np.testing.assert_allclose(seen, result.trace[1:], rtol=1e-12)
