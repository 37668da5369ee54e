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


def test_the_members_share_what_is_left_of_the_budget(monkeypatch):
    """A budget of 12 s and members that each overrun their share by 1 s (an iteration is never
    cut): member 0 gets 4 s (socp 2, the polish what is left of 4), the next members an equal
    share of what is left, so the whole ends one overrun past the budget, not a member's share
    past it. Time is a fake clock that only the members move."""
    from solver.methods import portfolio as pf

    clock = [0.0]
    given = []

    def member(method):
        def solve(problem, lam, settings):
            given.append((method.name, settings.time_limit))
            clock[0] += settings.time_limit + 1.0
            return registry.get("pgs").solve(problem, lam, registry.settings("pgs", 5, True))
        return type("Member", (), {"name": method.name, "settings": staticmethod(method.settings),
                                   "solve": staticmethod(solve)})

    monkeypatch.setattr(pf.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(pf, "SOCP", member(pf.SOCP))
    monkeypatch.setattr(pf, "NEWTON", member(pf.NEWTON))
    problem = two_contacts()
    pf.solve(problem.copy(), np.zeros(problem.size),
             registry.settings("portfolio", 10, True, {"budget": 12.0}))
    assert [g[0] for g in given] == ["socp", "newton", "newton", "newton"]
    limits = [g[1] for g in given]
    # socp 2 (ends at 3); the polish 4 - 3 = 1 (ends at 5); from zero (12 - 5) / 2 = 3.5
    # (ends at 9.5); from apgd 12 - 9.5 = 2.5 (ends at 13)
    np.testing.assert_allclose(limits, [2.0, 1.0, 3.5, 2.5])
    assert clock[0] == 12.0 + 1.0
