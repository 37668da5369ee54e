"""The overlays of the 3D view: the colour bar of each colour mode, and overlays that stay in
place, inside the view, whatever its size."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel, QWidget

from app.hud import Hud
from app.overlays import MARGIN, ColourBar, ViewStack
from lab.session.colours import heat


def pixels(widget) -> np.ndarray:
    img = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB888)
    w, h, row = img.width(), img.height(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=row * h).reshape(h, row)
    return buf[:, :3 * w].reshape(h, w, 3).astype(int)


@pytest.mark.parametrize("mode", ["speed", "impulse", "slip"])
def test_the_colour_bar_shows_the_heat_scale_of_its_mode(qtbot, mode):
    bar = ColourBar()
    qtbot.addWidget(bar)
    bar.set_mode(mode)
    assert bar.isVisibleTo(bar.parentWidget() or bar) and bar.scale is not None
    image = pixels(bar)
    rect = bar.bar_rect()
    row = int(rect.center().y())
    dpr = bar.devicePixelRatioF()
    for t in (0.0, 0.5, 1.0):
        x = int((rect.left() + min(t * rect.width(), rect.width() - 2) + 1) * dpr)
        want = np.round(255 * heat(np.array([t]))[0]).astype(int)
        assert np.abs(image[int(row * dpr), x] - want).max() <= 12, (t, image[row, x], want)


def test_the_colour_bar_hides_when_each_marble_has_its_own_colour(qtbot):
    bar = ColourBar()
    qtbot.addWidget(bar)
    bar.set_mode("speed")
    bar.set_mode("marble")
    assert bar.scale is None and bar.isHidden()


def test_overlays_stay_in_their_corners_and_inside_the_view(qtbot):
    view = QWidget()
    hud = Hud()
    stack = ViewStack(view, hud)
    qtbot.addWidget(stack)
    hud.setText("a long line of the HUD " * 8)
    help_box = stack.add(QLabel("help\n" * 5), "centred")
    bar = stack.add(ColourBar(), "bottom_left")
    badge = stack.add(QLabel("REC 00:03"), "bottom_right")
    card = stack.add(QLabel("marble 3\nspeed 0.1 m/s"), "bottom_right")
    corner = stack.add(QLabel("marble 12"), "corner")
    bar.set_mode("speed")
    for size in ((900, 600), (400, 300), (1280, 800)):
        stack.resize(*size)
        stack.show()
        qtbot.waitExposed(stack)
        w, h = size
        assert view.geometry() == stack.rect()
        assert hud.x() == MARGIN and hud.geometry().right() <= w - MARGIN
        assert bar.x() == MARGIN and bar.geometry().bottom() == h - MARGIN - 1
        assert badge.geometry().right() == w - MARGIN - 1
        assert badge.geometry().bottom() == h - MARGIN - 1
        assert card.geometry().bottom() == badge.geometry().top() - MARGIN - 1  # stacked
        assert corner.geometry().right() == w - MARGIN - 1 and corner.y() == MARGIN
        centre = help_box.geometry().center()
        assert abs(centre.x() - w // 2) <= 1 and abs(centre.y() - h // 2) <= 1


def test_the_readouts_hide_and_show_as_one_and_the_warning_sits_under_the_hud(qtbot):
    """Readouts (the HUD among them) go with the layer; the others (help, badge) stay; a
    readout's own hidden state survives; the `under_hud` label follows the HUD's height and
    wraps where the view is narrower than its text; the badge below the card moves down to
    the corner when the readouts are hidden."""
    view = QWidget()
    hud = Hud()
    stack = ViewStack(view, hud)
    qtbot.addWidget(stack)
    hud.setText("one line")
    warning = stack.add(QLabel("PHYSICS ESCAPED: " + "a long warning " * 6), "under_hud",
                        readout=True)
    card = stack.add(QLabel("marble 3\nspeed 0.1 m/s"), "bottom_right", readout=True)
    badge = stack.add(QLabel("REC 00:03"), "bottom_right")
    asleep = stack.add(QLabel("hidden by its owner"), "corner", readout=True)
    asleep.hide()
    help_box = stack.add(QLabel("help"), "centred")
    stack.resize(900, 600)
    stack.show()
    qtbot.waitExposed(stack)
    assert warning.y() == hud.geometry().bottom() + 1 + MARGIN and warning.x() == MARGIN
    assert not warning.wordWrap() and warning.geometry().right() < 900 - MARGIN
    assert badge.geometry().bottom() == card.geometry().top() - MARGIN - 1
    hud.setText("one line\ntwo lines\nthree lines")
    hud.fit(stack.width())
    stack.place_under_hud()
    assert warning.y() == hud.geometry().bottom() + 1 + MARGIN
    stack.resize(300, 600)
    qtbot.waitUntil(lambda: stack.width() == 300, timeout=5000)
    assert warning.wordWrap() and warning.geometry().right() <= 300 - MARGIN
    stack.show_readouts(False)
    assert not stack.readouts_shown
    assert not any(w.isVisible() for w in (hud, warning, card, asleep))
    assert help_box.isVisible() and badge.isVisible() and view.isVisible()
    assert badge.geometry().bottom() == 600 - MARGIN - 1  # the hidden card leaves its place
    stack.show_readouts(True)
    assert hud.isVisible() and warning.isVisible() and card.isVisible()
    assert not asleep.isVisible()  # hidden by its owner, it stays so


def test_a_card_that_would_reach_the_colour_bar_goes_above_it(qtbot):
    """In a view as narrow as the window's at 1280×800 (about 550 px) a marble's card, some
    350 px wide, would cover the colour bar's title: it sits above the bar instead; a narrow
    one stays at the bottom, and without the bar the wide one goes down again."""
    view = QWidget()
    stack = ViewStack(view, Hud())
    qtbot.addWidget(stack)
    bar = stack.add(ColourBar(), "bottom_left")
    wide = "\n".join(["#7   normal 0.0123 N s   tangential 0.0004 N s   gap 0.001 m"] * 6)
    card = stack.add(QLabel(wide), "bottom_right")
    card.show()
    bar.set_mode("speed")
    stack.resize(550, 700)
    stack.show()
    qtbot.waitExposed(stack)
    stack.place()
    assert 550 - bar.width() - 3 * MARGIN < card.width() < 550  # it would reach the bar
    assert not card.geometry().intersects(bar.geometry())
    assert card.geometry().bottom() == bar.geometry().top() - MARGIN - 1
    card.setText("marble 12")
    stack.place()
    assert card.geometry().bottom() == 700 - MARGIN - 1
    card.setText(wide)
    assert bar.set_mode("marble")  # the bar goes: the window places the overlays again
    stack.place()
    assert card.geometry().bottom() == 700 - MARGIN - 1
