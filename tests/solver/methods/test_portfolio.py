"""portfolio: the best member by FCLIB's error, and which one it was."""
import numpy as np

from solver.methods import registry
from tests.solver.methods.test_socp import two_contacts


def portfolio(problem, **params):
    return registry.get("portfolio").solve(problem.copy(), np.zeros(problem.size),
                                           registry.settings("portfolio", 200, True,
                                                             {"budget": 6.0, **params}))


def test_returns_the_least_fclib_error_and_names_its_member():
    problem = two_contacts()
    result = portfolio(problem)
    errors = [result.info[f"error_{k}"] for k in range(3)]
    assert result.info["member"] == int(np.argmin(errors))
    assert problem.fclib_error(result.lam) == min(errors) < 1e-12
    np.testing.assert_allclose(result.lam, [1.0, -0.2, 0.0, 1.0, -0.5, 0.0], atol=1e-9)
    assert result.trace.shape == (2,) and np.isfinite(result.trace).all()
