"""The window's alarms and its quit, each driven through the real program: a scripted run that
diverges, correct physics not called an explosion, a divergence's pause not carried into the
next scene, Q on a frictional scene, the wheel over the controls dock."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from lab.session.run import PHYSICS_FAILED
from tests.app.conftest import HANG_MS
from tests.app.test_benchmark_window import benchmark_sets
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]


def activate(qtbot, window) -> None:
    """The window takes the keyboard, as after a user's click on it (a field then takes the
    focus a click gives it), and the keyboard is the view's."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=HANG_MS)
    window.view.setFocus()


def _marbles(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The `marbles` program in a process of its own, on the display pytest-xvfb started; the
    timeout only guards against a hang."""
    return subprocess.run([sys.executable, "-m", "app.main", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=HANG_MS / 1000)


def _state_outside_its_container(folder: Path) -> Path:
    """A column's state file whose marbles lie beside the tube, not in it."""
    saved, moved = folder / "column.npz", folder / "outside.npz"
    subprocess.run([sys.executable, "-m", "lab.cli.bench", "run", "--scene", "column", "--steps",
                    "2", "--quiet", "--save-state", str(saved)], cwd=ROOT, check=True,
                   timeout=HANG_MS / 1000)
    with np.load(saved, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["x"] = arrays["x"] + (3.0, 0.0, 0.0)
    np.savez(moved, **arrays)
    saved.unlink()
    return moved


@pytest.mark.parametrize("source", ["jacobi", "state"])
def test_a_scripted_run_that_diverges_ends_with_one_line_and_exit_3(tmp_path, source):
    """A divergence pauses the run, and no one is there to press a key: the run must end."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if source == "jacobi":
        world = ["--scene", "bowl", "--solver", "jacobi", "--set", "beta=1"]
    else:  # the tube's wall 3 m away pushes them back at 150 m/s, uncapped
        world = ["--state", str(_state_outside_its_container(tmp_path)), "--set",
                 "push_speed=1000"]
    run = _marbles(*world, "--speed", "0", "--frames", "30", "--no-benchmark",
                   "--screenshot", "never.png", cwd=run_dir)
    assert run.returncode == PHYSICS_FAILED, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and "marbles exploded (" in lines[0], run.stderr
    assert "never.png not written" in lines[0]
    if source == "jacobi":  # the steps that ran are counted, up to the one that diverged
        diverged_at = int(re.search(r" at step (\d+) ", lines[0]).group(1))
        assert f" and {diverged_at} steps in " in run.stdout, run.stdout
    assert list(run_dir.iterdir()) == []  # no screenshot, whole or half, no temporary file


def test_the_incline_rolls_past_100_m_s_without_an_alarm(qtbot, make_window):
    """Flat out, the marble rolling down the unbounded plane passes 100 m/s near step 2100:
    gravity's work, which the window must not call an explosion."""
    window = make_window(scene="incline", speed=0.0)
    wait_state(qtbot, window, lambda f: f.steps > 2300, timeout=HANG_MS, since=0)
    assert not any(f.state.diverged for f in window.frame_log)

    def hud_step() -> int:
        found = re.search(r"\(step (\d+),", window.hud.text())
        return int(found.group(1)) if found else -1

    qtbot.waitUntil(lambda: hud_step() > 2300, timeout=5000)
    assert "DIVERGED" not in window.hud.text() and "exploded" not in window.hud.text()


def test_the_next_scene_after_a_divergence_runs(qtbot, make_window):
    """N after `jacobi beta=1` diverged: the divergence's pause ends with its world, so the
    next scene runs from step 0 instead of waiting there, paused."""
    window = make_window(scene="bowl", solver="jacobi", solver_params={"beta": 1.0})
    f = wait_state(qtbot, window, lambda f: f.state.diverged and f.state.paused, since=0,
                   timeout=HANG_MS)
    generation, scene = f.state.generation, f.state.scene
    since = len(window.frame_log)
    _press(qtbot, window, "N")
    first = wait_state(qtbot, window, lambda f: f.state.generation > generation, since=since)
    assert first.state.scene != scene and not first.state.paused and not first.state.diverged
    wait_state(qtbot, window, lambda f: f.state.generation == first.state.generation
               and f.steps > 0, since=since, timeout=HANG_MS)


@pytest.fixture
def program_window(qtbot, tmp_path):
    """A window made from `marbles` command-line arguments, as app.main makes it (the benchmark
    on close, interactive), writing into tmp_path/out."""
    from app.main import build_parser, options_from
    from app.window import MainWindow

    made = []

    def make(*argv: str) -> MainWindow:
        out = tmp_path / "out"
        out.mkdir(exist_ok=True)
        options = options_from(build_parser().parse_args([*argv, "--benchmark-out", str(out)]))
        window = MainWindow(options)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        made.append(window)
        qtbot.waitUntil(lambda: window.latest is not None and window.latest.steps > 2,
                        timeout=HANG_MS)
        return window

    yield make
    for window in made:
        for plot in window.benchmarks.windows:
            plot.close()
        if not window._shut_down:
            window._close_benchmark = "skip"
            window.close()
            qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)


def test_q_with_friction_quits_without_a_benchmark(qtbot, program_window, tmp_path):
    """The README and F1: Q runs the benchmark on close unless the scene has friction."""
    window = program_window("--scene", "incline")
    assert window.latest.state.friction[0] > 0
    qtbot.keyClick(window, Qt.Key.Key_Q)
    qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)
    assert window.exit_code == 0 and not window.benchmarks.windows
    assert list((tmp_path / "out").iterdir()) == []


def test_q_without_friction_writes_the_benchmark_and_never_waits(qtbot, program_window,
                                                                 tmp_path, capfd):
    """Q on a frictionless scene compares the solvers, writes the files and quits: no window
    to close first: quitting never waits for the user."""
    window = program_window("--scene", "column", "--benchmark-iterations", "20")
    assert window.latest.state.friction == (0.0, 0.0, 0.0, 0.0)
    qtbot.keyClick(window, Qt.Key.Key_Q)
    qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)
    assert window.exit_code == 0 and not window.benchmarks.windows
    out = tmp_path / "out"
    [stem] = benchmark_sets(out)
    assert sorted(out.iterdir()) == [stem.with_suffix(s) for s in (".json", ".npy", ".png")]
    said = capfd.readouterr().out
    assert re.search(r"benchmark of step \d+ written: " + re.escape(f"{stem}.npy"), said)


@pytest.fixture
def pointer():
    from tests.app.x_pointer import XPointer

    p = XPointer()
    yield p
    p.close()


def _scrolls_the_dock(qtbot, window, pointer, widget) -> None:
    """A notch of the wheel over `widget` scrolls the dock; then a key's command has come
    back, so any command the wheel might have sent before it has been applied."""
    bar = window.controls.verticalScrollBar()
    before = bar.value()
    pointer.wheel(widget, 1)
    qtbot.waitUntil(lambda: bar.value() > before, timeout=HANG_MS)
    paused = window.latest.state.paused
    _press(qtbot, window, "Space")
    wait_state(qtbot, window, lambda f: f.state.paused != paused)


def test_the_wheel_over_the_dock_scrolls_it_unless_a_field_has_the_focus(qtbot, make_window,
                                                                         pointer):
    """The wheel over `seed` or the scene list scrolls the dock, not rebuilding or switching
    the scene; a field with the keyboard focus takes the wheel."""
    window = make_window(scene="disk")
    window.move(0, 0)
    window.resize(800, 500)  # on pytest-xvfb's 800x600 screen, and the dock has to scroll
    qtbot.waitUntil(lambda: window.controls.verticalScrollBar().maximum() > 200, timeout=5000)
    activate(qtbot, window)
    generation = window.latest.state.generation
    seed = window.controls.editors["seed"].widget
    scene = window.controls.scene_box
    for widget in (seed, seed, scene):
        window.controls.verticalScrollBar().setValue(0)
        _scrolls_the_dock(qtbot, window, pointer, widget)
    f = window.latest.state
    assert (f.generation, f.scene, f.scene_params["seed"]) == (generation, "disk", 1)
    window.controls.verticalScrollBar().setValue(0)
    qtbot.mouseClick(seed.lineEdit(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(seed.hasFocus, timeout=HANG_MS)
    pointer.wheel(seed, 1)  # the field the user is in: its value, one down
    wait_state(qtbot, window, lambda f: f.state.scene_params["seed"] == 0
               and f.state.generation == generation + 1)


def _type_into(qtbot, widget, text: str) -> None:
    """Click into a dock field, select what it holds and type `text`, then Enter."""
    qtbot.mouseClick(widget.lineEdit(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(widget.hasFocus, timeout=HANG_MS)
    qtbot.keyClick(widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Return)


@pytest.mark.parametrize("name, typed", [("mu", "20"), ("mu", "abc"), ("n", "-5"),
                                         ("n", "abc"), ("iterations", "0")])
def test_a_typed_value_the_dock_cannot_take_is_refused_with_its_reason(qtbot, make_window,
                                                                       name, typed):
    """`mu` <- 20 or abc, `n` <- -5: each is refused in the status bar, naming the value and
    the range, and nothing changes (no silent return to the old value, no -5 taken as 5)."""
    window = make_window(scene="column")
    activate(qtbot, window)
    editor = window.controls.editors[name]
    before = window.latest.state
    window.status_label.setText("")
    _type_into(qtbot, editor.widget, typed)
    said = f"{name}={typed} is not valid: must be {editor.param.range_text()}"
    qtbot.waitUntil(lambda: window.status_label.text() == said, timeout=HANG_MS)
    after = window.latest.state
    assert after.generation == before.generation
    assert (after.scene_params, after.iterations) == (before.scene_params, before.iterations)
    qtbot.waitUntil(lambda: editor.value() == editor._shown, timeout=HANG_MS)
