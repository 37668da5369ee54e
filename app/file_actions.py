"""The window's actions on files: screenshots, state files and the exported problem. A part of
app.window.MainWindow, given only what it uses: the widget its dialogs belong to, a function
that grabs the window's image, one that sends a Session command, one that shows a status line,
and one that gives the output folder."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

from lab.io.files import OutputError
from lab.session import commands as cmd

from . import dialogs
from .images import write_image


class FileActions:
    """`screenshots`: the paths of the screenshots written, in order."""

    def __init__(self, parent, grab: Callable, send: Callable, status: Callable[[str], None],
                 folder: Callable[[], str]):
        self._parent = parent
        self._grab = grab
        self._send = send
        self._status = status
        self._folder = folder
        self.screenshots: list[str] = []

    def save_screenshot(self, path: str) -> bool:
        """The window as an image file, written atomically like every output (lab.io.files: a
        temporary name in the same folder, then a rename); the folder is created if needed.
        A failure is one line on stderr and in the status bar, and False."""
        try:
            write_image(self._grab(), path, make_folder=True)
        except OutputError as err:
            sys.stderr.write(f"marbles: error: screenshot not saved: {err}\n")
            self._status(f"screenshot not saved: {err}")
            return False
        self.screenshots.append(str(path))
        self._status(f"screenshot saved: {path}")
        return True

    def screenshot(self) -> None:
        """The P key: a screenshot named by the time, in the output folder."""
        self.save_screenshot(self.default_path("marbles", ".png"))

    def default_path(self, stem: str, suffix: str) -> str:
        """A new name in the output folder: stem-YYYYmmdd-HHMMSS.suffix."""
        return str(Path(self._folder()) / time.strftime(f"{stem}-%Y%m%d-%H%M%S")) + suffix

    def save_state(self) -> None:
        """Ctrl+S: the state at the key press, kept while the run goes on behind the dialog
        that asks for its name, then written under that name (or forgotten)."""
        self._send(cmd.FreezeState())
        path = dialogs.ask_save_path(self._parent, "Save the state", self.default_path(
            "marbles-state", ".npz"), dialogs.STATES)
        self._send(cmd.SaveState(path, frozen=True) if path else cmd.FreezeState(drop=True))

    def open_state(self) -> None:
        path = dialogs.ask_open_path(self._parent, "Open a saved state", self._folder(),
                                     dialogs.STATES)
        if path:
            self._send(cmd.OpenState(path))

    def export_problem(self) -> None:
        path = dialogs.ask_save_path(self._parent, "Export the contact problem",
                                     self.default_path("marbles-lcp", ".npz"), dialogs.PROBLEMS)
        if path:
            self._send(cmd.ExportProblem(path))
