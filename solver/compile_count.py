"""How far a compilation has come: Numba kernels compiled so far against the count a cold cache
needs, so that a first run shows a bar with a count and an estimate instead of a busy bar.

Numba announces each kernel it compiles (its "numba:compile" event; a kernel loaded from the
cache is not announced). The count a plan needs on a cold cache (a solver, the rows per contact
of its problems, serial or in blocks) was measured in a fresh process each and is kept in
kernel_counts.json beside this file (`python -m benchmarks.startup --counts` writes it). A plan
not measured has no expected count: the bar then shows the count alone. Later plans in the same
process share kernels with the earlier ones and compile fewer than their count.
"""
from __future__ import annotations

import json
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable

from numba.core import event

COUNTS = Path(__file__).with_name("kernel_counts.json")


def plan_key(method: str, rows: int, blocks: int) -> str:
    """The key of a plan in kernel_counts.json: 'pgs 3 serial', 'pgs 1 blocks'."""
    return f"{method} {rows} {'serial' if blocks <= 1 else 'blocks'}"


@lru_cache(maxsize=1)
def measured() -> dict[str, int]:
    try:
        return json.loads(COUNTS.read_text())
    except (OSError, ValueError):
        return {}


def expected(methods, rows, blocks: int) -> int | None:
    """Kernels a cold cache compiles for these methods and rows (the largest plan's count: they
    share most kernels), or None when one of them was never measured."""
    counts = [measured().get(plan_key(m, r, blocks)) for m in methods for r in rows]
    if not counts or None in counts:
        return None
    return max(counts)


class KernelCount(event.Listener):
    """Counts the kernels Numba compiles while it is installed (a context manager), calling
    `tell(done, expected, seconds_left)` after each; seconds_left is None until known."""

    def __init__(self, expected: int | None, tell: Callable[[int, int | None, float | None], None]):
        self.expected = expected
        self.tell = tell
        self.done = 0
        self._lock = threading.Lock()
        self._start = time.perf_counter()

    def on_start(self, ev) -> None:
        pass

    def on_end(self, ev) -> None:
        with self._lock:
            self.done += 1
            done = self.done
        left = None
        if self.expected is not None and done < self.expected:
            left = (time.perf_counter() - self._start) / done * (self.expected - done)
        self.tell(done, self.expected, left)

    def __enter__(self) -> "KernelCount":
        self._start = time.perf_counter()
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc) -> None:
        event.unregister("numba:compile", self)


class _Tally(event.Listener):
    """Every kernel Numba compiles in this process, from the first `compiled()` on."""

    def __init__(self):
        self.count = 0

    def on_start(self, ev) -> None:
        pass

    def on_end(self, ev) -> None:
        self.count += 1  # one int under the GIL: no lock needed to add one


_TALLY: _Tally | None = None


def compiled() -> int:
    """Kernels Numba compiled in this process since the first call (a step that moves it
    spent part of its time compiling, not computing)."""
    global _TALLY
    if _TALLY is None:
        _TALLY = _Tally()
        event.register("numba:compile", _TALLY)
    return _TALLY.count
