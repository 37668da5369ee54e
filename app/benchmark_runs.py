"""The window's comparisons of the solvers (the B key, the history bar's solve, the benchmark on
close): queued to the simulation thread, their results shown in a comparison window
(app.benchmark_window). A part of app.window.MainWindow, given a function that sends a command
to the thread, one that shows a status line, one told of each comparison window shown, and one
told how the benchmark on close ended ("done" or "failed") so that the window can close. Each
comparison is followed through a lab.report.job.Job sent with it: the worker reports the solver
under way, the time and an estimate; `cancel` (Esc, a second Q on close) ends it, the solvers
that finished written. A QObject of the GUI thread: the simulation thread's signals reach its
slots there."""
from __future__ import annotations

import sys
from typing import Callable

from PySide6.QtCore import QObject, Slot

from lab.report.job import SOLVER_BUDGET, Job
from lab.session import commands as cmd

from .benchmark_window import BenchmarkWindow


class BenchmarkRuns(QObject):
    """`windows`: the comparison windows shown; `last`: the latest result (app.worker
    .BenchmarkResult), None before one; `job`: the comparison under way (lab.report.job.Job),
    None when none runs; `budget`: each solver's seconds of solve time (lab.report.job
    .SOLVER_BUDGET)."""

    def __init__(self, send: Callable, status: Callable[[str], None], shown: Callable,
                 close_ended: Callable[[str], None], parent: QObject | None = None,
                 budget: float = SOLVER_BUDGET.default):
        super().__init__(parent)
        self._send = send
        self._status = status
        self._shown = shown
        self._close_ended = close_ended
        self.budget = budget
        self.windows: list[BenchmarkWindow] = []
        self.last = None
        self.job: Job | None = None
        self._closing = False  # the comparison under way ends the program when it ends

    def run(self, reason: str = "key", solvers: tuple[str, ...] = ()) -> None:
        """Queue a comparison of every solver (or `solvers`) on the current frozen problem,
        the step shown (worker thread); on close ("close"), of the run's latest step. One at a
        time: while one runs, another is refused, and closing lets the one under way end it."""
        if self.job is not None:
            if reason == "close":
                self._closing = True
                self._status("quitting once the benchmark under way ends (Esc or Q cancels "
                             "it, keeping the solvers done)")
            else:
                self._status("a benchmark is under way: Esc cancels it")
            return
        self._closing = reason == "close"
        self.job = Job(self.budget)
        self._status("benchmark on close queued (Esc or Q again cancels it, keeping the "
                     "solvers done)" if self._closing else "benchmark queued (Esc cancels it)")
        self._send(cmd.Benchmark(reason, solvers=tuple(solvers), job=self.job,
                                 latest=self._closing))

    def cancel(self) -> bool:
        """Cancel the comparison under way (Esc, a second Q): it ends within an iteration of
        the solve under way and writes the solvers that finished. False when none runs or
        its cancel was already asked."""
        job = self.job
        if job is None or job.cancelled:
            return False
        job.cancel()
        self._status("benchmark cancelled: writing the solvers done"
                     + ("; Q again quits at once, writing nothing" if self._closing else ""))
        return True

    @Slot(object)
    def done(self, result) -> None:
        self.job = None
        self.last = result
        self._status(result.text)
        if result.reason == "close" or self._closing:
            # Quitting never waits for the user: the files are the result, and this line says
            # where they are (the comparison window would close with this one).
            print(f"marbles: {result.text}", flush=True)
            self._close_ended("done")
            return
        if result.table is None or not result.table.solvers:
            return  # cancelled before a solver finished: the status line says so
        window = BenchmarkWindow(result.table, result.paths, result.meta)
        self.windows.append(window)
        window.show()
        # The keyboard goes to the new window, so that Esc or Ctrl+W closes it (a window
        # shown from a signal is not activated by every window manager, nor without one).
        window.raise_()
        window.activateWindow()
        self._shown(window)

    @Slot(str, str)
    def failed(self, reason: str, message: str) -> None:
        self.job = None
        sys.stderr.write(f"marbles: {message}\n")
        self._status(message)
        if reason == "close" or self._closing:
            self._close_ended("failed")

    def close_windows(self) -> None:
        for window in self.windows:
            window.close()
