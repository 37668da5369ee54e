"""Answers put back into their admissible set (solver/methods/feasible.py): a contact that
pulls or whose friction leaves Coulomb's cone is projected, one inside keeps its bits, and the
driver hands back every method's answer pushing."""
import numpy as np
import pytest

from solver import metrics
from solver.methods import registry
from solver.methods.driver import run
from solver.methods.feasible import ROUNDING, project_answer, project_outside
from tests.solver.methods.test_naive import v_shaped_problem

NONE = np.zeros(0)


def laws(m, mu=0.5, mu_roll=0.0, mu_spin=0.0):
    return (np.full(m, mu), np.full(m, mu_roll), np.full(m, mu_spin))


def test_a_pulling_frictionless_impulse_is_cut_to_zero_and_the_others_kept():
    lam = np.array([0.3, -1.6e-16, 0.0, -0.077, 2.0])
    assert project_outside(lam, 1, (NONE, NONE, NONE), False) == 2
    np.testing.assert_array_equal(lam, [0.3, 0.0, 0.0, 0.0, 2.0])


def test_a_pulling_contact_goes_to_the_cone_and_its_friction_with_it():
    # (-1, 0.3, 0): beyond the polar cone, to the apex; (-0.1, 1, 0) onto the cone's surface.
    lam = np.array([-1.0, 0.3, 0.0, -0.1, 1.0, 0.0])
    assert project_outside(lam, 3, laws(2), False) == 2
    np.testing.assert_array_equal(lam[:3], 0.0)
    a = (-0.1 + 0.5 * 1.0) / 1.25
    np.testing.assert_allclose(lam[3:], [a, 0.5 * a, 0.0], rtol=1e-15)


def test_friction_outside_the_cone_moves_only_when_the_cone_is_asked_for():
    lam = np.array([1.0, 0.6, 0.0])  # ‖λ_t‖ = 0.6 > μ λ_n = 0.5
    assert project_outside(lam.copy(), 3, laws(1), False) == 0
    assert project_outside(lam, 3, laws(1), True) == 1
    assert np.hypot(lam[1], lam[2]) == pytest.approx(0.5 * lam[0], rel=1e-14)


def test_an_answer_inside_or_on_the_cone_by_rounding_keeps_its_bits():
    edge = 0.5 * (1.0 + ROUNDING / 2)  # past the bound by rounding only
    lam = np.array([1.0, 0.3, 0.4, 2.0, edge * 2.0, 0.0, 0.0, 0.0, 0.0])
    before = lam.copy()
    assert project_outside(lam, 3, laws(3), True) == 0
    assert lam.tobytes() == before.tobytes()


def test_rolling_and_spinning_parts_are_held_to_their_bounds():
    # normal 1, tangents inside, rolling (0.3, 0.4) past μ_roll = 0.1, spin past μ_spin = 0.05
    lam = np.array([1.0, 0.1, 0.0, 0.3, 0.4, 0.2])
    assert project_outside(lam, 6, laws(1, 0.5, 0.1, 0.05), True) == 1
    n = lam[0]
    assert np.hypot(lam[1], lam[2]) <= 0.5 * n * (1 + ROUNDING)
    assert np.hypot(lam[3], lam[4]) <= 0.1 * n * (1 + ROUNDING)
    assert abs(lam[5]) <= 0.05 * n * (1 + ROUNDING)


@pytest.mark.parametrize("trace", [False, True])
def test_the_driver_hands_back_a_pulling_answer_projected_and_measured_again(trace):
    """A method whose last iterate pulls (-0.5 on one contact): the result pushes, and its
    residual is that of the projected answer, not of the iterate."""
    problem = v_shaped_problem()
    lam = np.zeros(problem.m)

    def pull(count: int) -> None:
        lam[:] = 0.25
        lam[0] = -0.5

    result = run(problem, lam, registry.settings("pgs", 2, trace), sweep=pull)
    assert result.lam.min() == 0.0 and result.lam[0] == 0.0
    assert result.residual == problem.residual(result.lam)
    assert result.status == metrics.MAX_ITERATIONS
    if trace:  # the last iterate's residual is the answer's
        assert result.trace[-1] == result.residual


def test_project_answer_leaves_an_empty_or_feasible_answer_untouched():
    problem = v_shaped_problem()
    lam = np.full(problem.m, 0.1)
    assert project_answer(problem, lam, True) == 0 and np.all(lam == 0.1)
