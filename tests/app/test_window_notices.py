"""What the window says while the worker is busy: a new scene's first step that compiles its
kernels is shown in the view and the status bar while it lasts, and work too short to notice is
not flashed (nor does its end overwrite the message of the command that caused it)."""
from __future__ import annotations

import time

from lab.session.session import Session
from app.window import MainWindow
from tests.app.conftest import HANG_MS, window_options
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_alarms_and_quit import activate


def test_a_new_scenes_slow_first_step_is_shown_while_it_lasts(qtbot, make_window, monkeypatch):
    window = make_window(scene="column")
    activate(qtbot, window)
    step = Session.step

    def slow_first_step(self, now=None):
        if self.sim.steps == 0 and self.spec.scene != "column":
            time.sleep(1.5)  # as long as loading a scene's kernels from a cold cache
        return step(self, now)

    monkeypatch.setattr(Session, "step", slow_first_step)
    _press(qtbot, window, "N")
    qtbot.waitUntil(window.notice.isVisible, timeout=HANG_MS)
    scene = window.sim.worker.session.spec.scene
    assert scene != "column"
    assert f"{scene}: first step" in window.notice.text()
    assert "first step" in window.status_label.text() and window.progress.isVisible()
    wait_state(qtbot, window, lambda f: f.state.scene == scene and f.steps > 0)
    qtbot.waitUntil(lambda: not window.notice.isVisible(), timeout=HANG_MS)
    assert not window.progress.isVisible()


def test_a_quick_first_step_leaves_the_commands_message(qtbot, make_window):
    """X resets with a message; the reset world's first step is quick: no progress flashes
    and the status bar keeps the message."""
    window = make_window(scene="column", solver="jacobi")
    activate(qtbot, window)
    generation = window.latest.state.generation
    _press(qtbot, window, "X")
    wait_state(qtbot, window, lambda f: f.state.generation > generation and f.steps > 3)
    qtbot.wait(600)  # past the progress delay
    assert "switched from jacobi at 20 iterations to pgs" in window.status_label.text()
    assert not window.progress.isVisible() and not window.notice.isVisible()


def test_the_hud_after_r_and_while_paused(qtbot, make_window):
    """R: the reset world's HUD has no 'nan' before its first step; Space: no steps are made,
    and the HUD says 0 steps/s at once, not what the meter remembers."""
    window = make_window(scene="column")
    activate(qtbot, window)
    _press(qtbot, window, "Space")
    wait_state(qtbot, window, lambda f: f.state.paused)
    qtbot.waitUntil(lambda: "0.0 steps/s   0.00x real time" in window.hud.text(),
                    timeout=HANG_MS)
    generation = window.latest.state.generation
    _press(qtbot, window, "R")
    wait_state(qtbot, window, lambda f: f.state.generation > generation and f.steps == 0)
    qtbot.waitUntil(lambda: "step — ms" in window.hud.text(), timeout=HANG_MS)
    assert "nan" not in window.hud.text()


def test_the_start_up_compilation_shows_the_first_state_and_counts_kernels(qtbot, tmp_path,
                                                                           monkeypatch):
    """A cold cache: the scene's first state is drawn at once, and the notice and the bar count
    the kernels against the expected count until the marbles move."""
    _slow_warmup(monkeypatch, batches=4)
    window = MainWindow(window_options(scene="column", benchmark_out=str(tmp_path),
                                       benchmark_on_close=False, show_dialogs=False))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "of about 6" in window.notice.text() and window.notice.isVisible(),
                    timeout=HANG_MS)
    assert window.latest is not None and window.latest.steps == 0  # the first state, drawn
    qtbot.waitUntil(lambda: "first state drawn" in window.startup, timeout=HANG_MS)
    assert "moving" not in window.startup
    assert window.progress.maximum() == 6 and 1 <= window.progress.value() <= 5
    assert "s left" in window.status_label.text()
    qtbot.waitUntil(lambda: "moving" in window.startup, timeout=HANG_MS)
    assert window.startup["first state drawn"] < window.startup["moving"]
    assert not window.notice.isVisible()
    window._close_benchmark = "skip"
    window.close()
    qtbot.waitUntil(window.sim.thread.isFinished, timeout=HANG_MS)


def _slow_warmup(monkeypatch, batches: int = 3):
    """A cold cache: the warm-up compiles `batches` of about 6 kernels, 0.4 s each."""
    from lab.session import compiling

    def slow_warmup(names, progress, threads, rows, kernels):
        for done in range(1, batches + 1):
            kernels(done, 6, 0.4 * (6 - done))
            time.sleep(0.4)
        return 0.4 * batches

    monkeypatch.setattr(compiling, "warmup", slow_warmup)


def test_while_kernels_compile_the_dock_and_status_say_what_is_loaded(qtbot, tmp_path,
                                                                      monkeypatch):
    """From the window's first paint the dock shows the scene and solver being loaded (not the
    first solver of the list with empty groups); once the kernels are in, the status bar says
    the run is stepping, not 'starting'."""
    _slow_warmup(monkeypatch)
    window = MainWindow(window_options(scene="column", solver="jacobi",
                                       benchmark_out=str(tmp_path), benchmark_on_close=False,
                                       show_dialogs=False))
    qtbot.addWidget(window)
    controls = window.controls
    assert (controls.scene_box.currentText(), controls.solver_box.currentText()) == \
        ("column", "jacobi")
    assert "n" in window.controls.editors  # the scene's group has its rows
    window.show()
    qtbot.waitUntil(lambda: "of about 6" in window.status_label.text(), timeout=HANG_MS)
    qtbot.waitUntil(lambda: "moving" in window.startup, timeout=HANG_MS)
    qtbot.waitUntil(lambda: not window.progress.isVisible(), timeout=HANG_MS)
    assert window.status_label.text() == "stepping"
    window._close_benchmark = "skip"
    window.close()
    qtbot.waitUntil(window.sim.thread.isFinished, timeout=HANG_MS)


def test_a_solver_chosen_shows_in_the_dock_while_its_kernels_compile(qtbot, make_window,
                                                                     monkeypatch):
    window = make_window(scene="column", solver="pgs")
    activate(qtbot, window)
    _slow_warmup(monkeypatch)
    _press(qtbot, window, "M")
    qtbot.waitUntil(lambda: "of about 6" in window.status_label.text(), timeout=HANG_MS)
    chosen = window.sim.worker.session.spec.solver
    assert chosen != "pgs"
    qtbot.waitUntil(lambda: window.controls.solver_box.currentText() == chosen, timeout=5000)
    assert "of about 6" in window.status_label.text()  # still compiling
