"""Recording from the window, end to end under Xvfb with real key events: Ctrl+R, three
seconds of simulated time, Ctrl+R gives an MP4 with one frame per 2 steps of 0.02 s, and the
simulation runs on afterwards."""
from __future__ import annotations

import imageio_ffmpeg
import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.app.test_window import make_window, wait_state  # noqa: F401 (fixture)
from tests.app.conftest import HANG_MS


def test_a_three_second_recording_from_the_key(qtbot, make_window, tmp_path):
    """Ctrl+R, 3 s of simulated time, Ctrl+R: an MP4 whose frames are the record frames the
    simulation sent, one per 2 steps of 0.02 s (25 per simulated second)."""
    window = make_window(scene="column", benchmark_out=str(tmp_path))
    window.activateWindow()
    qtbot.waitActive(window)
    window.view.setFocus()
    log = window.frame_log
    start = len(log)
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert window.recording.recorder is not None and window.recording.badge.isVisible()
    first = wait_state(qtbot, window, lambda f: f.record, since=start)
    t0 = first.time
    wait_state(qtbot, window, lambda f: f.record and f.time >= t0 + 3.0 - 1e-9, timeout=HANG_MS,
               since=start)
    qtbot.waitUntil(lambda: window.recording.recorder.seconds >= 3.0, timeout=HANG_MS)
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert window.recording.recorder is None and not window.recording.badge.isVisible()
    assert window.status_label.text().startswith("video saved: ")
    videos = list(tmp_path.glob("marbles-*.mp4"))
    assert len(videos) == 1 and not list(tmp_path.glob(".mb-*"))
    times = [f.time for f in log[start:] if f.record]
    written = int(window.status_label.text().split("(")[1].split(" frames")[0])
    assert written in (len(times), len(times) - 1)  # the last may come after the stop
    np.testing.assert_allclose(np.diff(times[:written]), 0.04, atol=1e-9)  # every 2 steps
    count, seconds = imageio_ffmpeg.count_frames_and_secs(str(videos[0]))
    assert count == written and 75 <= count <= 80 and seconds == pytest.approx(count / 25)
    steps = window.latest.steps
    qtbot.waitUntil(lambda: window.latest.steps > steps + 10, timeout=10000)  # runs on
