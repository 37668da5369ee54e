"""A widget for any declared parameter (solver.params.Param), generated from its declaration:
choices become a combo box, bool a check box, int and float a spin box with the declared range
and unit, and the help its tooltip. New solvers, scenes and parameters appear in the controls
dock without GUI code.

An editor reports a change as the value's text (what `--set name=value` would take), so the
Session parses and checks it exactly as it does the command line; a refused value shows in the
status bar and the editor goes back to the Session's value with the next frame. Typed text that
a spin box cannot take (out of its range, not a number) goes to the Session as it was written,
so it is refused with the command line's reason, never put back or bent into another value in
silence.
"""
from __future__ import annotations

import math
import re
from typing import Callable

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtCore import Qt
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from solver.params import Param

INT32 = 2 ** 31 - 1  # Qt's spin boxes hold 32-bit integers
FLOAT_LIMIT = 1e300  # an unbounded float parameter's spin box range


def tooltip(p: Param) -> str:
    unit = f" {p.unit}" if p.unit else ""
    return f"{p.name}: {p.help}\ndefault {p.default_text()}{unit}; {p.range_text()}"


def value_text(p: Param, value) -> str:
    """`value` of parameter `p` as the text a command takes ("1"/"0" for a bool)."""
    if p.kind is bool:
        return "1" if value else "0"
    if p.kind is float:
        return repr(float(value))
    return str(value)


class TypedText:
    """What the parameter spin boxes share: the number in the typed text (its unit left out),
    and the typed text a box cannot take handed to `refused` on Enter or on leaving the box,
    before Qt puts the box's value back (`refused` is None: nothing is handed over)."""

    refused: Callable[[str], None] | None = None

    def _number(self, text: str) -> str:
        text = text.strip()
        suffix = self.suffix().strip()
        if suffix and text.endswith(suffix):
            text = text[:-len(suffix)].strip()
        return text

    def _hand_over(self) -> None:
        text = self.lineEdit().text()
        if self.refused is not None and \
                self.validate(text, 0)[0] != QValidator.State.Acceptable:
            self.refused(self._number(text))

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._hand_over()
        super().keyPressEvent(event)

    def focusOutEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self._hand_over()
        super().focusOutEvent(event)


class IntBox(TypedText, QSpinBox):
    """An integer spin box that lets any text be typed (Qt's own drops a minus sign when the
    range is positive: -5 would be taken as 5) and takes only an integer in its range."""

    def validate(self, text: str, pos: int):  # noqa: D102 (Qt's)
        number = self._number(text)
        ok = re.fullmatch(r"[+-]?[0-9]+", number) is not None and \
            self.minimum() <= int(number) <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def valueFromText(self, text: str) -> int:  # noqa: N802 (Qt name)
        try:
            return int(self._number(text))
        except ValueError:
            return self.value()


class NumberBox(TypedText, QDoubleSpinBox):
    """A float spin box that shows any magnitude ("1e-12", "0.35", "1000"): the arrows add a
    step, or multiply by ten for a small positive tolerance-like value (a range over more than
    three decades)."""

    def __init__(self, p: Param, parent: QWidget | None = None):
        super().__init__(parent)
        self.param = p
        self.setDecimals(30)
        self.setRange(-FLOAT_LIMIT if p.lo is None else p.lo,
                      FLOAT_LIMIT if p.hi is None else p.hi)
        base = abs(float(p.default)) or 1.0
        self.setSingleStep(10.0 ** (math.floor(math.log10(base)) - 1))
        self._decades = p.lo is not None and p.lo >= 0.0 and (
            p.hi is None or p.hi / max(p.lo, 1e-300) > 1e3)

    def textFromValue(self, value: float) -> str:  # noqa: N802 (Qt name)
        # 15 digits: a typed value is shown as typed, so an Enter in the box sends it again
        # unchanged (with g's default of 6, 1.23456789 would show, and go, as 1.23457).
        return f"{value:.15g}"

    def valueFromText(self, text: str) -> float:  # noqa: N802 (Qt name)
        try:
            return float(self._number(text))
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):  # noqa: D102 (Qt's)
        number = self._number(text)
        try:
            value = float(number)
        except ValueError:
            return QValidator.State.Intermediate, text, pos
        ok = math.isfinite(value) and self.minimum() <= value <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802 (Qt name)
        value = self.value()
        if self._decades and 0.0 < value < 1e-2:
            self.setValue(value * 10.0 ** steps)
        else:
            super().stepBy(steps)


class ParamEditor:
    """The widget of one parameter; `changed(name, text)` is called when the user sets it,
    `show(value)` shows the Session's value (not while the user is editing it)."""

    def __init__(self, p: Param, changed: Callable[[str, str], None]):
        self.param = p
        self._changed = changed
        self._shown = None  # the Session's value last shown
        self.widget = self._make(p)
        self.widget.setToolTip(tooltip(p))
        self.widget.setObjectName(f"param:{p.name}")

    def _make(self, p: Param) -> QWidget:
        if p.choices:
            box = QComboBox()
            box.addItems(list(p.choices))
            box.activated.connect(lambda k: self._send(p.choices[k]))
            return box
        if p.kind is bool:
            check = QCheckBox()
            check.clicked.connect(lambda on: self._send("1" if on else "0"))
            return check
        if p.kind is int:
            spin = IntBox()
            spin.setRange(max(-INT32, int(p.lo)) if p.lo is not None else -INT32,
                          min(INT32, int(p.hi)) if p.hi is not None else INT32)
        else:
            spin = NumberBox(p)
        if p.unit:
            spin.setSuffix(f" {p.unit}")
        # Without keyboard tracking a value is taken on Enter, on leaving the box or by the
        # arrows, not at every keystroke.
        spin.setKeyboardTracking(False)
        spin.valueChanged.connect(lambda v: self._send(value_text(p, v)))
        spin.refused = lambda text: self._changed(p.name, text)
        return spin

    def _send(self, text: str) -> None:
        """Only a value other than the Session's: a combo chosen again sends nothing."""
        if self._shown is not None and text == value_text(self.param, self._shown):
            return
        self._changed(self.param.name, text)

    def show(self, value) -> None:
        self._shown = value
        w = self.widget
        if w.hasFocus() and not isinstance(w, (QCheckBox, QComboBox)):
            return  # the user is typing in it
        w.blockSignals(True)
        try:
            if isinstance(w, QComboBox):
                w.setCurrentText(str(value))
            elif isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            elif isinstance(w, QSpinBox):
                w.setValue(int(value))
            else:
                w.setValue(float(value))
        finally:
            w.blockSignals(False)

    def value(self):
        """What the widget shows, as the parameter's kind."""
        w = self.widget
        if isinstance(w, QComboBox):
            return w.currentText()
        if isinstance(w, QCheckBox):
            return w.isChecked()
        return w.value()
