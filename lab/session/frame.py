"""The frame a display draws: one immutable picture of a Session, made in the thread that
steps it (`frame_of`) and handed to the display as it is, Qt-free. Positions, radii, colours and
orientations are float32 copies, as the renderer's instance buffer takes them."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from scenes import friction_of

from .colours import COLOUR_MODES
from .state import SessionState, StepLog, world_friction

_NO_RECORDS = StepLog().take()


@dataclass(frozen=True)
class Frame:
    """One immutable picture of the simulation. x: (n, 3) float32 m; radius: (n,) float32 m;
    colour: (n, 3) float32 RGB in [0, 1]; orientation: (n, 4) float32 unit quaternions
    (w, x, y, z) body -> world, or None (unrotated); timings: seconds per phase of the last step;
    trace: (k + 1,) residual (m/s) per iteration of the last traced step, or None;
    residual: final natural-map residual (m/s) of the last step; records: every step made
    since the previous frame, oldest first (lab.session.state.StepLog); stepped: records is not
    empty (False when only the state changed)."""

    seq: int
    stepped: bool
    x: np.ndarray
    radius: np.ndarray
    colour: np.ndarray
    container: dict
    time: float
    steps: int
    dt: float
    contacts: int
    timings: dict
    status: str
    iterations_done: int
    residual: float
    trace: np.ndarray | None
    trace_step: int
    state: SessionState
    compile_seconds: float = 0.0
    wall: float = 0.0  # time.perf_counter() when the frame was made, s
    records: np.recarray = field(default_factory=lambda: _NO_RECORDS)
    orientation: np.ndarray | None = None
    # ms of wall time per step the display's simulation thread spends beside the steps
    # (lab.session.window_cost), NaN where none is measured.
    window_ms: float = math.nan
    commands_done: int = 0  # commands the simulation thread had received when it made this
    # With the contact network shown: (ends (m, 2, 3), width (m,) m, colour (m, 3)) float32
    # of the last step's contacts (lab.session.network); else None.
    network: tuple | None = None
    card: object = None  # the picked marble's lab.session.network.MarbleCard, or None
    trace_alarm: str = ""  # the alarm of the traced step ("jacobi diverged"), "" if none
    # Solvers side by side: each copy's lab.session.copies.CopyView (copy 0 is the world
    # above), () when not side by side.
    copies: tuple = ()


def frozen(a, dtype=np.float32) -> np.ndarray:
    """A read-only copy of `a` as `dtype`."""
    out = np.array(a, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


def frame_of(session, seq: int) -> Frame:
    """The `session` (lab.session.session.Session) as it is now, with the steps made since the
    last frame (they are taken from its StepLog); `seq`: the frame's number."""
    s = session
    records = s.log.take()
    w = s.world
    report = s.last_report
    result = report.result if report is not None else None
    return Frame(
        seq=seq, stepped=records.shape[0] > 0,
        x=frozen(w.x), radius=frozen(w.radius), colour=frozen(s.colours()),
        container=dict(w.container), time=w.time, steps=s.sim.steps, dt=w.dt,
        contacts=report.contacts if report is not None else 0,
        timings=dict(report.timings) if report is not None else {},
        status=result.status if result is not None else "",
        iterations_done=result.iterations if result is not None else 0,
        residual=float(result.residual) if result is not None else math.nan,
        trace=None if s.trace is None else frozen(s.trace, np.float64),
        trace_step=s.trace_step, trace_alarm=s.trace_alarm, state=s.state(),
        compile_seconds=s.compile_seconds,
        wall=time.perf_counter(), records=records, orientation=frozen(w.orientation),
        network=(tuple(frozen(a) for a in s.contact_network()) if s.network else None),
        card=s.card(), copies=s.copies.views())


def planned_state(spec, world=None) -> SessionState:
    """What a display shows of a run before its Session's first frame (while its kernels
    compile): the scene and solver of `spec` (a lab.session.spec.RunSpec), with `world`'s
    friction and marble count when it is built already (else the scene's parameters')."""
    p = spec.scene_params
    friction = world_friction(world) if world is not None else friction_of(p)
    return SessionState(
        scene=spec.scene, solver=spec.solver, solver_params=dict(spec.solver_params),
        iterations=spec.iterations, warm_start=spec.options.warm_start, paused=False,
        colour_mode=COLOUR_MODES[0], diverged=False, speed=spec.speed, generation=-1,
        friction=friction, scene_params=dict(p), marbles=world.n if world is not None else 0,
        stabilise=spec.options.stabilise, threads=spec.options.threads,
        precision=spec.options.precision)
