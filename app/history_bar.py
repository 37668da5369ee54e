"""The history scrubber along the bottom of the window: a slider over the steps kept (lab.session.history),
buttons a step back and forward, where the world is, and the solver comparison of the step
shown (one solver, or every solver: the B key's comparison window). The keys of the key map
(`,` and `.`) do what the buttons do; the widgets never take the keyboard, which stays with the
view.
"""
from __future__ import annotations

import time

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider,
                               QToolBar, QToolButton, QWidget)

from lab.session import commands as cmd
from lab.session.history import history_text
from solver.methods import registry

EVERY_SOLVER = "every solver"
SIDE_BY_SIDE_TEXT = "history: none while side by side (T ends it)"


LIVE_PERIOD = 0.25  # s between updates of the bar while the run goes on


class HistoryBar(QWidget):
    """`send(command)` posts a Session command; `solve(solvers)` runs the comparison of the
    step shown with those solvers (() : every one)."""

    def __init__(self, send, solve, parent: QWidget | None = None):
        super().__init__(parent)
        self._send = send
        self._solve = solve
        self._shown: tuple | None = None
        self._frictional: bool | None = None
        self._updated = 0.0  # perf_counter time of the last update
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.back_button = self._button(QToolButton(), "◀", "one step back (,)",
                                        lambda: send(cmd.HistoryStep(-1)))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.slider.setMinimumWidth(160)
        self.slider.setToolTip("the steps kept: drag to show one (paused)")
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._moved)
        self.forward_button = self._button(QToolButton(), "▶", "one step forward (.)",
                                           lambda: send(cmd.HistoryStep(1)))
        self.label = QLabel(history_text(None))
        self.solver_box = QComboBox()
        self.solver_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.solver_box.addItems([EVERY_SOLVER, *registry.METHODS])
        self.solver_box.setToolTip("the solver(s) the step shown is solved with")
        self.solve_button = self._button(QPushButton(), "Solve this step", "solve the step "
                                         "shown from zero impulses: the comparison window",
                                         lambda: solve(self.chosen()))
        for widget, stretch in ((self.back_button, 0), (self.slider, 1),
                                (self.forward_button, 0), (self.label, 0),
                                (self.solver_box, 0), (self.solve_button, 0)):
            layout.addWidget(widget, stretch)

    @staticmethod
    def _button(button, text: str, tip: str, slot):
        button.setText(text)
        button.setToolTip(tip)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the view
        button.clicked.connect(slot)
        return button

    def chosen(self) -> tuple[str, ...]:
        """The solvers the comparison runs: () for every one."""
        text = self.solver_box.currentText()
        return () if text == EVERY_SOLVER else (text,)

    def _moved(self, value: int) -> None:
        self._send(cmd.Seek(int(value)))

    def show_state(self, state) -> None:
        """The history of a SessionState (its `history` span, None before a step) and the
        solvers that can solve its world (with friction, those that solve friction)."""
        frictional = any(value > 0 for value in state.friction)
        if frictional != self._frictional:
            self._frictional = frictional
            model = self.solver_box.model()
            for k in range(1, model.rowCount()):
                method = registry.METHODS.get(self.solver_box.itemText(k))
                model.item(k).setEnabled(method is not None and (method.friction
                                                                 or not frictional))
        span = state.history
        key = None if span is None else (span.first, span.last, span.shown, span.capacity)
        if state.side_by_side:
            key = "side by side"  # the history keeps no copies: empty, and says why
        if key == self._shown:
            return
        # While the run goes on the bar follows it a few times a second, not at every frame
        # (its repaints are the GUI thread's, whose Python work holds up the steps); a pause
        # or a step shown is drawn at once.
        now = time.perf_counter()
        live = span is not None and not span.back and not state.paused
        if live and now - self._updated < LIVE_PERIOD:
            return
        self._updated = now
        self._shown = key
        if key == "side by side":
            self.label.setText(SIDE_BY_SIDE_TEXT)
            self.slider.setEnabled(False)
            return
        self.label.setText(history_text(span))
        self.slider.setEnabled(span is not None)
        if span is None or self.slider.isSliderDown():
            return  # a drag under way is the user's
        self.slider.blockSignals(True)
        self.slider.setRange(span.first, span.last)
        self.slider.setValue(span.shown)
        self.slider.blockSignals(False)


def install(window, send, solve) -> HistoryBar:
    """Put a HistoryBar along the bottom of the QMainWindow `window` (above the status bar, the
    whole width: the view's share alone is narrow beside the docks); `send` and `solve` as
    HistoryBar takes them."""
    bar = HistoryBar(send, solve)
    toolbar = QToolBar("History", window)
    toolbar.setObjectName("history")
    toolbar.setMovable(False)
    toolbar.addWidget(bar)
    window.addToolBar(Qt.ToolBarArea.BottomToolBarArea, toolbar)
    return bar
