"""What the window warns of while the run goes on: the two judgements of `marbles-bench run`
(lab.session.run) that are not a divergence. Marbles whose centre left the container are the
run's status `escaped` (run.physics_check counts them the same way); an overlap deeper than
PENETRATION_SHARE of the smallest radius is the report's `max_penetration` (solver.step) grown
past what a converging solve leaves. Neither pauses the run: the solver still solves, its
physics is wrong (a PGS with 20 sweeps cannot carry the mass-ratio scene's heavy marble).

Checked at most every WATCH_PERIOD of wall time, and so that the checks (a collision pass over
the world) take at most WATCH_SHARE of it. Qt-free.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from solver.step import max_penetration
from solver.world import World, outside_container

# Deeper than this share of the smallest radius is a warning: over 500 steps of every scene
# with its defaults (20 PGS sweeps) the deepest overlap is 0.154 of r (the box of 1000; the
# bowl 0.075); mass-ratio's light marble crushed through the floor passes 1 at step 8.
PENETRATION_SHARE = 0.25
WATCH_PERIOD = 0.25  # s of wall time between two checks at least
WATCH_SHARE = 0.02  # the checks' largest share of wall time
# What is wrong, from least to worst: a warning is said (the status bar) when it gets worse.
LEVELS = ("", "penetration", "escaped")


@dataclass(frozen=True)
class PhysicsCheck:
    """One look at the world: escaped, marbles whose (finite) centre is outside the container;
    penetration, the deepest overlap among marbles and walls (m, NaN when a marble is not
    finite); radius, the smallest marble radius (m)."""

    escaped: int = 0
    penetration: float = 0.0
    radius: float = 1.0

    @property
    def deep(self) -> bool:
        """The penetration is over PENETRATION_SHARE of the smallest radius."""
        return self.penetration > PENETRATION_SHARE * self.radius

    @property
    def level(self) -> str:
        """The worst of LEVELS that applies."""
        return "escaped" if self.escaped else "penetration" if self.deep else ""

    def text(self) -> str:
        """The warning in one line, as `marbles-bench run` words its verdict ("" when none)."""
        if not self.level:
            return ""
        share = f"{100 * self.penetration / self.radius:.0f}% of r"
        depth = f"max penetration {self.penetration:.3g} m ({share})"
        if self.escaped:
            many = "marble" if self.escaped == 1 else "marbles"
            return f"PHYSICS ESCAPED: {self.escaped} {many} outside the container; {depth}"
        return f"PENETRATION: {depth}, over {100 * PENETRATION_SHARE:.0f}%"


def physics_check(world: World) -> PhysicsCheck:
    """The world as it is now (see PhysicsCheck)."""
    finite = np.all(np.isfinite(world.x), axis=1)
    escaped = int(np.count_nonzero(outside_container(world) & finite))
    depth = max_penetration(world) if world.n and finite.all() else math.nan
    radius = float(world.radius.min()) if world.n else 1.0
    return PhysicsCheck(escaped, depth, radius)


class Watch:
    """The checks of one world's run. `last` is the latest check; `said` the worst level
    warned of so far (a warning comes once per level, not at every check)."""

    def __init__(self) -> None:
        self.last = PhysicsCheck()
        self.said = ""
        self._next = -math.inf  # perf_counter s: the next check is due from then

    @property
    def warning(self) -> str:
        """The latest check's warning ("" when none)."""
        return self.last.text()

    def check(self, world: World, now: float) -> str:
        """Check `world` if due at `now` (perf_counter s). Returns the warning when it is
        worse than any said before, else ""."""
        if now < self._next:
            return ""
        started = time.perf_counter()
        self.last = physics_check(world)
        cost = time.perf_counter() - started
        self._next = now + max(WATCH_PERIOD, cost / WATCH_SHARE)
        level = self.last.level
        if LEVELS.index(level) <= LEVELS.index(self.said):
            return ""
        self.said = level
        return self.last.text()
