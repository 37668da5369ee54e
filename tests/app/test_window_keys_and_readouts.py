"""The window's keys and readouts, each with real key and resize events: the plot panel's
width, keys that say when they do nothing, R while paused, Esc, P, the colour bar, the
readouts."""
from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtGui import QImage

from app.window import PLOT_SHARE
from lab.session import commands as cmd
from tests.app.test_plots import text_rects
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_worker import StoppedClock


def settle(qtbot, window, size) -> None:
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=5000)
    qtbot.wait(300)  # the layout and the plots' axes follow the resize


def test_the_plot_panel_survives_a_wide_hud_and_any_resize(qtbot, make_window):
    """A wide HUD line (prox-gs's) must not squeeze the plot panel, nor a resize to 900x600 and
    back leave it narrow with stale, doubled axis labels: at least PLOT_SHARE of the window
    after any resize, the HUD wrapped inside the view, every axis label clear of the others."""
    window = make_window(scene="column", solver="prox-gs")
    qtbot.waitUntil(lambda: "prox-gs" in window.hud.text(), timeout=5000)
    for size in ((1280, 800), (900, 600), (1280, 800), (1600, 900)):
        settle(qtbot, window, size)
        dock = window.dock.width()
        assert dock >= PLOT_SHARE * window.width() - 1, (size, dock)
        view = window.stack
        assert window.hud.geometry().right() < view.width()
        assert view.width() + dock <= window.width()
        for plot in window.plots.plots:
            for name in ("left", "bottom"):
                rects = text_rects(plot.getAxis(name))
                texts = [t for _, t in rects]
                assert len(texts) == len(set(texts)), (size, name, texts)  # none doubled
                for i, (a, _) in enumerate(rects):
                    assert not any(a.intersects(b) for b, _ in rects[i + 1:]), (size, texts)


def test_keys_that_do_nothing_say_so_in_the_status_bar(qtbot, make_window):
    window = make_window(scene="column", solver="pgs")
    _press(qtbot, window, "Right")
    qtbot.waitUntil(lambda: window.status_label.text() == "pgs has no relaxation parameter",
                    timeout=5000)
    window.status_label.setText("")
    _press(qtbot, window, "Left")  # the same words again: shown again
    qtbot.waitUntil(lambda: window.status_label.text() == "pgs has no relaxation parameter",
                    timeout=5000)
    for _ in range(6):
        _press(qtbot, window, "Down")
    qtbot.waitUntil(lambda: window.status_label.text()
                    == "iterations already at the smallest step of the ladder (1)", timeout=5000)


def test_r_while_paused_stays_paused(qtbot, make_window):
    window = make_window(scene="column")
    _press(qtbot, window, "Space")
    wait_state(qtbot, window, lambda f: f.state.paused)
    generation = window.latest.state.generation
    _press(qtbot, window, "R")
    f = wait_state(qtbot, window, lambda f: f.state.generation == generation + 1)
    assert f.state.paused and f.steps == 0
    qtbot.wait(300)
    assert window.latest.steps == 0 and "PAUSED" in window.hud.text()


def test_esc_closes_the_help(qtbot, make_window):
    window = make_window(scene="column")
    _press(qtbot, window, "F1")
    assert window.help.isVisible()
    centre = window.help.geometry().center()
    assert abs(centre.x() - window.stack.width() // 2) <= 1
    _press(qtbot, window, "Escape")
    assert not window.help.isVisible()
    _press(qtbot, window, "Escape")  # nothing to close: no effect
    assert not window.help.isVisible() and window.isVisible()


def test_p_makes_its_folder_and_a_failed_screenshot_is_no_crash(qtbot, make_window, tmp_path,
                                                                 capsys):
    out = tmp_path / "shots" / "today"
    window = make_window(scene="column", benchmark_out=str(out))
    _press(qtbot, window, "P")
    shots = list(out.glob("marbles-*.png"))
    assert len(shots) == 1 and not QImage(str(shots[0])).isNull()
    assert window.status_label.text() == f"screenshot saved: {shots[0]}"
    blocker = tmp_path / "file"
    blocker.write_text("")
    window.options.benchmark_out = str(blocker / "sub")
    capsys.readouterr()
    _press(qtbot, window, "P")
    assert window.status_label.text().startswith("screenshot not saved: ")
    assert capsys.readouterr().err.count("\n") == 1
    assert window.exit_code == 0  # a key's failure is a message, not the program's


def test_the_colour_bar_shows_the_scale_of_the_colour_mode(qtbot, make_window):
    window = make_window(scene="column")
    assert window.colour_bar.isHidden()
    expected = ["speed (m/s)", "normal impulse per step (weight × dt)",
                "slip speed (m/s, log)"]
    for title in expected:
        _press(qtbot, window, "C")
        qtbot.waitUntil(lambda: window.colour_bar.isVisible()
                        and window.colour_bar.scale.title == title, timeout=5000)
        bar = window.colour_bar.geometry()
        assert bar.left() >= 0 and bar.bottom() < window.stack.height()
    _press(qtbot, window, "C")
    qtbot.waitUntil(window.colour_bar.isHidden, timeout=5000)


def test_the_readouts_count_frames_steps_and_real_time(qtbot, make_window, monkeypatch):
    """The steps per second and the real-time factor come from the worker's stamps on the
    frames. One clock stands in for wall time in the Session's pacing, the worker's stamps and
    the window's readouts, and moves by one step's dt at a time: the readouts then say 50
    steps/s and 1.00x real time exactly, however loaded the machine."""
    window = make_window(scene="column", speed=1.0)
    wait_state(qtbot, window, lambda f: f.steps > 0)
    clock = StoppedClock(time.perf_counter() + 1000.0)  # ahead of every real stamp so far
    for module in ("lab.session.session", "lab.session.frame", "app.window"):
        monkeypatch.setattr(f"{module}.time", clock)
    window.sim.send(cmd.Pause(True))
    wait_state(qtbot, window, lambda f: f.state.paused)
    window.sim.send(cmd.Pause(False))  # the pacing starts again on the stopped clock
    f = wait_state(qtbot, window, lambda f: f.stepped)
    for _ in range(60):  # 1.2 s of the stand-in clock, one step at a time
        clock.now += f.dt
        steps = f.steps
        f = wait_state(qtbot, window, lambda g: g.steps > steps)
        assert f.steps == steps + 1
    assert window.steps_per_second == pytest.approx(50.0, rel=1e-9)  # dt 0.02 s
    window._refresh_hud()
    line = next(ln for ln in window.hud.text().splitlines() if "steps/s" in ln)
    assert "50.0 steps/s" in line
    assert float(line.split("steps/s")[1].split("x real time")[0]) == 1.0
    assert "SLOWER" not in window.hud.text()
    assert np.isfinite(window.fps) and window.fps > 0


def test_a_new_solver_starts_its_own_step_times(qtbot, make_window):
    """M: the step's cost (the HUD's median) is the new solver's alone, never a median of the
    solver before (lab.session.meters.timing_key)."""
    window = make_window(scene="column", solver="pgs")
    wait_state(qtbot, window, lambda f: f.steps > 110, timeout=60000)
    qtbot.waitUntil(lambda: "(median of 100" in window.hud.text(), timeout=5000)
    _press(qtbot, window, "M")
    first = wait_state(qtbot, window, lambda f: f.state.solver != "pgs" and f.stepped,
                       timeout=300000)
    since = first.steps - len(first.records)
    later = wait_state(qtbot, window, lambda f: f.steps >= since + 5)
    times = window._step_times
    assert 0 < len(times) + times.compiled <= window.latest.steps - since
    assert later.state.solver == first.state.solver
    qtbot.waitUntil(lambda: first.state.solver in window.hud.text()
                    and "(median of 100" not in window.hud.text(), timeout=5000)
