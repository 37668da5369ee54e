"""How many threads the simulation core uses, and when a step is split into blocks at all.

A step with T > 1 blocks splits the marbles into T slabs of the grid (solver/partition.py); the
contacts come out grouped so that groups of one phase share no marble, and the parallel kernels
sweep the groups of a phase at once. Everything a step computes then depends on T and the world
only, never on how many threads the machine actually runs: a run repeats bit for bit with the
same `threads` on any machine, and `threads=1` is the serial core (docs/benchmarks.md, issue 16).
"""
from __future__ import annotations

import os

import numba

from .params import Param

THREADS = Param("threads", 0, int, "threads of the simulation core (0: every core of the "
                "machine); a run's results depend on this number, not on the machine, and 1 "
                "is the serial core", lo=0, hi=256)
# Below this many marbles a step stays serial whatever `threads` says: a parallel region costs a
# few microseconds per launch and a boundary pass per sweep, which a small pile does not earn
# back (the bowl of 350 marbles takes 0.2 ms a step). Measured in docs/benchmarks.md (issue 16).
MIN_MARBLES = 4000


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int) -> int:
    """The thread count a `threads` value means: itself, or every core for 0."""
    threads = int(threads)
    return threads if threads > 0 else cores()


def blocks_for(n: int, threads: int) -> int:
    """Blocks of a step of n marbles with `threads` threads: 1 (serial) below MIN_MARBLES."""
    return threads if threads > 1 and n >= MIN_MARBLES else 1


def activate(blocks: int) -> None:
    """Let the calling thread's parallel kernels run `blocks` threads (at most Numba's pool).
    Numba's count is per calling thread, so the thread that steps calls this itself."""
    want = max(1, min(int(blocks), numba.config.NUMBA_NUM_THREADS))
    if numba.get_num_threads() != want:
        numba.set_num_threads(want)
