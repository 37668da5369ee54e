"""The recover key's settings and the alarm's words (lab/session/holding.py): on the mass-ratio
stack an under-converged solve gains energy; the alarm says so and names settings that hold
the scene, and X switches to them: the scene then runs 150 steps without an alarm. The sweep
of every scene × solver × friction is benchmarks/alarm_sweep.py; here a representative part."""
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.alarm_sweep import cases, run_case
from lab.session import commands as cmd
from lab.session.holding import (COUPLED_FRICTIONAL, COUPLED_FRICTIONLESS, SWEEPS_HOLD_RATIO,
                                 holding_settings, mass_ratio, recovered_text)
from lab.session.session import Session
from lab.session.spec import RunSpec
from lab.session.state import STABLE_SOLVER
from lab.session.watch import physics_check
from solver.methods import registry
import scenes


def session(scene="mass-ratio", solver="pgs", **values):
    s = Session(RunSpec.create(scene, solver, assignments=values, speed=0))
    s.start()
    return s


@pytest.mark.parametrize("scene, values, solver", [
    ("mass-ratio", {"mu": 0.5}, COUPLED_FRICTIONAL),
    ("mass-ratio", {}, COUPLED_FRICTIONLESS),
    ("mass-ratio", {"ratio": SWEEPS_HOLD_RATIO}, STABLE_SOLVER),
    ("bowl", {}, STABLE_SOLVER),
    ("heap", {}, STABLE_SOLVER),
])
def test_the_holding_solver_is_chosen_by_the_mass_ratio_and_the_friction(scene, values, solver):
    spec = RunSpec.create(scene, "jacobi", iterations=5, assignments=values)
    world = spec.build_world()
    chosen = holding_settings(world, spec)
    assert chosen.method == solver
    assert chosen.iterations == 20  # never fewer than HOLDING_ITERATIONS
    more = holding_settings(world, spec.changed(solve=registry.settings("jacobi", 500)))
    assert more.iterations == 500  # the run's own when more


def test_the_mass_ratio_is_of_the_marbles_of_finite_mass():
    assert mass_ratio(scenes.build("mass-ratio", {"ratio": 250})) == pytest.approx(250)
    assert mass_ratio(scenes.build("bowl")) == 1.0
    fixed = SimpleNamespace(inv_mass=np.array([0.0, 0.5, 0.25]))  # a fixed marble: no mass
    assert mass_ratio(fixed) == 2.0
    assert mass_ratio(SimpleNamespace(inv_mass=np.array([0.0, 0.5]))) == 1.0


def test_the_alarm_on_the_mass_ratio_stack_says_what_happened_and_x_holds_it():
    """pgs at 20 sweeps with μ 0.5: energy from nowhere within 30 steps; the alarm said
    "DIVERGED" and X went to pgs, which it already was, and failed again."""
    s = session(mu=0.5)
    for _ in range(150):
        s.step()
        if s.alarm:
            break
    assert s.sim.steps < 30 and s.paused
    assert "marbles exploded" in s.alarm
    assert "the step's solve was under-converged (pgs at 20 iterations left a residual of " \
        in s.alarm
    assert " m/s) on a 1000:1 mass ratio; newton at 20 iterations holds it" in s.alarm
    assert s.alarm.endswith("newton at 20 iterations holds it")
    assert s.message.endswith("X switches to newton at 20 iterations and resets")
    s.apply(cmd.Recover())
    assert (s.spec.solver, s.spec.iterations) == ("newton", 20) and not s.paused
    assert s.message == ("switched from pgs at 20 iterations to newton at 20 iterations and "
                         "reset")
    for _ in range(150):
        s.step()
    assert not s.alarm and physics_check(s.world).escaped == 0


def test_recovered_text_says_a_reset_alone_when_nothing_changed():
    pgs = registry.settings("pgs", 20)
    assert recovered_text(pgs, pgs) == "pgs at 20 iterations: reset"


# The runs of the sweep that alarmed at the default settings, and one that did not: each, after
# X, runs 150 steps with no alarm.
SWEEP_PART = [("mass-ratio", "pgs", "0"), ("mass-ratio", "psor", "0"),
              ("mass-ratio", "nsgs", "0.5"), ("mass-ratio", "apgd", "0.5"),
              ("mass-ratio", "mass-split", "0.5"), ("mass-ratio", "prox-jacobi", "0.5"),
              ("column", "pgs", "0.5")]


def _case(scene, solver, friction):
    return next(c for c in cases([scene], [solver], [friction]))


@pytest.mark.parametrize("scene, solver, friction", SWEEP_PART)
def test_a_run_of_the_sweep_alarms_in_words_and_x_holds_the_scene(scene, solver, friction):
    outcome = run_case(*_case(scene, solver, friction))
    if outcome.alarm:
        assert outcome.after_recover == "", outcome
        if "exploded" in outcome.alarm:
            assert "under-converged" in outcome.alarm and "1000:1 mass ratio" in outcome.alarm
            assert outcome.alarm.endswith(f"{outcome.recovered_to} holds it")


@pytest.mark.parametrize("scene", list(scenes.SCENES))
@pytest.mark.parametrize("friction", ["0", "0.5"])
def test_x_holds_every_scene(scene, friction):
    """From a solver that is not the holding one (jacobi), X on every scene at both frictions:
    150 steps with no alarm."""
    _, _, _, values = _case(scene, "jacobi", friction)
    s = session(scene, "jacobi", **values)
    s.apply(cmd.Recover())
    for _ in range(150):
        s.step()
        assert not s.alarm, s.alarm
    assert physics_check(s.world).escaped == 0
