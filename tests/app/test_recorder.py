"""The video writer: the MP4 reads back with every frame queued, in order, at its rate,
written atomically; failures are one line and leave nothing behind; images fill the frames of
their simulated time, and a blocked encoder never makes `add` wait."""
from __future__ import annotations

import os
import threading
import time

import imageio.v2 as iio
import imageio_ffmpeg
import numpy as np
import pytest

from app.recorder import (MAX_REPEAT, QUEUE_IMAGES, VideoRecorder, even_size, fit,
                          steps_per_frame)
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
        while rec.backlog >= QUEUE_IMAGES:  # an image that finds the queue full is dropped
            time.sleep(0.001)
        assert rec.add(frame, 0.04 * k)
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


class BlockedEncoder:
    """A fake encoder that writes raw frames to its file, each `send` waiting for `go`."""

    def __init__(self):
        self.go = threading.Event()
        self.entered = threading.Event()
        self.sent = []

    def __call__(self, path, size, fps):
        self.file = open(path, "wb")
        return self

    def send(self, frame):
        self.entered.set()
        self.go.wait(30)
        self.sent.append(int(frame[0, 0, 0]))
        self.file.write(frame.tobytes())

    def close(self):
        self.file.close()


def test_images_fill_the_frames_of_their_time_and_a_blocked_encoder_drops_not_waits(tmp_path):
    encoder = BlockedEncoder()
    rec = VideoRecorder(tmp_path / "v.mp4", (4, 2), 25.0, encoder)

    def image(value):
        return np.full((2, 4, 4), value, np.uint8)

    assert rec.add(image(1), 10.0)  # the video starts at the first image's time
    assert not rec.add(image(2), 10.02)  # the same frame: not needed
    assert rec.add(image(3), 10.12)  # 3 frames due: 0.04, 0.08 repeat it, 0.12
    assert encoder.entered.wait(10)  # the encoder holds the first frame
    added = [rec.add(image(10 + k), 10.16 + 0.04 * k) for k in range(QUEUE_IMAGES + 3)]
    assert not all(added) and rec.dropped >= 1  # never waited: dropped instead
    encoder.go.set()
    while rec.backlog:
        time.sleep(0.001)
    assert rec.add(image(99), 20.0)  # far ahead: at most MAX_REPEAT frames of one image
    assert rec.frames + rec.skipped == 251 and rec.skipped > 0  # 10 s at 25 frames/s
    assert rec.finish() == tmp_path / "v.mp4"
    assert rec.written == rec.frames == len(encoder.sent)
    assert os.path.getsize(tmp_path / "v.mp4") == rec.written * 4 * 2 * 4  # every frame is in
    assert encoder.sent[:4] == [1, 3, 3, 3] and encoder.sent[-MAX_REPEAT:] == [99] * MAX_REPEAT
    assert "repeat" in rec.shortfall and "dropped" in rec.shortfall and "left out" in rec.shortfall
