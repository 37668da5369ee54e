"""The window at the sizes a user found wanting: the F1 help whole and opaque at common sizes,
and at the smallest size every dock inside the window and the HUD leaving the view visible."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor

from app.overlays import HELP_BACKGROUND
from tests.app.conftest import HANG_MS
from tests.app.test_window import _press, make_window  # noqa: F401 (fixture)
from tests.app.test_window_alarms_and_quit import activate


def _settle(qtbot, window, size) -> None:
    window.resize(*size)
    qtbot.waitUntil(lambda: window.width() >= min(size[0], window.minimumSizeHint().width()),
                    timeout=HANG_MS)
    qtbot.wait(250)  # the HUD refits at its next refresh (10 Hz)


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_f1_help_is_whole_and_opaque(qtbot, make_window, size):
    window = make_window(scene="column")
    activate(qtbot, window)
    _settle(qtbot, window, size)
    _press(qtbot, window, "F1")
    help_ = window.help
    assert help_.isVisible()
    assert window.stack.rect().contains(help_.geometry()), "the help sticks out of the view"
    # Nothing cut on the right: the text is laid out within the panel's width...
    assert help_.document().size().width() <= help_.viewport().width() + 1
    # ...and what is taller than the view scrolls to its end.
    bar = help_.verticalScrollBar()
    assert bar.maximum() == 0 or bar.maximum() + bar.pageStep() >= help_.document().size().height() - 4
    # Opaque: the panel's margin (no text there) has the panel's colour exactly, over the HUD
    # and the marbles alike.
    image = window.stack.grab().toImage()
    g = help_.geometry()
    expected = QColor(*map(int, HELP_BACKGROUND[4:-1].split(",")))
    for y in range(g.top() + 6, g.bottom() - 6, 37):
        assert image.pixelColor(g.left() + 4, y) == expected, (g.left() + 4, y)


def test_smallest_window_keeps_docks_inside_and_the_view_visible(qtbot, make_window):
    window = make_window(scene="column")
    _settle(qtbot, window, (10, 10))
    inside = QRect(0, 0, window.width(), window.height())
    for dock in (window.dock, window.controls_dock):
        assert inside.contains(dock.geometry()), dock.objectName()
    plots = window.plots
    assert plots.width() >= plots.minimumSizeHint().width()
    assert window.stack.compact
    qtbot.waitUntil(lambda: "solver pgs" in window.hud.text()
                    and "collide" not in window.hud.text(), timeout=HANG_MS)
    hud, view = window.hud.geometry(), window.stack.rect()
    assert hud.width() * hud.height() <= 0.4 * view.width() * view.height()
