"""The controls dock: rows generated from the declarations of whatever scene and solver run
(a solver registered later gets its rows without GUI code), commands for every change, the
speed as a real-time factor, and the Session's values shown back."""
from __future__ import annotations

from dataclasses import replace

import pytest

import scenes
from app.controls import SPEED_LADDER, ControlsPanel, speed_stop, speed_text
from lab.session import commands as cmd
from lab.session.session import Session
from lab.session.spec import SIM_PARAMS, RunSpec
from solver.methods import registry
from solver.methods.driver import Method
from solver.options import ITERATIONS
from solver.params import Param


def state_of(scene="bowl", solver="pgs", **assignments):
    spec = RunSpec.create(scene, solver, assignments=assignments)
    session = Session(spec, world=spec.build_world())
    session.sim = spec.simulation(session._world)
    return session.state()


@pytest.fixture
def panel(qtbot):
    sent, done = [], []
    p = ControlsPanel(sent.append, lambda: done.append(1))
    qtbot.addWidget(p)
    p.sent, p.done = sent, done
    return p


@pytest.mark.parametrize("solver", list(registry.METHODS))
def test_every_declared_parameter_of_the_solver_and_scene_has_a_row(panel, solver):
    scene = "heap" if registry.get(solver).friction else "box"
    panel.show_state(state_of(scene, solver))
    declared = {p.name for p in registry.get(solver).all_params}
    declared |= {p.name for p in scenes.get(scene).params} | {ITERATIONS.name} | {p.name for p in SIM_PARAMS}
    assert set(panel.editors) == declared
    s = state_of(scene, solver)
    for name, value in {**s.solver_params, **s.scene_params}.items():
        assert panel.editors[name].value() == pytest.approx(value) if isinstance(
            value, float) else panel.editors[name].value() == value


def test_a_solver_registered_later_gets_its_rows_without_gui_code(panel, monkeypatch):
    knob = Param("knob", 0.25, float, "a new solver's own parameter", "kg", lo=0.0, hi=1.0)
    new = Method("new", "A new method", registry.get("pgs").solvers, "for the test",
                 (knob,), friction=True)
    monkeypatch.setitem(registry.METHODS, "new", new)
    panel.show_state(state_of("heap", "new"))
    editor = panel.editors["knob"]
    assert editor.value() == 0.25 and editor.widget.suffix() == " kg"
    assert "a new solver's own parameter" in editor.widget.toolTip()
    editor.widget.stepBy(1)
    assert panel.sent[-1] == cmd.SetParameter("knob", repr(0.25 + 0.01))


def test_changes_become_the_commands_the_keys_send(panel):
    panel.show_state(state_of("bowl", "psor"))
    panel.editors["omega"].widget.stepBy(1)
    panel.editors["iterations"].widget.setValue(50)
    panel.editors["warm_start"].widget.setValue(0.5)
    panel.editors["damping"].widget.setValue(0.5)
    panel.solver_box.activated.emit(list(registry.METHODS).index("jacobi"))
    panel.scene_box.activated.emit(list(scenes.SCENES).index("box"))
    panel.colour_box.activated.emit(1)
    assert panel.sent == [cmd.SetParameter("omega", repr(1.6)), cmd.SetIterations("50"),
                          cmd.SetParameter("warm_start", "0.5"),
                          cmd.SetParameter("damping", "0.5"), cmd.SetSolver("jacobi"),
                          cmd.SetScene("box"), cmd.SetColourMode("speed")]
    assert len(panel.done) == len(panel.sent)  # the keyboard goes back to the view each time


def test_the_speed_is_a_real_time_factor_from_slow_motion_to_flat_out(panel):
    panel.show_state(state_of())
    assert SPEED_LADDER[0] == 0.05 and SPEED_LADDER[-1] == 0.0 and 1.0 in SPEED_LADDER
    assert panel.speed_slider.value() == SPEED_LADDER.index(1.0)
    assert panel.speed_label.text() == "1× (real time)"
    panel.speed_slider.setValue(0)
    assert panel.sent[-1] == cmd.SetSpeed(0.05) and panel.speed_label.text() == \
        "0.05× (slow motion)"
    panel.speed_slider.setValue(len(SPEED_LADDER) - 1)
    assert panel.sent[-1] == cmd.SetSpeed(0.0) and panel.speed_label.text() == \
        "as fast as possible"
    assert speed_stop(3.0) == SPEED_LADDER.index(2.0) and speed_text(3.0) == "3×"


def test_the_sessions_values_are_shown_back_and_the_rows_follow_the_solver(panel):
    panel.show_state(state_of("bowl", "psor", omega=1.2, warm_start=0.25))
    assert panel.editors["omega"].value() == pytest.approx(1.2)
    assert panel.editors["warm_start"].value() == pytest.approx(0.25)
    assert panel.solver_box.currentText() == "psor" and panel.pause_button.text() == "Pause"
    paused = replace(state_of("bowl", "jacobi"), paused=True, speed=0.0)
    panel.show_state(paused)
    assert "omega" not in panel.editors and "beta" in panel.editors
    assert panel.pause_button.text() == "Run" and panel.speed_label.text() == \
        "as fast as possible"
    assert panel.sent == []  # showing is not changing


def test_with_friction_the_solvers_that_cannot_solve_it_are_greyed_out(panel):
    panel.show_state(state_of("heap", "pgs"))
    model = panel.solver_box.model()
    enabled = {name: model.item(k).isEnabled() for k, name in enumerate(registry.METHODS)}
    assert enabled == {name: registry.get(name).friction for name in registry.METHODS}
    panel.show_state(state_of("box", "pgs"))
    assert all(model.item(k).isEnabled() for k in range(model.rowCount()))
