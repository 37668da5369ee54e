"""The hand: a marble dragged with the mouse, a part of the Session (lab.session.parts). The
dragged marble's velocity relaxes towards (target - x) / SPRING_TIME with time constant
DAMPING_TIME (a damped spring in velocity form, stable for any dt) and its weight is carried,
so it hangs at the cursor instead of below it. The Session pulls before every step and counts
the hand's work as energy given, not an explosion (lab.session.run.EnergyBudget)."""
from __future__ import annotations

import numpy as np

from . import commands as cmd
from .parts import handles

SPRING_TIME = 0.08  # s
DAMPING_TIME = 0.03  # s
DRAG_MAX_SPEED = 4.0  # m/s, so a fast mouse cannot fire a marble through the pile


class Hand:
    """The marble held and where it is pulled to. `session`: the world it reads
    (lab.session.context.Context)."""

    def __init__(self, session):
        self.session = session
        self.held: tuple[int, np.ndarray] | None = None  # (marble, target (3,) m)

    @handles(cmd.DragStart)
    def start(self, c: cmd.DragStart) -> None:
        world, i = self.session.world, int(c.index)
        self.held = (i, world.x[i].copy()) if 0 <= i < world.n else None

    @handles(cmd.DragMove)
    def move(self, c: cmd.DragMove) -> None:
        world = self.session.world
        target = np.array(c.target, dtype=np.float64).reshape(3)
        if world.planar:
            target[1] = 0.0
        if np.all(np.isfinite(target)) and 0 <= int(c.index) < world.n:
            self.held = (int(c.index), target)

    @handles(cmd.DragEnd)
    def let_go(self, c: cmd.DragEnd | None = None) -> None:
        self.held = None

    @property
    def marble(self) -> int | None:
        """The marble held, None when none is."""
        return None if self.held is None else self.held[0]

    def pull(self) -> float | None:
        """The held marble's velocity towards the target, for the next step; returns the
        hand's work on it (J), None when it pulled nothing (no marble, or a fixed one)."""
        if self.held is None:
            return None
        i, target = self.held
        w = self.session.world
        if not 0 <= i < w.n or w.inv_mass[i] == 0.0:
            return None
        want = (target - w.x[i]) / SPRING_TIME
        speed = float(np.linalg.norm(want))
        if speed > DRAG_MAX_SPEED:
            want *= DRAG_MAX_SPEED / speed
        alpha = w.dt / (w.dt + DAMPING_TIME)
        before = float(w.v[i] @ w.v[i])
        w.v[i] += alpha * (want - w.v[i]) - w.dt * w.gravity
        if w.planar:
            w.v[i, 1] = 0.0
        return 0.5 * (float(w.v[i] @ w.v[i]) - before) / w.inv_mass[i]
