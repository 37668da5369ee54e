"""The window's recording (Ctrl+R): the images the view draws, into a video, and the badge.

Nothing waits for the video: the simulation steps at its pace and the view draws at its own.
Each image the view renders goes to the VideoRecorder (app.recorder) with the simulated time
of the frame it shows; the recorder's thread encodes it behind a bounded queue, repeating an
image where the view drew fewer images than the video has frames (25 per simulated second) and
dropping one the encoder has no room for. When the recording stops, the status bar says what
the video lacks, if anything.
"""
from __future__ import annotations

from pathlib import Path

from lab.actions import keys_of
from lab.io.files import OutputError

from .overlays import overlay_label
from .recorder import VideoRecorder, ffmpeg_writer, steps_per_frame


class Recording:
    """A part of app.window.MainWindow, given the view's stack of overlays (its badge goes
    there) and the view (its size and pixels), a function that shows a status line, one that
    names a new file in the output folder (stem, suffix) and one that gives the newest frame
    (None: nothing to record). `recorder` is the video under way (None: none); `writer` the
    encoder a new video gets (app.recorder.ffmpeg_writer)."""

    def __init__(self, stack, view, status, new_path, latest):
        self._stack = stack
        self._view = view
        self._status = status
        self._new_path = new_path
        self._latest = latest
        self.recorder: VideoRecorder | None = None
        self.writer = ffmpeg_writer
        self._times: dict[int, float] = {}  # view's marbles_version -> simulated time, s
        # A red badge with the video's length, over the view's bottom right.
        self.badge = stack.add(overlay_label(
            220, 6, "color: #ffffff; background: rgba(170, 20, 20, 220); "), "bottom_right")

    def toggle(self) -> None:
        """Start recording to marbles-YYYYmmdd-HHMMSS.mp4 in the output folder, or stop."""
        if self.recorder is None:
            self.start()
        else:
            self.stop()

    def start(self) -> None:
        latest = self._latest()
        if latest is None:
            self._status("nothing to record yet")
            return
        path = self._new_path("marbles", ".mp4")
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            fps = 1.0 / (steps_per_frame(latest.dt) * latest.dt)  # a frame every k steps
            self.recorder = VideoRecorder(path, self._view.pixel_size(), fps, self.writer)
        except (OSError, OutputError) as err:
            self._status(f"not recording: {err}")
            return
        self._times.clear()
        self._status(f"recording {path} at {self.recorder.fps:g} frames per simulated second "
                     f"({keys_of('record')} stops)")
        self._show_badge()

    def handed(self, marbles_version: int, time: float) -> None:
        """The view was handed the frame of simulated `time` s as `marbles_version`."""
        if self.recorder is not None:
            self._times = {v: t for v, t in self._times.items() if v >= marbles_version - 4}
            self._times[marbles_version] = time

    def drawn(self, marbles_version: int) -> None:
        """The view finished rendering `marbles_version`: its image goes to the video."""
        time = self._times.pop(marbles_version, None)
        # A preview of a moving camera is smaller: the next full image fills its frames.
        if self.recorder is None or time is None or self._view.shown_preview:
            return
        self.recorder.add(self._view.pixels, time)
        self._show_badge()

    def _show_badge(self) -> None:
        rec = self.recorder
        self.badge.setVisible(rec is not None)
        if rec is not None:
            self.badge.setText(f"● REC {rec.seconds:5.2f} s  {rec.frames} frames")
        self._stack.place()

    def stop(self) -> str | None:
        """Stop, finish the video and put it in place; its path, or None when there was none
        or it failed (the reason in the status bar)."""
        rec, self.recorder = self.recorder, None
        if rec is None:
            return None
        self._times.clear()
        self._show_badge()
        self._status(f"writing {rec.path}…")
        try:
            path = rec.finish()
        except OutputError as err:
            self._status(f"video not saved: {err}")
            return None
        lacks = rec.shortfall
        self._status(f"video saved: {path} ({rec.written} frames, "
                     f"{rec.seconds:.2f} s of simulated time)" + (f"; {lacks}" if lacks else ""))
        return str(path)
