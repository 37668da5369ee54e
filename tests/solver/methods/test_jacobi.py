"""Projected Jacobi: damped it converges slowly, undamped it diverges on a pile and says so."""
import numpy as np

from solver import metrics
from tests.solver.methods.reference import solve

def test_undamped_jacobi_diverges_on_a_pile_and_says_so(settled_bowl_problem):
    p = settled_bowl_problem
    for trace in (True, False):
        result = solve("jacobi", p, 300, trace=trace, beta=1.0)
        assert result.status == metrics.DIVERGENCE
        assert np.all(np.isfinite(result.lam)) and np.isfinite(result.residual)
    damped = solve("jacobi", p, 300, beta=0.15)
    assert damped.status != metrics.DIVERGENCE and damped.trace[-1] < damped.trace[0]
