"""The pause as the user asked it, shown before the simulation thread has made it so.

Commands reach the simulation thread between two steps, and a step of a large pile lasts
seconds: Space would show PAUSED only once the step in flight ends. `PendingPause` sends the
pause as an explicit wish (pause, or go on: never a toggle, which would flip a state the
window has not seen yet), and until a frame from the simulation thread agrees, the HUD shows
the wish at once. The step in flight ends in the background; its frame is drawn as any other.
"""
from __future__ import annotations

import dataclasses

from lab.session import commands as cmd


class PendingPause:
    """`send(command)` forwards to the simulation thread (`forward`), turning a toggled Pause
    into the state wished for; `latest()` gives the newest frame (None before the first);
    `refresh()` redraws the HUD. `wanted`: the pause asked for and not yet confirmed (None)."""

    def __init__(self, forward, latest, refresh):
        self._forward = forward
        self._latest = latest
        self._refresh = refresh
        self.wanted: bool | None = None

    @property
    def paused(self) -> bool:
        """Paused as the user sees it: the wish not yet carried out, else the last frame's."""
        if self.wanted is not None:
            return self.wanted
        latest = self._latest()
        return bool(latest is not None and latest.state.paused)

    def send(self, command) -> None:
        if not isinstance(command, cmd.Pause) or self._latest() is None:
            self._forward(command)
            return
        wanted = (not self.paused) if command.paused is None else bool(command.paused)
        self.wanted = wanted
        self._forward(cmd.Pause(wanted))
        self._refresh()

    def confirm(self, frame) -> None:
        """Every frame from the simulation thread: one that shows the wish ends it."""
        if self.wanted is not None and frame.state.paused == self.wanted:
            self.wanted = None

    def shown(self, frame):
        """`frame` as the HUD shows it: paused as wished while the wish is pending."""
        if frame is None or self.wanted is None or frame.state.paused == self.wanted:
            return frame
        return dataclasses.replace(frame, state=dataclasses.replace(frame.state,
                                                                    paused=self.wanted))
