"""How many threads the simulation core uses, and when a step is split into blocks at all.

A step with T > 1 blocks splits the marbles into T slabs of the grid (solver/partition.py); the
contacts come out grouped so that groups of one phase share no marble, and the parallel kernels
sweep the groups of a phase at once. Everything a step computes then depends on T and the world
only, never on how many threads the machine actually runs: a run repeats bit for bit with the
same `threads` on any machine, and `threads=1` is the serial core (docs/parallel.md).
"""
from __future__ import annotations

import os

import numba

from .params import Param

# The machine's cores: the default. A run's results depend on `threads` (its blocks), not on
# the cores that run them, so any count up to MAX_THREADS is accepted: a 16-thread run of a
# large machine repeats bit for bit on two cores, only slower.
CORES = max(1, os.cpu_count() or 1)
MAX_THREADS = 64
THREADS = Param("threads", CORES, int, "threads (blocks) of the simulation core; a run's "
                "results depend on this number, not on the machine, and 1 is the serial core",
                lo=1, hi=MAX_THREADS, shown="every core")
# Below this many marbles a step stays serial whatever `threads` says. A step in blocks starts
# Numba's threads some 60 times (collide, products, two phases per sweep of 20 sweeps), a few
# microseconds each, lays the contacts out in groups and renumbers the marbles: as much as the
# bowl's whole step (350 marbles, 0.2 ms), which two threads make 0.4-0.7x as fast. Measured on
# frictionless boxes (python -m benchmarks.threshold, docs/parallel.md): two threads
# 0.6-1.1x as fast as one at 1000 marbles, 1.20-1.22x at 1500, 1.26-1.27x at 2000.
MIN_MARBLES = 2000


def blocks_for(n: int, threads: int) -> int:
    """Blocks of a step of n marbles with `threads` threads: 1 (serial) below MIN_MARBLES."""
    return threads if threads > 1 and n >= MIN_MARBLES else 1


def activate(blocks: int) -> None:
    """Let the calling thread's parallel kernels run `blocks` threads (at most Numba's pool).
    Numba's count is per calling thread, so the thread that steps calls this itself."""
    want = max(1, min(int(blocks), numba.config.NUMBA_NUM_THREADS))
    if numba.get_num_threads() != want:
        numba.set_num_threads(want)
