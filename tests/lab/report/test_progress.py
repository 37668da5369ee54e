"""Progress on stderr: silent for short work, then lines with done/total and the time left."""
from __future__ import annotations

import io

from lab.report.progress import Progress


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_silent_at_first_then_a_line_with_the_time_left(monkeypatch):
    clock = Clock()
    monkeypatch.setattr("lab.report.progress.time.perf_counter", clock)
    out = io.StringIO()
    progress = Progress("bowl/pgs", 100, after=2.0, stream=out)
    clock.now = 1.0
    progress(10)
    assert out.getvalue() == ""  # short work says nothing
    clock.now = 4.0
    progress(40)
    assert out.getvalue() == "bowl/pgs: 40/100 (40%), 4.0 s elapsed, ~6 s left\n"
    clock.now = 5.0
    progress(50)  # a log file gets a line every five seconds only
    assert out.getvalue().count("\n") == 1
    clock.now = 8.0
    progress(100)  # but always the last one
    assert out.getvalue().endswith("bowl/pgs: 100/100 (100%), 8.0 s elapsed, ~0 s left\n")
