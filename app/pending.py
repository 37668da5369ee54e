"""What the user asked, shown before the simulation thread has carried it out.

Commands reach the simulation thread between two steps, and a step of a large pile lasts
seconds: Space would show PAUSED, and C or M any sign of life, only once the step in flight
ends. `Pending` sends the pause as an explicit wish (pause, or go on: never a toggle, which
would flip a state the window has not seen yet), and until a frame from the simulation thread
agrees, the HUD shows the wish at once. Any other key's command is acknowledged on the HUD
("C received: …; carried out when the step in flight ends") until a frame says the simulation
thread has applied it (Frame.commands_done reaches the command's place in the channel). The
step in flight ends in the background; its frame is drawn as any other.
"""
from __future__ import annotations

import dataclasses
import time

from lab import actions
from lab.session import commands as cmd

# A step at least this long (s) holds a key's command back visibly: acknowledge it at once.
SLOW_STEP = 0.05
# A command still waiting this long (s) is acknowledged whatever the last step cost.
ACK_AFTER = 0.1


def received_text(command, step_seconds: float) -> str | None:
    """The HUD's acknowledgement of `command` (a key's, from lab.actions.TABLE) waiting for a
    step of `step_seconds`; None for a command no key sends."""
    action = next((a for a in actions.TABLE if a.command == command), None)
    if action is None:
        return None
    what = action.help.split(" (")[0].split(";")[0]
    took = f" (a step takes {1e3 * step_seconds:.0f} ms)" if step_seconds >= SLOW_STEP else ""
    return (f"{'/'.join(action.keys)} received: {what}; carried out when the step in flight "
            f"ends{took}")


def _step_seconds(frame) -> float:
    """What the last step of `frame` cost (s; 0 before any frame or step)."""
    return float(frame.timings.get("total", 0.0) or 0.0) if frame is not None else 0.0


@dataclasses.dataclass
class _Waiting:
    ticket: int  # the channel's count once the command was sent
    text: str
    since: float  # time.perf_counter() at the key


class Pending:
    """`send(command)` forwards to the simulation thread (`forward`), turning a toggled Pause
    into the state wished for; `sent()` is the channel's count of commands sent (the
    Frame.commands_done they are matched against); `latest()` gives the newest frame (None
    before the first); `refresh()` redraws the HUD. `wanted`: the pause asked for and not yet
    confirmed (None); `waiting`: the last key's command not yet carried out (None)."""

    def __init__(self, forward, latest, refresh, sent=lambda: 0):
        self._forward = forward
        self._latest = latest
        self._refresh = refresh
        self._sent = sent
        self.wanted: bool | None = None
        self.waiting: _Waiting | None = None

    @property
    def paused(self) -> bool:
        """Paused as the user sees it: the wish not yet carried out, else the last frame's."""
        if self.wanted is not None:
            return self.wanted
        latest = self._latest()
        return bool(latest is not None and latest.state.paused)

    def send(self, command) -> None:
        latest = self._latest()
        if not isinstance(command, cmd.Pause) or latest is None:
            self._forward(command)
            if latest is not None and not self.paused:
                self._acknowledge(command, latest)
            return
        wanted = (not self.paused) if command.paused is None else bool(command.paused)
        self.wanted = wanted
        self._forward(cmd.Pause(wanted))
        self._refresh()

    def _acknowledge(self, command, latest) -> None:
        step = _step_seconds(latest)
        text = received_text(command, step)
        if text is None:
            return
        self.waiting = _Waiting(self._sent(), text, time.perf_counter())
        if step >= SLOW_STEP:
            self._refresh()

    def confirm(self, frame) -> None:
        """Every frame from the simulation thread: one that shows the wish ends it, one made
        after the waiting command ran ends its acknowledgement."""
        if self.wanted is not None and frame.state.paused == self.wanted:
            self.wanted = None
        if self.waiting is not None and frame.commands_done >= self.waiting.ticket:
            self.waiting = None

    def acknowledgement(self) -> str | None:
        """The HUD's line for the command still waiting, once it visibly waits; else None."""
        w = self.waiting
        if w is None:
            return None
        return w.text if (_step_seconds(self._latest()) >= SLOW_STEP
                          or time.perf_counter() - w.since >= ACK_AFTER) else None

    def shown(self, frame):
        """`frame` as the HUD shows it: paused as wished while the wish is pending, and the
        waiting command's acknowledgement as its message."""
        if frame is None:
            return frame
        state = frame.state
        if self.wanted is not None and state.paused != self.wanted:
            state = dataclasses.replace(state, paused=self.wanted)
        said = self.acknowledgement()
        if said is not None:
            state = dataclasses.replace(state, message=said)
        return frame if state is frame.state else dataclasses.replace(frame, state=state)
