"""Compile (or load from Numba's cache) every kernel before anything is timed or drawn.

Each solver is run once on a tiny problem, with and without the trace, so its kernels exist for
the one set of argument types the project uses; `progress(done, total, name)` is called after each.
With threads > 1 it is also run on a pile just large enough to be stepped in blocks, so that the
parallel kernels are compiled before the first step of a large pile (solver/parallel.py).
"""
from __future__ import annotations

import time
from typing import Callable, Iterable

import numpy as np

from .methods import registry
from .parallel import MIN_MARBLES
from .step import Simulation
from .world import World


def _tiny_world() -> World:
    x = np.array([[0.0, 0.0, 0.1], [0.0, 0.0, 0.3], [0.21, 0.0, 0.1]])
    return World(x, np.zeros((3, 3)), 0.1, 0.25, {"kind": "box", "center": [0.0, 0.0],
                                                   "half_width": 1.0, "floor": 0.0, "height": 1.0})


def _blocked_world() -> World:
    """MIN_MARBLES marbles on a grid, the bottom layer on the floor: stepped in blocks."""
    side = 20
    k = np.arange(MIN_MARBLES)
    x = np.stack([0.25 * (k % side), 0.25 * ((k // side) % side), 0.1 + 0.25 * (k // side ** 2)],
                 axis=1) - [2.4, 2.4, 0.0]
    return World(x, np.zeros_like(x), 0.1, 0.25, {"kind": "box", "center": [0.0, 0.0],
                                                   "half_width": 3.0, "floor": 0.0, "height": 9.0})


def _steps(make: Callable[[], World], name: str, threads: int) -> None:
    """Two steps (traced, then not) of a fresh world, frictionless, then with friction when the
    solver has it, sliding and rolling: the frictional kernels of both row counts."""
    # Warm starting, so the second step also loads the key-matching kernel.
    sim = Simulation(make(), registry.settings(name, 2), warm_start=1.0, threads=threads)
    sim.step(trace=True)
    sim.step(trace=False)
    if registry.get(name).friction:
        for roll in (0.0, 0.01):
            world = make()
            world.mu, world.mu_wall, world.mu_roll = 0.5, 0.5, roll
            sim = Simulation(world, registry.settings(name, 2), warm_start=1.0, threads=threads)
            sim.step(trace=True)
            sim.step(trace=False)


def warmup(methods: Iterable[str] | None = None,
           progress: Callable[[int, int, str], None] | None = None, threads: int = 1) -> float:
    """Seconds spent compiling or loading kernels for `methods` (default: all), for steps of
    `threads` threads (and serial ones)."""
    names = list(methods) if methods is not None else list(registry.METHODS)
    start = time.perf_counter()
    for k, name in enumerate(names):
        _steps(_tiny_world, name, 1)
        if threads > 1:
            _steps(_blocked_world, name, threads)
        if progress is not None:
            progress(k + 1, len(names), name)
    return time.perf_counter() - start
