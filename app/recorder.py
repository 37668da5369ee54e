"""Recording the 3D view to an MP4 (H.264 through the ffmpeg binary that the imageio-ffmpeg
wheel carries), at the simulation's rate: a second of video is a second of simulated time.

Neither the simulation nor the GUI waits for the video. Each image the view renders comes with
the simulated time it shows; the video's frames are the slots of 1/fps simulated seconds, and
an image fills the slots up to its time that no image filled yet (where the view drew fewer
images than the video has frames, an image is repeated: said as `repeated`). The encoder runs
in a thread of its own (and ffmpeg in its own process) behind a queue of QUEUE_IMAGES: an image
that finds the queue full is dropped (`dropped`), and the next one fills its slots. The video
is written to a temporary file beside the target (lab.io.files' temporary name, so a killed
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
QUEUE_IMAGES = 8  # images waiting for the encoder; one more is dropped
# At most this many video frames from one image: stepping flat out far faster than the view
# draws, the video leaves the simulated time between two images out (said as `skipped`) rather
# than have ffmpeg encode thousands of copies of one image.
MAX_REPEAT = 25
_DONE = object()


def ffmpeg_writer(path: str, size: tuple[int, int], fps: float):
    """The encoder: a started imageio-ffmpeg generator taking BGRA frames of `size` (w, h) by
    `send` and finishing the file on `close`."""
    import imageio_ffmpeg

    writer = imageio_ffmpeg.write_frames(
        path, size, pix_fmt_in="bgra", fps=fps, macro_block_size=2, quality=7,
        output_params=["-f", "mp4"], ffmpeg_log_level="error")
    writer.send(None)  # starts ffmpeg
    return writer


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
    """An MP4 being written to `path` from BGRA images (h, w, 4) uint8 brought to `size` (w,
    h, made even) at `fps` frames per simulated second. `add` queues an image; `finish` ends
    the video and puts it in place (or `cancel` drops it); `frames` counts the video frames
    queued, `written` those encoded, `repeated` the frames that repeat an image, `dropped` the
    images the full queue refused, `skipped` the frames left out (MAX_REPEAT); `error` holds
    the first failure's one line. `writer(path, size, fps)`: the encoder (ffmpeg_writer)."""

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float,
                 writer=ffmpeg_writer):
        self.path = Path(path)
        check_writable(self.path)
        self.size = even_size(*size)
        self.fps = float(fps)
        self.frames = 0
        self.written = 0
        self.repeated = 0
        self.dropped = 0
        self.skipped = 0
        self.error = ""
        self._start: float | None = None  # simulated time of the first image (s)
        target = destination(self.path)
        remove_stale_temps(target.parent)
        self._target = target
        self._temp = target.parent / temp_name()
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_IMAGES)
        self._writer = writer(str(self._temp), self.size, self.fps)
        self._thread = threading.Thread(target=self._encode, name="video", daemon=True)
        self._thread.start()

    @property
    def seconds(self) -> float:
        """Length of the video so far (s of simulated time)."""
        return self.frames / self.fps

    def add(self, pixels: np.ndarray, time: float | None = None) -> bool:
        """Queue an image (BGRA, top row first, not changed afterwards: it is kept, not
        copied) of the simulation at `time` s (None: the next frame's time). Never waits:
        False when it was not needed (its frame has one) or dropped (the encoder is behind)."""
        if self.error:
            return False
        if time is None:  # the next frame's time
            time = 0.0 if self._start is None else (
                self._start + (self.frames + self.skipped) / self.fps)
        if self._start is None:
            self._start = float(time)
        # The frames whose time has come: slot k is at start + k / fps.
        due = int(np.floor((float(time) - self._start) * self.fps + 1e-6)) + 1
        count = due - (self.frames + self.skipped)
        if count <= 0:
            return False
        repeat = min(count, MAX_REPEAT)
        try:
            self._queue.put_nowait((pixels, repeat))
        except queue.Full:
            self.dropped += 1  # the next image fills its frames
            return False
        self.skipped += count - repeat
        self.repeated += repeat - 1
        self.frames += repeat
        return True

    @property
    def backlog(self) -> int:
        """Images waiting for the encoder (at most QUEUE_IMAGES)."""
        return self._queue.qsize()

    @property
    def shortfall(self) -> str:
        """What the video lacks, in words ("" when nothing): repeated, dropped, skipped."""
        parts = [f"{self.repeated} frames repeat the image before (the view drew fewer)"
                 if self.repeated else "",
                 f"{self.dropped} images dropped (the encoder was behind)" if self.dropped else "",
                 f"{self.skipped / self.fps:.2f} s of simulated time left out (stepping far "
                 "faster than the view draws)" if self.skipped else ""]
        return "; ".join(p for p in parts if p)

    def _encode(self) -> None:
        while True:
            item = self._queue.get()
            if item is _DONE:
                break
            if self.error:
                continue
            pixels, repeat = item
            try:
                frame = np.ascontiguousarray(fit(pixels, self.size))
                for _ in range(repeat):
                    self._writer.send(frame)
                    self.written += 1
            except Exception as err:  # ffmpeg died (a full disk): said once, frames dropped
                self.error = f"cannot write {self.path}: {str(err).splitlines()[0]}"

    def finish(self) -> Path:
        """Encode every image queued, close the video and rename it into place; OutputError (one line) if it failed, and
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
