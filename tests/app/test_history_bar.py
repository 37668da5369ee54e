"""The history in the real window: `,` and `.` go back and forth through the steps kept, the
view shows the stored step (the same positions as when it was made), the HUD and the bar say
which, the bar's slider drags through them (real X pointer events), its Solve button compares
the chosen solver on the step shown (the comparison window), and S goes on from there."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionSlider

from tests.app.conftest import HANG_MS
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_alarms_and_quit import activate, pointer  # noqa: F401 (fixture)


def _paused(qtbot, window, steps: int):
    """Run to at least `steps` steps, then pause; the frame that shows the pause."""
    wait_state(qtbot, window, lambda f: f.steps >= steps, timeout=HANG_MS)
    _press(qtbot, window, "Space")
    return wait_state(qtbot, window, lambda f: f.state.paused)


def _keys(qtbot, window, key, count: int) -> None:
    for _ in range(count):
        qtbot.keyClick(window, key)


def solve_shown_step(qtbot, window, solver: str, then) -> None:
    """The bar's Solve with `solver` chosen: the comparison of that solver alone on the step
    shown, which is `then` (the frame of that step when it was made); its window closed."""
    bar = window.history_bar
    bar.solver_box.setCurrentText(solver)
    with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS) as opened:
        qtbot.mouseClick(bar.solve_button, Qt.MouseButton.LeftButton)
    result = window.benchmarks.last
    assert list(result.table.solvers) == [solver]
    assert result.meta["step"] == then.steps and result.meta["contact_count"] == then.contacts
    opened.args[0].close()


def test_the_keys_go_back_to_a_stored_step_and_the_bar_solves_it(qtbot, make_window):
    window = make_window(scene="bowl", solver="pgs")
    activate(qtbot, window)
    paused = _paused(qtbot, window, 25)
    now = paused.steps
    made = [f for f in window.frame_log if f.stepped and f.steps < now - 3
            and f.state.generation == paused.state.generation]
    then = made[-1]  # a step as the view showed it when it was made
    back = now - then.steps
    _keys(qtbot, window, Qt.Key.Key_Comma, back)
    shown = wait_state(qtbot, window, lambda f: f.steps == then.steps)
    assert np.array_equal(shown.x, then.x) and shown.time == then.time
    assert shown.contacts == then.contacts and shown.state.paused
    assert (shown.state.history.shown, shown.state.history.back) == (then.steps, back)
    qtbot.waitUntil(lambda: f"HISTORY: step {then.steps} shown, {back} back" in
                    window.hud.text(), timeout=HANG_MS)
    qtbot.waitUntil(lambda: window.history_bar.slider.value() == then.steps, timeout=HANG_MS)
    # The trace is the shown step's own solve, and its title says so.
    qtbot.waitUntil(lambda: window.plots.trace_title ==
                    f"residual per iteration (step {then.steps}, from the history)",
                    timeout=HANG_MS)

    solve_shown_step(qtbot, window, "jacobi", then)

    _keys(qtbot, window, Qt.Key.Key_Period, back)  # forward again: the step paused at
    ahead = wait_state(qtbot, window, lambda f: f.steps == now)
    assert np.array_equal(ahead.x, paused.x) and ahead.state.history.back == 0
    qtbot.waitUntil(lambda: "history" not in window.plots.trace_title, timeout=HANG_MS)
    _keys(qtbot, window, Qt.Key.Key_Comma, 2)
    wait_state(qtbot, window, lambda f: f.steps == now - 2)
    _press(qtbot, window, "S")  # on from the step shown: the two later ones dropped
    on = wait_state(qtbot, window, lambda f: f.steps == now - 1)
    assert on.state.history.last == now - 1 and on.state.generation == paused.state.generation + 1
    qtbot.waitUntil(lambda: "the 2 later steps dropped" in window.status_label.text(),
                    timeout=HANG_MS)


def _handle(slider) -> QPoint:
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    return slider.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                         QStyle.SubControl.SC_SliderHandle, slider).center()


def _steady_handle(qtbot, slider) -> None:
    """Wait until the handle stays put for 100 ms, inside the slider and on top there."""
    def steady() -> bool:
        before = _handle(slider)
        qtbot.wait(100)
        after = _handle(slider)
        return (before == after and slider.rect().contains(after)
                and QApplication.widgetAt(slider.mapToGlobal(after)) is slider)

    qtbot.waitUntil(steady, timeout=HANG_MS)


def test_dragging_the_slider_shows_the_steps_kept(qtbot, make_window, pointer):
    window = make_window(scene="bowl", solver="pgs")
    window.move(0, 0)
    window.resize(800, 500)  # on pytest-xvfb's 800x600 screen: the bar at the bottom shows
    activate(qtbot, window)
    paused = _paused(qtbot, window, 10)
    slider = window.history_bar.slider
    qtbot.waitUntil(lambda: slider.value() == paused.steps and slider.isEnabled(),
                    timeout=HANG_MS)
    first = paused.state.history.first
    # The pointer must land on the handle: nothing else over the slider (windows of earlier
    # tests) and the bar's layout settled (its label's text sets the slider's width).
    window.raise_()
    _steady_handle(qtbot, slider)
    start = _handle(slider)
    pointer.drag(slider, start, QPoint(-40, start.y()))
    oldest = wait_state(qtbot, window, lambda f: f.steps == first)
    assert oldest.state.paused and oldest.state.history.back == paused.steps - first
    qtbot.waitUntil(lambda: not slider.isSliderDown() and slider.value() == first,
                    timeout=HANG_MS)
    _steady_handle(qtbot, slider)
    start = _handle(slider)
    pointer.drag(slider, start, QPoint(slider.width() + 40, start.y()))
    newest = wait_state(qtbot, window, lambda f: f.steps == paused.steps)
    assert np.array_equal(newest.x, paused.x) and newest.state.history.back == 0


def test_the_history_option_sets_the_memory_and_zero_keeps_none(qtbot, make_window,
                                                                          tmp_path):
    """--history MIB reaches the Session: 0 keeps no step, so `,` finds nothing to go back to;
    a bad value is refused with one line naming it."""
    from app.main import HISTORY, build_parser, options_from
    from lab.session.history import DEFAULT_BUDGET, MIB
    from solver.params import ParamError

    def options(*argv):
        return options_from(build_parser().parse_args(["--benchmark-out", str(tmp_path), *argv]))

    assert options().history_bytes == DEFAULT_BUDGET == int(HISTORY.default * MIB)
    assert options("--history", "0.5").history_bytes == MIB // 2
    with pytest.raises(ParamError, match="history=-1"):
        options("--history", "-1")
    window = make_window(scene="bowl", history_bytes=options("--history", "0").history_bytes)
    paused = _paused(qtbot, window, 10)
    assert paused.state.history is None
    _keys(qtbot, window, Qt.Key.Key_Comma, 1)
    qtbot.wait(300)
    assert window.latest.steps == paused.steps and window.latest.state.history is None


def test_side_by_side_the_bar_says_why_it_keeps_no_history(qtbot, make_window):
    window = make_window(scene="column", solver="pgs")
    activate(qtbot, window)
    bar = window.history_bar
    qtbot.waitUntil(lambda: bar.slider.isEnabled(), timeout=HANG_MS)
    _press(qtbot, window, "T")
    wait_state(qtbot, window, lambda f: len(f.state.side_by_side) == 2, timeout=HANG_MS)
    qtbot.waitUntil(lambda: bar.label.text() == "history: none while side by side (T ends it)",
                    timeout=HANG_MS)
    assert not bar.slider.isEnabled()
    assert "no history while side by side" in window.status_label.text()
    _press(qtbot, window, "T")
    wait_state(qtbot, window, lambda f: not f.state.side_by_side and f.state.history
               is not None, timeout=HANG_MS)
    qtbot.waitUntil(lambda: bar.label.text().startswith("step "), timeout=HANG_MS)
    assert bar.slider.isEnabled()
