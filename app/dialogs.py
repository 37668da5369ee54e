"""The file dialogs of the program, in one place: tests replace these functions to drive the
window without a real dialog (a modal dialog would wait for a user)."""
from __future__ import annotations

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtWidgets import QFileDialog, QWidget

STATES = "State snapshots (*.npz)"
PROBLEMS = "LCP snapshots (*.npz);;FCLIB problems, frictional (*.hdf5 *.h5)"
IMAGES = "Images (*.png *.jpg)"
VIDEOS = "MP4 videos (*.mp4)"


def ask_save_path(parent: QWidget, caption: str, start: str, filters: str) -> str:
    """The file the user names to write ("" when cancelled)."""
    path, _ = QFileDialog.getSaveFileName(parent, caption, start, filters)
    return path


def ask_open_path(parent: QWidget, caption: str, start: str, filters: str) -> str:
    """The existing file the user picks to read ("" when cancelled)."""
    path, _ = QFileDialog.getOpenFileName(parent, caption, start, filters)
    return path
