"""Recording the 3D view to an MP4 (H.264 through the ffmpeg binary that the imageio-ffmpeg
wheel carries), at the simulation's rate: one video frame every `steps_per_frame` steps, so a
second of video is a second of simulated time, however long each frame took to draw.

The encoder runs in a thread of its own, fed from a queue, so the GUI never waits for it. The
video is written to a temporary file beside the target (lab.io.files' temporary name, so a killed
run's leftover is cleaned up like any other) and renamed over the target only once ffmpeg has
finished and the file is fsynced: a reader never sees half a video. Any failure is one line.
"""
from __future__ import annotations

import os
import queue
import threading
from pathlib import Path

import numpy as np

from lab.io.files import (OutputError, check_writable, destination, fsync_folder,
                       remove_stale_temps, temp_name)

VIDEO_FPS = 25.0  # frames per second of simulated time the video aims for
_DONE = object()


def steps_per_frame(dt: float, fps: float = VIDEO_FPS) -> int:
    """Steps of `dt` s between two video frames for about `fps` frames per simulated second."""
    return max(1, round(1.0 / (fps * dt)))


def even_size(width: int, height: int) -> tuple[int, int]:
    """H.264 in yuv420p wants even sides: the frame is cropped by a pixel where needed."""
    return max(2, width - width % 2), max(2, height - height % 2)


def fit(pixels: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """(h, w, 4) pixels brought to `size` (w, h): cropped, or padded with black (the view was
    resized while recording)."""
    w, h = size
    out = np.zeros((h, w, 4), dtype=np.uint8)
    ph, pw = min(h, pixels.shape[0]), min(w, pixels.shape[1])
    out[:ph, :pw] = pixels[:ph, :pw]
    return out


class VideoRecorder:
    """An MP4 being written to `path` from BGRA frames (h, w, 4) uint8 of size `size` (w, h,
    made even) at `fps` frames per second. `add` queues a frame; `finish` ends the video and
    puts it in place (or `cancel` drops it); `frames` counts those queued, `written` those
    encoded; `error` holds the first failure's one line."""

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float):
        import imageio_ffmpeg

        self.path = Path(path)
        check_writable(self.path)
        self.size = even_size(*size)
        self.fps = float(fps)
        self.frames = 0
        self.written = 0
        self.error = ""
        target = destination(self.path)
        remove_stale_temps(target.parent)
        self._target = target
        self._temp = target.parent / temp_name()
        self._queue: queue.Queue = queue.Queue(maxsize=8)
        self._writer = imageio_ffmpeg.write_frames(
            str(self._temp), self.size, pix_fmt_in="bgra", fps=self.fps, macro_block_size=2,
            quality=7, output_params=["-f", "mp4"], ffmpeg_log_level="error")
        self._writer.send(None)  # starts ffmpeg
        self._thread = threading.Thread(target=self._encode, name="video", daemon=True)
        self._thread.start()

    @property
    def seconds(self) -> float:
        """Length of the video so far (s of simulated time)."""
        return self.frames / self.fps

    def add(self, pixels: np.ndarray) -> None:
        """Queue one frame (BGRA, top row first); waits when the encoder is 8 frames behind."""
        if self.error:
            return
        self._queue.put(np.ascontiguousarray(fit(pixels, self.size)))
        self.frames += 1

    def _encode(self) -> None:
        while True:
            frame = self._queue.get()
            if frame is _DONE:
                break
            if self.error:
                continue
            try:
                self._writer.send(frame)
                self.written += 1
            except Exception as err:  # ffmpeg died (a full disk): said once, frames dropped
                self.error = f"cannot write {self.path}: {str(err).splitlines()[0]}"

    def finish(self) -> Path:
        """Close the video and rename it into place; OutputError (one line) if it failed, and
        then no file is left behind."""
        self._queue.put(_DONE)
        self._thread.join()
        try:
            self._writer.close()
        except Exception as err:
            self.error = self.error or f"cannot write {self.path}: {str(err).splitlines()[0]}"
        try:
            if self.error:
                raise OutputError(self.error)
            if self.written == 0:
                raise OutputError(f"cannot write {self.path}: no frame was recorded")
            fd = os.open(self._temp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self._temp, self._target)
            fsync_folder(self._target.parent)
        except OSError as err:
            raise OutputError(f"cannot write {self.path}: {err.strerror}") from None
        finally:
            self._remove_temp()
        return self.path

    def cancel(self) -> None:
        """Stop and remove what was written."""
        self._queue.put(_DONE)
        self._thread.join()
        try:
            self._writer.close()
        except Exception:
            pass
        self._remove_temp()

    def _remove_temp(self) -> None:
        try:
            os.unlink(self._temp)
        except FileNotFoundError:
            pass
