"""What a Session shows of itself: the step log's records and the state every frame carries."""
from __future__ import annotations

import numpy as np

from lab.session.state import RECORD_FIELDS, SessionState, StepLog, world_friction
from scenes import get


def test_the_step_log_hands_over_each_step_once_by_name():
    log = StepLog()
    log.add(0.02, 1e-3, {"collide": 1.0, "assemble": 2.0, "solve": 3.0, "integrate": 4.0,
                         "total": 10.0})
    rows = log.take()
    assert rows.dtype.names == RECORD_FIELDS and rows.shape == (1,)
    assert (rows.time[0], rows.residual[0], rows.solve[0], rows.total[0]) == (0.02, 1e-3, 3.0, 10.0)
    assert not rows.flags.writeable and len(log) == 0 and log.take().shape == (0,)


def test_the_state_carries_the_scene_parameters_and_the_worlds_friction():
    world = get("heap").build({"n": 10, "mu": 0.4, "mu_roll": 0.02})
    assert world_friction(world) == (0.4, 0.4, 0.02, 0.0)  # the heap's one μ, floor too
    state = SessionState(scene="heap", solver="pgs", solver_params={}, iterations=20,
                         warm_start=0.0, paused=False, colour_mode="marble", diverged=False,
                         speed=1.0, generation=0, scene_params={"n": 10})
    assert state.scene_params == {"n": 10} and state.alarm == "" and state.message_seq == 0
    assert isinstance(np.float64(world_friction(world)[0]), np.float64)
