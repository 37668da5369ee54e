"""The window's files and friction, each driven through the real program: the window's
benchmark.json against compare's, friction kept by N, a state file that names no scene, and
the convergence plot after a divergence."""
from __future__ import annotations

import json

import pytest

from PySide6.QtCore import Qt

from lab.cli import bench
from tests.app.conftest import HANG_MS
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_alarms_and_quit import activate


def test_the_b_keys_benchmark_json_has_the_keys_of_compares(qtbot, make_window, tmp_path):
    """docs/cli.md promises the window writes compare's files: the same keys, top level and
    settings, with the numbers of the frozen step."""
    window = make_window(scene="column", benchmark_iterations=5)
    activate(qtbot, window)
    _press(qtbot, window, "Space")
    paused = wait_state(qtbot, window, lambda f: f.state.paused)
    with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS):
        _press(qtbot, window, "B")
    [mine] = [json.loads(p.read_text()) for p in tmp_path.glob("benchmark-*.json")]
    assert bench.main(["compare", "--scene", "column", "--settle", "3", "--iterations", "5",
                       "--solvers", "pgs,jacobi", "--repeats", "1", "--quiet",
                       "--out", str(tmp_path / "compare")]) == 0
    theirs = json.loads((tmp_path / "compare" / "benchmark.json").read_text())
    assert set(mine) == set(theirs)
    assert set(mine["settings"]) == set(theirs["settings"])
    assert mine["n_marbles"] == 7 and mine["contact_count"] == paused.contacts
    assert mine["step"] == paused.steps and mine["wall_seconds"] > 0
    assert mine["time"] == pytest.approx(paused.time - paused.dt)  # the frozen step's start
    assert mine["settings"]["settle_solver"] == "pgs" and "B key" in mine["source"]


def _choose_in_dock(qtbot, window, scene: str) -> None:
    """Choose `scene` in the dock's scene list with the keyboard, as after a Tab to it:
    Alt+Down opens the list, the arrows move to the scene, Enter takes it. (A click opens the
    list with the current scene under the pointer, where the click's release, late on a busy
    machine, takes that scene again; typed names are searched with a time limit.)"""
    box = window.controls.scene_box
    window.controls.ensureWidgetVisible(box)
    box.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(box.hasFocus, timeout=HANG_MS)
    qtbot.keyClick(box, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    view = box.view()
    qtbot.waitUntil(view.isVisible, timeout=HANG_MS)
    rows = box.findText(scene) - view.currentIndex().row()
    for _ in range(abs(rows)):
        qtbot.keyClick(view, Qt.Key.Key_Down if rows > 0 else Qt.Key.Key_Up)
    assert view.currentIndex().data() == scene
    qtbot.keyClick(view, Qt.Key.Key_Return)


def test_friction_the_f_key_turned_on_or_off_holds_for_the_next_scenes(qtbot, make_window):
    """F on the disk gives it μ 0.5; N then gives the column μ 0.5 too (F's value where a
    scene has none), the dock's incline its own μ 0.3; F off, then the dock's heap runs
    without its own friction, and F brings that back."""
    window = make_window(scene="disk", solver="apgd")
    activate(qtbot, window)

    def switch(press, scene: str, friction: tuple) -> None:
        generation = window.latest.state.generation
        press()
        f = wait_state(qtbot, window, lambda f: f.state.generation > generation)
        assert (f.state.scene, f.state.friction) == (scene, friction)
        assert f.state.solver == "apgd"

    on, off = (0.5, 0.5, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)
    _press(qtbot, window, "F")
    wait_state(qtbot, window, lambda f: f.state.friction == on)
    switch(lambda: _press(qtbot, window, "N"), "column", on)
    # A slow first step of the column shows its progress notice for a while, then the status
    # it covered comes back.
    qtbot.waitUntil(lambda: window.status_label.text() == "friction on (the friction key): μ 0.5",
                    timeout=HANG_MS)
    switch(lambda: _press(qtbot, window, "Shift+N"), "disk", on)
    switch(lambda: _choose_in_dock(qtbot, window, "incline"), "incline", (0.3, 0.3, 0.0, 0.0))
    activate(qtbot, window)
    _press(qtbot, window, "F")
    wait_state(qtbot, window, lambda f: f.state.friction == off)
    switch(lambda: _choose_in_dock(qtbot, window, "heap"), "heap", off)
    activate(qtbot, window)
    _press(qtbot, window, "F")
    wait_state(qtbot, window, lambda f: f.state.friction == (0.5, 0.5, 0.03, 0.0))


def test_a_state_file_that_names_no_scene_opens_as_the_file(qtbot, make_window, tmp_path):
    """A state written without its scene record (an older file, or one made by hand) is the
    file's world, not the default scene: the HUD and the dock say `state FILE` with its
    marble count, and the scene's own fields, which are not this world's, are not shown."""
    import scenes
    from lab.io.snapshot import save_state

    path = tmp_path / "seven.npz"
    save_state(path, scenes.build("column", {}))
    window = make_window(state=str(path))  # as `marbles --state FILE` opens it
    f = window.latest.state
    assert f.origin == str(path) and len(window.latest.radius) == 7
    controls = window.controls
    assert controls.scene_box.currentIndex() == -1
    assert controls.scene_box.placeholderText() == "state seven.npz: 7 marbles"
    assert not controls.editors["n"].widget.isVisible()
    qtbot.waitUntil(lambda: window.hud.text().startswith("state seven.npz   7 marbles"),
                    timeout=HANG_MS)
    activate(qtbot, window)
    generation = f.generation
    _press(qtbot, window, "N")  # a scene from the list replaces the file's world
    qtbot.waitUntil(lambda: window.latest.state.generation > generation, timeout=HANG_MS)
    assert window.latest.state.scene_named
    assert controls.scene_box.currentText() == window.latest.state.scene
    assert controls.editors["seed"].widget.isVisible()


def test_the_latest_step_plot_shows_the_step_that_diverged(qtbot, make_window):
    """Only a few steps a second are traced, and jacobi with β = 1 on the bowl diverges at an
    untraced one: the plot of the latest step must show that step, up to its divergence, with
    the divergence marked, not an earlier calm step (or the single point of step 1)."""
    window = make_window(scene="bowl", solver="jacobi", solver_params={"beta": 1.0},
                         speed=0.0)  # flat out: the steps come faster than the traces
    f = wait_state(qtbot, window, lambda f: f.state.diverged and f.state.paused, since=0,
                   timeout=HANG_MS)
    plots = window.plots
    plots.refresh()  # what its timer does next: the frames received so far, drawn
    x, y = plots.curve_data()["trace"]
    assert x.size == f.iterations_done + 1 > 1
    assert 10 ** y[-1] == pytest.approx(f.residual, rel=1e-9)  # that step's own solve
    assert list(plots.curve_data()["alarm"][0]) == [x[-1], x[-1]]
    assert plots.trace_title == f"residual per iteration (step {f.steps}: marbles exploded)"
    assert plots.trace_plot.titleLabel.text == plots.trace_title
