"""solver.drift against answers worked by hand: two marbles on the floor, each held by two
identical floor contacts, so W = diag(B0, B1) with B_k = w_k [[1, 1], [1, 1]] is singular and
(1, -1) on one marble's pair is its null space."""
from __future__ import annotations

import numpy as np
import pytest

from solver.drift import (MOVING_TEXT, NULL_TEXT, REACHED_TEXT, SETTLED_TEXT, drift,
                          drift_between)
from solver.methods import registry
from solver.problem import ContactProblem


def doubled_floor() -> ContactProblem:
    body_a = np.full(4, -1, dtype=np.int64)
    body_b = np.array([0, 0, 1, 1], dtype=np.int64)
    normal = np.tile([0.0, 0.0, 1.0], (4, 1))
    inv_mass = np.array([1.0, 0.5])  # w0 = 1, w1 = 0.5 (1/kg): mean A_cc 0.75
    v_pred = np.array([[0.0, 0.0, -0.2], [0.0, 0.0, -0.2]])
    return ContactProblem(body_a, body_b, normal, np.zeros(4), inv_mass, v_pred, 0.02)


def test_a_change_in_the_null_space_is_unseen_and_one_across_it_is_seen_in_full():
    p = doubled_floor()
    lam = np.array([0.1, 0.1, 0.2, 0.2])  # stops both marbles: λ_total = 0.2 / w
    assert p.residual(lam) == pytest.approx(0.0, abs=1e-15)
    null = drift_between(p, lam, lam + [0.05, -0.05, 0.0, 0.0], 7)
    assert null.impulse_change == pytest.approx(0.05 * np.sqrt(2))
    assert null.impulse_share == pytest.approx(0.05 * np.sqrt(2) / np.sqrt(0.1))
    assert null.velocity_change == pytest.approx(0.0, abs=1e-15) and null.seen < 1e-12
    assert null.verdict == NULL_TEXT and null.iterations == 7
    assert null.residual_after == pytest.approx(0.0, abs=1e-15)
    # Across it: W Δλ = w0 (0.1, 0.1, 0, 0), seen = ‖W Δλ‖ / (0.75 ‖Δλ‖) = 2 / 0.75.
    seen = drift_between(p, lam, lam + [0.05, 0.05, 0.0, 0.0], 7)
    assert seen.velocity_change == pytest.approx(0.1 * np.sqrt(2))
    assert seen.seen == pytest.approx(2.0 / 0.75) and seen.verdict == MOVING_TEXT
    assert drift_between(p, lam, lam.copy(), 7).verdict == SETTLED_TEXT


def test_one_iteration_from_zero_to_the_answer_is_reached_not_still_converging():
    """An exact one-iteration solve: its last change is the whole answer, taking the residual
    from its size to rounding; it has converged, not 'still converging'."""
    p = doubled_floor()
    lam = np.array([0.1, 0.1, 0.2, 0.2])
    step = drift_between(p, np.zeros(4), lam, 1)
    assert step.residual_before > 0.1 and step.residual_after < 1e-15
    assert step.verdict == REACHED_TEXT
    halfway = drift_between(p, np.zeros(4), 0.5 * lam, 1)  # the residual only halves
    assert halfway.verdict == MOVING_TEXT


def test_drift_runs_every_further_iteration_whatever_the_tolerance():
    """From an answer short of converged, `drift` is the same solver run on for exactly that
    many iterations with its tolerances off; the answer handed in is left as it was."""
    p = doubled_floor()
    method = registry.get("jacobi")
    settings = registry.settings("jacobi", 3, False, {"abs_tol": 1.0})
    start = method.solve(p, np.zeros(4), registry.settings("jacobi", 3, False, {})).lam
    kept = start.copy()
    measured = drift(p, method, settings, start, 5)
    on = method.solve(p, start.copy(), registry.settings("jacobi", 5, False,
                                                         {"abs_tol": 0.0})).lam
    assert np.array_equal(start, kept)
    assert measured.impulse_change == pytest.approx(np.linalg.norm(on - start), rel=1e-12)
    assert measured.impulse_change > 0.0 and measured.iterations == 5
