"""What is drawn over the 3D view: the stack that holds the view and its overlays (HUD, help,
notices, the colour bar, the picked marble's card), and the colour bar of the colour modes.

The overlays are children of `ViewStack` placed by hand in its resizeEvent, not items of a
layout: a layout would take their size hints into the window's minimum size, and a long HUD
line would then squeeze the plot panel. Those the H key hides (the readouts: HUD, colour bar,
card, warning) are children of one transparent layer over the view, hidden as a whole, so each
keeps showing or hiding itself as before and reappears as it was.
"""
from __future__ import annotations

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QLinearGradient, QPainter
from PySide6.QtWidgets import QFrame, QLabel, QTextBrowser, QWidget

from lab.session.colours import ColourScale, colour_scale, heat

MARGIN = 8  # px between the view's edge and an overlay
COMPACT_SIZE = (480, 420)  # px: a view smaller than this gets the HUD's short form
HELP_WIDTH = 760  # px: the F1 help's widest (its table reads badly wider)
HELP_BACKGROUND = "rgb(16, 16, 24)"
PANEL_STYLE = ("QLabel {{ color: #f4f4f4; background: rgba(10, 10, 16, {alpha});"
               " padding: {pad}px; border-radius: 6px; {extra}}}")


def overlay_label(alpha: int = 215, pad: int = 12, extra: str = "") -> QLabel:
    """A translucent label that lets the mouse through to the view."""
    label = QLabel()
    label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
    label.setStyleSheet(PANEL_STYLE.format(alpha=alpha, pad=pad, extra=extra))
    label.hide()
    return label


class HelpPanel(QTextBrowser):
    """The F1 help over the view: opaque (the HUD's text must not show through it), at most
    HELP_WIDTH px wide and never wider than the view, its table wrapped to that width and
    scrolled with the wheel when taller than the view. It takes no focus, so every key still
    reaches the window (F1 and Esc close it)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setStyleSheet(f"QTextBrowser {{ color: #f4f4f4; background: {HELP_BACKGROUND};"
                           " border-radius: 6px; }")
        self.document().setDocumentMargin(12)
        self.hide()

    def fit(self, width: int, height: int) -> None:
        """Size to the text within `width` x `height` px (the view less its margins)."""
        width = max(1, min(width, HELP_WIDTH))
        # Measured on a copy: the panel lays its own document out to its viewport's width.
        layout = self.document().clone(self)
        layout.setTextWidth(width)
        wanted = int(np.ceil(layout.size().height())) + 2
        layout.deleteLater()
        self.resize(width, max(1, min(height, wanted)))


class ColourBar(QWidget):
    """The scale of the current colour mode (lab.session.colours.colour_scale): the heat gradient
    with its ticks and title; hidden in the "marble" mode. Painted only when the mode changes."""

    BAR_WIDTH = 220
    BAR_HEIGHT = 12

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.scale: ColourScale | None = None
        self.mode = ""
        self._font = QFont()
        self._font.setPointSize(8)
        metrics = QFontMetricsF(self._font)
        self._line = metrics.height()
        self.setFixedSize(self.BAR_WIDTH + 40, int(3 * self._line + self.BAR_HEIGHT + 16))
        self.hide()

    def set_mode(self, mode: str) -> bool:
        """Show `mode`'s scale; True when the bar appeared or went (the overlays beside it
        are placed again: ViewStack.place)."""
        if mode == self.mode:
            return False
        self.mode = mode
        shown = self.scale is not None
        self.scale = colour_scale(mode)
        self.setVisible(self.scale is not None)
        self.update()
        return shown != (self.scale is not None)

    def bar_rect(self) -> QRectF:
        """Where the gradient is drawn, in widget pixels."""
        return QRectF(20, 6 + self._line, self.BAR_WIDTH, self.BAR_HEIGHT)

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self.scale is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(10, 10, 16, 200))
        p.drawRoundedRect(QRectF(self.rect()), 6, 6)
        bar = self.bar_rect()
        gradient = QLinearGradient(bar.left(), 0, bar.right(), 0)
        for t, rgb in zip(np.linspace(0.0, 1.0, 17), heat(np.linspace(0.0, 1.0, 17))):
            gradient.setColorAt(float(t), QColor.fromRgbF(*map(float, rgb)))
        p.fillRect(bar, gradient)
        p.setFont(self._font)
        p.setPen(QColor("#f4f4f4"))
        p.drawText(QRectF(bar.left(), 2, bar.width(), self._line),
                   Qt.AlignmentFlag.AlignLeft, self.scale.title)
        for t, text in self.scale.ticks:
            x = bar.left() + t * bar.width()
            p.drawLine(int(x), int(bar.bottom()), int(x), int(bar.bottom() + 3))
            p.drawText(QRectF(x - 30, bar.bottom() + 3, 60, self._line),
                       Qt.AlignmentFlag.AlignHCenter, text)
        p.end()


class ViewStack(QWidget):
    """The central widget: the 3D view filling it, and overlays placed over it on every resize:
    `hud` top left (fitted to the width: app.hud.Hud.fit), `under_hud` below it (the physics
    warning: labels, wrapped where the view is narrower than their text), `corner` top right, `centred`
    ones in the middle, `bottom_left` (the colour bar) and `bottom_right` (the recording badge,
    the picked marble's card), stacked upwards, and above the bottom_left ones where they
    would reach them. The HUD and the overlays added as `readout`s
    lie on `layer`, which `show_readouts` hides and shows."""

    def __init__(self, view: QWidget, hud, parent: QWidget | None = None):
        super().__init__(parent)
        self.view = view
        self.hud = hud
        view.setParent(self)
        self.layer = QWidget(self)
        self.layer.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        hud.setParent(self.layer)
        self.corner: list[QWidget] = []
        self.under_hud: list[QWidget] = []
        self.centred: list[QWidget] = []
        self.bottom_left: list[QWidget] = []
        self.bottom_right: list[QWidget] = []
        self.setMinimumSize(200, 150)

    @property
    def compact(self) -> bool:
        """The view is too small for the full HUD over it (it would cover most of the view)."""
        return self.width() < COMPACT_SIZE[0] or self.height() < COMPACT_SIZE[1]

    def add(self, widget: QWidget, where: str, readout: bool = False) -> QWidget:
        """Put `widget` over the view at `where`: "under_hud", "corner", "centred",
        "bottom_left" or "bottom_right"; a `readout` is hidden with the HUD (show_readouts)."""
        widget.setParent(self.layer if readout else self)
        getattr(self, where).append(widget)
        self.place()
        return widget

    @property
    def readouts_shown(self) -> bool:
        return not self.layer.isHidden()

    def show_readouts(self, shown: bool) -> None:
        """Show or hide the HUD and every readout at once."""
        self.layer.setVisible(shown)
        self.place()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self.view.setGeometry(self.rect())
        self.place()

    def place_under_hud(self) -> None:
        """The `under_hud` overlays below the HUD as it is now (its height changes with its
        text: the window calls this after each refit)."""
        top = self.hud.geometry().bottom() + 1 + MARGIN if self.hud.isVisibleTo(self) else MARGIN
        for widget in self.under_hud:
            # One line as long as the text, wrapped at spaces where the view is narrower.
            widget.setWordWrap(False)
            natural = widget.sizeHint()
            width = max(60, min(natural.width(), self.width() - 2 * MARGIN))
            widget.setWordWrap(width < natural.width())
            height = widget.heightForWidth(width) if widget.wordWrap() else natural.height()
            widget.setGeometry(MARGIN, top, width, max(height, natural.height()))
            widget.raise_()
            if widget.isVisibleTo(self):
                top += widget.height() + MARGIN

    def place(self) -> None:
        """Lay the overlays out over the view at its current size."""
        w, h = self.width(), self.height()
        self.layer.setGeometry(self.rect())  # its children are placed in the stack's frame
        self.layer.raise_()
        self.hud.fit(w)
        self.hud.raise_()
        self.place_under_hud()
        for widget in self.centred:
            if isinstance(widget, HelpPanel):
                widget.fit(w - 2 * MARGIN, h - 2 * MARGIN)
            else:
                widget.setMaximumSize(max(1, w - 2 * MARGIN), max(1, h - 2 * MARGIN))
                widget.adjustSize()
            widget.move((w - widget.width()) // 2, (h - widget.height()) // 2)
            widget.raise_()
        for widget in self.corner:
            widget.adjustSize()
            widget.move(w - widget.width() - MARGIN, MARGIN)
            widget.raise_()
        left_top, left_right = h, 0  # where the visible bottom_left overlays begin and end
        for widget in self.bottom_left:
            widget.move(MARGIN, h - widget.height() - MARGIN)
            widget.raise_()
            if widget.isVisibleTo(self):
                left_top = min(left_top, widget.y())
                left_right = max(left_right, widget.x() + widget.width())
        bottom = h - MARGIN
        for widget in self.bottom_right:  # stacked upwards, the first at the bottom
            widget.adjustSize()
            x = w - widget.width() - MARGIN
            if widget.isVisibleTo(self) and x < left_right + MARGIN:
                # As wide as to reach the colour bar (a card in a narrow view): above it.
                bottom = min(bottom, left_top - MARGIN)
            widget.move(x, bottom - widget.height())
            widget.raise_()
            if widget.isVisibleTo(self):
                bottom -= widget.height() + MARGIN
