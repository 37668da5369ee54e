"""The window's comparisons of the solvers (the B key, the history bar's solve, the benchmark on
close): queued to the simulation thread, their results shown in a comparison window
(app.benchmark_window). A part of app.window.MainWindow, given a function that sends a command
to the thread, one that shows a status line, one told of each comparison window shown, and one
told how the benchmark on close ended ("done" or "failed") so that the window can close. A
QObject of the GUI thread: the simulation thread's signals reach its slots there."""
from __future__ import annotations

import sys
from typing import Callable

from PySide6.QtCore import QObject, Slot

from lab.session import commands as cmd

from .benchmark_window import BenchmarkWindow


class BenchmarkRuns(QObject):
    """`windows`: the comparison windows shown; `last`: the latest result (app.worker
    .BenchmarkResult), None before one."""

    def __init__(self, send: Callable, status: Callable[[str], None], shown: Callable,
                 close_ended: Callable[[str], None], parent: QObject | None = None):
        super().__init__(parent)
        self._send = send
        self._status = status
        self._shown = shown
        self._close_ended = close_ended
        self.windows: list[BenchmarkWindow] = []
        self.last = None

    def run(self, reason: str = "key", solvers: tuple[str, ...] = ()) -> None:
        """Queue a comparison of every solver (or `solvers`) on the current frozen problem,
        the step shown (worker thread)."""
        self._status("benchmark queued")
        self._send(cmd.Benchmark(reason, solvers=tuple(solvers)))

    @Slot(object)
    def done(self, result) -> None:
        self.last = result
        written = f"benchmark written: {', '.join(result.paths)}"
        self._status(written)
        if result.reason == "close":
            # Quitting never waits for the user: the files are the result, and this line says
            # where they are (the comparison window would close with this one).
            print(f"marbles: {written}", flush=True)
            self._close_ended("done")
            return
        window = BenchmarkWindow(result.table, result.paths, result.meta)
        self.windows.append(window)
        window.show()
        self._shown(window)

    @Slot(str, str)
    def failed(self, reason: str, message: str) -> None:
        sys.stderr.write(f"marbles: {message}\n")
        self._status(message)
        if reason == "close":
            self._close_ended("failed")

    def close_windows(self) -> None:
        for window in self.windows:
            window.close()
