"""The window's side of solvers side by side (lab.session.side_by_side): the copies' marbles
overlaid in the one 3D view, each copy's marbles in its colour (the plots' curves of the copy
have it too: app.plots_copies), and a legend over the view's bottom left corner (where the
colour modes' bar is, which side by side does not show) naming each copy's solver beside its
colour. Overlaid rather than split: the view renders once per frame
whatever the copies, which under software OpenGL is what a frame costs; where the copies
agree their marbles coincide, and where the solvers part ways the colours show it."""
from __future__ import annotations

from html import escape

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
import numpy as np
from PySide6.QtCore import Qt

from .overlays import overlay_label


def hex_rgb(colour: str) -> np.ndarray:
    """"#rrggbb" -> (3,) float32 RGB in [0, 1]."""
    value = colour.lstrip("#")
    return np.array([int(value[k:k + 2], 16) / 255.0 for k in (0, 2, 4)], dtype=np.float32)


def frame_marbles(frame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """What the view draws of a frame (app.worker.Frame): x (N, 3) m, radius (N,) m, colour
    (N, 3) RGB, orientation (N, 4) or None; side by side, every copy's n marbles in turn
    (N = copies × n, copy 0's first, so a picked index below n is copy 0's marble), each copy
    in its colour; else the frame's own."""
    copies = frame.copies
    if not copies:
        return frame.x, frame.radius, frame.colour, frame.orientation
    n = frame.x.shape[0]
    x = np.concatenate([c.x for c in copies])
    radius = np.tile(frame.radius, len(copies))
    colour = np.concatenate([np.broadcast_to(hex_rgb(c.colour), (n, 3)) for c in copies])
    orientation = np.concatenate([c.orientation for c in copies])
    return x, radius, colour, orientation


def legend_html(copies) -> str:
    """One line per copy: a square of its colour and its label."""
    rows = "".join(f"<div><span style='color:{c.colour}; font-size:14pt'>●</span>&nbsp;"
                   f"{escape(c.label)}</div>" for c in copies)
    return f"<div><b>side by side</b></div>{rows}"


class Legend:
    """The legend overlay of the copies (hidden when not side by side). `stack`: the window's
    app.overlays.ViewStack."""

    def __init__(self, stack):
        self.stack = stack
        self.label = stack.add(overlay_label(200, 8), "bottom_left")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self._shown: tuple = ()

    def show(self, copies) -> None:
        key = tuple((c.label, c.colour) for c in copies)
        if key == self._shown:
            return
        self._shown = key
        self.label.setText(legend_html(copies) if copies else "")
        self.label.adjustSize()
        self.label.setVisible(bool(copies))
        self.stack.place()

    def text(self) -> str:
        return self.label.text() if self.label.isVisible() else ""
