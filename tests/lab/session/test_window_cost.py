"""What the window adds to a step: the ticks' wall time beside their steps, per step."""
from __future__ import annotations

import math

import pytest

from lab.session.window_cost import WindowCost


def test_the_cost_is_the_ticks_time_beside_their_steps_per_step():
    cost = WindowCost(span=2)
    assert math.isnan(cost.ms)
    cost.add(0.050, 4, 0.040)  # 10 ms beside 4 steps
    assert cost.ms == pytest.approx(2.5)
    cost.add(0.030, 0, 0.0)  # a tick without steps counts for nothing
    cost.add(0.100, 1, 0.070)
    assert cost.ms == pytest.approx(40 / 5)
    cost.add(0.010, 1, 0.010)  # the oldest tick leaves the span
    assert cost.ms == pytest.approx(30 / 2)
    cost.reset()
    assert math.isnan(cost.ms)
