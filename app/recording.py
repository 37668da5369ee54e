"""The window's recording (Ctrl+R): the lockstep with the simulation thread and the badge.

While recording, the worker sends a frame marked `record` every `steps_per_frame` steps and
waits (lab.session.commands.RecordStart); the window draws that frame before any other,
skipping the view's pacing, hands the rendered pixels to the VideoRecorder (app.recorder) and
lets the worker step on (RecordAck). So the video has one frame per 1/fps of simulated time, whatever the
drawing costs; the simulation slows to the pace of the drawing meanwhile.
"""
from __future__ import annotations

from pathlib import Path

from lab.actions import keys_of
from lab.io.files import OutputError
from lab.session.commands import RecordAck, RecordStart, RecordStop

from .overlays import overlay_label
from .recorder import VideoRecorder, steps_per_frame


class Recording:
    """A part of app.window.MainWindow, given the view's stack of overlays (its badge goes
    there) and the view (its size and pixels), a function that sends a command to the
    simulation thread, one that shows a status line, one that names a new file in the output
    folder (stem, suffix) and one that gives the frame to record from (None: nothing to record).
    `recorder` is the video under way (None: none); `pending` the record frame waiting to be
    drawn."""

    def __init__(self, stack, view, send, status, new_path, latest):
        self._stack = stack
        self._view = view
        self._send = send
        self._status = status
        self._new_path = new_path
        self._latest = latest
        self.recorder: VideoRecorder | None = None
        self.pending = None
        self._version = 0  # the view's marbles_version of the record frame handed over
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
        dt = latest.dt
        every = steps_per_frame(dt)
        path = self._new_path("marbles", ".mp4")
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.recorder = VideoRecorder(path, self._view.pixel_size(), 1.0 / (every * dt))
        except (OSError, OutputError) as err:
            self._status(f"not recording: {err}")
            return
        self._send(RecordStart(every))
        self._status(f"recording {path} at {self.recorder.fps:g} frames per simulated second "
                     f"({keys_of('record')} stops)")
        self._show_badge()

    def on_frame(self, frame) -> None:
        """Every frame from the worker: keep a record frame to be drawn first."""
        if frame.record and self.recorder is not None:
            self.pending = frame

    def handed(self, marbles_version: int) -> None:
        """The pending frame went to the view as `marbles_version`."""
        self._version = marbles_version

    def drawn(self, marbles_version: int) -> None:
        """The view finished rendering `marbles_version`: the pending frame, if it is that,
        goes to the video and the worker steps on."""
        if self.pending is None or marbles_version < self._version:
            return
        self.pending = None
        if self.recorder is not None:
            self.recorder.add(self._view.pixels)
            self._send(RecordAck())
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
        self._send(RecordStop())
        self.pending = None
        self._show_badge()
        self._status(f"writing {rec.path}…")
        try:
            path = rec.finish()
        except OutputError as err:
            self._status(f"video not saved: {err}")
            return None
        self._status(f"video saved: {path} ({rec.written} frames, "
                     f"{rec.seconds:.2f} s of simulated time)")
        return str(path)
