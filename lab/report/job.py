"""A long solver comparison as a front end follows and ends it (the desktop's B key, its history
bar's "Solve this step" and the benchmark on quit): which solver runs, for how long, an estimate
of what is left, a time budget for each solver, and a cancel that keeps what finished.

`compare` (lab.report.compare) calls `solver_started` before each solver and hands `check` to
every solve as its per-iteration observer, so a cancel from any thread ends the comparison
within one iteration of the solve under way, not at the end of that solver's run. Qt-free.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable

from solver.params import Param

SOLVER_BUDGET = Param("solver_budget", 10.0, float, "seconds of solve time each solver may take "
                      "in a comparison of the window (B, Solve this step, on quit); one that "
                      "runs out is stopped there and reported so", "s", lo=0.0, lo_open=True,
                      hi=1e6)
PERIOD = 0.25  # s between two reports while a solver runs


class Cancelled(Exception):
    """A comparison ended early: by Job.cancel, or by the program's end."""


@dataclass(frozen=True)
class JobProgress:
    """Where a comparison is: solver `index` (from 0) of `total` runs, for `solver_seconds` of
    wall time, the comparison for `seconds`; `left`: an estimate of the wall seconds left (None
    before a solver finished); `budget`: each solver's solve-time budget (s, None: none)."""

    solver: str
    index: int
    total: int
    seconds: float
    solver_seconds: float
    left: float | None
    budget: float | None

    def text(self) -> str:
        """'benchmark: newton (11/15) for 3 s, 42 s in all, about 35 s left (10 s a solver at
        most); Esc cancels'."""
        left = "estimating" if self.left is None else f"about {self.left:.0f} s left"
        budget = "" if self.budget is None else f" ({self.budget:g} s a solver at most)"
        return (f"benchmark: {self.solver} ({self.index + 1}/{self.total}) for "
                f"{self.solver_seconds:.0f} s, {self.seconds:.0f} s in all, {left}{budget}; "
                "Esc cancels, keeping the solvers done")


class Job:
    """One comparison under way. `cancel()` may be called from any thread; `discard`: the
    finished solvers are not to be written either (the program is ending). `report(progress)`
    (JobProgress) is called when a solver starts and at most every PERIOD s while it runs, in
    the comparison's thread."""

    def __init__(self, solver_budget: float | None = SOLVER_BUDGET.default,
                 report: Callable[[JobProgress], None] | None = None):
        self.solver_budget = None if solver_budget is None else float(solver_budget)
        self.report = report
        self.discard = False
        self._cancel = threading.Event()
        self.total = 0
        self.solver = ""
        self.index = 0
        self.walls: list[float] = []  # wall seconds of each solver finished
        self._started = time.perf_counter()
        self._solver_started = self._started
        self._reported = -math.inf

    def cancel(self, discard: bool = False) -> None:
        """End the comparison at its next check (thread-safe)."""
        self.discard = self.discard or discard
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def begin(self, total: int) -> None:
        """The comparison of `total` solvers starts (its clock too)."""
        self.total = int(total)
        self._started = time.perf_counter()

    def solver_started(self, name: str, index: int) -> None:
        """Solver `index` (from 0) starts: Cancelled if cancelled, else reported."""
        now = time.perf_counter()
        if self.solver:  # the one before has finished
            self.walls.append(now - self._solver_started)
        self.solver, self.index, self._solver_started = name, int(index), now
        self._reported = -math.inf
        self.check()

    def check(self, _lam=None) -> None:
        """After every iteration of a solve (its observer): Cancelled if cancelled; a report at
        most every PERIOD s."""
        if self._cancel.is_set():
            raise Cancelled("cancelled")
        if self.report is None:
            return
        now = time.perf_counter()
        if now - self._reported >= PERIOD:
            self._reported = now
            self.report(self.progress(now))

    def progress(self, now: float | None = None) -> JobProgress:
        """Where the comparison is now; the time left is the mean wall time of the solvers
        finished times those still to come, less what the one under way has had."""
        now = time.perf_counter() if now is None else now
        running = now - self._solver_started
        left = None
        if self.walls:
            mean = sum(self.walls) / len(self.walls)
            left = max(mean - running, 0.0) + mean * max(self.total - self.index - 1, 0)
        return JobProgress(self.solver, self.index, self.total, now - self._started, running,
                           left, self.solver_budget)
