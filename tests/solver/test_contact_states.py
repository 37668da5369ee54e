"""Which contacts an answer says separate, stick (some at the cone's boundary) and slide: known
answers of three independent contacts, solved exactly, and a pile whose counts add up; the
pseudo-solution flag on traces made to stall or converge."""
import numpy as np
import pytest

from solver.contact_states import (AT_THE_CONE, SEPARATED, SLIDING, STICKING, contact_states,
                                   pseudo_solution, pseudo_text, states_text)
from solver.explicit import MatrixProblem
from solver.methods import registry


def four_contacts():
    """Block-diagonal W = diag(1, 2, 2) per contact, μ = 0.5: contact 0 separates (q_n > 0),
    1 sticks (q_t / 2 inside μ λ_n = 0.5), 2 slides (q_t far outside), 3 sticks exactly on the
    cone (‖q_t‖ / 2 = μ λ_n)."""
    W = np.kron(np.eye(4), np.diag([1.0, 2.0, 2.0]))
    q = np.array([0.5, 0.0, 0.0,
                  -1.0, 0.4, 0.0,
                  -1.0, 5.0, 0.0,
                  -1.0, 0.6, 0.8])
    return MatrixProblem.from_dense(W, q, np.full(4, 0.5))


def test_known_answers_of_independent_contacts():
    p = four_contacts()
    result = registry.get("nsgs").solve(p, np.zeros(p.size), registry.settings("nsgs", 2))
    assert result.residual < 1e-14
    states = contact_states(p, result.lam)
    assert states == {SEPARATED: 1, STICKING: 2, SLIDING: 1, AT_THE_CONE: 1}
    assert states_text(states) == "2 stick (1 at the cone), 1 slide, 1 separate"


def test_an_inaccurate_answer_calls_a_slip_below_its_error_a_stick():
    """Contact 1 given a tangential impulse slightly off its sticking value: its slip is real
    but below ten times the answer's error, so it is not told from a stick."""
    p = four_contacts()
    lam = registry.get("nsgs").solve(p, np.zeros(p.size), registry.settings("nsgs", 2)).lam
    lam[4] += 1e-6  # u_t of contact 1 becomes 2e-6 m/s
    assert contact_states(p, lam)[STICKING] == 2
    assert contact_states(p, lam, residual=1e-12)[SLIDING] == 2


def test_a_piles_counts_add_up():
    import scenes
    from solver.step import Simulation

    sim = Simulation(scenes.build("bowl", {"n": 40, "mu": 0.5, "mu_wall": 0.5}),
                     registry.settings("pgs", 20, False), warm_start=1.0)
    for _ in range(120):
        sim.step()
    p = sim.problem.copy()
    result = registry.get("pgs").solve(p.copy(), np.zeros(p.size),
                                       registry.settings("pgs", 500, False))
    states = contact_states(p, result.lam, result.residual)
    live = int(np.count_nonzero(p.diag[0::3] > 0.0))
    assert states[SEPARATED] + states[STICKING] + states[SLIDING] == live
    assert states[STICKING] > 0 and 0 <= states[AT_THE_CONE] <= states[STICKING]


def _states(sliding: int) -> dict:
    return {SEPARATED: 3, STICKING: 10, SLIDING: sliding, AT_THE_CONE: 0}


def test_a_stalled_all_sticking_answer_is_a_pseudo_solution():
    trace = np.concatenate([np.geomspace(1.0, 1e-5, 60), np.full(40, 0.9e-5)])
    found = pseudo_solution(_states(0), trace, 1e-12)
    assert found == {"error": 0.9e-5, "factor": pytest.approx(1.0), "iterations": 24}
    assert "stalled at 9.000e-06 m/s" in pseudo_text(found)


def test_no_pseudo_solution_when_sliding_converging_or_solved():
    stalled = np.concatenate([np.geomspace(1.0, 1e-5, 60), np.full(40, 1e-5)])
    assert pseudo_solution(_states(2), stalled, 1e-12) is None  # it slides
    assert pseudo_solution(_states(0), np.geomspace(1.0, 1e-9, 100), 1e-12) is None
    assert pseudo_solution(_states(0), stalled, 1e-4) is None  # within the tolerance
    assert pseudo_solution(_states(0), stalled[:5], 1e-12) is None  # too short to judge
