"""What a display's simulation thread adds to each step beside the step itself: `window_ms`,
one part of what the HUD's "window adds" (lab.session.meters) holds, measured apart.

The simulation thread of the desktop program does more than step: the Session's bookkeeping
(the log, the history, the watch), the frame it sends, the commands it takes between two timer
ticks and the GIL it waits for while the GUI thread runs Python. `WindowCost` takes, per timer
tick, the wall time the thread spent on the tick and the wall time of the steps it made
(`Simulation.step`, the records' `total`), and says the difference per step. A step that the
window's other threads slow down (a core taken by the renderer) shows as a longer step, not
here: that is the step's own figure beside it.
"""
from __future__ import annotations

import math
from collections import deque

SPAN = 50  # timer ticks the figure is taken over (two seconds flat out)


class WindowCost:
    """Wall time per step (ms) that is not the step's own, over the last `span` ticks."""

    def __init__(self, span: int = SPAN):
        self._ticks: deque[tuple[float, int, float]] = deque(maxlen=span)

    def add(self, wall: float, steps: int, compute: float) -> None:
        """One tick: `wall` s the thread spent on it, `steps` made, `compute` s of them."""
        if steps > 0 and wall >= 0.0:
            self._ticks.append((float(wall), int(steps), float(compute)))

    def reset(self) -> None:
        self._ticks.clear()

    @property
    def ms(self) -> float:
        """Mean ms per step the ticks spent beside their steps; NaN before any step."""
        steps = sum(t[1] for t in self._ticks)
        if steps == 0:
            return math.nan
        extra = sum(max(0.0, wall - compute) for wall, _, compute in self._ticks)
        return 1e3 * extra / steps
