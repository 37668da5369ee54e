"""Headless runs: step a simulation K times and summarise it as the JSON report of the README
(timings by phase, contacts, the last step's trace, penetration, speed, energy)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from solver.step import PHASES, Simulation, max_penetration


def run_steps(sim: Simulation, steps: int, trace_every_step: bool = False,
              progress: Callable[[int, int], None] | None = None) -> dict:
    """Step `sim` `steps` times. Timings come from the fast path (no trace) unless
    `trace_every_step`; the last step always records its trace, and is left out of the timing
    statistics when other steps exist, so the figures describe one kind of step only."""
    times = {phase: [] for phase in PHASES}
    contacts_max = 0
    report = None
    for k in range(steps):
        last = k == steps - 1
        report = sim.step(trace=True if (last or trace_every_step) else False)
        if not last or steps == 1 or trace_every_step:
            for phase in PHASES:
                times[phase].append(report.timings[phase])
        contacts_max = max(contacts_max, report.contacts)
        if progress is not None:
            progress(k + 1, steps)
    world = sim.world
    result = report.result
    return {
        "timing_ms": {
            "median": {p: 1e3 * float(np.median(t)) for p, t in times.items()},
            "mean": {p: 1e3 * float(np.mean(t)) for p, t in times.items()},
        },
        "contacts": {"last": report.contacts, "max": contacts_max},
        "last_step": {
            "trace": [float(r) for r in result.trace],
            "seconds": [float(s) for s in result.seconds],
            "iterations": result.iterations,
            "status": result.status,
            "residual": float(result.residual),
        },
        "max_penetration": max_penetration(world),
        "max_speed": float(np.max(np.linalg.norm(world.v, axis=1), initial=0.0)),
        "energy": {"kinetic": world.kinetic_energy(), "potential": world.potential_energy()},
        "time": world.time,
    }
