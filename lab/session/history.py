"""The history of a run: the last steps in a ring buffer bounded by memory, the oldest going
first (a few thousand at 350 marbles). Every KEYFRAME_EVERY-th step keeps the simulation's
Checkpoint (the world's moving state and the impulses the next step warm-starts from); every
step keeps its StepReport and what making it again needs (its options, the hand's spring). A
step is shown by making the steps again from the keyframe before it, bit for bit the same:
copying the whole state at every step would write tens of kB of memory a step that nothing
reads again (13% of the bowl's step time). Qt-free; lab/session/history_commands.py is the
Session's part (scrubbing, going on from a step of the past, comparing the solvers on it).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from solver.methods.driver import SolveResult
from solver.step import Checkpoint, StepReport

MIB = 1 << 20
DEFAULT_BUDGET = 32 * MIB  # bytes: some 4000 steps of the window's 350-marble bowl
ENTRY_BYTES = 1024  # about what a step's report and references cost beside its checkpoint
# A keyframe every this many steps: showing a step makes at most this many again (a few ms).
KEYFRAME_EVERY = 10
_NO_IMPULSES = np.empty(0)


@dataclass(frozen=True)
class Entry:
    """One step of the history: its report (None for the first state kept, which no step of the
    history made, and its impulses left out: making the step again gives them) and its
    checkpoint on a keyframe (else None)."""

    steps: int
    checkpoint: Checkpoint | None
    report: StepReport | None
    nbytes: int
    # The dragged marble's index and velocity (3,) m/s as the mouse's spring left it before
    # this step, to make the step again exactly; None without a drag.
    drag: tuple | None = None
    options: object = None  # the StepOptions the step was made with


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

    def add(self, checkpoint: Checkpoint | None, report: StepReport | None = None,
            drag: tuple | None = None, options=None, steps: int | None = None) -> None:
        """Keep a step (the one after the newest, or the first one, which must have its
        checkpoint): `checkpoint` on a keyframe, else None with `steps` its number; then drop
        the oldest steps while over budget, so that the oldest left is a keyframe. `drag`,
        `options`: see Entry."""
        steps = checkpoint.steps if checkpoint is not None else int(steps)
        if self._entries and steps != self.last + 1:
            raise ValueError(f"step {steps} does not follow step {self.last} of the history")
        if checkpoint is None and not self._entries:
            raise ValueError("the first step kept needs its checkpoint")
        if report is not None:
            r = report.result  # made directly: dataclasses.replace costs twice as much
            report = StepReport(report.timings, report.contacts, SolveResult(
                _NO_IMPULSES, r.status, r.iterations, r.residual, r.residual_initial, r.trace,
                r.seconds, r.products, r.info), report.method)
        size = (checkpoint.nbytes if checkpoint is not None else 0) + ENTRY_BYTES
        entry = Entry(steps, checkpoint, report, size, drag, options)
        self._entries.append(entry)
        self._bytes += entry.nbytes
        while self._bytes > self.budget and len(self._entries) > 1:
            self._drop_oldest()
            while len(self._entries) > 1 and self._entries[0].checkpoint is None:
                self._drop_oldest()

    def _drop_oldest(self) -> None:
        self._bytes -= self._entries.popleft().nbytes
        self.dropped += 1

    def keyframe(self, steps: int) -> Entry:
        """The newest entry with a checkpoint at or before step `steps` (KeyError outside)."""
        k = self.get(steps).steps
        while self._entries[k - self.first].checkpoint is None:
            k -= 1
        return self._entries[k - self.first]

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
