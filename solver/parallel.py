"""How many threads the simulation core uses, and when a step is split into blocks at all.

A step with T > 1 blocks splits the marbles into T slabs of the grid (solver/partition.py); the
contacts come out grouped so that groups of one phase share no marble, and the parallel kernels
sweep the groups of a phase at once. Everything a step computes then depends on T and the world
only, never on how many threads the machine actually runs: a run repeats bit for bit with the
same `threads` on any machine, and `threads=1` is the serial core (docs/parallel.md).
"""
from __future__ import annotations

import os
import time
from typing import Callable

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


def _niced() -> bool:
    """This process runs at a raised nice value (`nice -n 10 ...`)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, 0) > 0
    except (AttributeError, OSError):
        return False


def _cpu_seconds() -> tuple[float, float] | None:
    """(seconds every core spent busy at normal priority or higher, seconds this process spent
    on any core), both since boot; None where /proc/stat cannot be read (not Linux). A process
    that is niced itself counts niced time as busy too: niced neighbours are its equals."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 8 or fields[0] != b"cpu":
        return None
    # user, nice, system, idle, iowait, irq, softirq: nice time is left out, as a niced
    # process gives its core up to ours.
    user, nice, system, _, _, irq, softirq = (int(v) for v in fields[1:8])
    busy = user + system + irq + softirq + (nice if _NICED else 0)
    own = os.times()
    return busy / _TICK, own.user + own.system


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_NICED = _niced()


class CoreShare:
    """How many of the machine's cores other processes leave to this one, read from the
    kernel's CPU counters at most every `period` seconds (a few microseconds each).

    A step in T blocks runs T threads that meet at a barrier some 60 times a step: when another
    process takes one of the cores, the thread that lost its core holds the others at every
    barrier for a scheduler's time slice, and a step took 50-250x its time (docs/parallel.md).
    The blocks, and so every number the step computes, stay as they are; only the threads that
    run them are fewer while other processes are busy.

    `reserved` cores are kept for threads of this process that do not step (a window's GUI
    thread, its renderer and Mesa's rasterisers, which this process's own CPU time hides): in
    the desktop program, 2 threads stepping a pile of 20 000 beside the renderer on 2 cores
    took 2.3 s a step where 1 thread took 0.27 s (docs/desktop-performance.md)."""

    def __init__(self, cores: int = CORES, period: float = 0.25, first_period: float = 0.04,
                 sample: Callable[[], tuple[float, float] | None] = _cpu_seconds,
                 clock: Callable[[], float] = time.monotonic):
        self.cores = cores
        self.period = period
        self._sample = sample
        self._clock = clock
        self._last: tuple[float, tuple[float, float]] | None = None
        self._wait = first_period  # until the first reading over an interval, then period
        self.free = cores  # cores left to this process, by the last reading
        self.reserved = 0
        # Read once now, so that a run's first parallel step (after its warm-up, at least
        # first_period later) already knows the load instead of stepping a whole period on
        # every core beside a busy process.
        self._read(clock())

    def threads(self, blocks: int) -> int:
        """Threads to run `blocks` blocks with: as many as the free cores, at least 1."""
        now = self._clock()
        if self._last is None or now - self._last[0] >= self._wait:
            self._read(now)
        return max(1, min(int(blocks), self.free - self.reserved))

    def _read(self, now: float) -> None:
        counters = self._sample()
        if counters is None:
            return
        if self._last is not None:
            wall = now - self._last[0]
            busy = counters[0] - self._last[1][0]
            own = counters[1] - self._last[1][1]
            others = max(0.0, busy - own) / wall if wall > 0 else 0.0
            # Half a core taken counts as a core lost: the barrier waits on the slowest thread.
            self.free = max(1, min(self.cores, int(self.cores - others + 0.5)))
            self._wait = self.period
        self._last = (now, counters)


# Off (every block a thread of its own, as long as the pool has one) with MARBLES_SHARE_CORES=0,
# for measuring the threads alone.
SHARE: CoreShare | None = (None if os.environ.get("MARBLES_SHARE_CORES", "1") == "0"
                           else CoreShare())


def activate(blocks: int) -> None:
    """Let the calling thread's parallel kernels run `blocks` threads (at most Numba's pool,
    and at most the cores other processes leave free: SHARE). Numba's count is per calling
    thread, so the thread that steps calls this itself."""
    want = max(1, min(int(blocks), numba.config.NUMBA_NUM_THREADS))
    if SHARE is not None:
        want = SHARE.threads(want)
    if numba.get_num_threads() != want:
        numba.set_num_threads(want)
