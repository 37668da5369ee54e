"""Live convergence plots docked beside the view (pyqtgraph, log scale).

Three plots: the residual after each iteration of the latest traced step; the final residual of
every step over the last `HISTORY_SECONDS` of simulated time; the time of each step phase, with
its legend in a row of its own below the data. `add_frame` only appends to buffers, which keep
just the steps the plots show (it runs for every frame the worker sends); `refresh`, called by a
GUI timer at 20 Hz or more, hands the buffers to pyqtgraph, so drawing cost does not grow with
the simulation rate. The history plots' time axis is relative to the newest step (−10 s to 0,
like an oscilloscope rolling), so it never moves: with an absolute axis, stepping as fast as
possible scrolled it on every refresh, and laying out an axis (tick text, grid) was the
costliest part of a refresh. The history runs on across resets and scene changes (a new world's
clock continues where the last one ended), and a marker line with a label shows where the
scene, the solver or a reset changed it. Residuals are clamped to `FLOOR` because a log axis
cannot show zero. Colours come from the program's one palette (lab.session.colours.PALETTE), the
trace in its solver's colour (lab.report.palette, as in the comparison window); axes from
app.axes, whose tick labels never overlap.

The axes follow the data. A zoom or pan with the mouse holds a plot's range; the panel's
"follow data" button (unchecked while any plot is held) gives every plot back to the data, and
so does a reset, a new scene or a new solver.
"""
from __future__ import annotations

import math

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsPathItem, QGraphicsView, QHBoxLayout,
                               QLabel, QToolButton, QVBoxLayout, QWidget)

from lab.report.palette import PALETTE, PLOT_BACKGROUND, solver_colours
from lab.session.state import RECORD_FIELDS

from .axes import fit_axes, tick_font

FLOOR = 1e-16  # m/s: the smallest residual drawn (exact zeros appear at convergence)
CEILING = 1e30  # m/s: the largest (a divergence's inf is drawn here)
HISTORY_SECONDS = 10.0  # s of simulated time in the history plots
MAX_POINTS = 20000  # steps kept at most (10 s of steps unless dt < 0.5 ms)
SHRINK_AFTER = 25  # updates (1 s at 25 Hz) a log axis keeps unused decades before it narrows
MIN_MS = 1e-6  # ms: the shortest phase time drawn (log axis)
MIN_WIDTH = 280  # px: the panel never gets narrower (the window keeps it at least this wide)
PLOT_HEIGHT = 140  # px: each plot's least height
LEGEND_ROW = 21  # px: a row of the phases' legend
_EMPTY = np.zeros(0)
TIME_LABEL = "simulated time before the latest step (s)"
PHASES = ("collide", "assemble", "solve", "integrate")
TRACE_COLOUR = PALETTE[3]  # until a frame names the solver (then the solver's colour)
HISTORY_COLOUR = PALETTE[2]
PHASE_COLOURS = tuple(PALETTE[k] for k in (0, 1, 6, 3))
MARKER_COLOUR = PALETTE[7]
ALARM_COLOUR = PALETTE[5]  # the iteration where the traced step's alarm was raised
TRACE_TITLE = "residual per iteration (latest step)"
MARKER_SPAN = 40.0  # marker lines reach from 1e-40 to 1e40 (log10 units): any range shown
# Where time, residual and the phases sit in a frame's records, by name.
_COLUMNS = [RECORD_FIELDS.index(name) for name in ("time", "residual") + PHASES]


def clamp_residual(values) -> np.ndarray:
    """Residuals ready for a log axis: NaN/inf and zeros become finite positive values."""
    a = np.asarray(values, dtype=np.float64)
    a = np.nan_to_num(a, nan=CEILING, posinf=CEILING, neginf=FLOOR)
    return np.clip(a, FLOOR, CEILING)


class _Canvas(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget painted by Qt's own QGraphicsView.paintEvent. pyqtgraph overrides
    it in Python only to have its view boxes bring their transforms up to date first; through
    that override the whole paint (text layout, rasterising) runs under the GIL, which the
    simulation thread needs between its kernels. Without a Python override only the items'
    own Python paint methods take the GIL, briefly. The view boxes then update their
    transforms when their range or size changes instead (`_plot`)."""

    paintEvent = QGraphicsView.paintEvent  # noqa: N815 (Qt name)
    fit = None  # called with the new width before the plots are laid out to it

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self.fit is not None:
            self.fit(self.width())
        super().resizeEvent(event)


def _plot(canvas: pg.GraphicsLayoutWidget, row: int, title: str, x_label: str, y_label: str,
          on_hold, log_y: bool = True) -> pg.PlotItem:
    """A plot in row `row` of `canvas`: all three share one QGraphicsView, so a refresh is one
    paint event, not three (each one walks its scene's items through Python). `on_hold()` is
    called when the user zooms or pans it."""
    item = canvas.addPlot(row=row, col=0, axisItems=fit_axes())
    item.setTitle(title, size="9pt")
    item.setLabel("bottom", x_label)
    item.setLabel("left", y_label)
    item.setLogMode(x=False, y=log_y)
    item.showGrid(x=True, y=True, alpha=0.25)
    for axis in ("left", "bottom"):
        item.getAxis(axis).enableAutoSIPrefix(False)  # "(x0.001)" on a log axis misleads
        # With the grid on, an axis item spans the whole plot, so every curve update would
        # repaint it (replaying its tick text and grid, six axes per refresh). Cached as a
        # pixmap, it is redrawn only when its range or size changes.
        item.getAxis(axis).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    item.setMenuEnabled(False)
    item.hideButtons()  # the panel's "follow data" button replaces pyqtgraph's "A"
    # Ranges are set once per refresh (set_view); pyqtgraph's own auto-range would repaint
    # again a moment later.
    box = item.getViewBox()
    box.disableAutoRange()
    # What pyqtgraph defers to just before a paint (_Canvas): both signals follow every
    # change that leaves the transform stale.
    box.sigRangeChanged.connect(box.prepareForPaint)
    box.sigStateChanged.connect(box.prepareForPaint)
    # A zoom or pan with the mouse holds the range the user chose, until the panel follows
    # the data again (LivePlots.follow).
    item._held = False

    def hold(*_):
        item._held = True
        on_hold()

    item.sigRangeChangedManually.connect(hold)
    return item


def _release(plot: pg.PlotItem) -> None:
    """End a user's hold on `plot`'s range: show again the range set_view chose last."""
    plot._held = False
    shown = getattr(plot, "_shown_range", None)
    if shown is not None:
        plot.getViewBox().setRange(xRange=shown[:2], yRange=shown[2:], padding=0.02)


class _Curve(QGraphicsPathItem):
    """A polyline that Qt paints in C++: a pyqtgraph PlotCurveItem paints, measures its
    bounds and takes new data in Python, under the GIL that the simulation thread needs
    between its kernels. y comes already in log10 (the axis is in
    log mode), finite. The pen has width 0: one device pixel whatever the view's scale, with
    no path stroking (a wider pen goes through Qt's path stroker, which makes a refresh
    markedly slower), and bounds that are the points' own. The trace, of a few dozen
    points, can afford width 2."""

    def __init__(self, colour: str, width: int = 0):
        super().__init__()
        pen = QPen(QColor(colour), width)
        pen.setCosmetic(True)  # width in device pixels, not in data units
        self.setPen(pen)
        self.x = self.y = _EMPTY

    def setData(self, x: np.ndarray, y: np.ndarray, connect: str = "all") -> None:  # noqa: N802
        """x, y: (k,) float64, in view coordinates; connect "pairs": separate segments."""
        self.x, self.y = x, y
        self.setPath(pg.arrayToQPath(x, y, connect=connect, finiteCheck=False) if x.size
                     else QPainterPath())

    def getData(self) -> tuple[np.ndarray, np.ndarray]:  # noqa: N802 (pyqtgraph's name)
        return self.x, self.y


def _curve(plot: pg.PlotItem, colour: str, legend: pg.LegendItem | None = None,
           name: str = "", width: int = 0) -> _Curve:
    """A curve on `plot` (and an entry in `legend`, whose click shows or hides it)."""
    curve = _Curve(colour, width)
    plot.getViewBox().addItem(curve, ignoreBounds=True)  # ranges are set by set_view
    if legend is not None:
        # The legend draws its sample from a pyqtgraph item's options; this one is never
        # plotted, and clicking the entry toggles it, which the curve follows.
        sample = pg.PlotDataItem(pen=pg.mkPen(colour, width=2))
        sample.visibleChanged.connect(lambda: curve.setVisible(sample.isVisible()))
        legend.addItem(sample, name)
        curve.sample = sample
    return curve


def _log_span(log_y: np.ndarray) -> tuple[float, float]:
    """Whole decades around values given as log10 (finite), as bounds for a log axis."""
    log_y = log_y[np.isfinite(log_y)]  # the steps left out (compiling) are NaN
    if log_y.size == 0:
        return -1.0, 1.0
    lo = np.floor(log_y.min())
    hi = np.ceil(log_y.max())
    return float(lo), float(max(hi, lo + 1.0))


def set_view(plot: pg.PlotItem, x: np.ndarray, ys: list[np.ndarray],
             history: bool = False) -> None:
    """Show x's span and the decades of all ys (log10 values) in one range change (a single
    repaint).

    history: x is time relative to the latest step, shown over the fixed span
    [−HISTORY_SECONDS, 0]. The y range widens as soon as data leave it but narrows only after
    SHRINK_AFTER calls in a row with a decade or more unused. The range is only set when it
    differs from the one shown (a range change re-lays the axes, tick text included, the
    costliest part of a refresh), and not while the user holds one (a mouse zoom or pan, until
    the plot's "A" button)."""
    if x.size == 0 or getattr(plot, "_held", False):
        return
    if history:
        lo, hi = -HISTORY_SECONDS, 0.0
    else:
        lo, hi = ((float(x[0]), float(x[-1])) if x.size > 1
                  else (float(x[0]) - 1, float(x[0]) + 1))
    if hi <= lo:
        hi = lo + 1.0
    ylo, yhi = _log_span(np.concatenate([y.ravel() for y in ys])) if ys else (-1.0, 1.0)
    before = getattr(plot, "_shown_range", None)
    if before is not None and before[2] <= ylo and yhi <= before[3] and (
            (ylo, yhi) != before[2:]):
        # Data inside the decades shown, not filling them: keep them for a while. The latest
        # step's trace moves by a decade or so from step to step, and re-laying an axis is
        # Python work under the GIL (it was a third of the GUI thread's share).
        plot._loose = getattr(plot, "_loose", 0) + 1
        if plot._loose < SHRINK_AFTER:
            ylo, yhi = before[2], before[3]
    elif before is not None:
        # Widen only: a trace that moves up a decade keeps the decade below for a while too.
        ylo, yhi = min(ylo, before[2]), max(yhi, before[3])
        plot._loose = 0
    shown = (lo, hi, ylo, yhi)
    if before == shown:
        return
    plot._shown_range = shown
    plot._loose = 0
    plot.getViewBox().setRange(xRange=(lo, hi), yRange=(ylo, yhi), padding=0.02)


class LivePlots(QWidget):
    """The dock's content. Counters `frames_added` and `refreshes` let tests see data flow;
    `markers` holds (simulated time on the history's clock, label) of the changes shown.
    `copies`: what makes its part for solvers side by side from it (app.plots_copies
    .CopyCurves), None for none; the part gets every frame and refresh."""

    def __init__(self, parent: QWidget | None = None, copies=None):
        super().__init__(parent)
        self.setMinimumWidth(MIN_WIDTH)
        self.canvas = _Canvas()
        self.canvas.setBackground(PLOT_BACKGROUND)
        self.canvas.setMinimumHeight(3 * PLOT_HEIGHT)
        # Keys belong to the hotkey map (MainWindow.keyPressEvent): a focused plot would take
        # some itself (its view box zooms on + and -).
        self.canvas.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        hold = self._on_hold
        self.trace_plot = _plot(self.canvas, 0, TRACE_TITLE,
                                "iteration", "residual (m/s)", hold)
        self.history_plot = _plot(self.canvas, 1, "final residual per step", TIME_LABEL,
                                  "residual (m/s)", hold)
        self.timing_plot = _plot(self.canvas, 2, "step time by phase", TIME_LABEL, "time (ms)",
                                 hold)
        self.plots = (self.trace_plot, self.history_plot, self.timing_plot)
        # Curves painted by Qt, fed log10 values (_Curve): PlotDataItem (what PlotItem.plot
        # makes) redoes the log mapping, the bounds and a scatter item in Python on every
        # setData, and paints in Python.
        self.trace_curve = _curve(self.trace_plot, TRACE_COLOUR, width=2)
        # A step that diverged (or whose marbles gained energy from nowhere): a dashed line
        # at its last iteration, and the title names the step and what went wrong.
        self.alarm_line = _curve(self.trace_plot, ALARM_COLOUR, width=2)
        pen = self.alarm_line.pen()
        pen.setStyle(Qt.PenStyle.DashLine)
        self.alarm_line.setPen(pen)
        self.trace_title = TRACE_TITLE
        # A solve that ended before its first iteration has one residual: a cross and a note.
        self.trace_note = pg.TextItem("", color=TRACE_COLOUR, anchor=(0.5, 1.2))
        self.trace_plot.getViewBox().addItem(self.trace_note, ignoreBounds=True)
        self.trace_note.setVisible(False)
        self.history_curve = _curve(self.history_plot, HISTORY_COLOUR)
        # In a row of its own under the step-time plot, so it never covers data; cached as a
        # pixmap, so it is painted (in Python) once, not on every refresh.
        self.legend = pg.LegendItem(colCount=len(PHASES), labelTextSize="8pt")
        self.canvas.addItem(self.legend, row=3, col=0)
        self.legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.phase_curves = {name: _curve(self.timing_plot, colour, self.legend, name)
                             for name, colour in zip(PHASES, PHASE_COLOURS)}
        # px the legend needs in one row: a narrower panel gets it in two (_fit_legend), as
        # the plots' layout would otherwise grow wider than the panel and be cut on the right.
        self._legend_row = self.legend.minimumWidth()
        self.canvas.fit = self._fit_legend
        self._marker_lines = [_curve(plot, MARKER_COLOUR) for plot in self.plots[1:]]
        for line in self._marker_lines:
            pen = line.pen()
            pen.setStyle(Qt.PenStyle.DashLine)
            line.setPen(pen)
        self._marker_labels: list[pg.TextItem] = []
        self.markers: list[tuple[float, str]] = []
        self.follow_button = self._follow_button()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        header = QHBoxLayout()
        header.addWidget(QLabel("mouse: zoom / pan a plot"), 1)
        header.addWidget(self.follow_button)
        layout.addLayout(header)
        layout.addWidget(self.canvas, 1)
        # One row per step kept: simulated time (s, on the history's clock), then log10 of the
        # residual (m/s) and of each phase's time (ms), ready for the curves.
        self._rows = np.empty((0, 2 + len(PHASES)))
        self._offset = 0.0  # s: the history's clock when the current world's clock was 0
        self._state_key: tuple | None = None  # (generation, scene, solver) last seen
        self._trace: np.ndarray | None = None
        self._trace_step = -1
        self._trace_alarm = ""
        self._trace_past = False  # the trace is of a past step, shown from the history
        self._shown_trace_step = -2
        self._dirty = False
        self.frames_added = 0
        self.refreshes = 0
        self.shown_time = float("nan")  # simulated time of the latest step shown (s)
        # Solvers side by side, one curve per copy (made last: it draws on the plots above).
        self.copy_curves = copies(self) if copies is not None else None

    def _fit_legend(self, width: int) -> None:
        """The phases' legend in one row where it fits a canvas `width` px wide, else in two
        (the canvas calls this before it lays the plots out to a new width)."""
        left, _, right, _ = self.canvas.ci.layout.getContentsMargins()
        columns = len(PHASES) if width - left - right - 12 >= self._legend_row else 2
        if columns != self.legend.columnCount:
            self.legend.setColumnCount(columns)
            # The plots keep their height: the second row is the canvas's.
            self.canvas.setMinimumHeight(3 * PLOT_HEIGHT + (LEGEND_ROW if columns < len(PHASES)
                                                            else 0))

    def _follow_button(self) -> QToolButton:
        button = QToolButton()
        button.setText("follow data")
        button.setCheckable(True)
        button.setChecked(True)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        button.setToolTip("The plots' axes follow the data. A zoom or pan with the mouse holds "
                          "them (this button turns off); press it to follow again. A reset, a "
                          "new scene or a new solver follows again too.")
        button.toggled.connect(lambda on: self.follow() if on else None)
        return button

    @property
    def following(self) -> bool:
        """No plot is held by a zoom or pan of the user."""
        return not any(plot._held for plot in self.plots)

    def _on_hold(self) -> None:
        self.follow_button.blockSignals(True)
        self.follow_button.setChecked(False)
        self.follow_button.blockSignals(False)

    def follow(self) -> None:
        """Every plot's axes follow the data again."""
        for plot in self.plots:
            if plot._held:
                _release(plot)
        self.follow_button.blockSignals(True)
        self.follow_button.setChecked(True)
        self.follow_button.blockSignals(False)
        self._dirty = True

    def clear(self) -> None:
        """Forget the history and its markers (the clock starts again at the next world)."""
        self._rows = self._rows[:0]
        self._offset = 0.0
        self.markers = []
        self._trace = None
        self._trace_step = -1
        self._trace_alarm = ""
        self._dirty = True

    @property
    def steps_kept(self) -> int:
        """Steps in the history buffers (those the history plots show)."""
        return self._rows.shape[0]

    @property
    def _end(self) -> float:
        """The history's clock at its newest step (s)."""
        return float(self._rows[-1, 0]) if self._rows.shape[0] else self._offset

    def _note_state(self, state) -> None:
        """A new world (reset, scene) continues the history's clock; a change of scene, solver
        or a reset gets a marker, and the axes follow the data again."""
        key = (state.generation, state.scene, state.solver)
        last, self._state_key = self._state_key, key
        if last is None or key[2] != last[2]:
            # The trace is the solver's own: drawn in its colour, as in the comparison.
            pen = self.trace_curve.pen()
            pen.setColor(QColor(solver_colours([state.solver])[0]))
            self.trace_curve.setPen(pen)
        if last is None or key == last:
            return
        changes = []
        if key[1] != last[1]:
            changes.append(f"scene {key[1]}")
        elif key[0] != last[0]:
            # A new world's first frame has no history yet; the run going on from a step of
            # the history (lab.session.history_commands) has kept that step and the one made.
            changes.append("reset" if getattr(state, "history", None) is None
                           else "on from the history")
        if key[2] != last[2]:
            changes.append(key[2])
        if key[0] != last[0]:
            self._offset = self._end
        self.markers.append((self._end, ", ".join(changes)))
        self.follow()

    def add_frame(self, frame) -> None:
        """Buffer the numbers of every step of a frame (app.worker.Frame, its `records`);
        cheap, no drawing: the logarithms are taken once per step here, not per refresh."""
        state = getattr(frame, "state", None)
        if state is not None:
            self._note_state(state)
        if self.copy_curves is not None:
            self.copy_curves.add_frame(frame)
        # A step of the history shown (no step made) brings the trace of its own solve.
        if frame.trace is not None and frame.trace_step != self._trace_step:
            self._trace = frame.trace
            self._trace_step = frame.trace_step
            self._trace_alarm = getattr(frame, "trace_alarm", "")
            self._dirty = True
        span = getattr(state, "history", None)
        past = span is not None and span.back > 0 and self._trace_step == span.shown
        if past != self._trace_past:  # the title says whether the trace is the latest step's
            self._trace_past = past
            self._shown_trace_step = -3
            self._dirty = True
        if not frame.stepped:
            return
        records = np.asarray(frame.records)  # (k,) of float64 fields: a (k, fields) view
        block = records.view(np.float64).reshape(records.shape[0], -1)[:, _COLUMNS]
        block[:, 0] += self._offset
        block[:, 1] = np.log10(clamp_residual(block[:, 1]))
        ms = np.nan_to_num(1e3 * block[:, 2:], nan=MIN_MS)
        block[:, 2:] = np.log10(np.clip(ms, MIN_MS, None))
        compiling = np.asarray(records["compiled"]) != 0
        if compiling.any():  # the compiler's time, not a step's (lab.session.meters)
            block[compiling, 2:] = np.nan
            self.markers.append((float(block[compiling][-1, 0]), "compiling: time left out"))
        rows = np.concatenate((self._rows, block)) if self._rows.size else block
        # Keep only what the history plots show (as fast as possible that is a few hundred
        # steps out of thousands per second).
        first = np.searchsorted(rows[:, 0], rows[-1, 0] - HISTORY_SECONDS, side="left")
        self._rows = rows[max(first, rows.shape[0] - MAX_POINTS):]
        self.frames_added += 1
        self._dirty = True

    def refresh(self) -> None:
        """Hand the buffered data to the curves (call at >= 20 Hz from the GUI thread)."""
        # Side by side: the copies' curves instead of the trace and the history.
        side = self.copy_curves is not None and self.copy_curves.active
        if side:
            self.copy_curves.refresh()
        if not self._dirty:
            return
        self._dirty = False
        self.refreshes += 1
        if side:
            pass  # the copies' traces are drawn (CopyCurves.refresh)
        elif self._trace is not None and self._trace_step != self._shown_trace_step:
            y = np.log10(clamp_residual(self._trace))
            x = np.arange(y.size, dtype=np.float64)
            self._show_start(y)
            set_view(self.trace_plot, x, [y])
            self._shown_trace_step = self._trace_step
            self._show_alarm(x[-1] if self._trace_alarm else None, self._trace_heading())
        elif self._trace is None and self._shown_trace_step != -2:
            self.trace_curve.setData(_EMPTY, _EMPTY)
            self.trace_note.setVisible(False)
            self._show_alarm(None, TRACE_TITLE)
            self._shown_trace_step = -2
        rows = self._rows
        if rows.shape[0] == 0:
            self.history_curve.setData(_EMPTY, _EMPTY)
            for curve in self.phase_curves.values():
                curve.setData(_EMPTY, _EMPTY)
            self._draw_markers(self._end)
            return
        self.shown_time = float(rows[-1, 0])
        t = rows[:, 0] - rows[-1, 0]
        if not side:
            self.history_curve.setData(t, rows[:, 1])
            set_view(self.history_plot, t, [rows[:, 1]], history=True)
        for k, curve in enumerate(self.phase_curves.values()):
            curve.setData(t, rows[:, 2 + k], connect="finite")
        set_view(self.timing_plot, t, [rows[:, 2:]], history=True)
        self._draw_markers(float(rows[-1, 0]))

    def _show_start(self, y: np.ndarray) -> None:
        """The trace curve of log10 residuals `y`; a single one (the solve stopped before its
        first iteration: the start met the tolerance) is a cross at iteration 0, with a note."""
        if y.size > 1:
            self.trace_curve.setData(np.arange(y.size, dtype=np.float64), y)
            self.trace_note.setVisible(False)
            return
        r = y[0]
        self.trace_curve.setData(np.array([-0.1, 0.1, 0.0, 0.0]),
                                 np.array([r, r, r - 0.3, r + 0.3]), connect="pairs")
        what = "at start" if not self._trace_alarm else "stopped at start"
        self.trace_note.setText(f"{'converged' if not self._trace_alarm else 'diverged'} {what}:"
                                f" {10.0 ** r:.3g} m/s, 0 iterations")
        self.trace_note.setPos(0.0, r)
        self.trace_note.setVisible(True)

    def _trace_heading(self) -> str:
        """The trace plot's title: the latest step's, a past step's from the history, or the
        step that raised an alarm."""
        if self._trace_alarm:
            return f"residual per iteration (step {self._trace_step}: {self._trace_alarm})"
        if self._trace_past:
            return f"residual per iteration (step {self._trace_step}, from the history)"
        if self._trace is not None:  # a traced solve stops at the tolerance: its own count
            return (f"residual per iteration (step {self._trace_step}: "
                    f"{self._trace.size - 1} it)")
        return TRACE_TITLE

    def _show_alarm(self, iteration: float | None, title: str) -> None:
        """The alarm line at `iteration` (None: none) and the trace plot's title."""
        if iteration is None:
            self.alarm_line.setData(_EMPTY, _EMPTY)
        else:
            self.alarm_line.setData(np.array([iteration, iteration]),
                                    np.array([-MARKER_SPAN, MARKER_SPAN]))
        if title != self.trace_title:  # a new title re-lays the plot out
            self.trace_title = title
            self.trace_plot.setTitle(title, size="9pt")

    def _draw_markers(self, now: float) -> None:
        """Vertical lines at the markers of the last HISTORY_SECONDS (relative to `now`, the
        newest step), labelled on the residual history."""
        self.markers = [(t, label) for t, label in self.markers if t >= now - HISTORY_SECONDS]
        x = np.repeat([t - now for t, _ in self.markers], 2).astype(np.float64)
        y = np.tile([-MARKER_SPAN, MARKER_SPAN], len(self.markers)).astype(np.float64)
        for line in self._marker_lines:
            line.setData(x, y, connect="pairs")
        while len(self._marker_labels) < len(self.markers):
            label = pg.TextItem(color=MARKER_COLOUR, anchor=(0.0, 0.0))
            label.setFont(tick_font())
            self.history_plot.getViewBox().addItem(label, ignoreBounds=True)
            self._marker_labels.append(label)
        top = getattr(self.history_plot, "_shown_range", (0.0, 0.0, 0.0, 0.0))[3]
        # Labels never overlap: going back from the newest, a label is shown only if it ends
        # left of the one shown after it (its line stays, so close events still show). A
        # label that would pass the plot's right edge (a switch just made) ends at its line.
        box = self.history_plot.getViewBox()
        seconds_per_px = box.viewPixelSize()[0]
        right = box.viewRange()[0][1]
        next_left = math.inf
        for k in range(len(self._marker_labels) - 1, -1, -1):
            label = self._marker_labels[k]
            shown = k < len(self.markers)
            if shown:
                t, text = self.markers[k]
                if label.textItem.toPlainText() != text:
                    label.setText(text)
                width = label.textItem.boundingRect().width() * seconds_per_px
                left = t - now if t - now + width <= right else t - now - width
                label.setAnchor((0.0, 0.0) if left == t - now else (1.0, 0.0))
                label.setPos(t - now, top)
                shown = left + width < next_left
                if shown:
                    next_left = left
            label.setVisible(shown)

    def curve_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """What the curves currently show (x, y), for tests and the screenshot check."""
        out = {"trace": self.trace_curve.getData(), "history": self.history_curve.getData(),
               "alarm": self.alarm_line.getData()}
        out.update({f"phase:{k}": c.getData() for k, c in self.phase_curves.items()})
        if self.copy_curves is not None:
            out.update(self.copy_curves.curve_data())
        return {k: (np.asarray(x), np.asarray(y)) for k, (x, y) in out.items()}
