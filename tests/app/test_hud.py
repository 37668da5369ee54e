"""The HUD's text is a pure function of a frame and two measured rates; the rate meter."""
from __future__ import annotations

import numpy as np
import pytest

from app.hud import RateMeter, hud_text
from app.worker import Frame
from lab.session import SessionState


def frame(**state) -> Frame:
    s = dict(scene="bowl", solver="psor", solver_params={"omega": 1.5, "abs_tol": 1e-12},
             iterations=20, warm_start=0.5, paused=False, colour_mode="marble", diverged=False,
             speed=1.0, generation=0)
    s.update(state)
    return Frame(seq=1, stepped=True, x=np.zeros((3, 3), np.float32),
                 radius=np.full(3, 0.1, np.float32), colour=np.zeros((3, 3), np.float32),
                 container={}, time=1.5, steps=75, dt=0.02, contacts=12,
                 timings={"collide": 1e-4, "assemble": 1e-5, "solve": 2e-4, "integrate": 1e-5,
                          "total": 3.2e-4}, status="max_iterations", iterations_done=20,
                 residual=3.2e-3, trace=None, trace_step=-1, state=SessionState(**s))


def test_the_hud_says_what_runs_with_which_parameters():
    text = hud_text(frame(), 14.96, 49.9)
    assert "scene bowl   3 marbles   12 contacts" in text
    assert "solver psor (Projected SOR) omega=1.5" in text
    assert "abs_tol" not in text  # the shared tolerances are not the solver's own
    assert "warm start x0.5" in text and "iterations 20" in text
    assert "step 0.32 ms" in text and " 15.0 fps" in text and "49.9 steps/s" in text
    assert "residual 3.200e-03 m/s   max_iterations after 20 it" in text


@pytest.mark.parametrize("state, line", [
    (dict(diverged=True, paused=True), "DIVERGED: paused; R resets"),
    (dict(paused=True), "PAUSED (Space resumes, S steps)"),
    (dict(speed=0.0), "running as fast as possible"),
    (dict(speed=2.0), "running at 2x real time"),
    (dict(message="omega=1.9 is at its limit"), "omega=1.9 is at its limit"),
])
def test_the_hud_states_the_run(state, line):
    assert line in hud_text(frame(**state), 0.0, 0.0).splitlines()


def test_rate_meter_counts_events_per_second_over_its_window():
    meter = RateMeter(window=1.0)
    for k in range(11):
        meter.add(now=10.0 + 0.1 * k)
    assert meter.rate(now=11.0) == pytest.approx(10.0)
    assert meter.rate(now=13.0) == 0.0


@pytest.mark.parametrize("friction, shown", [
    ((0.0, 0.0, 0.0, 0.0), "μ 0"),
    ((0.5, 0.5, 0.0, 0.0), "μ 0.5"),
    ((0.5, 0.5, 0.01, 0.0), "μ 0.5  μ_roll 0.01 m"),
    ((0.3, 0.6, 0.0, 0.0), "μ 0.3 (walls 0.6)"),
])
def test_the_hud_shows_the_friction_on_the_scene_line(friction, shown):
    first = hud_text(frame(friction=friction), 0.0, 0.0).splitlines()[0]
    assert first.endswith("12 contacts   " + shown)
