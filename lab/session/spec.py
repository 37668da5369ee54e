"""A run specification: scene and its parameters, solver and its parameters, iterations, time
step, warm start and speed, every value validated against its declaration when the spec is made.
`marbles`, `marbles-bench` and the Session all start from one (`RunSpec.create`).

``--set name=value`` is routed by name: a scene parameter, a solver parameter, or a simulation
parameter (`warm_start`); a name none of them knows is refused with the valid ones listed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import scenes
from scenes import default_warm_start
from solver.methods import registry
from solver.options import (DEVICE, ITERATIONS, PRECISION, PUSH_SPEED, STABILISE, WARM_START,
                            SolveSettings, StepOptions)
from solver.parallel import THREADS
from solver.params import Param, ParamError, resolve
from solver.step import Simulation
from solver.world import DT, World

SCENE = Param("scene", "bowl", str, "the scene", choices=tuple(scenes.SCENES))
SOLVER = Param("solver", "pgs", str, "the contact solver", choices=tuple(registry.METHODS))


def load_solver_modules(names: list[str]) -> None:
    """Register the plug-in solvers `names` (dotted modules, registry.load_module) and let
    --solver accept them; ParamError names a broken one."""
    for name in names:
        registry.load_module(name)
    # SOLVER is imported by name across the front ends: widen its choices in place.
    object.__setattr__(SOLVER, "choices", tuple(registry.METHODS))
SPEED = Param("speed", 1.0, float, "simulated seconds per second of wall time (0: as fast as "
              "possible)", lo=0.0, hi=1000.0)
# Parameters of the simulation itself, set by --set like those of scenes and solvers.
SIM_PARAMS = (WARM_START, STABILISE, PUSH_SPEED)
_STEP_FIELDS = {f.name for f in dataclasses.fields(StepOptions)}

@dataclass(frozen=True)
class RunSpec:
    """scene: name; scene_params: all of the scene's parameters (damping included), resolved;
    options: what each step reads (solver settings, warm start, stabilisation, push speed,
    threads, device, precision: solver.options.StepOptions, validated when made, handed to the
    Simulation as it is); dt: s, or None for the scene's own; speed: multiple of real time,
    0 = as fast as possible; warm_start_given: False while the warm start follows the friction
    (default_warm_start). Make one with `create` (or `changed`)."""

    scene: str
    scene_params: dict
    options: StepOptions
    dt: float | None = None
    speed: float = SPEED.default
    warm_start_given: bool = False

    @classmethod
    def create(cls, scene: str = SCENE.default, solver: str = SOLVER.default,
               iterations: object = ITERATIONS.default, dt: object = None,
               speed: object = SPEED.default, assignments: dict | None = None,
               threads: object = THREADS.default,
               device: object = DEVICE.default,
               precision: object = PRECISION.default) -> "RunSpec":
        """A spec from text or values; ParamError (one line, naming the value) when one is
        bad. `assignments`: --set pairs, routed by name."""
        scene_over, solver_over, sim_over = route_assignments(scene, solver, assignments or {})
        scene_params = resolve(scenes.get(scene).params, scene_over, f"scene {scene}")
        registry.check_friction(solver, scenes.has_friction(scene_params))
        sim = resolve(SIM_PARAMS, sim_over, "the simulation")
        given = "warm_start" in sim_over
        if not given:
            sim["warm_start"] = default_warm_start(scene_params)
        # StepOptions checks the device and its solver now, before any work.
        options = StepOptions(registry.settings(solver, iterations, False, solver_over),
                              threads=threads, device=device, precision=precision, **sim)
        return cls(scene, scene_params, options, None if dt is None else float(DT.parse(dt)),
                   float(SPEED.parse(speed)), given)

    @property
    def solve(self) -> SolveSettings:
        return self.options.solve

    @property
    def solver(self) -> str:
        return self.options.solve.method

    @property
    def iterations(self) -> int:
        return self.options.solve.iterations

    @property
    def solver_params(self) -> dict:
        return self.options.solve.params

    def changed(self, **changes) -> "RunSpec":
        """A copy with fields replaced by already validated values; a field of the step's
        options (`solve`, `warm_start`, `threads`, ...) goes into `options`, validated again
        (ParamError, one line: e.g. the device cannot run the new solver)."""
        step = {k: changes.pop(k) for k in list(changes) if k in _STEP_FIELDS}
        if step:
            changes["options"] = changes.get("options", self.options).but(**step)
        return dataclasses.replace(self, **changes)

    def simulation(self, world: World) -> Simulation:
        """A Simulation of `world` with this spec's options."""
        return Simulation(world, self.options)

    def build_world(self) -> World:
        """The scene's world at t = 0, with this spec's time step."""
        world = scenes.get(self.scene).build(self.scene_params)
        if self.dt is not None:
            world.dt = self.dt
        return world

    def settings_json(self) -> dict:
        """What a report records of the solver and simulation settings."""
        o = self.options
        return {"iterations": self.iterations, **self.solver_params,
                "warm_start": o.warm_start, "stabilise": o.stabilise, "push_speed": o.push_speed,
                "threads": o.threads, "device": o.device, "precision": o.precision}


def route_assignments(scene: str, solver: str, assignments: dict) -> tuple[dict, dict, dict]:
    """Split --set values into (scene, solver, simulation) overrides, unparsed; refuses a name
    that none of them declares."""
    tables = ((f"scene {scene}", {p.name for p in scenes.get(scene).params}),
              (f"solver {solver}", {p.name for p in registry.get(solver).all_params}),
              ("the simulation", {p.name for p in SIM_PARAMS}))
    split: tuple[dict, dict, dict] = ({}, {}, {})
    for name, value in assignments.items():
        for k, (_, names) in enumerate(tables):
            if name in names:
                split[k][name] = value
                break
        else:
            valid = "; ".join(f"{owner}: {', '.join(sorted(names)) or 'none'}"
                              for owner, names in tables)
            raise ParamError(f"unknown parameter '{name}' ({valid})")
    return split


def route_compare_assignments(scene: str, settle_solver: str, solvers: list[str],
                              assignments: dict) -> tuple[dict, dict, dict, dict]:
    """Split --set values for a comparison into (scene, simulation, settling solver, compared
    solvers) overrides, each validated. `name=value` goes to the scene or the simulation if it
    is theirs, otherwise to the settling solver and to every compared solver that has it;
    `solver.name=value` goes to that compared solver only."""
    scene_names = {p.name for p in scenes.get(scene).params}
    sim_names = {p.name for p in SIM_PARAMS}

    def names_of(solver: str) -> set[str]:
        return {p.name for p in registry.get(solver).all_params}

    scene_over, sim_over, settle_over = {}, {}, {}
    per_solver: dict[str, dict] = {name: {} for name in solvers}
    for name, value in assignments.items():
        owner, dot, pname = name.rpartition(".")
        if dot:
            if owner not in per_solver:
                raise ParamError(f"--set {name}: '{owner}' is not a compared solver; compared: "
                                 f"{', '.join(solvers)}")
            per_solver[owner][pname] = value
        elif name in scene_names:
            scene_over[name] = value
        elif name in sim_names:
            sim_over[name] = value
        else:
            takers = [s for s in solvers if name in names_of(s)]
            if not takers and name not in names_of(settle_solver):
                known = sorted(scene_names | sim_names
                               | {p for s in {*solvers, settle_solver} for p in names_of(s)})
                raise ParamError(f"unknown parameter '{name}' (valid: {', '.join(known)}, or "
                                 "solver.name=value for one compared solver)")
            if name in names_of(settle_solver):
                settle_over[name] = value
            for s in takers:
                per_solver[s][name] = value
    for s, over in per_solver.items():
        resolve(registry.get(s).all_params, over, f"solver {s}")  # refuse bad values now
    return (resolve(scenes.get(scene).params, scene_over, f"scene {scene}"),
            resolve(SIM_PARAMS, sim_over, "the simulation"), settle_over,
            {s: over for s, over in per_solver.items() if over})
