"""The main window under Xvfb: it shows marbles, every hotkey reaches the worker, the plots get
data, errors are messages, closing joins the worker; and the `marbles` command line."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

import scenes
from lab import actions
from app.main import main
from app.plots import FLOOR
from app.window import MainWindow
from tests.app.conftest import HANG_MS, window_options
from lab.session import commands as cmd
from solver.methods import registry

ROOT = Path(__file__).resolve().parents[2]


def image_array(img: QImage) -> np.ndarray:
    """(h, w, 3) uint8 RGB copy of a QImage."""
    img = img.convertToFormat(QImage.Format.Format_RGB888)
    w, h = img.width(), img.height()
    row = img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=row * h).reshape(h, row)
    return buf[:, :3 * w].reshape(h, w, 3).copy()


class FrameLog(QObject):
    """Receives every frame in the GUI thread (queued, like the window)."""

    def __init__(self):
        super().__init__()
        self.frames = []

    @Slot(object)
    def add(self, frame):
        self.frames.append(frame)


def opened(qtbot, window):
    """`window` shown, every frame it receives logged in order for wait_state (window.latest
    only keeps the newest), once it has made a few steps."""
    window.frame_recorder = FrameLog()
    window.frame_log = window.frame_recorder.frames
    window.sim.worker.frameReady.connect(window.frame_recorder.add)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.latest is not None and window.latest.steps > 2,
                    timeout=HANG_MS)
    return window


@pytest.fixture
def make_window(qtbot, tmp_path):
    made = []

    def make(**kw):
        kw.setdefault("benchmark_out", str(tmp_path))
        kw.setdefault("benchmark_on_close", False)
        kw.setdefault("show_dialogs", False)
        window = MainWindow(window_options(**kw))
        made.append(window)
        return opened(qtbot, window)

    yield make
    for window in made:
        if not window._shut_down:
            window._close_benchmark = "skip"
            window.close()
        assert window.sim.thread.isFinished()


def wait_state(qtbot, window, predicate, timeout=20000, since=None):
    """The first frame delivered from now on that satisfies `predicate` (frames delivered
    before this call were emitted before any key pressed just before it)."""
    log = window.frame_log
    start = len(log) if since is None else since
    hit = []

    def check():
        while not hit and start + window.scanned < len(log):
            f = log[start + window.scanned]
            window.scanned += 1
            if predicate(f):
                hit.append(f)
        return bool(hit)

    window.scanned = 0
    try:
        qtbot.waitUntil(check, timeout=timeout)
    except Exception:
        f = window.latest
        raise AssertionError(f"state {f.state}, steps {f.steps}, time {f.time}") from None
    return hit[0]


def test_window_shows_marbles(qtbot, make_window):
    window = make_window()
    window.trigger("pause")
    wait_state(qtbot, window, lambda f: f.state.paused)
    view = window.view
    assert view.failure is None
    with_marbles = image_array(view.grab_frame())
    f = window.latest
    view.set_marbles(np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3), dtype=np.float32))
    without = image_array(view.grab_frame())
    view.set_marbles(f.x, f.radius, f.colour)
    assert with_marbles.shape == without.shape and with_marbles.size > 0
    changed = np.any(np.abs(with_marbles.astype(int) - without.astype(int)) > 24, axis=2)
    # 350 marbles of radius 0.1 m fill a good part of a bowl of radius 1 m framed by the view.
    assert changed.mean() > 0.05
    # Marble colours are saturated; the background, floor and glass are not.
    saturation = with_marbles.max(axis=2).astype(int) - with_marbles.min(axis=2)
    assert (saturation > 80).mean() > 0.05
    assert "scene bowl" in window.hud.text() and "pgs" in window.hud.text()


def _press(qtbot, window, key_text: str) -> None:
    """Press a key written as in the hotkey table ("Shift+N", "F1", "Space")."""
    *mods, key = key_text.split("+")
    modifier = Qt.KeyboardModifier.NoModifier
    for m in mods:
        modifier |= {"Shift": Qt.KeyboardModifier.ShiftModifier,
                     "Ctrl": Qt.KeyboardModifier.ControlModifier}[m]
    qt_key = getattr(Qt.Key, f"Key_{key}")
    qtbot.keyClick(window, qt_key, modifier)


def _key(action: str) -> str:
    return next(h.keys[0] for h in actions.TABLE if h.action == action)


def test_every_hotkey_changes_the_workers_state(qtbot, make_window, tmp_path):
    window = make_window(scene="bowl", solver="pgs")
    solvers = list(registry.METHODS)
    scene_names = list(scenes.SCENES)
    covered = set()

    def press(action, predicate, timeout=20000):
        _press(qtbot, window, _key(action))
        covered.add(action)
        return wait_state(qtbot, window, predicate, timeout)

    before = press("pause", lambda f: f.state.paused).steps
    press("step", lambda f: f.steps == before + 1)
    qtbot.wait(100)
    assert window.latest.steps == before + 1 and window.latest.state.paused
    press("pause", lambda f: not f.state.paused and f.steps > before + 2)

    nxt = solvers[(solvers.index("pgs") + 1) % len(solvers)]
    press("next_solver", lambda f: f.state.solver == nxt, timeout=HANG_MS)
    press("prev_solver", lambda f: f.state.solver == "pgs")
    press("more_iterations", lambda f: f.state.iterations == 50)
    press("fewer_iterations", lambda f: f.state.iterations == 20)
    press("omega_up", lambda f: "no relaxation" in f.state.message)  # pgs has no ω
    window.sim.send(cmd.SetSolver("psor"))
    wait_state(qtbot, window, lambda f: f.state.solver == "psor", timeout=HANG_MS)
    press("omega_up", lambda f: f.state.solver_params["omega"] == pytest.approx(1.6))
    press("omega_down", lambda f: f.state.solver_params["omega"] == pytest.approx(1.5))
    press("warm_start", lambda f: f.state.warm_start == 0.5)
    press("colour", lambda f: f.state.colour_mode == "speed")
    press("friction", lambda f: f.state.friction == (0.5, 0.5, 0.0, 0.0))
    qtbot.waitUntil(lambda: window.hud.text().splitlines()[0].endswith("μ 0.5"))
    press("friction", lambda f: f.state.friction == (0.0, 0.0, 0.0, 0.0))

    window.view.camera.azimuth += 40.0
    moved = window.view.camera.azimuth
    _press(qtbot, window, _key("camera"))
    covered.add("camera")
    assert window.view.camera.azimuth != moved

    _press(qtbot, window, _key("controls"))
    covered.add("controls")
    assert window.controls_dock.isHidden()
    _press(qtbot, window, _key("controls"))
    assert window.controls_dock.isVisible()

    _press(qtbot, window, _key("help"))
    covered.add("help")
    assert window.help.isVisible()
    _press(qtbot, window, _key("help"))
    assert not window.help.isVisible()

    _press(qtbot, window, _key("screenshot"))
    covered.add("screenshot")
    shots = list(tmp_path.glob("marbles-*.png"))
    assert len(shots) == 1 and not QImage(str(shots[0])).isNull()

    gen = window.latest.state.generation
    press("reset", lambda f: f.state.generation == gen + 1 and f.time < 0.5)
    window.sim.send(cmd.SetSolver("psor"))
    wait_state(qtbot, window, lambda f: f.state.solver == "psor")
    press("recover", lambda f: f.state.solver == "pgs" and f.state.generation == gen + 2)
    second = scene_names[1]
    press("next_scene", lambda f: f.state.scene == second)
    press("prev_scene", lambda f: f.state.scene == scene_names[0])

    # B has its own test (test_benchmark_window.py), Q below, the files and the network
    # test_window_e2e.py, recording test_recorder.py, H test_window_overlays.py, side by side
    # test_side_by_side.py, the history test_history_bar.py, Esc test_benchmark_runs.py.
    assert covered | {"benchmark", "quit", "cancel", "save_state", "open_state", "export_problem",
                      "network", "record", "readouts", "side_by_side", "history_back",
                      "history_forward"} == set(actions.NAMES)


def test_a_row_added_to_the_action_table_is_a_key_of_the_window(qtbot, make_window, monkeypatch):
    """The window's key dispatch comes from lab.actions alone: a new row, with a Session
    command or a named window action, is a key that does it, with no other edit."""
    rows = (actions.Action("pause_by_z", ("Z",), "pause", cmd.Pause(True)),
            actions.Action("camera_by_j", ("J",), "camera", window="camera"))
    monkeypatch.setattr(actions, "TABLE", actions.TABLE + rows)
    monkeypatch.setattr(actions, "_BY_KEY", {**actions._BY_KEY, "Z": "pause_by_z",
                                             "J": "camera_by_j"})
    window = make_window(scene="column")
    _press(qtbot, window, "Z")
    wait_state(qtbot, window, lambda f: f.state.paused)
    window.view.camera.azimuth += 40.0
    moved = window.view.camera.azimuth
    _press(qtbot, window, "J")
    assert window.view.camera.azimuth != moved


def test_dispatch_refuses_a_window_action_without_its_method():
    from lab.actions import dispatch

    sent = []
    table = (actions.Action("a", ("A",), "sends", cmd.Step()),
             actions.Action("b", ("B",), "runs", window="b_method"))
    handlers = dispatch(table, sent.append, {"b_method": lambda: sent.append("b")})
    handlers["a"]()
    handlers["b"]()
    assert sent == [cmd.Step(), "b"]
    with pytest.raises(AssertionError, match="b_method"):
        dispatch(table, sent.append, {})
    with pytest.raises(AssertionError, match="extra"):
        dispatch(table, sent.append, {"b_method": print, "extra": print})


def test_keys_reach_the_map_from_every_widget_that_can_take_focus(qtbot, make_window):
    """No application-wide key filter: a key pressed in a focused child must reach
    MainWindow.keyPressEvent by propagation, so no child may keep hotkeys for itself. The
    plots, which would (their view boxes zoom on + and -), cannot take focus. The controls
    dock's editors take the keys while they are being edited (test_window_e2e.py: after an
    edit the keyboard goes back to the view), its buttons never take focus."""
    window = make_window(scene="column")
    editors = window.controls.findChildren(QWidget)
    focusable = [w for w in window.findChildren(QWidget)
                 if w.focusPolicy() != Qt.FocusPolicy.NoFocus and w.isVisible()
                 and w not in editors and w is not window.controls]
    assert window.view in focusable and window.plots.canvas not in focusable
    assert not any(b.focusPolicy() != Qt.FocusPolicy.NoFocus
                   for b in window.controls.findChildren(QPushButton))
    paused = False
    for widget in focusable:
        widget.setFocus()
        qtbot.keyClick(widget, Qt.Key.Key_Space)
        paused = not paused
        wait_state(qtbot, window, lambda f, p=paused: f.state.paused == p)


def test_mouse_drag_signals_move_the_marble(qtbot, make_window):
    window = make_window(scene="column")
    target = np.array([0.0, 0.0, 1.8])
    window.view.dragStarted.emit(6)  # what Ctrl+left-drag on the top marble emits
    window.view.dragMoved.emit(6, target)
    f = wait_state(qtbot, window, lambda f: np.linalg.norm(f.x[6] - target) < 0.02)
    window.view.dragEnded.emit(6)
    start = f.steps
    f = wait_state(qtbot, window, lambda f: f.steps > start + 100)
    assert f.x[6, 2] == pytest.approx(1.3, abs=0.03)


def test_plots_receive_data(qtbot, make_window):
    window = make_window(scene="bowl")
    plots = window.plots
    qtbot.waitUntil(lambda: plots.curve_data()["trace"][1].size == 21, timeout=20000)
    data = plots.curve_data()
    assert plots.frames_added > 0 and plots.refreshes > 0
    assert data["history"][1].size > 0
    for name in ("collide", "assemble", "solve", "integrate"):
        assert data[f"phase:{name}"][1].size > 0
    # Log-scale curves hold log10 of the clamped values: all finite, none below the floor.
    for _, y in data.values():
        assert np.all(np.isfinite(y)) and np.all(y >= np.log10(FLOOR) - 1e-9)


def test_plots_update_while_the_view_draws_nothing(qtbot, make_window):
    """The plots and the HUD have a timer of their own: with the 3D view held back (as if its
    frames were too slow to draw) they still show new steps, and their repaints reuse the
    view's last image instead of rendering it again."""
    window = make_window(scene="bowl")
    plots = window.plots
    qtbot.waitUntil(lambda: plots.curve_data()["history"][0].size > 0, timeout=20000)

    def hold() -> bool:
        """Between two 3D frames (none rendering, none handed over), stop handing new ones:
        the pacing never allows another."""
        if window._awaiting_render or not window.view.idle():
            return False
        window._view_ready_at = float("inf")
        return True

    qtbot.waitUntil(hold, timeout=20000)
    paints, drawn = window.view.paints, window._drawn_seq
    refreshes = plots.refreshes
    last_time = plots.shown_time
    hud = window.hud.text()
    qtbot.waitUntil(lambda: plots.refreshes >= refreshes + 3
                    and plots.shown_time > last_time + 0.1
                    and window.hud.text() != hud, timeout=20000)
    assert window.view.paints == paints and window._drawn_seq == drawn
    window._view_ready_at = 0.0  # released, the view catches up with the newest frame
    qtbot.waitUntil(lambda: window._drawn_seq > drawn and window.view.paints > paints,
                    timeout=20000)


def test_only_the_frame_handed_over_lets_the_next_one_go(qtbot, make_window):
    """The view draws one frame at a time: a rendering that finishes for another reason (a
    camera move, a new scene) while the handed frame is drawn does not release the next one,
    or the view would render back to back, ahead of the pacing (VIEW_SHARE)."""
    window = make_window(scene="column")
    qtbot.waitUntil(lambda: window._awaiting_render > 0, timeout=20000)
    version = window._awaiting_render  # no event is processed from here to the end
    drawn = window._renders
    window._on_rendered(0.01, version - 1)  # an earlier rendering finishing now
    assert window._awaiting_render == version and window._renders == drawn
    window._on_rendered(0.01, version)
    assert window._awaiting_render == 0 and window._renders == drawn + 1


def test_quit_key_closes_and_joins_the_worker(qtbot, make_window):
    window = make_window(scene="column")
    _press(qtbot, window, "Q")
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    assert window.sim.thread.isFinished()


def test_divergence_pauses_every_time_and_the_hud_tells_the_truth(qtbot, make_window):
    """`marbles --solver jacobi --set beta=1`: Space after the divergence must not run on for
    good at 1e7 m/s with the HUD still reading "paused". Space runs one step, the next
    divergence pauses again, and the HUD and the status bar say so each time; R, then X."""
    window = make_window(scene="bowl", solver="jacobi", solver_params={"beta": 1.0})
    f = wait_state(qtbot, window, lambda f: f.state.diverged, since=0)
    assert f.state.paused and f.state.alarm.startswith("marbles exploded (")
    qtbot.waitUntil(lambda: "DIVERGED: paused" in window.hud.text(), timeout=5000)
    qtbot.waitUntil(lambda: window.status_label.text().startswith(f.state.alarm), timeout=5000)
    steps = window.latest.steps
    qtbot.wait(300)
    assert window.latest.steps == steps and np.all(np.isfinite(window.latest.x))
    for _ in range(3):
        _press(qtbot, window, "Space")
        f = wait_state(qtbot, window, lambda f: f.steps > steps and f.state.paused)
        assert f.steps == steps + 1 and f.state.diverged and "diverged at step" in f.state.alarm
        steps = f.steps
        qtbot.waitUntil(lambda: f"step {steps} " in window.hud.text()
                        and "DIVERGED: paused" in window.hud.text(), timeout=5000)
        qtbot.wait(200)
        assert window.latest.steps == steps  # it did not run on
    session = window.sim.worker.session
    assert np.abs(session.world.v).max() < 1e3  # not the 1e7 m/s of running on
    frames = window.frame_log
    _press(qtbot, window, "R")  # the reset ends the divergence's pause
    qtbot.waitUntil(lambda: any(f.state.generation == 1 for f in frames), timeout=5000)
    first = next(f for f in frames if f.state.generation == 1)
    assert not first.state.diverged and not first.state.paused and first.time < 0.05
    wait_state(qtbot, window, lambda f: f.state.diverged)  # β = 1 diverges again at once
    _press(qtbot, window, "X")  # a stable solver, from t = 0, running
    f = wait_state(qtbot, window, lambda f: f.state.generation == 2 and f.steps > 30)
    assert f.state.solver == "pgs" and not f.state.diverged and not f.state.paused
    qtbot.waitUntil(lambda: "DIVERGED" not in window.hud.text(), timeout=5000)
    assert window.status_label.text() == ("switched from jacobi at 20 iterations to pgs at 20 "
                                          "iterations and reset")


def test_gl_failure_is_a_message_not_a_traceback(qtbot, make_window, capfd):
    window = make_window(scene="column", show_dialogs=True)
    window.view.glFailed.emit("could not create an OpenGL 3.3 core context (test)")
    box = window.error_dialog
    assert isinstance(box, QMessageBox) and "OpenGL 3.3" in box.text()
    qtbot.waitUntil(box.isVisible, timeout=5000)
    assert window.sim.thread.isFinished()
    box.done(0)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    assert window.exit_code == 1
    err = capfd.readouterr().err
    assert "could not create an OpenGL 3.3 core context (test)" in err
    assert "Traceback" not in err


def test_the_window_opens_on_the_bowl_with_friction_and_the_bench_on_the_articles(tmp_path):
    """`marbles` alone: the bowl with friction and full warm start (it comes to rest);
    `--scene bowl`, a solver without friction, and `marbles-bench` keep the article's
    frictionless bowl; --set values win over the window's friction."""
    from app.main import build_parser, options_from
    from lab.cli import bench

    def spec(*argv):
        return options_from(build_parser().parse_args(["--benchmark-out", str(tmp_path),
                                                       *argv])).spec

    s = spec()
    assert s.scene == "bowl" and s.solver == "pgs" and s.options.warm_start == 1.0
    assert (s.scene_params["mu"], s.scene_params["mu_wall"], s.scene_params["mu_roll"]) == (
        0.5, 0.5, 0.001)
    for argv in (["--scene", "bowl"], ["--solver", "pcg"]):
        s = spec(*argv)
        assert s.scene == "bowl" and s.options.warm_start == 0.0
        assert not scenes.has_friction(s.scene_params)
    s = spec("--set", "mu=0.2", "--set", "warm_start=0.5")
    assert (s.scene_params["mu"], s.scene_params["mu_wall"], s.options.warm_start) == (0.2, 0.5, 0.5)
    report = tmp_path / "run.json"
    bench.main(["run", "--steps", "1", "--quiet", "--json", str(report)])
    run = json.loads(report.read_text())
    assert run["scene"] == "bowl" and run["settings"]["warm_start"] == 0.0
    assert not scenes.has_friction(run["scene_params"])


def _run_marbles(*args, env=None, timeout=120):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "app.main", *args], cwd=ROOT, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def test_no_opengl_33_exits_with_one_line(tmp_path):
    run = _run_marbles("--scene", "column", "--frames", "5", "--benchmark-out", str(tmp_path),
                       env={"MESA_GL_VERSION_OVERRIDE": "3.0"})
    assert run.returncode == 1
    assert "OpenGL 3.3" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) <= 2
    assert not list(tmp_path.glob("benchmark*"))


def test_scripted_screenshot(tmp_path):
    shot = tmp_path / "shot.png"
    run = _run_marbles("--scene", "column", "--screenshot", str(shot), "--frames", "5",
                       "--no-benchmark")
    assert run.returncode == 0, run.stderr
    img = image_array(QImage(str(shot)))
    assert img.shape[0] > 100 and img.shape[1] > 100
    # The 3D view (left of the plots dock) shows the column's seven coloured marbles; the
    # background, floor and glass are grey, so saturated pixels can only be marbles.
    view = img[:, : int(0.6 * img.shape[1])].astype(int)
    assert ((view.max(axis=2) - view.min(axis=2)) > 80).mean() > 0.005
    assert not list(tmp_path.glob("benchmark*"))


def test_screenshots_are_written_atomically(qtbot, make_window, tmp_path, capsys,
                                            monkeypatch):
    window = make_window(scene="column")
    kept = tmp_path / "kept.png"
    kept.write_bytes(b"old")
    kept.chmod(0o600)
    assert window.save_screenshot(str(kept))  # replaced whole, its mode kept (lab.io.files)
    assert not QImage(str(kept)).isNull() and (kept.stat().st_mode & 0o777) == 0o600
    assert window.save_screenshot(str(tmp_path / "new" / "shot.jpg"))  # folder made as needed
    assert QImage(str(tmp_path / "new" / "shot.jpg")).format() != QImage.Format.Format_Invalid
    capsys.readouterr()
    before = kept.read_bytes()
    real_fsync = os.fsync

    def disk_full(fd):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".mb-"):
            raise OSError(28, os.strerror(28))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", disk_full)
    assert not window.save_screenshot(str(kept))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(kept) in err and "No space left on device" in err
    assert kept.read_bytes() == before and window.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.png", "new"]


@pytest.mark.parametrize("args, words", [
    (["--scene", "nope"], "unknown scene 'nope'"),
    (["--solver", "nope"], "unknown solver 'nope'"),
    (["--iterations", "0"], "iterations=0"),
    (["--solver", "psor", "--set", "omega=3"], "omega=3"),
    (["--set", "bogus=1"], "unknown parameter 'bogus'"),
    (["--frames", "-1"], "frames=-1"),
    (["--speed", "x"], "speed=x"),
    (["--threads", "0"], "threads=0"),
    (["--screenshot", "/nonexistent-dir/a.png"], "does not exist"),
    (["--benchmark-out", "/nonexistent-dir/x/y"], "does not exist"),
    (["--benchmark-out", "/proc/version"], "is not a folder"),
    (["--benchmark-out", "/proc/marbles"], "cannot be written"),
    (["--scene", "bowl", "--set", "n=100000"], "n=100000"),
    (["--bogus"], "unrecognized arguments"),
    (["--state", "/nonexistent.npz"], "no such state snapshot file"),
    (["--state", "/etc/hostname", "--scene", "box"], "with --state the world comes from"),
    (["--state", "/etc/hostname", "--set", "n=3"], "a scene parameter, but with --state"),
    (["--state", "/etc/hostname"], "not a usable state snapshot"),
])
def test_bad_input_is_one_line_and_exit_2(args, words, capsys, monkeypatch):
    opened = []
    monkeypatch.setattr("app.window.MainWindow", lambda *a, **k: opened.append(a))
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("marbles: error: ") and words in err
    assert not opened  # refused before any window was made


def _marbles_with(env_changes: dict, unset=()) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(env_changes)
    return subprocess.run([sys.executable, "-m", "app.main", "--frames", "5", "--no-benchmark"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_no_display_is_one_line_not_a_core_dump():
    proc = _marbles_with({}, unset=("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "DISPLAY" in proc.stderr and "xvfb-run" in proc.stderr


def _free_display() -> str:
    return next(f":{k}" for k in range(93, 200) if not os.path.exists(f"/tmp/.X11-unix/X{k}"))


def test_a_display_that_does_not_answer_is_one_line_and_exit_2():
    # Without the probe Qt's xcb plugin aborts: exit code 134 (SIGABRT), five lines.
    display = _free_display()
    start = time.monotonic()
    proc = _marbles_with({"DISPLAY": display, "QT_QPA_PLATFORM": "xcb"})
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"marbles: error: cannot open display {display} ")
    assert "xvfb-run" in proc.stderr and time.monotonic() - start < 60
    # Unset, Qt picks xcb as well (outside a Wayland session).
    proc = _marbles_with({"DISPLAY": display}, unset=("QT_QPA_PLATFORM", "XDG_SESSION_TYPE"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_the_probe_asks_only_the_xcb_platform_and_its_own_display():
    from app.main import display_problem

    dead = _free_display()
    assert display_problem({"DISPLAY": os.environ["DISPLAY"], "QT_QPA_PLATFORM": "xcb"}) is None
    assert "cannot open display" in display_problem({"DISPLAY": dead})
    assert "cannot open display" in display_problem({"DISPLAY": dead,
                                                     "QT_QPA_PLATFORM": "xcb;offscreen"})
    for platform in ("offscreen", "minimal", "wayland"):  # no X display needed, or not ours
        assert display_problem({"DISPLAY": dead, "QT_QPA_PLATFORM": platform}) is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert "DISPLAY is not set" in display_problem({"QT_QPA_PLATFORM": "xcb"})


def test_a_silent_x_server_costs_the_timeout_not_a_hang():
    # A TCP "X server" that accepts the connection and never sends the setup reply.
    from app.main import x_display_error

    server = socket.socket()
    for number in range(150, 400):
        try:
            server.bind(("127.0.0.1", 6000 + number))
            break
        except OSError:
            continue
    else:
        pytest.skip("no free X11 TCP port")
    server.listen(1)
    try:
        start = time.monotonic()
        why = x_display_error(f"127.0.0.1:{number}", timeout=1.0)
        # A bound against a hang, not a speed check: generous for a loaded machine.
        assert why == "it did not answer within 1 s" and time.monotonic() - start < 30
    finally:
        server.close()
