"""The main window's readouts over the 3D view besides the HUD: the picked marble's card
(lab.session.network.MarbleCard: its numbers and its table of contacts; the view outlines the
marble, app.view.outline) and the physics warning (lab.session.watch: marbles that left the
container, deep overlaps) as an amber badge below the HUD, which the status bar says once as
the Session's message. The H key hides them all with the HUD and the colour bar,
and shows them again as they were (app.overlays.ViewStack.show_readouts)."""
from __future__ import annotations

from PySide6.QtCore import Qt

from .overlays import overlay_label

# Amber, not the divergence's red: the run goes on.
WARNING_STYLE = "color: #201400; background: rgba(255, 176, 32, 235); font-weight: bold; "


class WindowOverlays:
    """A mixin of MainWindow (app.window): `card` and `warning` are its labels."""

    def _build_readouts(self) -> None:
        """The card (bottom right, above the recording badge) and the warning badge."""
        self.card = self.stack.add(overlay_label(200, 8, "font-family: monospace; "),
                                   "bottom_right", readout=True)
        self.card.setTextFormat(Qt.TextFormat.PlainText)  # its table is aligned by spaces
        self.warning = self.stack.add(overlay_label(235, 8, WARNING_STYLE), "under_hud",
                                      readout=True)
        self.warning.setTextFormat(Qt.TextFormat.PlainText)

    def _show_readouts(self, frame) -> None:
        """The card and the warning of a frame from the worker (app.worker.Frame)."""
        card = frame.card
        self._show_label(self.card, card.text() if card is not None else "")
        self._show_label(self.warning, frame.state.warning)

    def _show_label(self, label, text: str) -> None:
        """`text` on `label`, hidden when empty; only a change lays the overlays out again."""
        if text != label.text() or label.isHidden() == bool(text):
            label.setText(text)
            label.setVisible(bool(text))
            self.stack.place()

    def toggle_readouts(self) -> None:
        """The H key: hide the HUD, colour bar, card and warning, or show them again."""
        shown = not self.stack.readouts_shown
        self.stack.show_readouts(shown)
        self.status_label.setText("readouts shown" if shown else
                                  "readouts hidden (H shows them; warnings come here too)")
