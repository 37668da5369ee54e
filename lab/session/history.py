"""The history of a run: the last steps, each with what restoring it exactly needs (the
simulation's Checkpoint: the world's moving state, the impulses the next step warm-starts from,
the step's frozen contact problem) and its StepReport, in a ring buffer bounded by memory. The
oldest steps go first; how many fit depends on the pile (a few hundred at 350 marbles).
Qt-free; lab/session/history_commands.py is the Session's part (scrubbing, going on from a
step of the past, comparing the solvers on it).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from solver.step import Checkpoint, StepReport

MIB = 1 << 20
# About 360 steps of the window's bowl (350 marbles with rolling resistance: 93 kB a step, the
# state and the impulses; the problem is made again when a step is shown), 590 without friction.
# Small on purpose: once full, a new step reuses the memory of the one dropped, where a growing
# history takes new pages from the system at every step (15 page faults a step on the bowl).
DEFAULT_BUDGET = 32 * MIB  # bytes


@dataclass(frozen=True)
class Entry:
    """One step of the history: its checkpoint and report (None for the first state kept,
    which no step of the history made)."""

    checkpoint: Checkpoint
    report: StepReport | None
    nbytes: int
    # The dragged marble's index and velocity (3,) m/s as the mouse's spring left it before
    # this step, to make the step again exactly; None without a drag.
    drag: tuple | None = None
    options: object = None  # the StepOptions the step was made with

    @property
    def steps(self) -> int:
        return self.checkpoint.steps


@dataclass(frozen=True)
class HistorySpan:
    """What a display shows of the history: steps first..last kept (step numbers of the run),
    `shown` the one the world is at, `capacity` about how many steps fit the budget at this
    pile's size, `nbytes` held."""

    first: int
    last: int
    shown: int
    capacity: int
    nbytes: int

    @property
    def back(self) -> int:
        """Steps from the shown one to the newest (0: the present)."""
        return self.last - self.shown


class History:
    """Consecutive steps, newest last, at most `budget` bytes (the newest is always kept)."""

    def __init__(self, budget: int = DEFAULT_BUDGET):
        if budget < 0:
            raise ValueError(f"history budget must be >= 0 bytes, got {budget}")
        self.budget = int(budget)
        self._entries: deque[Entry] = deque()
        self._bytes = 0
        self.dropped = 0  # steps that left by the oldest end since the last clear

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def first(self) -> int:
        return self._entries[0].steps

    @property
    def last(self) -> int:
        return self._entries[-1].steps

    @property
    def nbytes(self) -> int:
        return self._bytes

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
        self.dropped = 0

    def add(self, checkpoint: Checkpoint, report: StepReport | None = None,
            drag: tuple | None = None, options=None) -> None:
        """Keep the step of `checkpoint` (the one after the newest, or the first one), then
        drop the oldest steps while over budget. `report`'s impulses are the checkpoint's;
        `drag`, `options`: see Entry."""
        if self._entries and checkpoint.steps != self.last + 1:
            raise ValueError(f"step {checkpoint.steps} does not follow step {self.last} of "
                             "the history")
        if report is not None:
            report = replace(report, result=replace(report.result, lam=checkpoint.lam))
        entry = Entry(checkpoint, report, checkpoint.nbytes, drag, options)
        self._entries.append(entry)
        self._bytes += entry.nbytes
        while self._bytes > self.budget and len(self._entries) > 1:
            self._bytes -= self._entries.popleft().nbytes
            self.dropped += 1

    def get(self, steps: int) -> Entry:
        """The entry of step `steps`; KeyError (one line) outside first..last."""
        if not self._entries or not self.first <= steps <= self.last:
            held = f"steps {self.first} to {self.last}" if self._entries else "no steps"
            raise KeyError(f"step {steps} is not in the history (it holds {held})")
        return self._entries[steps - self.first]

    def truncate(self, steps: int) -> int:
        """Drop the steps after `steps` (a future being replaced); returns how many."""
        count = 0
        while self._entries and self.last > steps:
            self._bytes -= self._entries.pop().nbytes
            count += 1
        return count

    def capacity(self) -> int:
        """About how many steps fit the budget at the mean size of those held (at least 1)."""
        if not self._entries:
            return 0
        mean = self._bytes / len(self._entries)
        return max(1, int(self.budget // mean)) if mean > 0 else len(self._entries)

    def span(self, shown: int) -> HistorySpan | None:
        """The history as a display shows it, with the world at step `shown`; None if empty."""
        if not self._entries:
            return None
        return HistorySpan(self.first, self.last, shown, self.capacity(), self._bytes)


def history_text(span: HistorySpan | None) -> str:
    """'step 40 of 0–60 (20 back), ~700 fit (23 MiB)', or that none is kept."""
    if span is None:
        return "history: no steps kept yet"
    back = f" ({span.back} back)" if span.back else ""
    return (f"step {span.shown} of {span.first}–{span.last}{back}, ~{span.capacity} fit "
            f"({span.nbytes / MIB:.0f} MiB)")
