"""What a Session shows of itself, Qt-free: the numbers of every step (`StepLog`, in records
of RECORD_FIELDS) and the state the user controls (`SessionState`, sent with every frame so a
display shows the Session's truth), with the text of a world's friction."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.step import PHASES
from solver.world import World

# What a scene with friction runs on when the solver chosen cannot solve friction: the
# friction key and the scene keys switch to it (and say so) rather than refuse, since the
# solver was chosen for a frictionless scene; choosing a solver (SetSolver) refuses instead.
FRICTION_FALLBACK = "pgs"
# What the recover key (cmd.Recover) switches to before it resets: projected Gauss-Seidel does
# not diverge on any scene (its sweeps are a descent method) and solves friction.
STABLE_SOLVER = "pgs"

# The numbers of one step that the plots show: simulated time after it (s), final natural-map
# residual (m/s), then seconds per phase ("collide", ..., "total"), then 1.0 when Numba compiled
# a kernel during the step (its time is the compiler's: lab.session.meters leaves it out), else 0.
RECORD_FIELDS = ("time", "residual") + PHASES + ("compiled",)
RECORD_DTYPE = np.dtype([(name, np.float64) for name in RECORD_FIELDS])


class StepLog:
    """The numbers of the steps made since they were last taken, one RECORD_DTYPE row each,
    in a buffer that only grows; `take` hands them over as one read-only array (no Python per
    step for whoever reads them)."""

    def __init__(self):
        self._rows = np.empty(256, dtype=RECORD_DTYPE)
        self.count = 0

    def add(self, time_s: float, residual: float, timings: dict, compiled: bool = False) -> None:
        """One step: simulated time after it (s), residual (m/s), seconds per phase; compiled:
        Numba compiled a kernel during it."""
        if self.count == self._rows.shape[0]:
            self._rows = np.concatenate((self._rows, np.empty_like(self._rows)))
        self._rows[self.count] = (time_s, residual, *map(timings.__getitem__, PHASES),
                                  float(compiled))
        self.count += 1

    def take(self) -> np.recarray:
        """The rows so far as a read-only (k,) record array (fields by name: `.time`,
        `.residual`, `.solve`, ...); the log starts empty again."""
        out = self._rows[:self.count].copy().view(np.recarray)
        out.flags.writeable = False
        self.count = 0
        return out

    def clear(self) -> None:
        self.count = 0

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True, kw_only=True)
class SessionState:
    """What the user controls, as it is now: sent with every frame so a display shows the
    Session's truth. generation: +1 on every new world (scene change or reset)."""

    scene: str
    solver: str
    solver_params: dict
    iterations: int
    warm_start: float
    paused: bool
    colour_mode: str
    diverged: bool
    speed: float
    generation: int
    message: str = ""
    friction: tuple = (0.0, 0.0, 0.0, 0.0)  # the world's mu, mu_wall, mu_roll (m), mu_spin (m)
    # What went wrong with the world ("jacobi diverged at step 6 (t = 0.12 s)"), "" when
    # nothing did; kept until a new world (reset, scene, state) replaces it.
    alarm: str = ""
    # +1 whenever `message` is said anew (a command's answer, a divergence): a display shows
    # each message once (the status bar) even when the same words come again.
    message_seq: int = 0
    scene_params: dict = field(default_factory=dict)  # every parameter of the scene, resolved
    origin: str = ""  # the state file the world came from ("": built from its scene)
    # False for a world from a state file (`origin`) that names no scene: `scene` and
    # `scene_params` then only hold the world's drag and friction, not where it came from.
    scene_named: bool = True
    marbles: int = 0  # the world's marble count
    network: bool = False  # the contact network is shown
    picked: int = -1  # the marble whose card is shown (-1: none)
    stabilise: float = 1.0  # the fraction of a penetration the next step removes
    threads: int = 1  # the core's threads asked for (--threads)
    blocks: int = 1  # the threads the step uses: 1 below parallel.MIN_MARBLES marbles
    device: str = "cpu"  # where the steps run: cpu or cuda (auto resolved for this pile)
    precision: str = "float64"  # of the GPU's solve (the CPU's is float64)
    # Marbles out of the container or deep overlaps, as `marbles-bench run` judges them, in
    # one line ("" when none): the run goes on (lab.session.watch).
    warning: str = ""
    side_by_side: tuple = ()  # the copies' labels while side by side (lab.session.side_by_side)
    # The steps kept and the one shown (lab.session.history.HistorySpan), None before a step;
    # it changes every step, so it takes no part in comparing states (a display's refresh).
    history: object = field(default=None, compare=False)


def source_text(state: SessionState) -> str:
    """Where the world came from: 'scene bowl', or 'state FILE' (the file's name) for a state
    file that names no scene, as a report names it (lab.io.snapshot.StateSnapshot.origin)."""
    if state.scene_named:
        return f"scene {state.scene}"
    return f"state {Path(state.origin).name}"


def friction_text(friction) -> str:
    """'μ 0.5', 'μ 0.5 (walls 0.3)', with '  μ_roll 0.01 m' and '  μ_spin ... m' when not 0,
    of a (mu, mu_wall, mu_roll, mu_spin) tuple."""
    mu, mu_wall, mu_roll, mu_spin = friction
    text = f"μ {mu:g}" + ("" if mu_wall == mu else f" (walls {mu_wall:g})")
    if mu_roll > 0.0:
        text += f"  μ_roll {mu_roll:g} m"
    if mu_spin > 0.0:
        text += f"  μ_spin {mu_spin:g} m"
    return text


def world_friction(world: World) -> tuple[float, float, float, float]:
    """(mu, mu_wall, mu_roll, mu_spin) of `world`, plain floats."""
    return (float(world.mu), float(world.mu_wall), float(world.mu_roll), float(world.mu_spin))
