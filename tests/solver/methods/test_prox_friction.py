"""Erleben's proximal map with friction: local r in sweep form is psor's cone law; blocked takes
one r per contact from its block; the error test keeps prox-jacobi from diverging where the
undamped map does, and accepts an iterate only when its error is below twice the least of the
last ten or its step shrank; the explicit form gives the geometry's iterates."""
import numpy as np
import pytest

from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.methods.prox_friction import SLACK, WINDOW
from tests.solver.methods.test_sweeps import floor_contact


def solve(name, problem, iterations, lam0=None, **params):
    lam0 = np.zeros(problem.size) if lam0 is None else lam0
    return registry.get(name).solve(problem, lam0.copy(),
                                    registry.settings(name, iterations, True, params))


@pytest.mark.parametrize("gamma", [0.8, 1.0, 1.6])
def test_local_r_in_sweep_form_is_psors_cone_law(gamma, frictional_bowl):
    p = frictional_bowl
    prox = solve("prox-gs", p, 40, gamma=gamma, adapt=False, abs_tol=0.0)
    psor = solve("psor", p, 40, omega=gamma, abs_tol=0.0)
    np.testing.assert_array_equal(prox.lam, psor.lam)
    other = solve("psor", p, 40, omega=gamma * 0.9, abs_tol=0.0)
    assert not np.allclose(other.lam, prox.lam, rtol=1e-6)


def test_blocked_r_steps_the_normal_by_the_blocks_largest_eigenvalue():
    """A marble resting on a floor: its block is diag(w, 7/2 w, 7/2 w), so blocked r = 1/(7/2 w)
    and one step gives 2/7 of the normal impulse that local r gives exactly."""
    p = floor_contact((0.0, 0.0, 0.0))
    local = solve("prox-gs", p, 1, adapt=False, abs_tol=0.0).lam
    blocked = solve("prox-gs", p, 1, adapt=False, r="blocked", abs_tol=0.0).lam
    assert local[0] == pytest.approx(9.81 * 0.02)
    assert blocked[0] == pytest.approx(2 / 7 * local[0])


def fclib_sum(p, lam):
    """Σ_c contact_error², the error test's measure."""
    return (p.fclib_error(lam) * (1 + np.linalg.norm(p.rhs))) ** 2


@pytest.mark.parametrize("name", ["prox-gs", "prox-jacobi"])
def test_an_accepted_iterate_has_a_small_error_or_a_shrinking_step(name, frictional_bowl):
    p = frictional_bowl
    seen = []
    settings = registry.settings(name, 300, True, {"abs_tol": 0.0, "r": "global"})
    import dataclasses
    observed = dataclasses.replace(settings, observer=lambda lam: seen.append(lam.copy()))
    result = registry.get(name).solve(p, np.zeros(p.size), observed)
    assert result.info["rejected"] > 0
    accepted = [np.zeros(p.size)]
    for lam in seen:  # a rejected iterate leaves λ as it was
        if not np.array_equal(lam, accepted[-1]):
            accepted.append(lam)
    errors = [fclib_sum(p, lam) for lam in accepted]
    steps = [np.inf] + [np.abs(b - a).max() for a, b in zip(accepted, accepted[1:])]
    small = [errors[k] < SLACK * min(errors[max(0, k - WINDOW):k]) * (1 + 1e-9)
             for k in range(1, len(errors))]
    shrank = [steps[k] < steps[k - 1] * (1 + 1e-12) for k in range(1, len(errors))]
    assert all(a or b for a, b in zip(small, shrank))


def test_the_error_test_keeps_prox_jacobi_from_diverging(frictional_bowl):
    p = frictional_bowl
    undamped = solve("prox-jacobi", p, 300, gamma=1.0, adapt=False, abs_tol=0.0)
    assert undamped.status == metrics.DIVERGENCE
    adaptive = solve("prox-jacobi", p, 20000, gamma=1.0, abs_tol=1e-10)
    assert adaptive.status == metrics.ABSOLUTE and adaptive.info["rejected"] > 0
    assert adaptive.info["final_scale"] < 1.0


@pytest.mark.parametrize("name", ["prox-gs", "prox-jacobi"])
@pytest.mark.parametrize("params", [{}, {"gamma": 1.0}, {"r": "blocked", "gamma": 1.0},
                                    {"r": "global"}, {"merit": "step", "gamma": 1.0}])
def test_the_explicit_form_gives_the_geometrys_iterates(name, params, frictional_bowl):
    p = frictional_bowl
    mp = MatrixProblem.from_problem(p)
    geo = solve(name, p, 60, abs_tol=0.0, **params)
    mat = solve(name, mp, 60, abs_tol=0.0, **params)
    np.testing.assert_allclose(mat.lam, geo.lam, rtol=1e-8, atol=1e-10)
    assert mat.info["accepted"] == geo.info["accepted"]
