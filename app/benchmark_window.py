"""The plot window of a solver comparison: residual against iterations and against solve
time, both log scale, one colour of the program's palette per solver
(lab.session.colours.PALETTE, a dash pattern beyond the tenth), the legend in a row of its own
under the plots, where the files were written, and "Save figure" (an image of the window,
written atomically like every output).

The time axis is logarithmic: the slowest solver (pgs-sm, up to a second) otherwise squashed
the other nine against x = 0. The start of each curve (no iteration yet, at 0 ms) has no place
on it and is left out of that panel.
"""
from __future__ import annotations

from pathlib import Path

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from lab.io.files import OutputError
from lab.session.colours import PLOT_BACKGROUND, series_style

from . import dialogs
from .axes import fit_axes
from .images import write_image
from .plots import clamp_residual

_DASH = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine,
         "dot": Qt.PenStyle.DotLine, "dashdot": Qt.PenStyle.DashDotLine}
FIGURE_NAME = "benchmark-window.png"


def solver_pen(k: int) -> pg.QtGui.QPen:
    """The pen of the k-th solver: its palette colour and line style, 2 px."""
    colour, style = series_style(k)
    return pg.mkPen(colour, width=2, style=_DASH[style])


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
        self.legend = pg.LegendItem(colCount=5, labelTextSize="9pt")
        self.canvas.addItem(self.legend, row=1, col=0, colspan=2)
        self.curves: dict[str, tuple] = {}
        self._draw(table)
        header = QLabel(f"<b>{title}</b><br>metric: {table.meta.get('metric', '')}<br>"
                        f"written: {', '.join(paths) if paths else '(not written)'}")
        header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        header.setWordWrap(True)
        self.save_button = QPushButton("Save figure…")
        self.save_button.clicked.connect(lambda: self.save_figure())
        self.status = QLabel("")
        top = QHBoxLayout()
        top.addWidget(header, 1)
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
        """One curve per solver in each plot, one legend entry per solver."""
        it = np.arange(table.residual.shape[1], dtype=np.float64)
        for k, name in enumerate(table.solvers):
            pen = solver_pen(k)
            y = clamp_residual(table.residual[k])
            ms = 1e3 * np.asarray(table.seconds[k], dtype=np.float64)
            timed = np.isfinite(ms) & (ms > 0)  # a log axis has no place for t = 0
            a = self.by_iteration.plot(it, y, pen=pen)
            b = self.by_time.plot(ms[timed], y[timed], pen=pen)
            self.legend.addItem(a, name)
            self.curves[name] = (a, b)

    def default_figure_path(self) -> str:
        """Beside the benchmark files when they were written, else in the current folder."""
        folder = Path(self.paths[0]).parent if self.paths else Path(".")
        return str(folder / FIGURE_NAME)

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
