"""The kernels a Session has compiled (or loaded from Numba's cache), and the warm-ups that add
to them, said as progress with a kernel count and an estimate of the time left."""
from __future__ import annotations

from typing import Callable, Iterable

from solver.backend import rows_of
from solver.parallel import blocks_for
from solver.warmup import warmup
from solver.world import World


class Kernels:
    """Plans compiled so far, by (solver, blocks, rows per contact); `say(text, done, total)`
    reports progress (total 1 with done 0: a busy bar; total 0: finished)."""

    def __init__(self, say: Callable[[str, int, int], None]):
        self._say = say
        self.done: set[tuple[str, int, int]] = set()
        self.seconds = 0.0  # spent compiling or loading

    def ensure(self, names: Iterable[str], world: World, threads: int) -> None:
        """Compile what steps of `world` with `threads` threads run for `names` not yet ready:
        its blocks (a pile below MIN_MARBLES steps serially whatever the thread count) and its
        rows per contact only (solver.warmup.warmup_for)."""
        blocks, rows = blocks_for(world.n, threads), rows_of(world)
        todo = [n for n in dict.fromkeys(names) if (n, blocks, rows) not in self.done]
        if not todo:
            return
        label = f"compiling Numba kernels for {', '.join(todo)}"
        self._say(f"{label} (a first run only: later ones load them from the cache)", 0, 1)

        def kernels(done: int, expected: int | None, left: float | None) -> None:
            if expected is None:  # a plan not measured: the count alone, a busy bar
                return self._say(f"{label}: {done} compiled", 0, 1)
            eta = f", about {left:.0f} s left" if left is not None else ""
            self._say(f"{label}: {done} of about {expected}{eta}", min(done, expected - 1),
                      expected)

        self.seconds += warmup(todo, None, blocks, (rows,), kernels)
        self.done.update((name, blocks, rows) for name in todo)
        self._say("", 0, 0)
