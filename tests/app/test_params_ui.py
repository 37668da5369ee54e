"""Widgets generated from parameter declarations: the kind decides the widget, the range and
unit go into it, the help is its tooltip, and a user's edit reaches the callback as the text a
command takes."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QVBoxLayout, QWidget

from app.params_ui import IntBox, NumberBox, ParamEditor, value_text
from solver.params import Param
from tests.app.conftest import HANG_MS

OMEGA = Param("omega", 1.5, float, "relaxation factor", lo=0.0, hi=2.0, lo_open=True)
TOL = Param("abs_tol", 1e-12, float, "stop below this", "m/s", lo=0.0)
N = Param("n", 350, int, "number of marbles", lo=1, hi=10**9 * 10)
RULE = Param("friction", "cone", str, "friction law", choices=("cone", "box", "ccp"))
ADAPT = Param("adapt", True, bool, "adapt r")


def editor(qtbot, p):
    got = []
    e = ParamEditor(p, lambda name, text: got.append((name, text)))
    qtbot.addWidget(e.widget)
    e.show(p.default)
    return e, got


@pytest.mark.parametrize("p, kind", [(OMEGA, NumberBox), (TOL, NumberBox), (N, IntBox),
                                     (RULE, QComboBox), (ADAPT, QCheckBox)])
def test_the_declaration_chooses_the_widget_and_its_tooltip(qtbot, p, kind):
    e, _ = editor(qtbot, p)
    assert type(e.widget) is kind and e.value() == p.default
    assert p.help in e.widget.toolTip() and p.range_text() in e.widget.toolTip()


def test_ranges_and_units_go_into_the_spin_boxes(qtbot):
    omega, _ = editor(qtbot, OMEGA)
    assert (omega.widget.minimum(), omega.widget.maximum()) == (0.0, 2.0)
    tol, _ = editor(qtbot, TOL)
    assert tol.widget.suffix() == " m/s" and tol.widget.text() == "1e-12 m/s"
    n, _ = editor(qtbot, N)
    assert (n.widget.minimum(), n.widget.maximum()) == (1, 2 ** 31 - 1)  # Qt's int limit


def test_an_edit_reaches_the_callback_once_as_command_text(qtbot):
    omega, got = editor(qtbot, OMEGA)
    omega.widget.stepBy(1)
    assert got == [("omega", repr(1.6))]
    tol, got = editor(qtbot, TOL)
    tol.widget.stepBy(1)  # a tolerance steps by decades
    assert got == [("abs_tol", repr(1e-11))]
    rule, got = editor(qtbot, RULE)
    rule.widget.activated.emit(0)  # chose the value it has: nothing sent
    rule.widget.activated.emit(2)
    assert got == [("friction", "ccp")]
    adapt, got = editor(qtbot, ADAPT)
    adapt.widget.click()
    assert got == [("adapt", "0")]


def test_typing_is_taken_on_enter_and_the_sessions_value_comes_back(qtbot):
    n, got = editor(qtbot, N)
    n.widget.show()
    n.widget.setFocus()
    n.widget.lineEdit().selectAll()
    qtbot.keyClicks(n.widget, "40")
    assert got == []  # not at every keystroke
    qtbot.keyClick(n.widget, Qt.Key.Key_Return)
    assert got == [("n", "40")]
    n.widget.clearFocus()
    n.show(350)  # the Session refused it: its value again
    assert n.widget.value() == 350 and got == [("n", "40")]


@pytest.mark.parametrize("p, typed", [(N, "-5"), (N, "abc"), (N, "1e3"), (OMEGA, "20"),
                                      (OMEGA, "abc"), (TOL, "-1")])
def test_text_a_box_cannot_take_goes_on_as_typed_on_enter_or_leaving(qtbot, p, typed):
    """Never bent into another value (Qt's int box dropped the minus of -5) nor put back in
    silence: the Session parses it and says why it refuses it."""
    for leave in (False, True):
        got = []
        e = ParamEditor(p, lambda name, text: got.append((name, text)))
        e.show(p.default)
        window, other = QWidget(), QLineEdit()  # a field to leave the box for
        qtbot.addWidget(window)
        column = QVBoxLayout(window)
        column.addWidget(e.widget)
        column.addWidget(other)
        window.show()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=HANG_MS)
        e.widget.setFocus()
        qtbot.waitUntil(e.widget.hasFocus, timeout=HANG_MS)
        e.widget.lineEdit().selectAll()
        qtbot.keyClicks(e.widget, typed)
        assert e.widget.lineEdit().text() in (typed, typed + e.widget.suffix())
        if leave:
            other.setFocus()
        else:
            qtbot.keyClick(e.widget, Qt.Key.Key_Return)
        assert got == [(p.name, typed)]
        assert e.value() == p.default  # the box shows the Session's value until it changes


def test_a_typed_value_is_shown_as_typed(qtbot):
    e, got = editor(qtbot, OMEGA)
    e.widget.show()
    e.widget.setFocus()
    e.widget.lineEdit().selectAll()
    qtbot.keyClicks(e.widget, "1.23456789")
    qtbot.keyClick(e.widget, Qt.Key.Key_Return)
    assert got == [("omega", "1.23456789")] and e.widget.text() == "1.23456789"
    qtbot.keyClick(e.widget, Qt.Key.Key_Return)  # Enter again: the same value, nothing sent
    assert got == [("omega", "1.23456789")]


def test_value_text_is_what_set_takes():
    assert [value_text(p, v) for p, v in ((ADAPT, False), (OMEGA, 1.0), (N, 7), (RULE, "box"))] \
        == ["0", "1.0", "7", "box"]
    for p, v in ((ADAPT, True), (OMEGA, 1.25), (TOL, 3e-9)):
        assert p.parse(value_text(p, v)) == v
