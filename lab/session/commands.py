"""The typed commands a Session applies between two steps. A front end (the window's keys and
mouse, a script) makes them; `Session.apply` carries them out, or refuses them with a one-line
message that the Session keeps for display."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Pause:
    """paused: True pauses, False resumes, None toggles."""

    paused: bool | None = None


@dataclass(frozen=True)
class Step:
    """One step, pausing first."""


@dataclass(frozen=True)
class Reset:
    """The scene from t = 0 again, with the current parameters (also ends a divergence)."""


@dataclass(frozen=True)
class Recover:
    """Switch to settings that hold the scene (lab.session.holding.holding_settings) and
    reset: the one key out of a divergence."""


@dataclass(frozen=True)
class SetScene:
    name: str


@dataclass(frozen=True)
class CycleScene:
    """delta: +1 the next scene of the registry, -1 the previous one."""

    delta: int = 1


@dataclass(frozen=True)
class SetSolver:
    name: str


@dataclass(frozen=True)
class CycleSolver:
    delta: int = 1


@dataclass(frozen=True)
class SetIterations:
    iterations: object


@dataclass(frozen=True)
class CycleIterations:
    """delta > 0: the next larger count of ITERATION_LADDER; < 0: the next smaller."""

    delta: int = 1


@dataclass(frozen=True)
class SetParameter:
    """A scene, solver or simulation parameter by name (text or value), routed as --set is.
    A scene parameter rebuilds the scene."""

    name: str
    value: object


@dataclass(frozen=True)
class Relax:
    """Move the current solver's relaxation parameter (ω of psor, β of jacobi) by delta."""

    delta: float


@dataclass(frozen=True)
class CycleWarmStart:
    """Warm start off -> half -> full -> off."""


@dataclass(frozen=True)
class SetColourMode:
    """mode: one of COLOUR_MODES, or None for the next one."""

    mode: str | None = None


@dataclass(frozen=True)
class ToggleFriction:
    """Friction off on the current world (every μ 0), or back to the values it had (the
    scene's own, or μ = 0.5 for a scene without friction)."""


@dataclass(frozen=True)
class SetSpeed:
    """speed: multiple of real time, 0 = as fast as possible."""

    speed: object


@dataclass(frozen=True)
class DragStart:
    """Hold marble `index` where it is, from the next step on."""

    index: int


@dataclass(frozen=True)
class DragMove:
    """Pull the held marble towards `target` (3,) m."""

    index: int
    target: np.ndarray


@dataclass(frozen=True)
class DragEnd:
    """Let go."""


@dataclass(frozen=True)
class OpenState:
    """Continue from a state snapshot (lab.io.snapshot.read_state): its world, impulses, scene."""

    path: str


@dataclass(frozen=True)
class SaveState:
    """Write the world as it is now, with the last step's impulses, as a state snapshot; with
    `frozen`, the state FreezeState kept, if one is kept."""

    path: str
    frozen: bool = False


@dataclass(frozen=True)
class FreezeState:
    """Keep a copy of the state as it is now (Ctrl+S, while its file's name is asked: the run
    goes on meanwhile), for the SaveState that follows; `drop`: forget the one kept."""

    drop: bool = False


@dataclass(frozen=True)
class ExportProblem:
    """Write the contact problem the last step solved as an LCP snapshot (for
    `marbles-bench solve`)."""

    path: str


@dataclass(frozen=True)
class ToggleNetwork:
    """Show the contact network (force chains) or hide it."""


@dataclass(frozen=True)
class Pick:
    """Follow marble `index` on the card the display shows (-1: none)."""

    index: int


@dataclass(frozen=True)
class SideBySide:
    """Step copies of the world as it is now side by side, one per solver: 2 to 4 of
    "name" or "name:param=value:..." (lab.session.side_by_side.parse_copies); the first
    becomes the Session's own solver. An empty tuple ends side by side (the first copy goes
    on)."""

    solvers: tuple = ()


@dataclass(frozen=True)
class ToggleSideBySide:
    """Side by side of the current solver and the next `copies` - 1 that can solve the world,
    or, while side by side, its end."""

    copies: int = 2


@dataclass(frozen=True)
class Seek:
    """Show step `step` of the history (lab.session.history), paused: the world, impulses and
    contact problem as they were after it. Stepping or resuming then goes on from there and
    drops the later steps."""

    step: int


@dataclass(frozen=True)
class HistoryStep:
    """Show the step `delta` steps from the one shown (-1: one back), within the history."""

    delta: int


# The commands the thread that steps the Session carries out itself (app.worker), not the
# Session: the comparison of the solvers and the end of the thread.


@dataclass(frozen=True)
class Benchmark:
    """Compare every solver (or `solvers`) on the current step's frozen problem and write the
    files under a name of their own. reason: "key" or "close"; iterations and out default to
    the worker's; job: the lab.report.job.Job the sender follows and cancels it through (its
    time budget per solver; None: one of the default budget); latest: the run's latest step,
    not a step of the past the history shows."""

    reason: str = "key"
    iterations: int | None = None
    out: str | None = None
    solvers: tuple[str, ...] = ()
    job: object = field(default=None, compare=False)
    latest: bool = False


@dataclass(frozen=True)
class Stop:
    """End the thread's work: stop the timer, release the core, emit `stopped`."""


# What app.worker handles itself; every other command is the Session's.
THREAD_COMMANDS = (Benchmark, Stop)
