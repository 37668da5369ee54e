"""Plot axes whose tick labels never overlap, on linear and on log scales, shared by the live
plots and the comparison window.

pyqtgraph always labels its first tick level and labels the next ones while the labels fill
less than a share of the axis; it never checks that two labels overlap. On a log axis spanning
less than a decade or so its second level (2, 3, ... 9 times a power of ten) crowds at the top
of each decade and the labels smear together, and a narrow plot overlaps even the first level.
`FitAxis` picks its ticks itself: a label is kept only where it does not come within its own
extent (height on a vertical axis, width on a horizontal one, plus a gap) of a label kept
before it, taking the coarser candidates first; the rest of the candidates become unlabelled
minor ticks.
"""
from __future__ import annotations

import math

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

TICK_POINTS = 8  # tick label font size, points
GAP_EM = 0.8  # at least this much space between two labels, in widths of an "M"
_STEPS = (1.0, 2.0, 5.0)  # linear tick spacings are these times a power of ten
_UNLABELLED = -1.0  # the "spacing" of the minor level; tickStrings gives it no text


def tick_font() -> QFont:
    font = QFont()
    font.setPointSize(TICK_POINTS)
    return font


def log_label(value: float) -> str:
    """A tick label of a log axis at log10 value `value`: '1e-5', '0.3', '20', '500', '2e4'."""
    if abs(value - round(value)) < 1e-9:
        exponent = int(round(value))
        return f"1e{exponent}" if not -2 <= exponent <= 3 else f"{10.0 ** exponent:g}"
    x = float(f"{10.0 ** value:.2g}")  # two significant digits
    if 1e-3 <= x < 1e4:
        return f"{x:g}"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def linear_label(value: float, spacing: float) -> str:
    places = max(0, math.ceil(-math.log10(spacing))) if spacing > 0 else 0
    if abs(value) < 1e-9 * spacing:
        return "0"
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:g}"
    return f"{value:.{places}f}"


class FitAxis(pg.AxisItem):
    """A pyqtgraph axis whose labels keep apart (see the module docstring). Works in both
    modes of the plot (`setLogMode`); `labelled(size)` says which labels it draws at an axis
    length of `size` pixels, for tests and to check by eye."""

    def __init__(self, orientation: str, **kw):
        super().__init__(orientation, **kw)
        self.setStyle(tickFont=tick_font())
        self._metrics = QFontMetricsF(tick_font())

    # ------------------------------------------------------------------------- measuring
    def _extent(self, text: str) -> float:
        """Pixels a label takes along the axis, with the gap to the next one."""
        gap = GAP_EM * self._metrics.horizontalAdvance("M")
        if self.orientation in ("left", "right"):
            return self._metrics.height() + 0.5 * gap
        return self._metrics.horizontalAdvance(text) + gap

    def _keep_apart(self, candidates: list[tuple[float, str]], lo: float, hi: float,
                    size: float) -> list[float]:
        """Of (value, label) candidates in priority order, those whose label fits on the axis
        and stays clear of every label kept before (label extents centred on the value's
        pixel). pyqtgraph drops a label that sticks out of the axis, so one at the very end
        would leave a gap that a label further in could have filled."""
        scale = size / (hi - lo)
        kept: list[tuple[float, float]] = []  # (pixel, half extent)
        out = []
        for value, text in candidates:
            pixel = (value - lo) * scale
            half = 0.5 * self._extent(text)
            ink = half - 0.5 * GAP_EM * self._metrics.horizontalAdvance("M")
            if not ink <= pixel <= size - ink:
                continue
            if all(abs(pixel - p) >= half + h for p, h in kept):
                kept.append((pixel, half))
                out.append(value)
        return sorted(out)

    # --------------------------------------------------------------------------- ticks
    def tickValues(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803
        lo, hi = sorted((float(minVal), float(maxVal)))
        if not (size > 0 and hi > lo and math.isfinite(lo) and math.isfinite(hi)):
            return []
        if self.logMode:
            return self._log_ticks(lo, hi, size)
        return self._linear_ticks(lo * self.scale, hi * self.scale, size)

    def _log_ticks(self, lo: float, hi: float, size: float):
        """Powers of ten first (every 1st, 2nd, 5th, ... when crowded), then 2, 3, 5 times
        them, then the other multiples; what is not labelled is a minor tick."""
        decades = list(range(math.floor(lo), math.ceil(hi) + 1))
        powers = [float(d) for d in decades]
        every = next((k for k in (1, 2, 3, 5, 10, 20, 50, 100)
                      if k * size / (hi - lo) >= self._extent("1e-10")), 100)
        firsts = [p for p in powers if int(p) % every == 0]
        candidates = [(v, log_label(v)) for v in firsts + powers]
        multiples = [d + math.log10(k) for k in (2, 5, 3, 4, 6, 7, 8, 9) for d in decades]
        if every == 1:
            candidates += [(v, log_label(v)) for v in multiples]
        labelled = self._keep_apart(candidates, lo, hi, size)
        if len(labelled) < 2:  # a small part of a decade: plain numbers, evenly spaced
            candidates += [(math.log10(v), f"{v:.3g}") for v in _nice_values(
                10.0 ** lo, 10.0 ** hi, 2 * max(2, int(size / self._extent("0.000"))))]
            labelled = self._keep_apart(candidates, lo, hi, size)
        minor = [v for v in powers + multiples if lo <= v <= hi and v not in labelled]
        return [(1.0, labelled), (_UNLABELLED, sorted(minor))]

    def _linear_ticks(self, lo: float, hi: float, size: float):
        """The finest spacing of 1, 2 or 5 times a power of ten whose labels all fit."""
        span = hi - lo
        power = 10.0 ** math.floor(math.log10(span) - 2)
        for _ in range(12):
            for step in _STEPS:
                spacing = step * power
                values = np.arange(math.ceil(lo / spacing), math.floor(hi / spacing) + 1) * spacing
                texts = [linear_label(v, spacing) for v in values]
                widest = max((self._extent(t) for t in texts), default=0.0)
                if values.size <= 1 or spacing * size / span >= widest:
                    minor = np.arange(math.ceil(lo / (spacing / 5)),
                                      math.floor(hi / (spacing / 5)) + 1) * (spacing / 5)
                    minor = [float(v) for v in minor
                             if np.min(np.abs(values - v), initial=np.inf) > 1e-9 * spacing]
                    return [(spacing / self.scale, [float(v) / self.scale for v in values]),
                            (_UNLABELLED, [v / self.scale for v in minor])]
            power *= 10.0
        return []

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        if spacing == _UNLABELLED:
            return [""] * len(values)
        if self.logMode:
            return [log_label(v) for v in values]
        return [linear_label(v * scale, spacing * scale) for v in values]

    def labelled(self, size: float | None = None) -> list[str]:
        """The labels drawn at the current range (at axis length `size` px, default the
        axis's own)."""
        lo, hi = self.range
        size = size if size is not None else (
            self.geometry().height() if self.orientation in ("left", "right")
            else self.geometry().width())
        levels = self.tickValues(lo, hi, size)
        return [text for spacing, values in levels
                for text in self.tickStrings(values, 1.0, spacing) if text]


def _nice_values(lo: float, hi: float, count: int) -> list[float]:
    """Multiples of 1, 2 or 5 times a power of ten in [lo, hi], about `count` of them (at
    least as coarse as that); lo > 0."""
    raw = (hi - lo) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    spacing = next(step * power for step in (1.0, 2.0, 5.0, 10.0) if step * power >= raw)
    first = math.ceil(lo / spacing)
    return [k * spacing for k in range(first, math.floor(hi / spacing) + 1) if k * spacing > 0]


def fit_axes() -> dict:
    """axisItems for a PlotItem: left and bottom FitAxis."""
    return {"left": FitAxis("left"), "bottom": FitAxis("bottom")}
