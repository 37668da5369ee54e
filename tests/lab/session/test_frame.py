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


def test_the_planned_state_is_the_spec_to_be_loaded():
    """Before a Session's first frame a display shows the run being loaded: its scene, solver,
    parameters and friction, with the marble count once the world is built."""
    from lab.session.frame import planned_state
    from lab.session.spec import RunSpec
    from lab.session.state import world_friction

    spec = RunSpec.create(scene="bowl", solver="psor", assignments={"mu": 0.5, "omega": 1.3})
    planned = planned_state(spec)
    assert (planned.scene, planned.solver, planned.solver_params["omega"]) == ("bowl", "psor", 1.3)
    world = spec.build_world()
    assert planned.friction == world_friction(world) and planned.friction[0] == 0.5
    assert planned.marbles == 0
    assert planned.scene_params["n"] == 350 and planned.iterations == spec.iterations
    assert planned_state(spec, world).marbles == 350
