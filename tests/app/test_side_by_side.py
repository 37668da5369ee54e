"""Solvers side by side in the real window (app.side_by_side, app.plots_copies): the T key
starts it with the current solver and the next, the view draws both copies' marbles in their
colours (pixels of the rendered frame), the legend names them, the plots draw one residual
curve per copy, and T again ends it; the command line's --side-by-side starts a scripted run
side by side and refuses bad names in one line."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from lab.session.side_by_side import COPY_COLOURS
from solver.methods import registry
from tests.app.conftest import HANG_MS
from tests.app.test_window import _press, image_array, make_window, wait_state  # noqa: F401
from tests.app.test_window_alarms_and_quit import _marbles, activate

HUE_TOLERANCE = 12.0  # degrees


def hues(rgb: np.ndarray) -> np.ndarray:
    """Hue in degrees of the saturated, lit pixels of an (h, w, 3) uint8 image (the marbles;
    the grey glass, floor and background drop out)."""
    c = rgb.reshape(-1, 3).astype(np.float64) / 255.0
    hi, lo = c.max(axis=1), c.min(axis=1)
    keep = (hi > 0.25) & (hi - lo > 0.3 * hi)
    c, hi, lo = c[keep], hi[keep], lo[keep]
    d = hi - lo
    r, g, b = c.T
    h = np.where(hi == r, (g - b) / d % 6.0, np.where(hi == g, (b - r) / d + 2.0,
                                                      (r - g) / d + 4.0))
    return 60.0 * h


def hue_of(colour: str) -> float:
    rgb = np.array([[[int(colour[k:k + 2], 16) for k in (1, 3, 5)]]], dtype=np.uint8)
    return float(hues(rgb)[0])


def near(h: np.ndarray, target: float) -> np.ndarray:
    return np.abs((h - target + 180.0) % 360.0 - 180.0) < HUE_TOLERANCE


def drawn(qtbot, window) -> np.ndarray:
    """The 3D view's image of the newest frame, once the view has drawn it."""
    qtbot.waitUntil(lambda: window.latest.seq == window._drawn_seq
                    and not window._awaiting_render, timeout=HANG_MS)
    return image_array(window.view.grab_frame())


def test_the_t_key_overlays_two_solvers_in_their_colours_with_a_curve_each(qtbot,
                                                                           make_window):
    window = make_window(scene="bowl", solver="pgs")
    activate(qtbot, window)
    names = list(registry.METHODS)
    nxt = names[names.index("pgs") + 1]
    blue, orange = hue_of(COPY_COLOURS[0]), hue_of(COPY_COLOURS[1])
    _press(qtbot, window, "Space")
    wait_state(qtbot, window, lambda f: f.state.paused)
    before = hues(drawn(qtbot, window))  # each marble its own colour: every hue
    assert (near(before, blue) | near(before, orange)).mean() < 0.4

    _press(qtbot, window, "T")
    f = wait_state(qtbot, window, lambda f: f.state.side_by_side == ("pgs", nxt),
                   timeout=HANG_MS)
    assert [c.colour for c in f.copies] == list(COPY_COLOURS[:2])
    _press(qtbot, window, "Space")
    start = f.time
    # The solvers part ways as the marbles pour in: then both copies show.
    f = wait_state(qtbot, window, lambda f: f.time > start + 1.0 and np.abs(
        f.copies[0].x - f.copies[1].x).max() > 0.05, timeout=HANG_MS)
    _press(qtbot, window, "Space")
    f = wait_state(qtbot, window, lambda f: f.state.paused)
    assert np.array_equal(f.copies[0].x, f.x)  # copy 0 is the Session's own world
    h = hues(drawn(qtbot, window))
    is_blue, is_orange = near(h, blue), near(h, orange)
    assert (is_blue | is_orange).mean() > 0.8, "marbles not in the copies' colours"
    assert is_blue.mean() > 0.15 and is_orange.mean() > 0.15, "a copy is missing"
    qtbot.waitUntil(lambda: "colour by solver (side by side)" in window.hud.text(),
                    timeout=HANG_MS)
    legend = window.legend.text()
    assert "pgs" in legend and nxt in legend and COPY_COLOURS[1] in legend

    plots = window.plots
    qtbot.waitUntil(lambda: all(plots.curve_data().get(f"copy {k} {kind}", ((), ()))[1].size
                                for k in (0, 1) for kind in ("trace", "history")),
                    timeout=HANG_MS)
    data = plots.curve_data()
    assert "copy 2 trace" not in data
    assert not plots.trace_curve.isVisible() and not plots.history_curve.isVisible()
    for k, copy in enumerate(window.latest.copies):  # paused: the shown traces are these
        expected = np.log10(np.clip(copy.trace, 1e-16, None))
        qtbot.waitUntil(lambda k=k, e=expected: np.array_equal(
            plots.curve_data()[f"copy {k} trace"][1], e), timeout=HANG_MS)
    assert not np.array_equal(plots.curve_data()["copy 0 trace"][1],
                              plots.curve_data()["copy 1 trace"][1])

    _press(qtbot, window, "T")
    f = wait_state(qtbot, window, lambda f: f.state.side_by_side == () and not f.copies)
    assert f.state.solver == "pgs"
    qtbot.waitUntil(lambda: window.legend.text() == "" and plots.trace_curve.isVisible(),
                    timeout=HANG_MS)
    assert "copy 0 trace" not in plots.curve_data()


def test_the_controls_button_starts_and_ends_it(qtbot, make_window):
    window = make_window(scene="column", solver="pgs")
    button = window.controls.side_by_side_button
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    f = wait_state(qtbot, window, lambda f: len(f.copies) == 2, timeout=HANG_MS)
    qtbot.waitUntil(lambda: button.isChecked() and "End side by side" in button.text())
    assert f.state.side_by_side[0] == "pgs"


def test_the_command_line_runs_side_by_side_and_refuses_bad_names(tmp_path):
    bad = _marbles("--side-by-side", "pgs,nosuch", "--frames", "5", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "unknown solver 'nosuch'" in bad.stderr
    shot = tmp_path / "side.png"
    run = _marbles("--scene", "bowl", "--side-by-side", "pgs,jacobi", "--frames", "3",
                   "--no-benchmark", "--screenshot", str(shot), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert shot.stat().st_size > 0 and "bowl/pgs" in run.stdout


@pytest.mark.parametrize("text", ["pgs", "pgs,jacobi,psor,pcg,apgd"])
def test_the_count_is_checked_before_any_window(tmp_path, text):
    run = _marbles("--side-by-side", text, cwd=tmp_path)
    assert run.returncode == 2 and "2 to 4 solvers" in run.stderr
