"""The live plots alone: what the curves hold after frames of many steps each."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage

from app.plots import (HISTORY_COLOUR, HISTORY_SECONDS, PHASES, SHRINK_AFTER, LivePlots,
                       set_view)
from lab.session.history import HistorySpan
from lab.session.state import StepLog


class FakeFrame:
    """The fields of app.worker.Frame that LivePlots reads."""

    def __init__(self, rows, trace=None, trace_step=-1, compiled=()):
        """rows: (time s, residual m/s, {phase: s}) per step; compiled: the indices of the
        steps during which Numba compiled."""
        log = StepLog()
        for k, (time, residual, timings) in enumerate(rows):
            log.add(time, residual, timings, k in compiled)
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


def test_a_mouse_zoom_holds_the_range_until_the_follow_button(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plot = plots.history_plot
    box = plot.getViewBox()
    for f in constant_frames(0.02, 100, 1e-3):
        plots.add_frame(f)
    plots.refresh()
    chosen = plot._shown_range
    assert plots.following and plots.follow_button.isChecked()
    box.scaleBy((0.5, 0.5))  # what the wheel does, as the user
    box.sigRangeChangedManually.emit(box.state["mouseEnabled"])
    assert not plots.following and not plots.follow_button.isChecked()  # visibly held
    zoomed = box.viewRange()
    for f in constant_frames(0.02, 100, 1e-9):  # new data, other decades
        plots.add_frame(f)
    plots.refresh()
    assert np.allclose(box.viewRange(), zoomed)  # held
    plots.follow_button.click()
    assert plots.following and plots.follow_button.isChecked()
    plots.add_frame(constant_frames(0.02, 1, 1e-9)[0])
    plots.refresh()
    assert plot._shown_range != chosen and plot._shown_range[2:] == (-9.0, -2.0)  # widened
    (y0, y1) = box.viewRange()[1]
    assert y0 < -9.0 + 0.2 and y1 > -2.0 - 0.2  # the decades chosen, shown again


def state(generation=0, scene="bowl", solver="pgs", history=None):
    return SimpleNamespace(generation=generation, scene=scene, solver=solver, history=history)


def with_state(frame, **kw):
    frame.state = state(**kw)
    return frame


@pytest.mark.parametrize("change, label", [
    (dict(generation=1), "reset"),
    (dict(generation=1, history=HistorySpan(150, 151, 151, 700, 0)), "on from the history"),
    (dict(generation=1, scene="box"), "scene box"),
    (dict(solver="psor"), "psor"),
    (dict(generation=1, scene="box", solver="psor"), "scene box, psor"),
])
def test_a_reset_a_new_scene_or_solver_follows_the_data_again_and_is_marked(qtbot, change,
                                                                            label):
    """One wheel turn must not freeze a plot's range for good (it would be empty after N)."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    dt = 0.02
    for f in frames(dt, 200, 50):
        plots.add_frame(with_state(f))
    plots.refresh()
    box = plots.history_plot.getViewBox()
    box.scaleBy((0.1, 0.1))
    box.sigRangeChangedManually.emit(box.state["mouseEnabled"])
    assert not plots.following
    # A new world's clock starts at 0 again; the history's continues from 4 s.
    for f in frames(dt, 100, 50, start=0 if "generation" in change else 200):
        plots.add_frame(with_state(f, **change))
    plots.refresh()
    assert plots.following and plots.follow_button.isChecked()
    assert plots.markers == [(pytest.approx(200 * dt), label)]
    x, _ = plots.curve_data()["history"]
    assert np.all(np.diff(x) > 0) and x[-1] == 0.0  # one clock, rising
    assert plots.shown_time == pytest.approx(300 * dt)
    lines = plots._marker_lines[0].getData()[0]
    np.testing.assert_allclose(lines, [-100 * dt, -100 * dt])  # 2 s before the newest step
    shown = [item for item in plots._marker_labels if item.isVisible()]
    assert [item.textItem.toPlainText() for item in shown] == [label]
    (lo, hi), _ = box.viewRange()
    assert lo < -9.5 and hi > -0.5  # the whole history again, not the zoom


def test_markers_leave_with_the_history(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    for f in frames(0.02, 10, 10):
        plots.add_frame(with_state(f))
    plots.add_frame(with_state(frames(0.02, 1, 1, start=10)[0], solver="psor"))
    for f in frames(0.02, 600, 100, start=11):  # 12 s more: the marker is older than 10 s
        plots.add_frame(with_state(f, solver="psor"))
    plots.refresh()
    assert plots.markers == [] and not any(item.isVisible() for item in plots._marker_labels)


def text_rects(axis) -> list:
    from PySide6.QtGui import QPainter

    image = QImage(10, 10, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(rect, text) for rect, _, text in texts if text]


@pytest.mark.parametrize("size", [(280, 420), (330, 600), (420, 780)])
@pytest.mark.parametrize("trace", [(0.95, 0.62), (0.9, 0.85), (1e-2, 1e-14), (3.0, 2e-3)])
def test_tick_labels_never_overlap(qtbot, size, trace):
    """Log axes over less than a decade labelled 0.9, 0.8, 0.7 ... must not overlap;
    narrow plots crowd the time axes too."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(*size)
    plots.show()
    qtbot.waitExposed(plots)
    steps = 40
    plots.add_frame(FakeFrame([((k + 1) * 0.02, trace[1], {n: 1e-4 * (1 + k % 3)
                                                            for n in PHASES + ("total",)})
                               for k in range(steps)],
                              trace=np.geomspace(*trace, 21), trace_step=1))
    plots.refresh()
    # A zoom into less than a decade, as the wheel can leave it.
    plots.timing_plot.getViewBox().setRange(yRange=(-3.9, -3.75), padding=0)
    qtbot.wait(50)
    labelled = 0
    for plot in plots.plots:
        for name in ("left", "bottom"):
            rects = text_rects(plot.getAxis(name))
            labelled += len(rects)
            assert len(rects) >= 2, (name, [t for _, t in rects])
            for i, (a, ta) in enumerate(rects):
                for b, tb in rects[i + 1:]:
                    assert not a.intersects(b), (plot.titleLabel.text, name, ta, tb)
    assert labelled >= 12


def test_the_legend_sits_outside_the_data(qtbot):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(400, 700)
    plots.show()
    qtbot.waitExposed(plots)
    for f in frames(0.02, 600, 50):
        plots.add_frame(f)
    plots.refresh()
    qtbot.wait(50)
    legend = plots.legend.sceneBoundingRect()
    assert legend.width() > 50 and legend.height() > 5
    for plot in plots.plots:
        assert not legend.intersects(plot.getViewBox().sceneBoundingRect())


def test_the_plots_draw_in_the_one_palette_on_their_background(qtbot):
    from lab.report.palette import PALETTE, PLOT_BACKGROUND

    plots = LivePlots()
    qtbot.addWidget(plots)
    colours = [plots.trace_curve.pen().color().name(), plots.history_curve.pen().color().name()]
    colours += [c.pen().color().name() for c in plots.phase_curves.values()]
    assert set(colours) <= set(PALETTE)
    assert len(set(colours[2:])) == len(PHASES)
    assert plots.canvas.backgroundBrush().color().name() == PLOT_BACKGROUND


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


def test_event_labels_close_in_time_do_not_overlap(qtbot):
    """Three solver switches 0.1 s apart (M pressed quickly): every switch keeps its line, and
    of the labels only those that do not overlap are shown, the newest among them."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(420, 500)
    plots.show()
    qtbot.waitExposed(plots)
    start = 0
    for solver in ("pgs", "jacobi", "psor", "pgs-sm"):
        for f in frames(0.02, 5, 5, start=start):
            plots.add_frame(with_state(f, solver=solver))
        start += 5
    for f in frames(0.02, 100, 50, start=start):
        plots.add_frame(with_state(f, solver="pgs-sm"))
    plots.refresh()
    assert len(plots.markers) == 3
    assert len(plots._marker_lines[0].getData()[0]) == 6  # a line for each
    shown = [item for item in plots._marker_labels if item.isVisible()]
    assert shown and shown[-1] is plots._marker_labels[2]
    boxes = [item.mapRectToScene(item.boundingRect()) for item in shown]
    for a, b in zip(boxes, boxes[1:]):
        assert a.right() <= b.left(), "event labels overlap"


@pytest.mark.parametrize("width", [280, 420])
def test_a_switch_just_made_is_labelled_inside_the_plot(qtbot, width):
    """A solver switch at the newest step: its label ends at its line instead of running
    past the plot's right edge ("new" of "newton" was all that showed)."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(width, 500)
    plots.show()
    qtbot.waitExposed(plots)
    for f in frames(0.02, 100, 50):
        plots.add_frame(with_state(f, solver="pgs"))
    for f in frames(0.02, 2, 2, start=100):
        plots.add_frame(with_state(f, solver="newton"))
    plots.refresh()
    label = plots._marker_labels[-1]
    assert label.isVisible() and label.textItem.toPlainText() == "newton"
    box = plots.history_plot.getViewBox().sceneBoundingRect()
    text = label.mapRectToScene(label.boundingRect())
    assert box.left() <= text.left() and text.right() <= box.right(), (text, box)


@pytest.mark.parametrize("width", [280, 300, 420, 600])
def test_the_plots_layout_is_never_wider_than_the_panel(qtbot, width):
    """The phases' legend takes two rows where one would not fit, so the plots' layout fits
    the canvas and no axis or entry is cut on the right."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(700, 500)
    plots.show()
    qtbot.waitExposed(plots)
    qtbot.wait(200)  # laid out at 700 px first
    plots.resize(width, 500)  # then narrowed, as the window's dock is
    canvas = plots.canvas
    qtbot.waitUntil(lambda: canvas.ci.geometry().width() <= canvas.viewport().width() + 0.5,
                    timeout=5000)
    assert plots.legend.columnCount == (len(PHASES) if width >= 400 else 2)


def test_the_trace_is_drawn_in_its_solvers_colour(qtbot):
    """The colour each solver has in the comparison window and benchmark.png
    (lab.report.palette), which no other live curve uses for apgd and nsgs."""
    from lab.report.palette import solver_colours

    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(400, 600)
    plots.show()
    qtbot.waitExposed(plots)
    box = plots.trace_plot.getViewBox().sceneBoundingRect()
    top, bottom = plots.canvas.mapFromScene(box.topLeft()).y(), \
        plots.canvas.mapFromScene(box.bottomLeft()).y()
    for step, solver in enumerate(("apgd", "nsgs")):
        frame = FakeFrame([(0.02 * (step + 1), 1e-3, {n: 1e-3 for n in PHASES + ("total",)})],
                          trace=0.5 ** np.arange(30), trace_step=step)
        frame.state = SimpleNamespace(generation=0, scene="bowl", solver=solver)
        plots.add_frame(frame)
        plots.refresh()
        colour = solver_colours([solver])[0]
        assert plots.trace_curve.pen().color().name() == colour
        rows = curve_rows(plots, colour)
        rows = rows[(rows >= top) & (rows <= bottom)]
        assert rows.size > 0.5 * (bottom - top), (solver, rows.size, top, bottom)


def test_a_frame_without_steps_brings_the_trace_of_the_step_it_shows(qtbot):
    """A step of the history shown (no step made): the residual per iteration of its solve."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.add_frame(FakeFrame([(0.02, 1e-3, {n: 1e-4 for n in PHASES + ("total",)})],
                              trace=np.geomspace(1.0, 1e-3, 11), trace_step=1))
    plots.refresh()
    shown = FakeFrame([], trace=np.geomspace(1.0, 1e-6, 7), trace_step=0)
    assert not shown.stepped
    plots.add_frame(shown)
    plots.refresh()
    x, y = plots.trace_curve.getData()
    np.testing.assert_allclose(y, np.log10(np.geomspace(1.0, 1e-6, 7)), rtol=1e-12)
    assert list(x) == list(range(7))


def test_a_solve_that_ended_before_its_first_iteration_shows_its_residual(qtbot):
    """A settled pile: the start met the tolerance, the trace is one residual. It is drawn as
    a cross at iteration 0 with a note, not an empty frame."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.add_frame(FakeFrame([(0.02, 3e-13, {n: 1e-4 for n in PHASES + ("total",)})],
                              trace=np.array([3e-13]), trace_step=40))
    plots.refresh()
    x, y = plots.trace_curve.getData()
    assert x.size > 0 and np.all(np.abs(x) <= 0.1)
    assert np.isclose(np.median(y), np.log10(3e-13))
    assert plots.trace_note.isVisible()
    assert plots.trace_note.textItem.toPlainText() == "converged at start: 3e-13 m/s, 0 iterations"
    assert plots.trace_title == "residual per iteration (step 40: 0 it)"
    plots.add_frame(FakeFrame([], trace=np.geomspace(1.0, 1e-3, 4), trace_step=41))
    plots.refresh()
    assert not plots.trace_note.isVisible()
    assert plots.trace_title == "residual per iteration (step 41: 3 it)"


def test_a_compiling_step_is_left_out_of_the_step_times_and_marked(qtbot):
    """A solver's first step compiles for seconds: no point of the step-time plot, a marker."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    rows = [((k + 1) * 0.02, 1e-3, {n: (6.0 if k == 2 else 1e-3) for n in PHASES + ("total",)})
            for k in range(5)]
    plots.add_frame(FakeFrame(rows, compiled=(2,)))
    plots.refresh()
    x, y = plots.curve_data()["phase:solve"]
    assert np.isnan(y[2]) and np.all(np.isfinite(np.delete(y, 2)))
    assert np.nanmax(y) == pytest.approx(0.0)  # log10 of 1 ms: the 6000 ms is not drawn
    assert plots.timing_plot._shown_range[3] <= 1.0
    assert plots.markers == [(0.06, "compiling: time left out")]
