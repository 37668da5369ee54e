"""The live plots alone: what the curves hold after frames of many steps each."""
from __future__ import annotations

import numpy as np

from app.plots import HISTORY_SECONDS, PHASES, LivePlots
from app.worker import StepRecord


class FakeFrame:
    """The fields of app.worker.Frame that LivePlots reads."""

    def __init__(self, records, trace=None, trace_step=-1):
        self.records = tuple(records)
        self.stepped = bool(records)
        self.trace = trace
        self.trace_step = trace_step


def frames(dt, steps, per_frame, start=0):
    """Frames of `per_frame` steps each; step k has residual k and phase times k ms."""
    out = []
    for first in range(start, start + steps, per_frame):
        ks = range(first, min(first + per_frame, start + steps))
        out.append(FakeFrame([StepRecord.of((k + 1) * dt, float(k),
                                            {name: 1e-3 * k for name in PHASES + ("total",)})
                              for k in ks]))
    return out


def test_history_keeps_the_last_ten_seconds_on_a_fixed_axis(qtbot):
    """Batched frames (as when stepping as fast as possible) reach the curves step by step;
    only the last HISTORY_SECONDS are kept, on a time axis relative to the newest step, whose
    range stays put while the data scroll."""
    plots = LivePlots()
    qtbot.addWidget(plots)
    dt = 0.02
    for f in frames(dt, 1500, 37):  # 30 s of simulated time
        plots.add_frame(f)
    plots.refresh()
    x, y = plots.curve_data()["history"]
    kept = int(round(HISTORY_SECONDS / dt)) + 1
    assert plots.steps_kept == kept and x.size == kept
    np.testing.assert_allclose(x, dt * np.arange(-(kept - 1), 1), atol=1e-9)
    np.testing.assert_allclose(10 ** y, np.arange(1500 - kept, 1500), rtol=1e-9)
    _, ms = plots.curve_data()["phase:solve"]
    np.testing.assert_allclose(10 ** ms, np.arange(1500 - kept, 1500), rtol=1e-9)
    assert plots.shown_time == 1500 * dt
    shown = plots.history_plot._shown_range
    assert shown[:2] == (-HISTORY_SECONDS, 0.0)
    for f in frames(dt, 100, 37, start=1500):  # two more seconds: the same axis range
        plots.add_frame(f)
    plots.refresh()
    assert plots.history_plot._shown_range[:2] == shown[:2]
    assert plots.shown_time == 1600 * dt
