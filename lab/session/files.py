"""The Session's files: open a saved state, save the current one, export the current step's
contact problem (the window's Ctrl+O, Ctrl+S and Ctrl+E, and `marbles --state`).

A state carries the last step's impulses (lab.io.snapshot), so a warm-started run opened from it
continues as the saved one would have, bit for bit; a reset of an opened state goes back to the
state as opened. Every file is written atomically (lab.io.files); a file that cannot be read or
written is a one-line message and changes nothing. Each command's handler is a function of
the Session and the command (lab.session.parts.handles): opening a state replaces the world.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path

import scenes
from solver.methods import registry
from solver.params import ParamError, resolve

from ..io import fclib
from ..io import snapshot
from . import commands as cmd
from .friction_key import follow_friction
from .parts import handles
from .state import FRICTION_FALLBACK


def _refusal(err: ValueError) -> ParamError:
    """A file's one-line error as the Session's refusal."""
    return ParamError(str(err).splitlines()[0] if str(err) else type(err).__name__)


def state_scene(session, snap: snapshot.StateSnapshot) -> tuple[str, dict]:
    """The scene a state came from and its parameters, with the world's own drag and friction
    (the file's values win): the scene the file names if it is one of ours, else the current
    one."""
    stored = snap.scene or {}
    name = stored.get("name")
    if name in scenes.SCENES:
        try:
            params = resolve(scenes.get(name).params, stored.get("params", {}), f"scene {name}")
        except ParamError:
            params = resolve(scenes.get(name).params, {}, f"scene {name}")
    else:
        name, params = session.spec.scene, dict(session.spec.scene_params)
    w = snap.world
    params["damping"] = float(w.damping)
    for key in scenes.FRICTION_NAMES:
        if key in params:
            params[key] = float(getattr(w, key))
    return name, params


def start_from(session, snap: snapshot.StateSnapshot, path: str) -> str:
    """Make the state's world (a copy) the Session's, with its impulses; returns what was
    switched to solve it ("" or a sentence)."""
    world = copy.deepcopy(snap.world)
    name, params = state_scene(session, snap)
    spec = follow_friction(session.spec.changed(scene=name, scene_params=params))
    switched = ""
    if world.frictional and not registry.get(spec.solver).friction:
        session.ensure_compiled(FRICTION_FALLBACK)
        spec = spec.changed(solve=session._settings_of(FRICTION_FALLBACK))
        switched = (f"; {session.spec.solver} solves frictionless contacts only: switched to "
                    f"{FRICTION_FALLBACK}")
    session.spec = spec
    session._scene_params[name] = params
    session._solver_params[spec.solver] = spec.solver_params
    session._new_world(world, origin=path, snapshot=snap)
    session.sim.set_impulses(*snap.impulses)
    # The step count goes on with the time: a state keeps its time, not its count, and a HUD
    # whose count restarted beside a time that does not would contradict itself.
    session.sim.steps = steps_at(world.time, world.dt)
    return switched


def steps_at(time_s: float, dt: float) -> int:
    """The steps of `dt` s that make `time_s` s of simulated time (rounded; 0 for a time
    that is not finite or not positive)."""
    if not (math.isfinite(time_s) and math.isfinite(dt)) or time_s <= 0.0 or dt <= 0.0:
        return 0
    return int(round(time_s / dt))


@handles(cmd.OpenState)
def open_state(session, c: cmd.OpenState) -> None:
    try:
        snap = snapshot.read_state(c.path)
    except (OSError, ValueError) as err:
        raise _refusal(err) from None
    switched = start_from(session, snap, str(c.path))
    w = session.world
    session.message = (f"state opened: {c.path} ({w.n} marbles, t = {w.time:.2f} s){switched}")


@dataclass(frozen=True)
class Frozen:
    """A state as it was at one moment: copies of the world and the last step's impulses, its
    scene (None when the run came from a state file that named none) and step number."""

    world: object
    impulses: tuple
    scene: dict | None
    steps: int


def _state_now(session) -> Frozen:
    s = session.spec
    scene = {"name": s.scene, "params": dict(s.scene_params)} if session.scene_named else None
    return Frozen(copy.deepcopy(session.world), session.sim.impulses(), scene,
                  session.sim.steps)


@handles(cmd.FreezeState)
def freeze_state(session, c: cmd.FreezeState) -> None:
    session.frozen_state = None if c.drop else _state_now(session)


@handles(cmd.SaveState)
def save_state(session, c: cmd.SaveState) -> None:
    """The world, the last step's impulses and the scene: as FreezeState kept them (`frozen`),
    else as they are now."""
    state = session.frozen_state if c.frozen and session.frozen_state else _state_now(session)
    try:
        snapshot.save_state(c.path, state.world, state.impulses, state.scene)
    except ValueError as err:
        raise _refusal(err) from None
    if c.frozen:
        session.frozen_state = None
    session.message = (f"state saved: {c.path} (step {state.steps}, t = "
                       f"{state.world.time:.2f} s)")


FCLIB_SUFFIXES = (".hdf5", ".h5")


@handles(cmd.ExportProblem)
def export_problem(session, c: cmd.ExportProblem) -> None:
    """The contact problem the last step solved, with its impulses: an LCP snapshot, or an
    FCLIB local problem when the name ends in .hdf5 or .h5 (frictional problems only)."""
    sim = session.sim
    if sim.problem is None:
        raise ParamError("no contact problem yet: run at least one step")
    as_fclib = Path(c.path).suffix.lower() in FCLIB_SUFFIXES
    try:
        if as_fclib:
            fclib.fclib_refusal(session.world, "FCLIB export")
            fclib.save_fclib(c.path, sim.problem, sim.lam,
                             description=f"marbles {session.spec.scene}, step {sim.steps}")
        else:
            snapshot.save_lcp(c.path, sim.problem, sim.lam, session.world)
    except ValueError as err:
        raise _refusal(err) from None
    kind = "frictional, " if sim.problem.frictional else ""
    option = "--fclib" if as_fclib else "--lcp"
    session.message = (f"contact problem of step {sim.steps} ({kind}{sim.problem.m} contacts) "
                       f"exported: {c.path}; try `marbles-bench solve {option} {Path(c.path)}`")
