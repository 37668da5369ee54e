"""The plot window of a solver comparison: residual against iterations and against solve
time, both log scale, each solver in its colour and dashes of lab.report.palette (the same as
in benchmark.png), the legend in a row of its own under the plots, where the files were
written, and "Save figure" (an image of the window, written atomically like every output).

The time axis is logarithmic: the slowest solver (pgs-sm, up to a second) otherwise squashed
the other nine against x = 0. The start of each curve (no iteration yet, at 0 ms) has no place
on it and is left out of that panel.

A click on a solver's legend entry (its line or its name) hides it in both plots, or shows it
again, and the axes take the range of the curves shown. The residual axis is clipped where a
single curve goes on alone (palette.residual_range: pgs-sm's 1e-14 against the others' 1e-4),
and the time axis ends 15% after the last shown solver reached its best within that range
(figures.time_axis_end); "all residuals" shows everything.
"""
from __future__ import annotations

from pathlib import Path

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from lab.io.files import OutputError
from lab.report.figures import time_axis_end
from lab.report.palette import PLOT_BACKGROUND, SolverStyle, residual_range, solver_styles
from lab.session.comparison import ended

from . import dialogs
from .axes import fit_axes
from .images import write_image
from .plots import clamp_residual

FIGURE_NAME = "benchmark-window.png"
PEN_WIDTH = 2  # px
PAD = 0.03  # of each axis's span, around the curves


def solver_pen(style: SolverStyle) -> pg.QtGui.QPen:
    """The pen of a solver of lab.report.palette's `style`: its colour, PEN_WIDTH px, its
    dashes (in pen widths, as Qt counts them)."""
    pen = pg.mkPen(style.colour, width=PEN_WIDTH)
    if style.dashes is not None:
        pen.setDashPattern(list(style.dashes))
        pen.setDashOffset(style.offset)
    return pen


class _Sample(pg.ItemSample):
    """A legend entry's line that leaves the toggling to the window (both plots at once)."""

    def mouseClickEvent(self, event):  # noqa: N802 (pyqtgraph name)
        event.accept()


class BenchmarkWindow(QWidget):
    """Top-level window; `closed` is emitted when the user closes it (the main window waits for
    it on close). table: lab.report.compare.ComparisonTable; meta: the benchmark.json extras."""

    closed = Signal()

    def __init__(self, table, paths: list[str], meta: dict, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self.table = table
        self.paths = list(paths)
        scene = meta.get("scene", "?")
        title = (f"Solver comparison: {scene}, step {meta.get('step', '?')}, "
                 f"{table.meta.get('contacts', '?')} contacts, "
                 f"{table.residual.shape[1] - 1} iterations")
        self.setWindowTitle(f"marbles: {title}")
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground(PLOT_BACKGROUND)
        self.by_iteration = self._plot(0, "residual against iterations", "iteration", False)
        self.by_time = self._plot(1, "residual against solve time", "solve time (ms, log)", True)
        self.legend = pg.LegendItem(colCount=7, labelTextSize="9pt", sampleType=_Sample)
        self.canvas.addItem(self.legend, row=1, col=0, colspan=2)
        self.curves: dict[str, tuple] = {}
        self.times_ms: dict[str, np.ndarray] = {}  # the timed points, kept apart from the
        # curve because pyqtgraph gives no array back for an empty curve
        self._draw(table)
        self.canvas.scene().sigMouseClicked.connect(self._legend_clicked)
        ending = ended(table).strip(" ()")  # cancelled; solvers stopped at their budget
        header = QLabel(f"<b>{title}</b><br>metric: {table.meta.get('metric', '')}<br>"
                        + (f"{ending}<br>" if ending else "")
                        + f"written: {', '.join(paths) if paths else '(not written)'}; "
                        "Esc or Ctrl+W closes this window")
        self.header = header
        header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        header.setWordWrap(True)
        self.save_button = QPushButton("Save figure…")
        self.save_button.clicked.connect(lambda: self.save_figure())
        self.show_all = QCheckBox("all residuals")
        self.show_all.setToolTip("Unchecked, the residual axis is cut where a single curve goes "
                                 "on alone, a decade past the next one, and the time axis "
                                 "soon after the last solver's best; checked, both show "
                                 "every point.")
        self.show_all.toggled.connect(lambda _: self.rescale())
        self.status = QLabel("")
        top = QHBoxLayout()
        top.addWidget(header, 1)
        top.addWidget(self.show_all, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.status)
        self.resize(1100, 560)
        for key in (QKeySequence(Qt.Key.Key_Escape), QKeySequence(QKeySequence.StandardKey.Close)):
            QShortcut(key, self, activated=self.close)
        QShortcut(QKeySequence(QKeySequence.StandardKey.Save), self,
                  activated=lambda: self.save_figure())
        self.rescale()

    def _plot(self, col: int, title: str, x_label: str, log_x: bool) -> pg.PlotItem:
        item = self.canvas.addPlot(row=0, col=col, axisItems=fit_axes())
        item.setTitle(title)
        item.setLabel("bottom", x_label)
        item.setLabel("left", "natural-map residual (m/s)")
        item.setLogMode(x=log_x, y=True)
        item.showGrid(x=True, y=True, alpha=0.3)
        for axis in ("left", "bottom"):
            item.getAxis(axis).enableAutoSIPrefix(False)
        return item

    def _draw(self, table) -> None:
        """One curve per solver in each plot, in table order (the later of two coinciding
        curves on top, dashed), one legend entry per solver."""
        it = np.arange(table.residual.shape[1], dtype=np.float64)
        styles = solver_styles(list(table.solvers), table.residual)
        for k, name in enumerate(table.solvers):
            pen = solver_pen(styles[k])
            y = clamp_residual(table.residual[k])
            ms = 1e3 * np.asarray(table.seconds[k], dtype=np.float64)
            timed = np.isfinite(ms) & (ms > 0)  # a log axis has no place for t = 0
            a = self.by_iteration.plot(it, y, pen=pen)
            b = self.by_time.plot(ms[timed], y[timed], pen=pen)
            self.legend.addItem(a, name)
            self.curves[name] = (a, b)
            self.times_ms[name] = ms[timed]

    def shown(self) -> list[str]:
        """The solvers whose curves are shown, in table order."""
        return [name for name, (a, _) in self.curves.items() if a.isVisible()]

    def toggle(self, name: str) -> None:
        """Hide solver `name` in both plots, or show it again; the axes follow."""
        visible = not self.curves[name][0].isVisible()
        for curve in self.curves[name]:
            curve.setVisible(visible)
        for sample, _ in self.legend.items:
            if sample.item is self.curves[name][0]:
                sample.update()  # its line, or the eye that says it is hidden
        self.rescale()

    def _legend_clicked(self, event) -> None:
        """A left click on a legend entry's line or name toggles that solver."""
        if event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        at = event.scenePos()
        for sample, label in self.legend.items:
            if sample.sceneBoundingRect().contains(at) or label.sceneBoundingRect().contains(at):
                name = next(n for n, (a, _) in self.curves.items() if a is sample.item)
                self.toggle(name)
                return

    def rescale(self) -> None:
        """Both plots to the shown curves: the residual range of palette.residual_range
        (clipped unless "all residuals" is checked) and, clipped, the time axis cut after the
        last solver's best (figures.time_axis_end); nothing changes when none is shown."""
        names = self.shown()
        if not names:
            return
        clip = not self.show_all.isChecked()
        rows = [self.table.solvers.index(n) for n in names]
        low, high = residual_range([self.curves[n][0].yData for n in names], clip=clip)
        if high <= low:  # flat curves: a decade either side rather than a span of zero
            low, high = low / 10.0, high * 10.0
        y = (np.log10(low), np.log10(high))
        times = np.concatenate([self.times_ms[n] for n in names])
        self.by_iteration.setRange(xRange=(0, self.table.residual.shape[1] - 1), yRange=y,
                                   padding=PAD)
        if times.size:
            end = time_axis_end(self.table, low, rows) if clip else None
            right = 1e3 * end if end is not None else float(times.max())
            self.by_time.setRange(xRange=(np.log10(times.min()), np.log10(right)), yRange=y,
                                  padding=PAD)

    def default_figure_path(self) -> str:
        """Beside the benchmark files when they were written, named after them
        (benchmark-<time>-window.png), else FIGURE_NAME in the current folder."""
        if not self.paths:
            return str(Path(".") / FIGURE_NAME)
        first = Path(self.paths[0])
        return str(first.with_name(f"{first.stem}-window.png"))

    def save_figure(self, path: str | None = None) -> bool:
        """The window's plots and header as a PNG (or .jpg) at `path` (asked in a dialog when
        None), written atomically; the outcome is one line under the plots."""
        if path is None:
            path = dialogs.ask_save_path(self, "Save the comparison figure",
                                         self.default_figure_path(), dialogs.IMAGES)
            if not path:
                return False
        try:
            write_image(self.grab().toImage(), path)
        except OutputError as err:
            self.status.setText(f"figure not saved: {err}")
            return False
        self.status.setText(f"figure saved: {path}")
        return True

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().closeEvent(event)
        self.closed.emit()
