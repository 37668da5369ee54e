"""Live convergence plots docked beside the view (pyqtgraph, log scale).

Three plots: the residual after each iteration of the latest traced step; the final residual of
every step over the last `HISTORY_SECONDS` of simulated time; the time of each step phase.
`add_frame` only appends to buffers, which keep just the steps the plots show (it runs for every
frame the worker sends); `refresh`, called by a GUI timer at 20 Hz or more, hands the buffers to
pyqtgraph, so drawing cost does not grow with the simulation rate. The history plots' time axis
is relative to the newest step (−10 s to 0, like an oscilloscope rolling), so it never moves:
with an absolute axis, stepping as fast as possible scrolled it on every refresh, and laying
out an axis (tick text, grid) was the costliest part of a refresh. Residuals are clamped to
`FLOOR` because a log axis cannot show zero.
"""
from __future__ import annotations

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsPathItem, QGraphicsView, QVBoxLayout,
                               QWidget)

from lab.session import RECORD_FIELDS

FLOOR = 1e-16  # m/s: the smallest residual drawn (exact zeros appear at convergence)
CEILING = 1e30  # m/s: the largest (a divergence's inf is drawn here)
HISTORY_SECONDS = 10.0  # s of simulated time in the history plots
MAX_POINTS = 20000  # steps kept at most (10 s of steps unless dt < 0.5 ms)
SHRINK_AFTER = 25  # updates (1 s at 25 Hz) a log axis keeps unused decades before it narrows
MIN_MS = 1e-6  # ms: the shortest phase time drawn (log axis)
_EMPTY = np.zeros(0)
TIME_LABEL = "simulated time before the latest step (s)"
PHASES = ("collide", "assemble", "solve", "integrate")
HISTORY_COLOUR = "#06d6a0"
PHASE_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2")
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


def _plot(canvas: pg.GraphicsLayoutWidget, row: int, title: str, x_label: str, y_label: str,
          log_y: bool = True) -> pg.PlotItem:
    """A plot in row `row` of `canvas`: all three share one QGraphicsView, so a refresh is one
    paint event, not three (each one walks its scene's items through Python)."""
    item = canvas.addPlot(row=row, col=0)
    item.setTitle(title, size="9pt")
    item.setLabel("bottom", x_label)
    item.setLabel("left", y_label)
    item.setLogMode(x=False, y=log_y)
    item.showGrid(x=True, y=True, alpha=0.25)
    for axis in ("left", "bottom"):
        item.getAxis(axis).enableAutoSIPrefix(False)  # "(x0.001)" on a log axis misleads
        # With the grid on, an axis item spans the whole plot, so every curve update repainted
        # it (replaying its tick text and grid: about 5 ms each, six per refresh). Cached as a
        # pixmap, it is redrawn only when its range or size changes.
        item.getAxis(axis).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    item.setMenuEnabled(False)
    # Ranges are set once per refresh (set_view); pyqtgraph's own auto-range would repaint
    # again a moment later.
    box = item.getViewBox()
    box.disableAutoRange()
    # What pyqtgraph defers to just before a paint (_Canvas): both signals follow every
    # change that leaves the transform stale.
    box.sigRangeChanged.connect(box.prepareForPaint)
    box.sigStateChanged.connect(box.prepareForPaint)
    # A zoom or pan with the mouse holds the range the user chose; the "A" button (auto
    # range) gives the plot back to set_view. The curves have no bounds for pyqtgraph's own
    # auto range (_curve), so the button's own action would show nothing useful.
    item._held = False
    item.sigRangeChangedManually.connect(lambda *_: setattr(item, "_held", True))
    item.autoBtn.clicked.connect(lambda *_: _release(item))
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
    no path stroking (a wider pen went through Qt's path stroker: painting a refresh took
    5.2 ms against 3.0), and bounds that are the points' own. The trace, of a few dozen
    points, can afford width 2."""

    def __init__(self, colour: str, width: int = 0):
        super().__init__()
        pen = QPen(QColor(colour), width)
        pen.setCosmetic(True)  # width in device pixels, not in data units
        self.setPen(pen)
        self.x = self.y = _EMPTY

    def setData(self, x: np.ndarray, y: np.ndarray) -> None:  # noqa: N802 (pyqtgraph's name)
        """x, y: (k,) float64, in view coordinates."""
        self.x, self.y = x, y
        self.setPath(pg.arrayToQPath(x, y, finiteCheck=False) if x.size else QPainterPath())

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
        sample = pg.PlotDataItem(pen=pg.mkPen(colour, width=1))
        sample.visibleChanged.connect(lambda: curve.setVisible(sample.isVisible()))
        legend.addItem(sample, name)
        curve.sample = sample
    return curve


def _log_span(log_y: np.ndarray) -> tuple[float, float]:
    """Whole decades around values given as log10 (finite), as bounds for a log axis."""
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
    """The dock's content. Counters `frames_added` and `refreshes` let tests see data flow."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.canvas = _Canvas()
        self.canvas.setBackground("#15151c")
        self.canvas.setMinimumHeight(3 * 140)
        # Keys belong to the hotkey map (MainWindow.keyPressEvent): a focused plot would take
        # some itself (its view box zooms on + and -).
        self.canvas.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.trace_plot = _plot(self.canvas, 0, "residual per iteration (latest step)",
                                "iteration", "residual (m/s)")
        self.history_plot = _plot(self.canvas, 1, "final residual per step", TIME_LABEL,
                                  "residual (m/s)")
        self.timing_plot = _plot(self.canvas, 2, "step time by phase", TIME_LABEL, "time (ms)")
        # Curves painted by Qt, fed log10 values (_Curve): PlotDataItem (what PlotItem.plot
        # makes) redoes the log mapping, the bounds and a scatter item in Python on every
        # setData, and paints in Python.
        self.trace_curve = _curve(self.trace_plot, "#ffd166", width=2)
        self.history_curve = _curve(self.history_plot, HISTORY_COLOUR)
        # On a backdrop, so the entries stay legible over the curves; cached as a pixmap, so
        # it is painted (in Python) once, not on every refresh of the curves beneath it.
        legend = self.timing_plot.addLegend(offset=(-5, 5), labelTextSize="8pt",
                                            brush=pg.mkBrush(21, 21, 28, 210))
        legend.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.phase_curves = {name: _curve(self.timing_plot, colour, legend, name)
                             for name, colour in zip(PHASES, PHASE_COLOURS)}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.canvas)
        # One row per step kept: simulated time (s), then log10 of the residual (m/s) and of
        # each phase's time (ms), ready for the curves.
        self._rows = np.empty((0, 2 + len(PHASES)))
        self._trace: np.ndarray | None = None
        self._trace_step = -1
        self._shown_trace_step = -2
        self._dirty = False
        self.frames_added = 0
        self.refreshes = 0
        self.shown_time = float("nan")  # simulated time of the latest step shown (s)

    def clear(self) -> None:
        """Forget the history (a new scene or a reset starts the clock again)."""
        self._rows = self._rows[:0]
        self._trace = None
        self._trace_step = -1
        self._dirty = True

    @property
    def steps_kept(self) -> int:
        """Steps in the history buffers (those the history plots show)."""
        return self._rows.shape[0]

    def add_frame(self, frame) -> None:
        """Buffer the numbers of every step of a frame (app.worker.Frame, its `records`);
        cheap, no drawing: the logarithms are taken once per step here, not per refresh."""
        if not frame.stepped:
            return
        records = np.asarray(frame.records)  # (k,) of float64 fields: a (k, fields) view
        block = records.view(np.float64).reshape(records.shape[0], -1)[:, _COLUMNS]
        block[:, 1] = np.log10(clamp_residual(block[:, 1]))
        ms = np.nan_to_num(1e3 * block[:, 2:], nan=MIN_MS)
        block[:, 2:] = np.log10(np.clip(ms, MIN_MS, None))
        rows = np.concatenate((self._rows, block)) if self._rows.size else block
        # Keep only what the history plots show (as fast as possible that is a few hundred
        # steps out of thousands per second).
        first = np.searchsorted(rows[:, 0], rows[-1, 0] - HISTORY_SECONDS, side="left")
        self._rows = rows[max(first, rows.shape[0] - MAX_POINTS):]
        if frame.trace is not None and frame.trace_step != self._trace_step:
            self._trace = frame.trace
            self._trace_step = frame.trace_step
        self.frames_added += 1
        self._dirty = True

    def refresh(self) -> None:
        """Hand the buffered data to the curves (call at >= 20 Hz from the GUI thread)."""
        if not self._dirty:
            return
        self._dirty = False
        self.refreshes += 1
        if self._trace is not None and self._trace_step != self._shown_trace_step:
            y = np.log10(clamp_residual(self._trace))
            x = np.arange(y.size, dtype=np.float64)
            self.trace_curve.setData(x, y)
            set_view(self.trace_plot, x, [y])
            self._shown_trace_step = self._trace_step
        elif self._trace is None and self._shown_trace_step != -2:
            self.trace_curve.setData(_EMPTY, _EMPTY)
            self._shown_trace_step = -2
        rows = self._rows
        if rows.shape[0] == 0:
            self.history_curve.setData(_EMPTY, _EMPTY)
            for curve in self.phase_curves.values():
                curve.setData(_EMPTY, _EMPTY)
            return
        self.shown_time = float(rows[-1, 0])
        t = rows[:, 0] - rows[-1, 0]
        self.history_curve.setData(t, rows[:, 1])
        set_view(self.history_plot, t, [rows[:, 1]], history=True)
        for k, curve in enumerate(self.phase_curves.values()):
            curve.setData(t, rows[:, 2 + k])
        set_view(self.timing_plot, t, [rows[:, 2:]], history=True)

    def curve_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """What the curves currently show (x, y), for tests and the screenshot check."""
        out = {"trace": self.trace_curve.getData(), "history": self.history_curve.getData()}
        out.update({f"phase:{k}": c.getData() for k, c in self.phase_curves.items()})
        return {k: (np.asarray(x), np.asarray(y)) for k, (x, y) in out.items()}
