"""The figures a display quotes about the pace of a run, each defined once, here (Qt-free):

- **what a step costs**: the median compute of one step (collide + assemble + solve +
  integrate, the step's "total"), over the last STEP_KEEP steps made with the settings shown
  (`timing_key`); a step during which Numba compiled a kernel is left out (its time is the
  compiler's, not the step's) and counted apart (`StepTimes.compiled`).
- **what the window adds**: the wall time per step made (1 / steps per second) minus what a
  step costs: drawing, the queue, the GIL shared with the display. Only quoted when the run is
  behind the pace asked or runs as fast as possible: on pace, the wall time per step includes
  the wait for the next step's due time, which no one pays.
- **why a run is slower than real time**: real time times `speed` allows dt / speed of wall
  time per step (the budget); the run is slower when it makes under SLOW_SHARE of the steps
  that pace asks for, because a step costs more than the budget, or because the window's share
  takes the rest of it (`Pace.why`).
"""
from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .state import PHASES

# Steps whose median is the step cost: one slow step (a garbage collection) does not move it.
STEP_KEEP = 100
# The run is slower than real time when it makes less than this share of the factor asked.
SLOW_SHARE = 0.9
# An event counts as overdue once the time since the last one passes this many times the gap
# expected: a step due now reaches the display a little later (a timer tick, the queue), and
# must not read as a slow-down.
OVERDUE = 1.5


class RateMeter:
    """Events per second (or any amount per second: `add(count)`) over the last `window`
    seconds of wall time, honest when events are rare: it always keeps the last `keep` events
    (up to `max_age` s old), so a step every 1.3 s reads 0.77/s, not 0; and when the time since
    the newest event is longer than OVERDUE times the gap expected (the usual one between them,
    or the `period` asked for, whichever is longer), the rate counts up to now, so it falls
    towards 0 once events stop instead of holding the last value. NaN until two events are
    known."""

    def __init__(self, window: float = 1.0, keep: int = 3, max_age: float = 30.0):
        self.window = window
        self.keep = keep
        self.max_age = max_age
        self._stamps: deque[tuple[float, float]] = deque()

    def add(self, count: float = 1, now: float | None = None) -> None:
        self._stamps.append((time.perf_counter() if now is None else now, count))

    def rate(self, now: float | None = None, period: float = 0.0) -> float:
        """Per second at `now`; `period`: the seconds between events asked for (0: unknown)."""
        now = time.perf_counter() if now is None else now
        stamps = self._stamps
        while stamps and (stamps[0][0] < now - self.max_age or (
                len(stamps) > self.keep and stamps[0][0] < now - self.window)):
            stamps.popleft()
        if len(stamps) < 2:
            return math.nan
        # Events after the first one, over the span they cover: unbiased at start-up too.
        first, last = stamps[0][0], stamps[-1][0]
        span = last - first
        if span <= 0:
            return math.nan
        total = sum(c for _, c in stamps) - stamps[0][1]
        if now - last > OVERDUE * max(span / (len(stamps) - 1), period):
            span = now - first  # overdue: the rate falls while nothing comes
        return total / span

    def reset(self) -> None:
        self._stamps.clear()


class StepTimes:
    """The wall time per phase of the last `keep` steps that compiled nothing, for the median
    that is a step's cost; `compiled`: the steps left out because Numba compiled during them,
    since the last reset. A ring of plain rows: the HUD asks for the median several times a
    second from the GUI thread, where every stretch of Python holds up the simulation thread
    (docs/desktop-performance.md)."""

    def __init__(self, keep: int = STEP_KEEP):
        self.keep = keep
        self._ring = np.empty((keep, len(PHASES)), dtype=np.float64)
        self._next = 0
        self._count = 0
        self.compiled = 0

    def add(self, records) -> None:
        """records: the steps of one frame (lab.session.state.RECORD_DTYPE rows)."""
        if not len(records):
            return
        computed = np.asarray(records["compiled"]) == 0
        self.compiled += int(computed.size - np.count_nonzero(computed))
        rows = np.column_stack([np.asarray(records[name], dtype=np.float64)[computed]
                                for name in PHASES])[-self.keep:]
        if not rows.shape[0]:
            return
        at = (self._next + np.arange(rows.shape[0])) % self.keep
        self._ring[at] = rows
        self._next = int(at[-1] + 1) % self.keep
        self._count = min(self._count + rows.shape[0], self.keep)

    def __len__(self) -> int:
        return self._count

    def median(self) -> dict:
        """Seconds per phase (median over the steps kept), {} when none are."""
        if not self._count:
            return {}
        middle = np.median(self._ring[:self._count], axis=0)
        return {name: float(m) for name, m in zip(PHASES, middle)}

    def reset(self) -> None:
        self._next = 0
        self._count = 0
        self.compiled = 0


def timing_key(state) -> tuple:
    """What a step's cost depends on, of a lab.session.state.SessionState: the world (its
    generation: a scene, a reset, a state file), the solver and its settings, the threads, the
    device and the copies side by side. The step times and the rate of steps start again
    whenever it changes, so no figure mixes two settings."""
    params = tuple(sorted((k, repr(v)) for k, v in state.solver_params.items()))
    return (state.generation, state.solver, params, state.iterations, state.warm_start,
            state.friction, state.stabilise, state.threads, state.blocks, state.device,
            state.precision, state.side_by_side)


@dataclass(frozen=True)
class Pace:
    """The pace of a run, in seconds of wall time per step: `step` what a step costs (median
    compute), `wall` the wall time per step made (1 / steps per second; NaN: not measured);
    `dt` the simulated seconds per step; `speed` the real-time factor asked (<= 0: as fast as
    possible)."""

    step: float
    wall: float
    dt: float
    speed: float

    @classmethod
    def of(cls, step: float, steps_per_second: float, dt: float, speed: float) -> "Pace":
        wall = 1.0 / steps_per_second if steps_per_second > 0 else math.nan
        return cls(step, wall, dt, speed)

    @property
    def budget(self) -> float:
        """Wall time real time (times speed) allows a step: dt / speed; inf flat out."""
        return self.dt / self.speed if self.speed > 0 else math.inf

    @property
    def factor(self) -> float:
        """Simulated seconds per second of wall time (NaN: not measured)."""
        return self.dt / self.wall if self.wall > 0 else math.nan

    @property
    def slow(self) -> bool:
        """Asked for a pace and making less than SLOW_SHARE of it."""
        return self.speed > 0 and math.isfinite(self.factor) \
            and self.factor < SLOW_SHARE * self.speed

    @property
    def window(self) -> float:
        """Wall time per step beyond the step's cost, >= 0, when behind the pace asked or flat
        out (on pace the difference is the wait for the next step: NaN)."""
        if not (math.isfinite(self.wall) and math.isfinite(self.step)):
            return math.nan
        if self.speed > 0 and not self.slow:
            return math.nan
        return max(0.0, self.wall - self.step)

    def why(self) -> str:
        """Why the run is slower than the pace asked: the step's cost against the budget,
        and the window's share when it takes a tenth of the wall time or more."""
        ms = 1e3 * self.step
        cost = "—" if not math.isfinite(ms) else f"{ms:.1f}"
        budget = 1e3 * self.budget
        reason = (f"a step costs {cost} ms, real time allows {budget:.1f} ms"
                  if self.step > self.budget else
                  f"a step costs {cost} ms of the {budget:.1f} ms real time allows")
        window = self.window
        if math.isfinite(window) and window >= 0.1 * self.wall:
            reason += f"; the window adds {1e3 * window:.1f} ms per step"
        return reason
