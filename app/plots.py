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

from collections import deque

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

FLOOR = 1e-16  # m/s: the smallest residual drawn (exact zeros appear at convergence)
CEILING = 1e30  # m/s: the largest (a divergence's inf is drawn here)
HISTORY_SECONDS = 10.0  # s of simulated time in the history plots
MAX_POINTS = 20000  # steps kept at most (10 s of steps unless dt < 0.5 ms)
TIME_LABEL = "simulated time before the latest step (s)"
PHASES = ("collide", "assemble", "solve", "integrate")
PHASE_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2")


def clamp_residual(values) -> np.ndarray:
    """Residuals ready for a log axis: NaN/inf and zeros become finite positive values."""
    a = np.asarray(values, dtype=np.float64)
    a = np.nan_to_num(a, nan=CEILING, posinf=CEILING, neginf=FLOOR)
    return np.clip(a, FLOOR, CEILING)


def _plot(title: str, x_label: str, y_label: str, log_y: bool = True) -> pg.PlotWidget:
    w = pg.PlotWidget()
    w.setBackground("#15151c")
    item = w.getPlotItem()
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
    item.getViewBox().disableAutoRange()
    w.setMinimumHeight(140)
    return w


def _log_span(y: np.ndarray) -> tuple[float, float]:
    """Whole decades around positive values y, as log10 bounds for a log axis."""
    finite = y[np.isfinite(y) & (y > 0)]
    if finite.size == 0:
        return -1.0, 1.0
    lo = np.floor(np.log10(finite.min()))
    hi = np.ceil(np.log10(finite.max()))
    return float(lo), float(max(hi, lo + 1.0))


def set_view(widget: pg.PlotWidget, x: np.ndarray, ys: list[np.ndarray],
             history: bool = False) -> None:
    """Show x's span and the decades of all ys in one range change (a single repaint).

    history: x is time relative to the latest step, shown over the fixed span
    [−HISTORY_SECONDS, 0]. The range is only set when it differs from the one shown: a range
    change re-lays the axes (tick text included), the costliest part of a refresh."""
    if x.size == 0:
        return
    if history:
        lo, hi = -HISTORY_SECONDS, 0.0
    else:
        lo, hi = ((float(x[0]), float(x[-1])) if x.size > 1
                  else (float(x[0]) - 1, float(x[0]) + 1))
    if hi <= lo:
        hi = lo + 1.0
    ylo, yhi = _log_span(np.concatenate(ys)) if ys else (-1.0, 1.0)
    shown = (lo, hi, ylo, yhi)
    if getattr(widget, "_shown_range", None) == shown:
        return
    widget._shown_range = shown
    widget.getPlotItem().getViewBox().setRange(xRange=(lo, hi), yRange=(ylo, yhi), padding=0.02)


class LivePlots(QWidget):
    """The dock's content. Counters `frames_added` and `refreshes` let tests see data flow."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.trace_plot = _plot("residual per iteration (latest step)", "iteration",
                                "residual (m/s)")
        self.history_plot = _plot("final residual per step", TIME_LABEL, "residual (m/s)")
        self.timing_plot = _plot("step time by phase", TIME_LABEL, "time (ms)")
        self.trace_curve = self.trace_plot.plot(pen=pg.mkPen("#ffd166", width=2),
                                                symbol="o", symbolSize=4, symbolBrush="#ffd166")
        # One-pixel lines for the curves of hundreds of points: a wider pen goes through Qt's
        # path stroker (painting a refresh took 5.2 ms against 3.0 with these pens); the
        # 21-point trace keeps its width and its symbols.
        self.history_curve = self.history_plot.plot(pen=pg.mkPen("#06d6a0", width=1))
        self.timing_plot.addLegend(offset=(-5, 5), labelTextSize="8pt")
        self.phase_curves = {name: self.timing_plot.plot(pen=pg.mkPen(colour, width=1),
                                                         name=name)
                             for name, colour in zip(PHASES, PHASE_COLOURS)}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        for w in (self.trace_plot, self.history_plot, self.timing_plot):
            layout.addWidget(w)
        self._time: deque[float] = deque(maxlen=MAX_POINTS)
        self._residual: deque[float] = deque(maxlen=MAX_POINTS)
        self._phases = {name: deque(maxlen=MAX_POINTS) for name in PHASES}
        self._trace: np.ndarray | None = None
        self._trace_step = -1
        self._shown_trace_step = -2
        self._dirty = False
        self.frames_added = 0
        self.refreshes = 0
        self.shown_time = float("nan")  # simulated time of the latest step shown (s)

    def clear(self) -> None:
        """Forget the history (a new scene or a reset starts the clock again)."""
        self._time.clear()
        self._residual.clear()
        for d in self._phases.values():
            d.clear()
        self._trace = None
        self._trace_step = -1
        self._dirty = True

    def add_frame(self, frame) -> None:
        """Buffer the numbers of every step of a frame (app.worker.Frame, its `records`);
        cheap, no drawing."""
        if not frame.stepped:
            return
        for record in frame.records:
            self._time.append(record.time)
            self._residual.append(record.residual)
            for name in PHASES:
                self._phases[name].append(1e3 * record.timings.get(name, np.nan))
        # Keep only what the history plots show (as fast as possible that is a few hundred
        # steps out of thousands per second).
        oldest = self._time[-1] - HISTORY_SECONDS if self._time else 0.0
        while self._time and self._time[0] < oldest:
            self._time.popleft()
            self._residual.popleft()
            for d in self._phases.values():
                d.popleft()
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
            y = clamp_residual(self._trace)
            x = np.arange(y.size, dtype=np.float64)
            self.trace_curve.setData(x, y)
            set_view(self.trace_plot, x, [y])
            self._shown_trace_step = self._trace_step
        elif self._trace is None:
            self.trace_curve.setData([], [])
            self._shown_trace_step = -2
        if not self._time:
            self.history_curve.setData([], [])
            for curve in self.phase_curves.values():
                curve.setData([], [])
            return
        t = np.fromiter(self._time, dtype=np.float64, count=len(self._time))
        self.shown_time = float(t[-1])
        t -= t[-1]
        r = clamp_residual(np.fromiter(self._residual, dtype=np.float64,
                                       count=len(self._residual)))
        self.history_curve.setData(t, r)
        set_view(self.history_plot, t, [r], history=True)
        phases = []
        for name, curve in self.phase_curves.items():
            d = self._phases[name]
            ms = np.fromiter(d, dtype=np.float64, count=len(d))
            ms = np.clip(np.nan_to_num(ms, nan=1e-6), 1e-6, None)
            curve.setData(t, ms)
            phases.append(ms)
        set_view(self.timing_plot, t, phases, history=True)

    def curve_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """What the curves currently show (x, y), for tests and the screenshot check."""
        out = {"trace": self.trace_curve.getData(), "history": self.history_curve.getData()}
        out.update({f"phase:{k}": c.getData() for k, c in self.phase_curves.items()})
        return {k: (np.asarray(x if x is not None else []), np.asarray(y if y is not None else []))
                for k, (x, y) in out.items()}
