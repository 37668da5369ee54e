"""The Session's watch against `marbles-bench run`'s verdicts on the same steps: the mass-ratio
scene's light marble crushed through the floor is a deep penetration, then escaped, in the
Session's state and messages as in the headless report; the run goes on; a resting column
warns of nothing; the checks keep their period."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lab.session import commands as cmd
from lab.session.run import ESCAPED, OK, run_steps
from lab.session.session import Session
from lab.session.spec import RunSpec
from lab.session.watch import PENETRATION_SHARE, WATCH_PERIOD, PhysicsCheck, Watch


def headless(scene: str, steps: int) -> dict:
    """The JSON report of `marbles-bench run --scene SCENE --steps STEPS`."""
    spec = RunSpec.create(scene)
    return run_steps(spec.simulation(spec.build_world()), steps)


def test_mass_ratio_warns_of_penetration_then_escape_as_the_headless_run_judges_it():
    s = Session(RunSpec.create("mass-ratio"))
    s.start()
    r = float(s.world.radius.min())
    said = []
    for k in range(1, 31):
        s.step(now=k * WATCH_PERIOD)  # every step a check is due
        if s.message:
            said.append((k, s.message))
            s.message = ""
        report = headless("mass-ratio", k)
        physics, depth = report["physics"], report["max_penetration"]
        warning = s.state().warning
        assert s.watch.last.escaped == physics["escaped"]
        assert s.watch.last.penetration == pytest.approx(depth, rel=1e-12, abs=1e-15)
        assert warning.startswith("PHYSICS ESCAPED") == (physics["status"] == ESCAPED)
        if physics["status"] == OK:
            assert bool(warning) == (depth > PENETRATION_SHARE * r)
    assert [m.split(":")[0] for _, m in said] == ["PENETRATION", "PHYSICS ESCAPED"]
    assert all(m.endswith("the run goes on") and f"at step {k} " in m for k, m in said)
    assert "1 marble outside the container" in said[1][1]
    state = s.state()
    assert not state.paused and not state.diverged and state.alarm == ""  # it runs on
    s.apply(cmd.Reset())
    assert s.state().warning == ""


def test_a_resting_column_warns_of_nothing():
    s = Session(RunSpec.create("column"))
    s.start()
    for k in range(200):
        s.step(now=k * WATCH_PERIOD)
    assert s.state().warning == "" and s.watch.said == "" and s.message == ""
    assert headless("column", 200)["physics"]["status"] == OK


def test_checks_keep_their_period_and_say_each_level_once():
    s = Session(RunSpec.create("mass-ratio"))
    s.start()
    watch = Watch()
    assert watch.check(s.world, 0.0) == "" and watch.last.level == ""
    s.world.x[0, 2] = -1.0  # the light marble below the floor
    assert watch.check(s.world, 0.5 * WATCH_PERIOD) == ""  # not due: not looked at
    assert watch.last.escaped == 0
    said = watch.check(s.world, WATCH_PERIOD)
    assert said.startswith("PHYSICS ESCAPED: 1 marble") and watch.last.escaped == 1
    assert watch.check(s.world, 2 * WATCH_PERIOD) == "" and watch.warning == said


def test_the_warnings_words():
    assert PhysicsCheck(0, 0.02, 0.1).text() == ""
    assert PhysicsCheck(0, 0.03, 0.1).text() == ("PENETRATION: max penetration 0.03 m "
                                                 "(30% of r), over 25%")
    assert PhysicsCheck(2, 0.2, 0.1).text() == ("PHYSICS ESCAPED: 2 marbles outside the "
                                                "container; max penetration 0.2 m (200% of r)")
    assert PhysicsCheck(0, math.nan, 0.1).level == ""
    assert np.isnan(PhysicsCheck(0, math.nan, 0.1).penetration)
