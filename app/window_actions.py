"""The main window's actions on files: screenshots, state files, the exported problem and
the benchmark with its comparison window (a mixin of app.window.MainWindow, which owns the
widgets, `sim`, `options` and the close protocol these methods take part in)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtCore import QTimer

from lab.io.files import OutputError
from lab.session import commands as cmd

from . import dialogs
from .benchmark_window import BenchmarkWindow
from .images import write_image
from .worker import BenchmarkResult


class WindowActions:
    """Mixin: needs `sim`, `options`, `status_label`, `benchmark_windows`, `screenshots`,
    `exit_code`, `_close_benchmark`, `_finish_close` and `benchmarkShown` from the window."""

    # --------------------------------------------------------------------------- screenshot
    def grab_image(self):
        """The whole window, 3D view included, as a QImage."""
        return self.grab().toImage()

    def save_screenshot(self, path: str, fatal: bool = True) -> bool:
        """The window as an image file, written atomically like every output (lab.io.files: a
        temporary name in the same folder, then a rename); the folder is created if needed.
        A failure is one line on stderr and in the status bar; `fatal` (the scripted
        --screenshot, whose whole point is the file) also makes the exit code 1."""
        try:
            write_image(self.grab_image(), path, make_folder=True)
        except OutputError as err:
            sys.stderr.write(f"marbles: error: screenshot not saved: {err}\n")
            self.status_label.setText(f"screenshot not saved: {err}")
            if fatal:
                self.exit_code = 1
            return False
        self.screenshots.append(str(path))
        self.status_label.setText(f"screenshot saved: {path}")
        return True

    def _screenshot_key(self) -> None:
        name = time.strftime("marbles-%Y%m%d-%H%M%S.png")
        self.save_screenshot(str(Path(self.options.benchmark_out) / name), fatal=False)

    # --------------------------------------------------------------------------- files
    def _default_path(self, stem: str, suffix: str) -> str:
        """A new name in the output folder: stem-YYYYmmdd-HHMMSS.suffix."""
        return str(Path(self.options.benchmark_out) / time.strftime(f"{stem}-%Y%m%d-%H%M%S")) \
            + suffix

    def _save_state(self) -> None:
        path = dialogs.ask_save_path(self, "Save the state", self._default_path(
            "marbles-state", ".npz"), dialogs.STATES)
        if path:
            self.sim.send(cmd.SaveState(path))

    def _open_state(self) -> None:
        path = dialogs.ask_open_path(self, "Open a saved state", self.options.benchmark_out,
                                     dialogs.STATES)
        if path:
            self.sim.send(cmd.OpenState(path))

    def _export_problem(self) -> None:
        path = dialogs.ask_save_path(self, "Export the contact problem", self._default_path(
            "marbles-lcp", ".npz"), dialogs.PROBLEMS)
        if path:
            self.sim.send(cmd.ExportProblem(path))

    # --------------------------------------------------------------------------- benchmark
    def run_benchmark(self, reason: str = "key", solvers: tuple[str, ...] = ()) -> None:
        """Queue a comparison of every solver (or `solvers`) on the current frozen problem,
        the step shown (worker thread)."""
        self.status_label.setText("benchmark queued")
        self.sim.send(cmd.Benchmark(reason, solvers=tuple(solvers)))

    def _on_benchmark_done(self, result: BenchmarkResult) -> None:
        self.last_benchmark = result
        written = f"benchmark written: {', '.join(result.paths)}"
        self.status_label.setText(written)
        if result.reason == "close":
            # Quitting never waits for the user: the files are the result, and this line says
            # where they are (the comparison window would close with this one).
            print(f"marbles: {written}", flush=True)
            self._close_benchmark = "done"
            QTimer.singleShot(0, self._finish_close)
            return
        window = BenchmarkWindow(result.table, result.paths, result.meta)
        self.benchmark_windows.append(window)
        window.show()
        self.benchmarkShown.emit(window)

    def _on_benchmark_failed(self, reason: str, message: str) -> None:
        sys.stderr.write(f"marbles: {message}\n")
        self.status_label.setText(message)
        if reason == "close":
            self._close_benchmark = "failed"
            QTimer.singleShot(0, self._finish_close)
