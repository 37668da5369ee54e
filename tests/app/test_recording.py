"""Recording from the window, end to end under Xvfb with real key events: Ctrl+R, three
seconds of simulated time, Ctrl+R gives an MP4 of 25 frames per simulated second, and the
simulation runs on afterwards; an encoder that blocks slows neither the simulation nor the
window, and the video is complete once stopped."""
from __future__ import annotations

import imageio_ffmpeg
import pytest
from PySide6.QtCore import Qt

from tests.app.test_recorder import BlockedEncoder
from tests.app.test_window import make_window  # noqa: F401 (fixture)
from tests.app.conftest import HANG_MS


def ctrl_r(qtbot, window):
    qtbot.keyClick(window.focusWidget(), Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)


def test_a_three_second_recording_from_the_key(qtbot, make_window, tmp_path):
    """Ctrl+R, 3 s of simulated time, Ctrl+R: an MP4 whose frames are 1/25 s of simulated
    time apart, as many as the recorder says it wrote."""
    window = make_window(scene="column", benchmark_out=str(tmp_path))
    window.activateWindow()
    qtbot.waitActive(window)
    window.view.setFocus()
    ctrl_r(qtbot, window)
    assert window.recording.recorder is not None and window.recording.badge.isVisible()
    t0 = window.latest.time
    qtbot.waitUntil(lambda: window.recording.recorder.seconds >= 3.0, timeout=HANG_MS)
    assert window.latest.time >= t0 + 3.0 - 0.1  # the video's time is the simulation's
    ctrl_r(qtbot, window)
    assert window.recording.recorder is None and not window.recording.badge.isVisible()
    assert window.status_label.text().startswith("video saved: ")
    videos = list(tmp_path.glob("marbles-*.mp4"))
    assert len(videos) == 1 and not list(tmp_path.glob(".mb-*"))
    written = int(window.status_label.text().split("(")[1].split(" frames")[0])
    count, seconds = imageio_ffmpeg.count_frames_and_secs(str(videos[0]))
    assert count == written and count >= 75 and seconds == pytest.approx(count / 25)
    steps = window.latest.steps
    qtbot.waitUntil(lambda: window.latest.steps > steps + 10, timeout=10000)  # runs on


def test_a_blocked_encoder_slows_nothing_and_the_video_is_complete(qtbot, make_window, tmp_path):
    """The encoder blocks on its first frame: the simulation steps on meanwhile (a lockstep
    with the video would stop it), images that find the queue full are dropped and said so,
    and after the stop every frame queued is in the file."""
    window = make_window(scene="column", benchmark_out=str(tmp_path))
    encoder = BlockedEncoder()
    window.recording.writer = encoder
    window.view.setFocus()
    ctrl_r(qtbot, window)
    rec = window.recording.recorder
    try:
        qtbot.waitUntil(encoder.entered.is_set, timeout=HANG_MS)  # the GUI thread goes on
        steps = window.latest.steps
        qtbot.waitUntil(lambda: window.latest.steps > steps + 50, timeout=HANG_MS)
        qtbot.waitUntil(lambda: rec.dropped > 0, timeout=HANG_MS)
        assert rec.written == 0 and encoder.sent == []  # still blocked on the first frame
    finally:
        encoder.go.set()
    ctrl_r(qtbot, window)
    text = window.status_label.text()
    assert text.startswith("video saved: ") and "dropped" in text, text
    video = next(tmp_path.glob("marbles-*.mp4"))
    w, h = rec.size
    assert rec.written == rec.frames == len(encoder.sent) > 1
    assert video.stat().st_size == rec.written * w * h * 4
