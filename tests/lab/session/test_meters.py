"""The pace figures, defined once (lab.session.meters), against known numbers: a step's cost
is the median of the steps that compiled nothing, the window's share is the wall time per step
beyond that cost, and a run slower than real time says which of the two spends the budget."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from lab.session.meters import Pace, StepTimes, timing_key
from lab.session.state import SessionState, StepLog

PHASE = {"collide": 1e-4, "assemble": 1e-4, "integrate": 1e-4}


def steps(*totals, compiled=()):
    log = StepLog()
    for k, total in enumerate(totals):
        log.add(0.02 * k, 1e-3, dict(PHASE, solve=total - 3e-4, total=total), k in compiled)
    return log.take()


def test_a_compiling_step_is_left_out_of_the_cost_and_counted():
    times = StepTimes(keep=10)
    times.add(steps(6.0, 2e-3, 3e-3, 4e-3, compiled=(0,)))
    assert len(times) == 3 and times.compiled == 1
    assert times.median()["total"] == pytest.approx(3e-3)
    times.add(steps(7.0, compiled=(0,)))  # a frame of one compiling step adds nothing
    assert len(times) == 3 and times.compiled == 2
    times.reset()
    assert len(times) == 0 and times.compiled == 0 and times.median() == {}


def test_the_default_bowl_behind_real_time_says_the_window_takes_the_budget():
    """2.4 ms of compute, 44 steps/s of 50 asked (0.88x): the step fits the 20 ms budget,
    the window adds 22.7 - 2.4 ms."""
    pace = Pace.of(2.4e-3, 44.0, 0.02, 1.0)
    assert pace.budget == pytest.approx(0.02) and pace.factor == pytest.approx(0.88)
    assert pace.slow
    assert pace.window == pytest.approx(1 / 44 - 2.4e-3)
    assert pace.why() == ("a step costs 2.4 ms of the 20.0 ms real time allows; the window "
                          "adds 20.3 ms per step")


def test_a_step_over_its_budget_is_the_reason_and_the_window_shown_beside_it():
    """100 000 marbles: 162.6 ms of compute, 0.4 steps/s: both costs are named."""
    pace = Pace.of(162.6e-3, 1 / 2.5782, 0.02, 1.0)
    assert pace.why() == ("a step costs 162.6 ms, real time allows 20.0 ms; the window adds "
                          "2415.6 ms per step")
    assert Pace.of(31e-3, 32.0, 0.02, 1.0).why() == "a step costs 31.0 ms, real time allows 20.0 ms"


def test_on_pace_the_window_share_is_not_quoted_flat_out_it_is():
    assert math.isnan(Pace.of(2e-3, 50.0, 0.02, 1.0).window)  # the rest is the wait
    assert not Pace.of(2e-3, 50.0, 0.02, 1.0).slow
    assert Pace.of(2e-3, 400.0, 0.02, 0.0).window == pytest.approx(0.5e-3)
    assert math.isnan(Pace.of(2e-3, math.nan, 0.02, 0.0).window)


def test_the_timing_key_changes_with_the_solver_and_its_settings_only():
    state = SessionState(scene="bowl", solver="psor", solver_params={"omega": 1.5, "abs_tol": 1e-12},
                         iterations=20, warm_start=0.5, paused=False, colour_mode="marble",
                         diverged=False, speed=1.0, generation=0)
    assert timing_key(state) == timing_key(replace(state, paused=True, message="hello"))
    for change in (dict(solver="newton"), dict(iterations=40), dict(generation=1),
                   dict(solver_params={"omega": 1.2, "abs_tol": 1e-12}), dict(threads=2)):
        assert timing_key(replace(state, **change)) != timing_key(state), change
