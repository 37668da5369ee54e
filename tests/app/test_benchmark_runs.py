"""The window's comparisons as long work (app.benchmark_runs), driven by real key events: each
under a name of its own, the comparison window closed by Esc or Ctrl+W from the X keyboard, Esc
cancelling a comparison under way (keeping and writing the solvers done), each solver stopped
at its time budget and said so, a second Q while the benchmark on quit runs cancelling it and
writing what finished, that benchmark solving the latest step, and Ctrl+S saving the moment of
the key press."""
from __future__ import annotations

import json
import re

import pytest
from PySide6.QtCore import Qt

from app import dialogs
from lab.io.snapshot import read_state
from tests.app.conftest import HANG_MS
from tests.app.test_benchmark_window import benchmark_sets
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_alarms_and_quit import activate, program_window  # noqa: F401
from tests.app.x_pointer import XKeyboard


@pytest.fixture
def keyboard():
    k = XKeyboard()
    yield k
    k.close()


def _paused(qtbot, window):
    activate(qtbot, window)
    _press(qtbot, window, "Space")
    return wait_state(qtbot, window, lambda f: f.state.paused)


def test_each_comparison_has_its_files_and_its_window_closes_from_the_keyboard(
        qtbot, make_window, tmp_path, keyboard):
    """B, then the history bar's Solve: two sets of files, none written over; each comparison
    window takes the keyboard, and Esc (the first) and Ctrl+W (the second) close it."""
    window = make_window(scene="column", benchmark_iterations=5)
    _paused(qtbot, window)
    for key, solvers in (("Escape", ()), ("Ctrl+W", ("pgs",))):
        with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS) as shown:
            if solvers:
                window.history_bar.solver_box.setCurrentText(solvers[0])
                qtbot.mouseClick(window.history_bar.solve_button, Qt.MouseButton.LeftButton)
            else:
                _press(qtbot, window, "B")
        plot = shown.args[0]
        qtbot.waitUntil(plot.isActiveWindow, timeout=HANG_MS)
        keyboard.press(key)
        qtbot.waitUntil(lambda: not plot.isVisible(), timeout=HANG_MS)
        assert window.isVisible()
    first, second = benchmark_sets(tmp_path)
    assert json.loads(second.with_suffix(".json").read_text())["solvers"] == ["pgs"] or \
        json.loads(first.with_suffix(".json").read_text())["solvers"] == ["pgs"]
    assert str(window.benchmarks.last.paths[0]) in window.status_label.text()


def test_esc_cancels_the_comparison_under_way_and_writes_the_solvers_done(
        qtbot, make_window, tmp_path):
    """A million iterations a solver with no budget to speak of: the status line names the
    solver under way and says Esc cancels; Esc ends it within an iteration, the files hold the
    solvers that finished, and the status line says so."""
    window = make_window(scene="column", benchmark_iterations=1_000_000,
                         benchmark_budget=1e5)
    _paused(qtbot, window)
    _press(qtbot, window, "B")
    qtbot.waitUntil(lambda: re.search(r"benchmark: \S+ \([2-9]/\d+\).*Esc cancels",
                                      window.status_label.text()) is not None, timeout=HANG_MS)
    with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS) as shown:
        _press(qtbot, window, "Escape")
    [stem] = benchmark_sets(tmp_path)
    meta = json.loads(stem.with_suffix(".json").read_text())
    done = meta["cancelled"]["finished"]
    assert 1 <= done < meta["cancelled"]["of"] and len(meta["solvers"]) == done
    assert meta["iterations_run"][meta["solvers"][0]] == 1_000_000
    assert f"cancelled: {done} of " in window.status_label.text()
    assert shown.args[0].table.solvers == meta["solvers"]
    shown.args[0].close()


def test_a_solver_out_of_time_stops_at_its_budget_and_the_window_says_so(
        qtbot, make_window, tmp_path):
    window = make_window(scene="column", benchmark_iterations=1_000_000,
                         benchmark_budget=0.002)
    _paused(qtbot, window)
    with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS) as shown:
        _press(qtbot, window, "B")
    plot = shown.args[0]
    meta = plot.table.meta
    assert set(meta["out_of_time"]) and all(
        meta["iterations_run"][name] < 1_000_000 for name in meta["out_of_time"])
    assert "stopped at their 0.002 s budget" in window.status_label.text()
    assert "0.002 s budget" in plot.header.text()
    plot.close()


def test_a_second_q_cancels_the_benchmark_on_quit_and_writes_what_finished(
        qtbot, program_window, tmp_path, capfd):
    """Q starts the comparison on quit (a million iterations a solver); Q again cancels it: the
    solvers done are written and the line says so, then the window closes."""
    window = program_window("--scene", "column", "--benchmark-iterations", "1000000",
                            "--benchmark-budget", "100000")
    activate(qtbot, window)
    _press(qtbot, window, "Q")
    qtbot.waitUntil(lambda: re.search(r"benchmark: \S+ \([2-9]/", window.status_label.text())
                    is not None, timeout=HANG_MS)
    _press(qtbot, window, "Q")
    assert "cancelled" in window.status_label.text()
    qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)
    [stem] = benchmark_sets(tmp_path / "out")
    meta = json.loads(stem.with_suffix(".json").read_text())
    assert 1 <= meta["cancelled"]["finished"] == len(meta["solvers"])
    said = capfd.readouterr().out
    assert re.search(r"benchmark of step \d+ \(cancelled: \d+ of \d+ solvers done\) written: "
                     + re.escape(str(stem)), said), said


def test_the_benchmark_on_quit_solves_the_latest_step_not_the_one_shown(
        qtbot, program_window, tmp_path, capfd):
    window = program_window("--scene", "column", "--benchmark-iterations", "3")
    activate(qtbot, window)
    _press(qtbot, window, "Space")
    qtbot.waitUntil(lambda: window.latest.state.paused, timeout=HANG_MS)
    latest = window.latest.steps
    for _ in range(3):
        _press(qtbot, window, "Comma")
    qtbot.waitUntil(lambda: window.latest.steps == latest - 3, timeout=HANG_MS)
    _press(qtbot, window, "Q")
    qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)
    [stem] = benchmark_sets(tmp_path / "out")
    assert json.loads(stem.with_suffix(".json").read_text())["step"] == latest
    assert f"benchmark of step {latest} (the latest; step {latest - 3} was shown in the " \
           "history) written" in capfd.readouterr().out


def test_ctrl_s_saves_the_moment_of_the_key_press(qtbot, make_window, tmp_path, monkeypatch):
    """The run goes on behind the dialog that asks for the name (here for 30 steps): the file
    holds a state from before the name was given."""
    window = make_window(scene="column", speed=1.0)
    activate(qtbot, window)
    path = tmp_path / "pressed.npz"
    at = {}

    def dialog(*_args):
        pressed = window.latest.time
        qtbot.waitUntil(lambda: window.latest.steps > 30 + at.setdefault(
            "press", window.latest.steps), timeout=HANG_MS)
        at["pressed"], at["answered"] = pressed, window.latest.time
        return str(path)

    monkeypatch.setattr(dialogs, "ask_save_path", dialog)
    _press(qtbot, window, "Ctrl+S")
    qtbot.waitUntil(path.exists, timeout=HANG_MS)
    saved = read_state(path).world.time
    assert at["pressed"] <= saved < at["answered"]
