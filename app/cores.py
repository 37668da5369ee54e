"""A core of its own for the simulation thread while it steps as fast as it can (Linux).

Stepping flat out, the simulation thread wants a whole core. The other threads of the window
(the GUI thread, the render thread, Mesa's llvmpipe rasterisers) wake and sleep tens of times a
second, and the scheduler puts them wherever a core looks free, which is often the
simulation's core: each time, the simulation waits for a time slice (on a 2-core machine,
about 6% of its steps per second). `dedicate_core` pins the calling thread to one core and every other thread of the
process to the remaining ones; threads started later inherit their creator's set, so new
GUI-side threads stay off that core too. `release_core` gives every thread the original set
back; the worker calls it whenever it stops stepping flat out (real time, or stopped), since
at real time the simulation needs little and the renderer may use every core.

Elsewhere than Linux, with fewer than two cores available, or with MARBLES_PIN=0 in the
environment, both do nothing. The simulation keeps the core it is running on when it is pinned.

A simulation that steps with several threads (solver/parallel.py: `threads` > 1 on a pile
large enough to be split) is not pinned at all: its Numba threads do the work on every core,
and a thread pool started from a thread pinned to one core would inherit that one core. The
scheduler then shares the cores between the simulation's threads and the GUI's, which sleep
most of the time; `dedicate_core(threads)` with threads > 1 gives every thread every core.
"""
from __future__ import annotations

import os
import threading

ENV_OFF = "MARBLES_PIN"  # set to 0 to leave every thread on every core
_original: frozenset[int] | None = None  # the process's cores before pinning, while pinned
_core: int | None = None  # the core given to the simulation thread, while pinned


def available() -> frozenset[int]:
    """The cores the process's threads may run on when none is pinned."""
    if _original is not None:
        return _original
    if not hasattr(os, "sched_getaffinity"):
        return frozenset()
    return frozenset(os.sched_getaffinity(0))


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return []


def _current_cpu() -> int | None:
    """The core the calling thread runs on now (field 39 of its /proc stat), or None."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _set(tid: int, cores) -> None:
    try:
        os.sched_setaffinity(tid, cores)
    except OSError:  # the thread has exited meanwhile, or the set is refused
        pass


def dedicate_core(threads: int = 1) -> int | None:
    """Pin the calling thread to one core and all other threads of the process to the rest,
    for a simulation that steps with `threads` threads: only when that is 1 (otherwise every
    thread gets every core back). Returns the core, or None when nothing was pinned (threads >
    1, not Linux, fewer than 2 cores, or MARBLES_PIN set to anything but 1)."""
    global _original, _core
    if threads > 1:
        release_core()
        return None
    cores = available()
    if (len(cores) < 2 or not os.path.isdir("/proc/self/task")
            or os.environ.get(ENV_OFF, "") not in ("", "1")):
        return None
    _original = cores
    me = threading.get_native_id()
    core = _core
    if core is None:
        # The core it runs on: the scheduler chose it, and its caches are warm.
        core = _current_cpu()
        core = core if core in cores else max(cores)
    others = cores - {core}
    _set(me, {core})
    _set_all(others, skip=me)
    _core = core
    return core


def release_core() -> None:
    """Give every thread of the process the cores it had before `dedicate_core`."""
    global _core, _original
    if _core is None or _original is None:
        return
    _set_all(_original)
    _core = None
    _original = None


def _set_all(cores, skip: int | None = None) -> None:
    """Give every thread but `skip` the set `cores`. A thread started meanwhile inherits its
    creator's set, possibly the old one: list again until no new thread shows up."""
    done: set[int] = set()
    for _ in range(5):
        todo = [t for t in _threads() if t not in done and t != skip]
        if not todo:
            return
        for tid in todo:
            _set(tid, cores)
        done.update(todo)


def dedicated() -> int | None:
    """The core the simulation thread holds now, or None."""
    return _core
