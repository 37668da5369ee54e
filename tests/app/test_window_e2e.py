"""End to end under Xvfb with real input events: a solver
chosen in the controls dock, Ctrl+S then Ctrl+O round-tripping a state bit for bit, Ctrl+E,
`marbles --state`, the contact network and a clicked marble's card, and the divergence
of `marbles --solver jacobi --set beta=1`. (The resize sequence: test_window_keys_and_readouts.py; the
3-second recording: test_recording.py.)"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from app import dialogs
from lab.io.snapshot import load_lcp, read_state
from solver.methods import registry
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.conftest import HANG_MS

ROOT = Path(__file__).resolve().parents[2]
WORLD_FIELDS = ("x", "v", "omega", "orientation", "radius", "mass", "colour")


def activate(qtbot, window) -> None:
    """Give the window the keyboard as a user's click would (key events then go where Qt
    sends real ones)."""
    window.activateWindow()
    qtbot.waitActive(window)
    window.view.setFocus()


def test_a_solver_chosen_in_the_dock_runs_and_the_keys_still_work(qtbot, make_window):
    window = make_window(scene="bowl", solver="pgs")
    activate(qtbot, window)
    box = window.controls.solver_box
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)  # opens the list, as a user does
    qtbot.waitUntil(lambda: box.view().isVisible(), timeout=5000)
    names = list(registry.METHODS)
    for _ in range(names.index("psor") - names.index("pgs")):
        qtbot.keyClick(box.view(), Qt.Key.Key_Down)
    qtbot.keyClick(box.view(), Qt.Key.Key_Return)
    f = wait_state(qtbot, window, lambda f: f.state.solver == "psor", timeout=HANG_MS)
    assert "omega" in window.controls.editors and f.steps > 0
    omega = window.controls.editors["omega"].widget
    omega.setFocus()
    omega.lineEdit().selectAll()
    qtbot.keyClicks(omega, "1.2")
    qtbot.keyClick(omega, Qt.Key.Key_Return)
    wait_state(qtbot, window, lambda f: f.state.solver_params["omega"] == pytest.approx(1.2))
    # The keyboard went back to the view.
    qtbot.waitUntil(lambda: window.focusWidget() is window.view, timeout=5000)
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Space)
    wait_state(qtbot, window, lambda f: f.state.paused)
    qtbot.waitUntil(lambda: window.controls.pause_button.text() == "Run", timeout=5000)
    omega.setFocus()
    omega.lineEdit().selectAll()
    qtbot.keyClicks(omega, "2.5")  # outside (0, 2): the spin box keeps its own range
    qtbot.keyClick(omega, Qt.Key.Key_Return)
    qtbot.wait(300)
    assert window.latest.state.solver_params["omega"] == pytest.approx(1.2)


def test_ctrl_s_then_ctrl_o_round_trips_the_state_bit_for_bit(qtbot, make_window, tmp_path,
                                                             monkeypatch):
    window = make_window(scene="heap", solver="pgs", solver_params={"n": 60, "warm_start": 0.5})
    activate(qtbot, window)
    wait_state(qtbot, window, lambda f: f.steps > 10 and f.contacts > 0)
    _press(qtbot, window, "Space")
    f = wait_state(qtbot, window, lambda f: f.state.paused)
    session = window.sim.worker.session
    saved = tmp_path / "saved.npz"
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a: str(saved))
    monkeypatch.setattr(dialogs, "ask_open_path", lambda *a: str(saved))
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.status_label.text().startswith(f"state saved: {saved}"),
                    timeout=10000)
    before = {k: np.copy(getattr(session.world, k)) for k in WORLD_FIELDS}
    steps = f.steps
    _press(qtbot, window, "S")  # one step on: what the saved run does next
    one = wait_state(qtbot, window, lambda f: f.steps == steps + 1)
    after_one, after_one_time = one.x.copy(), one.time
    _press(qtbot, window, "S")
    wait_state(qtbot, window, lambda f: f.steps == steps + 2)
    generation = window.latest.state.generation
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    f = wait_state(qtbot, window, lambda f: f.state.generation == generation + 1)
    assert f.state.origin == str(saved) and window.status_label.text().startswith("state opened")
    for k in WORLD_FIELDS:  # read in the worker's thread; it is paused, nothing moves
        assert np.array_equal(getattr(session.world, k), before[k]), k
    # The step count goes on with the time the state keeps: both where they were saved.
    assert f.steps == steps and f.time == pytest.approx(after_one_time - f.dt)
    qtbot.waitUntil(lambda: f"(step {steps}, dt" in window.hud.text(), timeout=HANG_MS)
    _press(qtbot, window, "S")
    again = wait_state(qtbot, window, lambda f: f.state.generation == generation + 1
                       and f.steps == steps + 1)
    assert np.array_equal(again.x, after_one)  # the step after it, bit for bit
    snap = read_state(saved)
    assert snap.scene["name"] == "heap" and snap.contact_key.size > 0


def test_ctrl_e_exports_the_contact_problem_for_the_bench(qtbot, make_window, tmp_path,
                                                          monkeypatch):
    window = make_window(scene="heap", solver_params={"n": 60})
    activate(qtbot, window)
    _press(qtbot, window, "Space")
    wait_state(qtbot, window, lambda f: f.state.paused and f.contacts > 0)
    path = tmp_path / "lcp.npz"
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a: str(path))
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "exported" in window.status_label.text(), timeout=10000)
    problem, _ = load_lcp(path)
    assert problem.frictional and problem.m == window.latest.contacts
    solved = subprocess.run([sys.executable, "-m", "lab.cli.bench", "solve", "--lcp", str(path),
                             "--iterations", "5"], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert solved.returncode == 0, solved.stderr
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a: "")  # cancelled: nothing
    text = window.status_label.text()
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    qtbot.wait(300)
    assert window.status_label.text() == text and sorted(os.listdir(tmp_path)) == ["lcp.npz"]


def test_marbles_state_opens_a_saved_state(tmp_path):
    state = tmp_path / "column.npz"
    subprocess.run([sys.executable, "-m", "lab.cli.bench", "run", "--scene", "column", "--steps",
                    "20", "--quiet", "--save-state", str(state)], cwd=ROOT, check=True,
                   timeout=300)
    shot = tmp_path / "shot.png"
    run = subprocess.run([sys.executable, "-m", "app.main", "--state", str(state), "--frames",
                          "3", "--no-benchmark", "--screenshot", str(shot)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "column/pgs 7 marbles" in run.stdout and shot.exists()


def screen_point(view, point) -> QPoint:
    """The view's pixel (logical) where world `point` is drawn."""
    cam = view.camera
    cam.aspect = view.width() / max(view.height(), 1)
    clip = cam.projection_matrix() @ cam.view_matrix() @ np.append(point, 1.0)
    ndc = clip[:3] / clip[3]
    return QPoint(round((ndc[0] + 1) / 2 * view.width()), round((1 - ndc[1]) / 2 * view.height()))


def test_the_contact_network_and_a_clicked_marbles_card(qtbot, make_window):
    window = make_window(scene="column")
    activate(qtbot, window)
    _press(qtbot, window, "K")
    f = wait_state(qtbot, window, lambda f: f.network is not None and f.stepped)
    ends, width, colour = f.network
    assert ends.shape == (f.contacts, 2, 3) and width.shape == (f.contacts,)
    qtbot.waitUntil(lambda: window.view._network is not None, timeout=5000)
    assert window.controls.network_box.isChecked()
    _press(qtbot, window, "Space")
    f = wait_state(qtbot, window, lambda f: f.state.paused)
    at = screen_point(window.view, f.x[3])
    assert window.view.pick(at.x(), at.y())[0] == 3
    qtbot.mouseClick(window.view, Qt.MouseButton.LeftButton, pos=at)
    qtbot.waitUntil(lambda: window.readouts.card.isVisible(), timeout=5000)
    lines = window.readouts.card.text().splitlines()
    assert lines[0] == "marble 3" and lines[2] == "2 contacts"
    # Resting under three marbles: 4 weights from below, 3 from above (statics).
    weights = float(lines[4].split("=")[1].split("×")[0])
    assert weights == pytest.approx(7.0, rel=0.05)
    qtbot.mouseClick(window.view, Qt.MouseButton.LeftButton, pos=QPoint(3, 3))  # nothing there
    qtbot.waitUntil(lambda: not window.readouts.card.isVisible(), timeout=5000)
    _press(qtbot, window, "K")
    wait_state(qtbot, window, lambda f: f.network is None and not f.state.network)


def _shown(qtbot, options):
    """The window of the program's `options` (app.main.options_from), shown, without dialogs;
    the test closes it."""
    from app.window import MainWindow

    options.show_dialogs = False
    window = MainWindow(options)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_divergence_scenario_of_the_issue_from_its_command_line(qtbot, tmp_path):
    """`marbles --solver jacobi --set beta=1` (the bowl with friction, as the window opens):
    it diverges and pauses, the HUD says so, and Space runs one step to the next divergence
    and pauses again instead of running on."""
    from app.main import build_parser, options_from

    options = options_from(build_parser().parse_args(
        ["--solver", "jacobi", "--set", "beta=1", "--benchmark-out", str(tmp_path),
         "--no-benchmark"]))
    window = _shown(qtbot, options)
    try:
        qtbot.waitUntil(lambda: window.latest is not None and window.latest.state.diverged,
                        timeout=HANG_MS)
        assert window.latest.state.friction[0] == 0.5  # the window's default scene
        qtbot.waitUntil(lambda: "DIVERGED: paused" in window.hud.text(), timeout=5000)
        activate(qtbot, window)
        for _ in range(2):
            steps = window.latest.steps
            qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Space)
            qtbot.waitUntil(lambda: window.latest.steps == steps + 1
                            and window.latest.state.paused, timeout=10000)
            qtbot.wait(300)
            assert window.latest.steps == steps + 1 and window.latest.state.diverged
            qtbot.waitUntil(lambda: "DIVERGED: paused" in window.hud.text()
                            and f"step {steps + 1} " in window.hud.text(), timeout=5000)
    finally:
        window.close()
        qtbot.waitUntil(lambda: window._shut_down, timeout=10000)


def test_the_window_opens_on_a_pour(qtbot, tmp_path):
    """`marbles` with no scene: the bowl's marbles start high and fall in (the README's
    "pour, roll, rest"), where `--scene bowl` keeps the headless runs' start."""
    from app.main import build_parser, options_from

    options = options_from(build_parser().parse_args(
        ["--benchmark-out", str(tmp_path), "--no-benchmark"]))
    assert options.spec.scene_params["pour"] is True
    assert options.world.x[:, 2].min() > 0.8
    plain = options_from(build_parser().parse_args(["--scene", "bowl", "--no-benchmark"]))
    assert plain.spec.scene_params["pour"] is False
    window = _shown(qtbot, options)
    try:
        qtbot.waitUntil(lambda: window.latest is not None
                        and window.latest.x[:, 2].min() < 0.3, timeout=HANG_MS)
    finally:
        window.close()
        qtbot.waitUntil(lambda: window._shut_down, timeout=10000)
