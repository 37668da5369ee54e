"""A headless run's report: timings by phase from the fast path, the last step's trace."""
from __future__ import annotations

import numpy as np

import scenes
from lab.run import run_steps
from solver.methods import registry
from solver.step import PHASES, Simulation


def test_the_report_has_every_phase_and_the_last_steps_trace():
    sim = Simulation(scenes.build("column"), registry.settings("pgs", 20))
    progress = []
    report = run_steps(sim, 5, progress=lambda done, total: progress.append((done, total)))
    assert progress == [(k, 5) for k in range(1, 6)]
    for stat in ("median", "mean"):
        assert set(report["timing_ms"][stat]) == set(PHASES)
    last = report["last_step"]
    assert len(last["trace"]) == last["iterations"] + 1 == len(last["seconds"])
    assert last["residual"] == last["trace"][-1] or last["status"] == "max_iterations"
    assert report["contacts"]["last"] == 7 and report["time"] == 5 * sim.world.dt
    assert report["max_penetration"] >= 0.0
    assert report["max_speed"] == float(np.max(np.linalg.norm(sim.world.v, axis=1)))
