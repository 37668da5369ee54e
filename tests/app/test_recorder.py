"""The video writer: the MP4 reads back with every frame queued, in order, at its rate,
written atomically; failures are one line and leave nothing behind."""
from __future__ import annotations

import os

import imageio.v2 as iio
import imageio_ffmpeg
import numpy as np
import pytest

from app.recorder import VideoRecorder, even_size, fit, steps_per_frame
from lab.io.files import OutputError


def frames_of(path):
    reader = iio.get_reader(str(path), "ffmpeg")
    try:
        return [frame for frame in reader]
    finally:
        reader.close()


def test_the_video_holds_every_frame_in_order_at_its_rate(tmp_path):
    path = tmp_path / "v.mp4"
    rec = VideoRecorder(path, (161, 121), 25.0)  # odd sides: cropped to even ones
    assert rec.size == (160, 120)
    for k in range(50):
        frame = np.zeros((121, 161, 4), dtype=np.uint8)
        frame[:, : 3 * k + 1, 1] = 255  # a green bar growing by 3 px a frame (BGRA)
        frame[..., 2] = 4 * k  # red rising
        rec.add(frame)
    assert not list(tmp_path.iterdir()) or all(p.name.startswith(".mb-")
                                               for p in tmp_path.iterdir())
    assert rec.finish() == path and rec.written == 50 and rec.seconds == 2.0
    assert imageio_ffmpeg.count_frames_and_secs(str(path)) == (50, 2.0)
    back = frames_of(path)
    assert len(back) == 50 and back[0].shape == (120, 160, 3)
    for k in (0, 20, 49):
        row = back[k][60].astype(int)
        bar = int(np.count_nonzero(row[:, 1] > 128))
        assert abs(bar - (3 * k + 1)) <= 2, (k, bar)
        assert abs(int(row[-1, 0]) - 4 * k) <= 6  # red, past the bar
    assert os.listdir(tmp_path) == ["v.mp4"]  # the temporary file became the video


def test_a_video_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path):
    with pytest.raises(OutputError, match="does not exist"):
        VideoRecorder(tmp_path / "no" / "v.mp4", (64, 48), 25.0)
    rec = VideoRecorder(tmp_path / "v.mp4", (64, 48), 25.0)
    with pytest.raises(OutputError, match="no frame was recorded"):
        rec.finish()
    rec = VideoRecorder(tmp_path / "w.mp4", (64, 48), 25.0)
    rec.add(np.zeros((48, 64, 4), np.uint8))
    rec.cancel()
    assert os.listdir(tmp_path) == []


def test_the_rate_is_the_simulations():
    assert steps_per_frame(0.02) == 2 and steps_per_frame(0.01) == 4 and steps_per_frame(0.1) == 1
    assert even_size(161, 120) == (160, 120)
    padded = fit(np.full((2, 3, 4), 9, np.uint8), (4, 3))
    assert padded.shape == (3, 4, 4) and padded[:2, :3].min() == 9 and padded[2].max() == 0
