"""Progress on stderr for long work: silent for the first seconds, then a line redrawn in a
terminal or written every few seconds to a log."""
from __future__ import annotations

import math
import sys
import time


class Progress:
    """Progress on stderr for work that takes more than `after` seconds; silent before."""

    def __init__(self, label: str, total: int, after: float = 2.0, stream=None):
        self.label, self.total, self.after = label, total, after
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.last = -1.0

    def __call__(self, done: int, *_ignored) -> None:
        now = time.perf_counter() - self.start
        tty = self.stream.isatty()
        # A terminal gets a line redrawn twice a second; a log file a line every five seconds.
        if now < self.after or (done < self.total and now - self.last < (0.5 if tty else 5.0)):
            return
        self.last = now
        left = now / max(done, 1) * (self.total - done)
        end = "\r" if tty and done < self.total else "\n"
        self.stream.write(f"{self.label}: {done}/{self.total} ({100 * done // self.total}%), "
                          f"{now:.1f} s elapsed, ~{left:.0f} s left{end}")
        self.stream.flush()


class KernelBar:
    """A bar on stderr for a compilation: kernels compiled against the count expected
    (solver.compile_count), the time left, redrawn in a terminal, every few seconds in a log.
    Called as warmup's `kernels(done, expected, seconds_left)`."""

    def __init__(self, label: str, stream=None, width: int = 30):
        self.label, self.width = label, width
        self.stream = stream if stream is not None else sys.stderr
        self.last = -math.inf
        self.done = 0

    def __call__(self, done: int, expected: int | None, left: float | None) -> None:
        self.done = done
        tty = self.stream.isatty()
        now = time.perf_counter()
        if now - self.last < (0.2 if tty else 5.0):
            return
        self.last = now
        if expected:
            shown = min(done, expected)
            filled = self.width * shown // expected
            text = (f"[{'#' * filled}{'.' * (self.width - filled)}] {shown}/{expected} kernels"
                    + (f", ~{left:.0f} s left" if left is not None else ""))
        else:
            text = f"{done} kernels"
        self.stream.write(f"{self.label}: {text}{chr(13) if tty else chr(10)}")
        self.stream.flush()

    def finish(self, seconds: float) -> None:
        what = f"{self.done} kernels compiled" if self.done else "kernels loaded from the cache"
        self.stream.write(f"{self.label}: done, {what} in {seconds:.1f} s\n")
        self.stream.flush()
