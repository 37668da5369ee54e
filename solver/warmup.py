"""Compile (or load from Numba's cache) every kernel before anything is timed or drawn.

Each solver is run once on a tiny problem, with and without the trace, so its kernels exist for
the one set of argument types the project uses; `progress(done, total, name)` is called after each.
"""
from __future__ import annotations

import time
from typing import Callable, Iterable

import numpy as np

from .methods import registry
from .step import Simulation
from .world import World


def _tiny_world() -> World:
    x = np.array([[0.0, 0.0, 0.1], [0.0, 0.0, 0.3], [0.21, 0.0, 0.1]])
    return World(x, np.zeros((3, 3)), 0.1, 0.25, {"kind": "box", "center": [0.0, 0.0],
                                                   "half_width": 1.0, "floor": 0.0, "height": 1.0})


def warmup(methods: Iterable[str] | None = None,
           progress: Callable[[int, int, str], None] | None = None) -> float:
    """Seconds spent compiling or loading kernels for `methods` (default: all)."""
    names = list(methods) if methods is not None else list(registry.METHODS)
    start = time.perf_counter()
    for k, name in enumerate(names):
        # Warm starting, so the second step also loads the key-matching kernel.
        sim = Simulation(_tiny_world(), registry.settings(name, 2), warm_start=1.0)
        sim.step(trace=True)
        sim.step(trace=False)
        if registry.get(name).friction:
            # With friction, sliding and rolling: the frictional kernels of both row counts.
            for roll in (0.0, 0.01):
                world = _tiny_world()
                world.mu, world.mu_wall, world.mu_roll = 0.5, 0.5, roll
                sim = Simulation(world, registry.settings(name, 2), warm_start=1.0)
                sim.step(trace=True)
                sim.step(trace=False)
        if progress is not None:
            progress(k + 1, len(names), name)
    return time.perf_counter() - start
