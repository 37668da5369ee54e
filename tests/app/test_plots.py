"""The live plots alone: what the curves hold after frames of many steps each."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage

from app.plots import (HISTORY_COLOUR, HISTORY_SECONDS, PHASES, SHRINK_AFTER, LivePlots,
                       set_view)
from lab.session import StepLog


class FakeFrame:
    """The fields of app.worker.Frame that LivePlots reads."""

    def __init__(self, rows, trace=None, trace_step=-1):
        """rows: (time s, residual m/s, {phase: s}) per step."""
        log = StepLog()
        for time, residual, timings in rows:
            log.add(time, residual, timings)
        self.records = log.take()
        self.stepped = len(self.records) > 0
        self.trace = trace
        self.trace_step = trace_step


def frames(dt, steps, per_frame, start=0):
    """Frames of `per_frame` steps each; step k has residual k and phase times k ms."""
    out = []
    for first in range(start, start + steps, per_frame):
        ks = range(first, min(first + per_frame, start + steps))
        out.append(FakeFrame([((k + 1) * dt, float(k),
                                {name: 1e-3 * k for name in PHASES + ("total",)}) for k in ks]))
    return out


def test_history_keeps_the_last_ten_seconds_on_a_fixed_axis(qtbot):
    """Batched frames (as when stepping as fast as possible) reach the curves step by step;
    only the last HISTORY_SECONDS are kept, on a time axis relative to the newest step, whose
    range stays put while the data scroll."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    dt = 0.02
    for f in frames(dt, 1500, 37):  # 30 s of simulated time
        plots.add_frame(f)
    plots.refresh()
    x, y = plots.curve_data()["history"]
    kept = int(round(HISTORY_SECONDS / dt)) + 1
    assert plots.steps_kept == kept and x.size == kept
    np.testing.assert_allclose(x, dt * np.arange(-(kept - 1), 1), atol=1e-9)
    np.testing.assert_allclose(10 ** y, np.arange(1500 - kept, 1500), rtol=1e-9)
    _, ms = plots.curve_data()["phase:solve"]
    np.testing.assert_allclose(10 ** ms, np.arange(1500 - kept, 1500), rtol=1e-9)
    assert plots.shown_time == 1500 * dt
    shown = plots.history_plot._shown_range
    assert shown[:2] == (-HISTORY_SECONDS, 0.0)
    for f in frames(dt, 100, 37, start=1500):  # two more seconds: the same axis range
        plots.add_frame(f)
    plots.refresh()
    assert plots.history_plot._shown_range[:2] == shown[:2]
    assert plots.shown_time == 1600 * dt


def constant_frames(dt, steps, residual):
    return [FakeFrame([((k + 1) * dt, residual, {name: 1e-3 for name in PHASES + ("total",)})
                       for k in range(steps)])]


def curve_rows(plots, colour) -> np.ndarray:
    """Rows (canvas pixels) where the canvas shows `colour` (#rrggbb) within 40 per channel."""
    img = plots.canvas.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    w, h, row = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=row * h).reshape(h, row)
    rgb = buf[:, :3 * w].reshape(h, w, 3).astype(int)
    want = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return np.nonzero(np.all(np.abs(rgb - want) <= 40, axis=2).any(axis=1))[0]


def scene_row(plots, plot, x, y) -> float:
    """The canvas row where view point (x, y) of `plot` is drawn, by pyqtgraph's own mapping."""
    point = plot.getViewBox().mapViewToScene(QPointF(x, y))
    return plots.canvas.mapFromScene(point).y()


def test_curves_are_drawn_where_the_axes_say(qtbot):
    """The canvas is painted by Qt's QGraphicsView.paintEvent, without pyqtgraph's Python
    override that brings the view boxes' transforms up to date before painting (app.plots,
    _Canvas): the curve must still land on the row its value maps to, before and after the
    range changes."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(400, 600)
    plots.show()
    qtbot.waitExposed(plots)
    colour = HISTORY_COLOUR
    for residual in (1e-3, 1e-9):
        plots.clear()
        for f in constant_frames(0.02, 100, residual):
            plots.add_frame(f)
        plots.refresh()
        rows = curve_rows(plots, colour)
        expected = scene_row(plots, plots.history_plot, -1.0, np.log10(residual))
        assert rows.size, f"no {colour} pixels: the history curve was not drawn"
        assert np.all(np.abs(rows - expected) <= 2), (rows, expected)


def test_log_axis_widens_at_once_and_narrows_after_a_while(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plot = plots.trace_plot
    x = np.arange(3.0)

    def show(lo, hi):
        set_view(plot, x, [np.array([lo, (lo + hi) / 2, hi])])
        return plot._shown_range[2:]

    assert show(-2.5, -1.5) == (-3.0, -1.0)
    assert show(-5.5, -1.2) == (-6.0, -1.0)  # wider data: at once
    for _ in range(SHRINK_AFTER - 1):
        assert show(-2.2, -1.2) == (-6.0, -1.0)  # narrower: kept for a while
    assert show(-2.2, -1.2) == (-3.0, -1.0)  # then tight
    assert show(-1.5, -0.5) == (-3.0, 0.0)  # up a decade: widened, the lower one kept
    for _ in range(SHRINK_AFTER - 2):
        assert show(-1.5, -0.5) == (-3.0, 0.0)
    assert show(-3.0, 0.0) == (-3.0, 0.0)  # filling it: the count restarts
    for _ in range(SHRINK_AFTER - 1):
        assert show(-1.5, -0.5) == (-3.0, 0.0)
    assert show(-1.5, -0.5) == (-2.0, 0.0)


def test_a_mouse_zoom_holds_the_range_until_the_auto_button(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plot = plots.history_plot
    box = plot.getViewBox()
    for f in constant_frames(0.02, 100, 1e-3):
        plots.add_frame(f)
    plots.refresh()
    chosen = plot._shown_range
    box.scaleBy((0.5, 0.5))  # what the wheel does, as the user
    box.sigRangeChangedManually.emit(box.state["mouseEnabled"])
    zoomed = box.viewRange()
    for f in constant_frames(0.02, 100, 1e-9):  # new data, other decades
        plots.add_frame(f)
    plots.refresh()
    assert np.allclose(box.viewRange(), zoomed)  # held
    plot.autoBtn.clicked.emit(plot.autoBtn)
    plots.add_frame(constant_frames(0.02, 1, 1e-9)[0])
    plots.refresh()
    assert plot._shown_range != chosen and plot._shown_range[2:] == (-9.0, -2.0)  # widened
    (y0, y1) = box.viewRange()[1]
    assert y0 < -9.0 + 0.2 and y1 > -2.0 - 0.2  # the decades chosen, shown again


def test_a_legend_entry_shows_and_hides_its_phase_curve(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    curve = plots.phase_curves["solve"]
    assert curve.isVisible()
    curve.sample.setVisible(False)  # what clicking the legend entry does
    assert not curve.isVisible() and plots.phase_curves["collide"].isVisible()
    curve.sample.setVisible(True)
    assert curve.isVisible()


def test_residuals_are_clamped_for_the_log_axis():
    from app.plots import CEILING, FLOOR, clamp_residual

    got = clamp_residual([0.0, np.nan, np.inf, -np.inf, 2.0, 1e-300])
    np.testing.assert_array_equal(got, [FLOOR, CEILING, CEILING, FLOOR, 2.0, FLOOR])
