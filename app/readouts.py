"""The readouts over the 3D view besides the HUD: the picked marble's card
(lab.session.network.MarbleCard: its numbers and its table of contacts; the view outlines the
marble, app.view.outline) and the physics warning (lab.session.watch: marbles that left the
container, deep overlaps) as an amber badge below the HUD, which the status bar says once as
the Session's message. The H key hides them all with the HUD and the colour bar, and shows them
again as they were (app.overlays.ViewStack.show_readouts). A part of app.window.MainWindow,
given the view's stack of overlays and a function that shows a status line."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt

from lab.actions import keys_of

from .overlays import overlay_label

# Amber, not the divergence's red: the run goes on.
WARNING_STYLE = "color: #201400; background: rgba(255, 176, 32, 235); font-weight: bold; "


class Readouts:
    """`card` and `warning`: its labels, on `stack` (app.overlays.ViewStack)."""

    def __init__(self, stack, status: Callable[[str], None]):
        self._stack = stack
        self._status = status
        # The card bottom right, above the recording badge; its table is aligned by spaces.
        self.card = stack.add(overlay_label(200, 8, "font-family: monospace; "),
                              "bottom_right", readout=True)
        self.card.setTextFormat(Qt.TextFormat.PlainText)
        self.warning = stack.add(overlay_label(235, 8, WARNING_STYLE), "under_hud",
                                 readout=True)
        self.warning.setTextFormat(Qt.TextFormat.PlainText)

    def show(self, frame) -> None:
        """The card and the warning of a frame from the worker (app.worker.Frame)."""
        card = frame.card
        self._show_label(self.card, card.text() if card is not None else "")
        self._show_label(self.warning, frame.state.warning)

    def _show_label(self, label, text: str) -> None:
        """`text` on `label`, hidden when empty; only a change lays the overlays out again."""
        if text != label.text() or label.isHidden() == bool(text):
            label.setText(text)
            label.setVisible(bool(text))
            self._stack.place()

    def toggle(self) -> None:
        """The H key: hide the HUD, colour bar, card and warning, or show them again."""
        shown = not self._stack.readouts_shown
        self._stack.show_readouts(shown)
        self._status("readouts shown" if shown else f"readouts hidden ({keys_of('readouts')} "
                     "shows them; warnings come here too)")
