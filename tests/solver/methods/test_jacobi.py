"""Projected Jacobi: damped it converges slowly, undamped it diverges on a pile and says so."""
from dataclasses import replace

import numpy as np
import pytest

from solver import metrics
from solver.methods import registry
from tests.solver.blocks import packed_box, problem_of
from tests.solver.methods.reference import solve


def test_undamped_jacobi_diverges_on_a_pile_and_says_so(settled_bowl_problem):
    p = settled_bowl_problem
    for trace in (True, False):
        result = solve("jacobi", p, 300, trace=trace, beta=1.0)
        assert result.status == metrics.DIVERGENCE
        assert np.all(np.isfinite(result.lam)) and np.isfinite(result.residual)
    damped = solve("jacobi", p, 300, beta=0.15)
    assert damped.status != metrics.DIVERGENCE and damped.trace[-1] < damped.trace[0]


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_jacobi_in_blocks_is_the_serial_jacobi_on_the_same_contacts(mu):
    """The parallel products and updates give the serial iterates, bit for bit."""
    blocked = problem_of(packed_box(5000, mu=mu), 2)
    serial = replace(blocked, partition=None)
    settings = registry.settings("jacobi", 30)
    size = blocked.size if mu else blocked.m
    one = registry.get("jacobi").solve(serial, np.zeros(size), settings)
    two = registry.get("jacobi").solve(blocked, np.zeros(size), settings)
    assert np.any(one.lam > 0.0)
    assert np.array_equal(one.lam, two.lam) and one.residual == two.residual
