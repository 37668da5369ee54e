"""The friction key's part of the Session: friction off (every μ 0, the values kept per scene)
and back on, and the choice carried to the scenes after it. A part of the Session
(lab.session.parts): it owns the friction kept and chosen, and reads and changes the Session's
world, spec and message through lab.session.context.Context."""
from __future__ import annotations

import scenes
from scenes import default_warm_start
from solver.methods import registry
from solver.params import resolve

from . import commands as cmd
from .parts import handles
from .spec import RunSpec
from .state import FRICTION_FALLBACK, friction_text, world_friction

# The friction key on a scene without friction of its own gives it this μ, marbles and walls
# (the bowl with friction).
FRICTION_ON = 0.5
FRICTION_NAMES = scenes.FRICTION_NAMES  # mu, mu_wall, mu_roll, mu_spin


class FrictionKey:
    """The Session's friction key (see the module docstring). `session`: what it may use of
    the Session (lab.session.context.Context)."""

    def __init__(self, session):
        self.session = session
        # Per scene, the friction the key turned off, to turn back on.
        self.off: dict[str, tuple[float, float, float, float]] = {}
        # What the key chose last (None: never pressed, each scene its own).
        self.on: bool | None = None

    def switched(self, scene: str, params: dict) -> tuple[dict, tuple | None, str]:
        """`scene`'s parameters with the friction the friction key chose last, which holds
        for every scene after it until pressed again: on, the scene's friction (kept, or its
        default, else μ = FRICTION_ON, as the key gives it); off, μ = 0. Returns (params, the
        friction turned off to keep in `off` or None, what to say or "")."""
        on = self.on
        if on is None or scenes.has_friction(params) == on:
            return params, None, ""
        if on:
            friction = self.off.get(scene) or _default_friction(scene)
            kept, said = None, f"friction on (the friction key): {friction_text(friction)}"
        else:
            friction = (0.0, 0.0, 0.0, 0.0)
            kept, said = scenes.friction_of(params), "friction off (the friction key): μ = 0"
        params = dict(params)
        for name, value in zip(FRICTION_NAMES, friction):
            if name in params:
                params[name] = value
        return params, kept, said

    @handles(cmd.ToggleFriction)
    def toggle(self, c: cmd.ToggleFriction) -> None:
        """Friction off (every μ 0, kept for this scene) or back on: the values kept, else the
        scene's own defaults, else μ = FRICTION_ON; the next scenes follow (switched).
        On the current world, from the next step: a pile that friction held collapses.
        Turning it on with a solver that cannot solve friction switches to FRICTION_FALLBACK
        and says so."""
        session = self.session
        w, scene = session.world, session.spec.scene
        warm = session.spec.options.warm_start
        self.on = not w.frictional
        if w.frictional:
            self.off[scene] = world_friction(w)
            self._set_friction((0.0, 0.0, 0.0, 0.0))
            session.message = ("friction off: μ = 0 (the friction key turns it back on)"
                               + self._also(warm))
            return
        friction = self.off.get(scene) or _default_friction(scene)
        switched = ""
        solver = session.spec.solver
        if not registry.get(solver).friction:
            switched = (f"; {solver} solves frictionless contacts only: switched to "
                        f"{FRICTION_FALLBACK}")
            session.set_solver(FRICTION_FALLBACK)
        self._set_friction(friction)
        session.message = f"friction on: {friction_text(friction)}{switched}{self._also(warm)}"

    def _also(self, warm: float) -> str:
        """What the key changes besides μ: the warm start, unless the user chose one, follows
        the friction (lab.session.friction_key.follow_friction: a frictional pile creeps
        without a full one), and the history starts again (it keeps the steps of one
        material: lab.session.history_commands)."""
        now = self.session.spec.options.warm_start
        said = f"; warm start {warm:g} -> {now:g}" if now != warm else ""
        return said + "; the history starts again here"

    def _set_friction(self, friction: tuple[float, float, float, float]) -> None:
        """The world's mu, mu_wall, mu_roll, mu_spin, and the scene parameters that give them
        (a reset keeps them; a scene without mu_wall has mu everywhere)."""
        params = dict(self.session.spec.scene_params)
        for name, value in zip(FRICTION_NAMES, friction):
            if name in params:
                params[name] = value
        self.session.set_material(params)


def follow_friction(spec: RunSpec) -> RunSpec:
    """Unless the user chose a warm start, the one the friction of `spec` wants."""
    if spec.warm_start_given:
        return spec
    return spec.changed(warm_start=default_warm_start(spec.scene_params))


def _default_friction(scene: str) -> tuple[float, float, float, float]:
    """The friction of `scene`'s default parameters, or μ = FRICTION_ON if it has none."""
    params = resolve(scenes.get(scene).params, {}, f"scene {scene}")
    if not scenes.has_friction(params):
        return (FRICTION_ON, FRICTION_ON, 0.0, 0.0)
    return scenes.friction_of(params)
