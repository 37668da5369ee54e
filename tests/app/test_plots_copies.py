"""The side-by-side curves alone (app.plots_copies): one trace and one history curve per
copy holding that copy's numbers, the single curves hidden meanwhile and back after."""
from __future__ import annotations

import numpy as np

from app.plots import HISTORY_SECONDS, PHASES, LivePlots
from app.plots_copies import CopyCurves
from lab.session.side_by_side import COPY_COLOURS
from lab.session.copies import CopyView
from lab.session.state import StepLog

DT = 0.02


def frame(first: int, steps: int, labels=("pgs", "jacobi"), trace_step=-1):
    """A frame of `steps` steps from step `first`; copy j's residual at step k is
    10^-(j + 1) * (k + 1), its trace 10^-(j + 1) * [1, 1/2, 1/4, ...] of j + 3 iterations."""
    log = StepLog()
    for k in range(first, first + steps):
        log.add((k + 1) * DT, 1.0, {name: 1e-3 for name in PHASES + ("total",)})
    records = log.take()
    copies = tuple(CopyView(name, COPY_COLOURS[j], np.zeros((1, 3), np.float32),
                            np.zeros((1, 4), np.float32),
                            10.0 ** -(j + 1) * 0.5 ** np.arange(j + 4),
                            10.0 ** -(j + 1) * (np.arange(first, first + steps) + 1.0))
                   for j, name in enumerate(labels))
    return type("Frame", (), dict(records=records, stepped=steps > 0, trace=None,
                                  trace_step=trace_step, copies=copies))()


def test_one_curve_per_copy_with_its_numbers(qtbot):
    plots = LivePlots(copies=CopyCurves)
    qtbot.addWidget(plots)
    assert isinstance(plots.copy_curves, CopyCurves)  # the part it made
    for first in range(0, 900, 30):  # 18 s: the history keeps the last 10
        plots.add_frame(frame(first, 30, trace_step=first + 30))
    plots.refresh()
    data = plots.curve_data()
    assert sorted(k for k in data if k.startswith("copy")) == [
        "copy 0 history", "copy 0 trace", "copy 1 history", "copy 1 trace"]
    kept = int(round(HISTORY_SECONDS / DT)) + 1
    for j in (0, 1):
        x, y = data[f"copy {j} history"]
        assert x.size == kept
        np.testing.assert_allclose(10 ** y, 10.0 ** -(j + 1) * np.arange(900 - kept + 1, 901),
                                   rtol=1e-9)
        x, y = data[f"copy {j} trace"]
        np.testing.assert_allclose(10 ** y, 10.0 ** -(j + 1) * 0.5 ** np.arange(j + 4),
                                   rtol=1e-9)
        assert np.array_equal(x, np.arange(j + 4))
    assert not plots.trace_curve.isVisible() and not plots.history_curve.isVisible()
    assert "pgs" in plots.trace_title and COPY_COLOURS[1] in plots.trace_title
    # Ended: the copies' curves go, the single ones come back.
    plots.add_frame(frame(900, 1, labels=()))
    plots.refresh()
    assert not any(k.startswith("copy") for k in plots.curve_data())
    assert plots.trace_curve.isVisible() and plots.history_curve.isVisible()
    assert "pgs" not in plots.trace_title


def test_new_copies_start_a_new_history(qtbot):
    plots = LivePlots(copies=CopyCurves)
    qtbot.addWidget(plots)
    plots.add_frame(frame(0, 50))
    plots.add_frame(frame(50, 5, labels=("pgs", "psor", "jacobi")))
    plots.refresh()
    data = plots.curve_data()
    assert [data[f"copy {j} history"][0].size for j in range(3)] == [5, 5, 5]
