"""One whole session of the desktop program, as a user would have it, with real key presses and
clicks under Xvfb: launch from the command line, five scenes, four solvers, a divergence and
its recovery, 50 steps back in the history and that step solved again, pgs and jacobi side by
side for 10 s, Ctrl+S and Ctrl+O, and Q (which writes the comparison on close)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app import dialogs
from solver.methods import registry
from tests.app.conftest import HANG_MS
from tests.app.test_history_bar import solve_shown_step
from tests.app.test_window import _press, opened, wait_state
from tests.app.test_window_e2e import WORLD_FIELDS, activate

SIDE_BY_SIDE_SECONDS = 10.0


@pytest.fixture
def program(qtbot, tmp_path):
    """The window as `marbles --scene bowl --benchmark-out DIR` opens it (the benchmark on
    close on, as without --no-benchmark), with every frame logged for wait_state."""
    from app.main import build_parser, options_from
    from app.window import MainWindow

    options = options_from(build_parser().parse_args(
        ["--scene", "bowl", "--benchmark-out", str(tmp_path)]))
    options.show_dialogs = False
    window = opened(qtbot, MainWindow(options))
    yield window
    if not window._shut_down:
        window._close_benchmark = "skip"
        window.close()
        qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)


def _choose_solver_in_dock(qtbot, window, name: str) -> None:
    """Open the dock's solver list with a click and walk to `name` with the arrow keys."""
    box = window.controls.solver_box
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: box.view().isVisible(), timeout=HANG_MS)
    names = [box.itemText(k) for k in range(box.count())]
    steps = names.index(name) - box.currentIndex()
    key = Qt.Key.Key_Down if steps > 0 else Qt.Key.Key_Up
    for _ in range(abs(steps)):
        qtbot.keyClick(box.view(), key)
    qtbot.keyClick(box.view(), Qt.Key.Key_Return)
    wait_state(qtbot, window, lambda f: f.state.solver == name, timeout=HANG_MS)
    window.view.setFocus()


def _scenes_and_solvers(qtbot, window) -> None:
    scenes_seen = [window.latest.state.scene]
    for _ in range(4):
        _press(qtbot, window, "N")
        f = wait_state(qtbot, window, lambda f: f.state.scene != scenes_seen[-1] and f.steps > 2,
                       timeout=HANG_MS)
        scenes_seen.append(f.state.scene)
    assert len(set(scenes_seen)) == 5
    for _ in range(4):
        _press(qtbot, window, "Shift+N")
    wait_state(qtbot, window, lambda f: f.state.scene == "bowl" and f.steps > 2, timeout=HANG_MS)
    names = list(registry.METHODS)
    solvers_seen = [window.latest.state.solver]
    for _ in range(3):
        _press(qtbot, window, "M")
        nxt = names[names.index(solvers_seen[-1]) + 1]
        steps = window.latest.steps
        f = wait_state(qtbot, window, lambda f: f.state.solver == nxt and f.steps > steps + 2,
                       timeout=HANG_MS)
        solvers_seen.append(f.state.solver)
    assert len(set(solvers_seen)) == 4


def _divergence_and_recovery(qtbot, window) -> None:
    """jacobi with β = 1 (the Right key from its 0.3) on the frictionless bowl from its start
    diverges within steps; X switches to pgs and resets, and the run goes on."""
    _choose_solver_in_dock(qtbot, window, "jacobi")
    for _ in range(7):
        _press(qtbot, window, "Right")
    wait_state(qtbot, window, lambda f: f.state.solver_params["beta"] == pytest.approx(1.0))
    _press(qtbot, window, "R")
    diverged = wait_state(qtbot, window, lambda f: f.state.diverged, timeout=HANG_MS)
    assert diverged.state.paused and diverged.state.solver == "jacobi"
    qtbot.waitUntil(lambda: "DIVERGED: paused" in window.hud.text(), timeout=HANG_MS)
    _press(qtbot, window, "X")
    f = wait_state(qtbot, window, lambda f: f.state.solver == "pgs" and not f.state.diverged
                   and not f.state.paused and f.steps > 5, timeout=HANG_MS)
    assert f.state.generation > diverged.state.generation


def _history_back_and_solve(qtbot, window) -> None:
    """50 steps back with the `,` key; the step shown is the one made then; the bar's Solve
    compares jacobi on that step's problem; S goes on from it."""
    wait_state(qtbot, window, lambda f: f.steps >= 70, timeout=HANG_MS)
    _press(qtbot, window, "Space")
    paused = wait_state(qtbot, window, lambda f: f.state.paused)
    then = [f for f in window.frame_log if f.stepped and f.steps <= paused.steps - 50
            and f.state.generation == paused.state.generation][-1]
    for _ in range(paused.steps - then.steps):
        qtbot.keyClick(window, Qt.Key.Key_Comma)
    shown = wait_state(qtbot, window, lambda f: f.steps == then.steps, timeout=HANG_MS)
    assert paused.steps - shown.steps >= 50 and np.array_equal(shown.x, then.x)
    solve_shown_step(qtbot, window, "jacobi", then)
    window.activateWindow()
    window.view.setFocus()
    _press(qtbot, window, "S")
    wait_state(qtbot, window, lambda f: f.steps == then.steps + 1, timeout=HANG_MS)


def _side_by_side(qtbot, window) -> None:
    """pgs, then jacobi chosen in the dock, then T: jacobi beside pgs for 10 s of real time,
    each copy stepped (one curve each in the plots); T again ends it."""
    _choose_solver_in_dock(qtbot, window, "jacobi")  # β = 1 still: back to its default
    for _ in range(7):
        _press(qtbot, window, "Left")
    wait_state(qtbot, window, lambda f: f.state.solver_params["beta"] == pytest.approx(0.3))
    _press(qtbot, window, "T")
    start = wait_state(qtbot, window, lambda f: len(f.state.side_by_side) == 2, timeout=HANG_MS)
    assert start.state.side_by_side[0].startswith("jacobi")
    assert start.state.side_by_side[1].startswith("pgs")
    if start.state.paused:
        _press(qtbot, window, "Space")
    qtbot.wait(int(1e3 * SIDE_BY_SIDE_SECONDS))
    end = window.latest
    assert len(end.state.side_by_side) == 2 and not end.state.diverged
    # Real time at dt 0.02 s: most of the 500 steps of 10 s, on a loaded machine at least half.
    assert end.steps - start.steps >= 0.5 * SIDE_BY_SIDE_SECONDS / end.dt
    assert len(end.copies) == 2
    curves = window.plots.curve_data()
    for k in range(2):
        assert curves[f"copy {k} history"][0].size > 0, k
    _press(qtbot, window, "T")
    wait_state(qtbot, window, lambda f: f.state.side_by_side == (), timeout=HANG_MS)


def _save_and_open(qtbot, window, tmp_path, monkeypatch) -> None:
    saved = tmp_path / "session.npz"
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a: str(saved))
    monkeypatch.setattr(dialogs, "ask_open_path", lambda *a: str(saved))
    _press(qtbot, window, "Space")
    paused = wait_state(qtbot, window, lambda f: f.state.paused)
    session = window.sim.worker.session
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: saved.exists(), timeout=HANG_MS)
    before = {k: np.copy(getattr(session.world, k)) for k in WORLD_FIELDS}
    _press(qtbot, window, "S")
    wait_state(qtbot, window, lambda f: f.steps == paused.steps + 1)
    generation = window.latest.state.generation
    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    wait_state(qtbot, window, lambda f: f.state.generation > generation and f.state.paused)
    for k in WORLD_FIELDS:  # read in the worker's thread: paused, nothing moves
        assert np.array_equal(getattr(session.world, k), before[k]), k


def test_a_whole_session_from_launch_to_q(qtbot, program, tmp_path, monkeypatch, capfd):
    window = program
    activate(qtbot, window)
    _scenes_and_solvers(qtbot, window)
    _divergence_and_recovery(qtbot, window)
    _history_back_and_solve(qtbot, window)
    _side_by_side(qtbot, window)
    _save_and_open(qtbot, window, tmp_path, monkeypatch)
    _press(qtbot, window, "Space")  # running again: Q compares the solvers on its last step
    steps = window.latest.steps
    wait_state(qtbot, window, lambda f: f.steps > steps + 2, timeout=HANG_MS)
    with qtbot.waitSignal(window.finished, timeout=HANG_MS) as finished:
        _press(qtbot, window, "Q")
    assert finished.args == [0] and window.exit_code == 0
    # The solve from the history wrote one comparison before; Q's, the last, has its own name.
    files = sorted(tmp_path.glob("benchmark-*.json"), key=lambda p: p.stat().st_mtime_ns)
    assert len(files) == 2
    written = json.loads(files[-1].read_text())
    assert written["n_marbles"] == 350 and written["step"] > 0
    said = capfd.readouterr().out
    assert f"benchmark of step {written['step']} written: " in said and str(files[-1]) in said
