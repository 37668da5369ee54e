"""The plot window of a solver comparison (issue 5): residual against iterations and against
milliseconds, log scale, one colour per solver, a legend, and where the files were written."""
from __future__ import annotations

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .plots import clamp_residual


def solver_colours(count: int) -> list:
    """`count` well separated colours (pyqtgraph's hue wheel)."""
    return [pg.intColor(k, hues=max(count, 1), values=1, maxValue=255, minValue=150,
                        sat=200) for k in range(count)]


class BenchmarkWindow(QWidget):
    """Top-level window; `closed` is emitted when the user closes it (the main window waits for
    it on close). table: solver.compare.ComparisonTable; meta: the benchmark.json extras."""

    closed = Signal()

    def __init__(self, table, paths: list[str], meta: dict, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Window)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        self.table = table
        scene = meta.get("scene", "?")
        title = (f"Solver comparison: {scene}, step {meta.get('step', '?')}, "
                 f"{table.meta.get('contacts', '?')} contacts, "
                 f"{table.residual.shape[1] - 1} iterations")
        self.setWindowTitle(f"marbles: {title}")
        self.by_iteration = self._plot("residual against iterations", "iteration")
        self.by_time = self._plot("residual against time", "solve time (ms)")
        self.curves: dict[str, tuple] = {}
        colours = solver_colours(len(table.solvers))
        it = np.arange(table.residual.shape[1], dtype=np.float64)
        for k, name in enumerate(table.solvers):
            pen = pg.mkPen(colours[k], width=2)
            y = clamp_residual(table.residual[k])
            a = self.by_iteration.plot(it, y, pen=pen, name=name)
            b = self.by_time.plot(1e3 * table.seconds[k], y, pen=pen, name=name)
            self.curves[name] = (a, b)
        header = QLabel(f"<b>{title}</b><br>metric: {table.meta.get('metric', '')}<br>"
                        f"written: {', '.join(paths) if paths else '(not written)'}")
        header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        header.setWordWrap(True)
        plots = QHBoxLayout()
        plots.addWidget(self.by_iteration)
        plots.addWidget(self.by_time)
        layout = QVBoxLayout(self)
        layout.addWidget(header)
        layout.addLayout(plots, 1)
        self.resize(1100, 520)
        for key in (QKeySequence(Qt.Key.Key_Escape), QKeySequence(QKeySequence.StandardKey.Close)):
            QShortcut(key, self, activated=self.close)

    @staticmethod
    def _plot(title: str, x_label: str) -> pg.PlotWidget:
        w = pg.PlotWidget()
        w.setBackground("w")
        item = w.getPlotItem()
        item.setTitle(title)
        item.setLabel("bottom", x_label)
        item.setLabel("left", "natural-map residual (m/s)")
        item.setLogMode(x=False, y=True)
        item.showGrid(x=True, y=True, alpha=0.3)
        for axis in ("left", "bottom"):
            item.getAxis(axis).enableAutoSIPrefix(False)
        item.addLegend(offset=(-10, 10))
        return w

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().closeEvent(event)
        self.closed.emit()
