"""Compile (or load from Numba's cache) every kernel before anything is timed or drawn.

Each solver is run once on a tiny problem, with and without the trace, so its kernels exist for
the one set of argument types the project uses; `progress(done, total, name)` is called after each.
With threads > 1 it is also run on a pile just large enough to be stepped in blocks, so that the
parallel kernels are compiled before the first step of a large pile (solver/parallel.py).

Only what a run steps is compiled: `rows` names the problems (1 frictionless, 3 with friction,
6 with rolling resistance) and `threads` the blocks. A cold frictionless bowl compiled every
kind and the parallel kernels it never ran: 61 s, against 11 s for its own (docs/startup.md).
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Callable, Iterable

import numpy as np

from . import compile_count
from .backend import rows_of
from .friction import ROWS_FRICTIONLESS, ROWS_ROLLING, ROWS_SLIDING
from .methods import registry
from .parallel import MIN_MARBLES, blocks_for
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


ALL_ROWS = (ROWS_FRICTIONLESS, ROWS_SLIDING, ROWS_ROLLING)
_ROLL = {ROWS_SLIDING: 0.0, ROWS_ROLLING: 0.01}  # mu_roll that gives a problem these rows


def _steps(make: Callable[[], World], name: str, threads: int, rows: Iterable[int]) -> None:
    """Two steps (traced, then not) of a fresh world for each of `rows` the solver takes."""
    for r in rows:
        if r != ROWS_FRICTIONLESS and not registry.get(name).friction:
            continue
        world = make()
        if r != ROWS_FRICTIONLESS:
            world.mu, world.mu_wall, world.mu_roll = 0.5, 0.5, _ROLL[r]
        # Warm starting, so the second step also loads the key-matching kernel.
        sim = Simulation(world, registry.settings(name, 2), warm_start=1.0, threads=threads)
        sim.step(trace=True)
        sim.step(trace=False)


def warmup(methods: Iterable[str] | None = None,
           progress: Callable[[int, int, str], None] | None = None, threads: int = 1,
           rows: Iterable[int] = ALL_ROWS,
           kernels: Callable[[int, int | None, float | None], None] | None = None) -> float:
    """Seconds spent compiling or loading kernels for `methods` (default: all), for steps of
    `threads` blocks (and serial ones) of problems with `rows` rows per contact (default:
    every kind; warmup_for compiles one world's). `kernels(done, expected, seconds_left)` is
    called after each kernel compiled (compile_count.KernelCount)."""
    names = list(methods) if methods is not None else list(registry.METHODS)
    rows = tuple(rows)
    start = time.perf_counter()
    counting = (nullcontext() if kernels is None else compile_count.KernelCount(
        compile_count.expected(names, rows, threads), kernels))
    with counting:
        for k, name in enumerate(names):
            if threads > 1:
                _steps(_blocked_world, name, threads, rows)
            else:
                _steps(_tiny_world, name, 1, rows)
            if progress is not None:
                progress(k + 1, len(names), name)
    return time.perf_counter() - start


def warmup_for(world: World, methods: Iterable[str], threads: int = 1,
               progress: Callable[[int, int, str], None] | None = None,
               kernels: Callable[[int, int | None, float | None], None] | None = None) -> float:
    """warmup() of the kernels that steps of `world` with `threads` threads run: its blocks
    (a pile below MIN_MARBLES steps serially) and its rows per contact only."""
    return warmup(methods, progress, blocks_for(world.n, threads), (rows_of(world),), kernels)
