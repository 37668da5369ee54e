"""The live plots' curves of solvers side by side (lab.session.side_by_side): per copy, in the
copy's colour, its residual per iteration of the latest traced step and its final residual
per step over the history. While side by side they replace the plots' single trace and history
curves (copy 0 is the Session's own run), and the trace plot's title names the copies in their
colours; the step-time plot and the markers stay as they are. A part of an app.plots.LivePlots,
which makes it (LivePlots(copies=CopyCurves)) and hands it frames and refreshes."""
from __future__ import annotations

from html import escape

import numpy as np

from lab.session.side_by_side import COPY_COLOURS, MAX_COPIES

from .plots import (_EMPTY, HISTORY_SECONDS, MAX_POINTS, TRACE_TITLE, _curve, clamp_residual,
                    set_view)


TITLE_LINE = 34  # characters of copies' labels on one line of the trace plot's title


def title_names(copies) -> str:
    """The copies' labels in their colours for the trace plot's title: on one line when short,
    else two to a line (four long labels on one line widened the plots past a narrow panel)."""
    names = [f"<span style='color:{c.colour}'>■ {escape(c.label)}</span>" for c in copies]
    if sum(len(c.label) + 3 for c in copies) <= TITLE_LINE:
        return " ".join(names)
    return "<br>" + "<br>".join(" ".join(names[k:k + 2]) for k in range(0, len(names), 2))


class CopyCurves:
    """`plots`: the LivePlots that owns it (as its `copy_curves`) and whose plots it draws on.
    `labels`: the copies shown, () when none."""

    def __init__(self, plots):
        self.plots = plots
        self.trace = [_curve(plots.trace_plot, colour, width=2) for colour in COPY_COLOURS]
        self.history = [_curve(plots.history_plot, colour) for colour in COPY_COLOURS]
        self.labels: tuple[str, ...] = ()
        # One row per step side by side: the history's clock (s), then log10 of each copy's
        # residual (m/s).
        self._rows = np.empty((0, 1 + MAX_COPIES))
        self._traces: list = [None] * MAX_COPIES
        self._trace_step = -1
        self._dirty = False

    @property
    def active(self) -> bool:
        return bool(self.labels)

    def add_frame(self, frame) -> None:
        """Buffer a frame's copies (app.worker.Frame.copies): their steps' residuals (the
        steps of frame.records) and traces."""
        copies = getattr(frame, "copies", ())
        labels = tuple(c.label for c in copies)
        if labels != self.labels:
            self._start(labels, copies)
        if not copies or not frame.stepped:
            return
        times = np.asarray(frame.records.time, dtype=np.float64) + self.plots._offset
        k = min(times.size, *(c.residuals.size for c in copies))
        if k:
            block = np.full((k, 1 + MAX_COPIES), np.nan)
            block[:, 0] = times[-k:]
            for j, c in enumerate(copies):
                block[:, 1 + j] = np.log10(clamp_residual(c.residuals[-k:]))
            rows = np.concatenate((self._rows, block))
            first = np.searchsorted(rows[:, 0], rows[-1, 0] - HISTORY_SECONDS, side="left")
            self._rows = rows[max(first, rows.shape[0] - MAX_POINTS):]
        if frame.trace_step != self._trace_step:
            self._traces = [c.trace for c in copies]
            self._trace_step = frame.trace_step
        self._dirty = True

    def _start(self, labels: tuple[str, ...], copies) -> None:
        """Side by side began, changed or ended: empty buffers, the right curves shown."""
        self.labels = labels
        self._rows = self._rows[:0]
        self._traces = [None] * MAX_COPIES
        self._trace_step = -1
        self.plots.trace_curve.setVisible(not labels)
        self.plots.history_curve.setVisible(not labels)
        for curve in self.trace + self.history:
            curve.setData(_EMPTY, _EMPTY)
        title = TRACE_TITLE
        if labels:
            title = f"residual per iteration: {title_names(copies)}"
        self.plots.trace_title = title
        self.plots.trace_plot.setTitle(title, size="9pt")
        self._dirty = True

    def refresh(self) -> None:
        """Hand the buffers to the copies' curves (from LivePlots.refresh)."""
        if not self._dirty:
            return
        self._dirty = False
        ys = []
        for curve, trace in zip(self.trace, self._traces):
            if trace is None:
                curve.setData(_EMPTY, _EMPTY)
                continue
            y = np.log10(clamp_residual(trace))
            curve.setData(np.arange(y.size, dtype=np.float64), y)
            ys.append(y)
        if ys:
            longest = max(y.size for y in ys)
            set_view(self.plots.trace_plot, np.arange(longest, dtype=np.float64), ys)
        rows = self._rows
        if rows.shape[0] == 0:
            for curve in self.history:
                curve.setData(_EMPTY, _EMPTY)
            return
        t = rows[:, 0] - rows[-1, 0]
        count = len(self.labels)
        for j, curve in enumerate(self.history):
            if j < count:
                curve.setData(t, rows[:, 1 + j])
            else:
                curve.setData(_EMPTY, _EMPTY)
        set_view(self.plots.history_plot, t, [rows[:, 1:1 + count]], history=True)

    def curve_data(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """What the copies' curves show, "copy k trace" and "copy k history" for each copy."""
        out = {}
        for k in range(len(self.labels)):
            out[f"copy {k} trace"] = self.trace[k].getData()
            out[f"copy {k} history"] = self.history[k].getData()
        return out
