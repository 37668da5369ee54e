"""The window's file actions as a part on its own, with only the functions it is given: the
screenshot written or refused with its status line, the state and problem files asked for
through the dialogs' seam and sent as Session commands, names made in the folder asked for
each time (a change of the output folder counts at once). The window's keys for them, with
real events: test_window.py, test_window_e2e.py, test_window_keys_and_readouts.py."""
from __future__ import annotations

import re

from PySide6.QtGui import QColor, QImage

from app import dialogs
from app.file_actions import FileActions
from lab.session import commands as cmd


def _image() -> QImage:
    image = QImage(8, 6, QImage.Format.Format_RGB32)
    image.fill(QColor(10, 200, 30))
    return image


def _part(folder):
    sent, lines = [], []
    part = FileActions(None, _image, sent.append, lines.append, lambda: str(folder[0]))
    return part, sent, lines


def test_a_screenshot_is_written_or_refused_in_one_status_line(qtbot, tmp_path, capsys):
    folder = [tmp_path / "shots"]
    part, sent, lines = _part(folder)
    part.screenshot()
    (shot,) = part.screenshots
    assert re.fullmatch(r"marbles-\d{8}-\d{6}\.png", (tmp_path / "shots" / shot).name)
    assert QImage(shot).size() == _image().size() and lines == [f"screenshot saved: {shot}"]
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    assert not part.save_screenshot(str(blocker / "sub" / "x.png"))
    assert lines[-1].startswith("screenshot not saved: ") and len(part.screenshots) == 1
    assert "marbles: error: screenshot not saved: " in capsys.readouterr().err
    assert sent == []


def test_the_files_asked_for_become_session_commands(qtbot, tmp_path, monkeypatch):
    folder = [tmp_path]
    part, sent, _ = _part(folder)
    asked = []

    def answer(path):
        def dialog(parent, caption, start, filters):
            asked.append((caption, start, filters))
            return path
        return dialog

    monkeypatch.setattr(dialogs, "ask_save_path", answer("/x/state.npz"))
    monkeypatch.setattr(dialogs, "ask_open_path", answer("/x/old.npz"))
    part.save_state()
    part.open_state()
    monkeypatch.setattr(dialogs, "ask_save_path", answer(""))  # cancelled: nothing sent
    folder[0] = tmp_path / "elsewhere"
    part.export_problem()
    assert sent == [cmd.FreezeState(), cmd.SaveState("/x/state.npz", frozen=True),
                    cmd.OpenState("/x/old.npz")]
    sent.clear()
    part.save_state()  # cancelled: the state kept at the key press is forgotten
    assert sent == [cmd.FreezeState(), cmd.FreezeState(drop=True)]
    assert asked[0][0] == "Save the state" and asked[0][2] == dialogs.STATES
    assert re.fullmatch(re.escape(str(tmp_path)) + r"/marbles-state-\d{8}-\d{6}\.npz",
                        asked[0][1])
    assert asked[1] == ("Open a saved state", str(tmp_path), dialogs.STATES)
    assert asked[2][1].startswith(str(tmp_path / "elsewhere" / "marbles-lcp-"))
    assert asked[2][2] == dialogs.PROBLEMS
