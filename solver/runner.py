"""Headless runs: step a simulation K times and summarise it as the JSON report of DESIGN.md."""
from __future__ import annotations

import sys
import time
from typing import Callable

import numpy as np

from .step import PHASES, Simulation, max_penetration


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
