"""The frame a display draws, made in lab/: read-only float32 copies of the marbles, the steps
made since the last frame handed over once, and the Session's state."""
from __future__ import annotations

import numpy as np

from lab.session import commands as cmd
from lab.session.frame import frame_of
from lab.session.session import Session
from lab.session.spec import RunSpec


def test_a_frame_is_the_session_now_in_float32_with_each_step_once():
    s = Session(RunSpec.create("column", "pgs", 20, speed=0))
    s.start()
    for _ in range(3):
        s.step()
    f = frame_of(s, 7)
    assert f.seq == 7 and f.stepped and f.records.shape == (3,) and f.steps == 3
    for a in (f.x, f.radius, f.colour, f.orientation):
        assert a.dtype == np.float32 and not a.flags.writeable
    assert np.array_equal(f.x, s.world.x.astype(np.float32))
    assert f.x.base is not s.world.x and f.state == s.state() and f.network is None
    assert f.iterations_done == s.last_report.result.iterations and f.copies == ()
    again = frame_of(s, 8)
    assert not again.stepped and again.records.shape == (0,) and np.isnan(again.window_ms)
    s.apply(cmd.ToggleNetwork())
    s.apply(cmd.ToggleSideBySide())
    s.step()
    shown = frame_of(s, 9)
    assert all(a.dtype == np.float32 for a in shown.network)
    assert len(shown.copies) == 2 and np.array_equal(shown.copies[0].x, shown.x)
