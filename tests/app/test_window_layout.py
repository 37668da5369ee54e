"""The window at the sizes a user found wanting: the F1 help whole and opaque at common sizes,
and at the smallest size every dock inside the window and the HUD leaving the view visible;
the controls dock never cuts a row (side by side's four solvers named in full), the marble card
never covers the colour bar, the HUD never splits a number from its unit, and the plots fit
their panel."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLabel, QPushButton, QWidget

from app.hud import hud_text
from app.overlays import HELP_BACKGROUND, MARGIN
from tests.app.conftest import HANG_MS
from tests.app.test_hud import drawn_lines, number_unit_splits
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_alarms_and_quit import activate
from tests.app.test_window_e2e import screen_point


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


def cut_in_the_dock(window) -> list[str]:
    """The controls dock's visible widgets that its viewport cuts on the right, or that got
    less width than their contents need (a button's text elided, a field squeezed)."""
    panel = window.controls
    viewport = panel.viewport()
    bad = []
    for child in panel.widget().findChildren(QWidget):
        if not child.isVisibleTo(panel):
            continue
        right = child.mapTo(viewport, QPoint(child.width(), 0)).x()
        name = f"{type(child).__name__} {getattr(child, 'text', lambda: '')()!r}"
        if right > viewport.width():
            bad.append(f"{name} ends at {right} > {viewport.width()}")
        if isinstance(child, QPushButton) and child.width() < child.sizeHint().width():
            bad.append(f"{name}: {child.width()} px < {child.sizeHint().width()}")
        if isinstance(child, (QAbstractSpinBox, QComboBox)) and (
                child.width() < child.minimumSizeHint().width()):
            bad.append(f"{name}: {child.width()} px < {child.minimumSizeHint().width()}")
    return bad


def test_the_controls_dock_shows_every_row_whole_side_by_side_too(qtbot, make_window):
    """Four solvers side by side with their parameters ("jacobi beta=0.67") are named in the
    dock in full, and no row is cut: before, in the button's text, they widened the rows past
    the dock, cutting Reset and the fields."""
    window = make_window(scene="column", side_by_side=("pgs", "jacobi:beta=0.67",
                                                       "psor:omega=1.2", "nsgs"))
    _settle(qtbot, window, (1280, 800))
    labels = ("pgs", "jacobi beta=0.67", "psor omega=1.2", "nsgs")
    wait_state(qtbot, window, lambda f: f.state.side_by_side == labels, since=0,
               timeout=HANG_MS)
    qtbot.wait(200)  # the dock shows the state it was sent
    assert cut_in_the_dock(window) == []
    named = [w.text() for w in window.controls.widget().findChildren(QWidget)
             if isinstance(w, (QLabel, QPushButton)) and w.isVisible()
             and all(label in w.text() for label in labels)]
    assert named, "the solvers side by side are not named in the dock"
    _press(qtbot, window, "T")  # ends it
    wait_state(qtbot, window, lambda f: f.state.side_by_side == (), timeout=HANG_MS)
    qtbot.wait(200)
    assert cut_in_the_dock(window) == []


def test_the_marble_card_never_covers_the_colour_bar(qtbot, make_window):
    window = make_window(scene="bowl")
    activate(qtbot, window)
    _settle(qtbot, window, (1280, 800))
    _press(qtbot, window, "C")  # speed: the colour bar shows
    _press(qtbot, window, "Space")
    f = wait_state(qtbot, window, lambda f: f.state.paused and f.state.colour_mode == "speed")
    top = int(np.argmax(f.x[:, 2]))  # the top marble: in sight, not behind others
    qtbot.mouseClick(window.view, Qt.MouseButton.LeftButton,
                     pos=screen_point(window.view, f.x[top]))
    card, bar = window.readouts.card, window.colour_bar
    qtbot.waitUntil(lambda: card.isVisible() and bar.isVisible(), timeout=HANG_MS)
    for size in ((1280, 800), (10, 10)):
        _settle(qtbot, window, size)
        assert not card.geometry().intersects(bar.geometry()), (size, card.geometry(),
                                                                 bar.geometry())
    _press(qtbot, window, "C")  # impulse: the bar stays; marble: it goes, the card goes down
    _press(qtbot, window, "C")
    _press(qtbot, window, "C")
    qtbot.waitUntil(lambda: not bar.isVisible(), timeout=HANG_MS)
    assert card.geometry().bottom() == window.stack.height() - MARGIN - 1


@pytest.mark.parametrize("size", [(10, 10), (1280, 800)])
def test_the_hud_never_splits_a_number_from_its_unit(qtbot, make_window, size):
    """At the smallest window and at 1280×800, with a long message (side by side's) on the
    HUD: every line whole in the HUD's width, no number apart from its unit."""
    window = make_window(scene="bowl")
    activate(qtbot, window)
    _settle(qtbot, window, size)
    _press(qtbot, window, "T")
    qtbot.waitUntil(lambda: "side by side from" in window.hud.text(), timeout=HANG_MS)
    hud = window.hud
    assert hud.geometry().right() <= window.stack.width()
    text = hud_text(window.latest, window.fps, window.steps_per_second,
                    window._step_times.median() or None, len(window._step_times),
                    compact=window.stack.compact)
    hud.show(text, window.stack.width())  # what the next refresh shows, held for the check
    assert number_unit_splits(hud, text) == []
    metrics = QFontMetrics(hud.font())
    assert all(metrics.horizontalAdvance(line.rstrip()) <= hud.contentsRect().width()
               for line, _ in drawn_lines(hud))


def test_the_plots_fit_their_panel_at_the_smallest_window(qtbot, make_window):
    """The plots' layout (the phases' legend, four solvers side by side in the trace's title
    the widest parts) is no wider than its canvas, so no axis or legend entry is cut on the
    right."""
    window = make_window(scene="column", side_by_side=("pgs", "jacobi:beta=0.67",
                                                       "psor:omega=1.2", "nsgs"))
    wait_state(qtbot, window, lambda f: len(f.copies) == 4, since=0, timeout=HANG_MS)
    _settle(qtbot, window, (10, 10))
    canvas = window.plots.canvas
    qtbot.waitUntil(lambda: canvas.ci.geometry().width() <= canvas.viewport().width() + 0.5,
                    timeout=5000)
    legend = window.plots.legend.sceneBoundingRect()
    assert legend.right() <= canvas.viewport().width()
