"""The file dialogs' seam: each asks Qt's dialog with the caption, start and filters it is
given and hands back only the path ("" when the user cancelled). The window's use of them,
with these functions replaced, is in test_window_e2e.py (a real modal dialog would wait for a
user)."""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QWidget

from app import dialogs


def test_the_dialogs_give_the_path_or_nothing(qtbot, monkeypatch):
    asked = []

    def fake(answer):
        def dialog(parent, caption, start, filters):
            asked.append((parent, caption, start, filters))
            return answer, filters.split(";;")[0]
        return staticmethod(dialog)

    parent = QWidget()
    qtbot.addWidget(parent)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake("/tmp/a.npz"))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", fake(""))
    assert dialogs.ask_save_path(parent, "Save", "/tmp/x.npz", dialogs.STATES) == "/tmp/a.npz"
    assert dialogs.ask_open_path(parent, "Open", "/tmp", dialogs.PROBLEMS) == ""
    assert asked == [(parent, "Save", "/tmp/x.npz", dialogs.STATES),
                     (parent, "Open", "/tmp", dialogs.PROBLEMS)]
    assert dialogs.STATES.endswith("(*.npz)") and dialogs.PROBLEMS.startswith(
        "LCP snapshots (*.npz);;") and "(*.hdf5 *.h5)" in dialogs.PROBLEMS
