"""The Session: one simulation run under a RunSpec, changed only by typed commands applied
between two steps. It holds everything the desktop program shows or controls that is not
drawing: pacing in real time or flat out, divergence (pause and say so), marbles out of the
container and deep overlaps (say so and run on: lab/session/watch.py), the per-iteration trace
of a few steps per second, the numbers of every step (`StepLog`), the colour of every marble,
compiling kernels with progress, and the solver comparison of the current step. Its parts own
the rest (lab/session/parts.py): the mouse spring (`hand`), friction switched off and on
(`friction_key`), solvers side by side (`copies`) and the last steps kept to be shown again and
gone on from (`history`); each declares its commands, and `apply` dispatches through the one
table of them all. A part sees the Session through a `Context` (lab/session/context.py).
The window's worker is a thread adapter around it; scripts and tests use it directly.
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable

import numpy as np

import scenes
from solver.compile_count import compiled
from solver.metrics import DIVERGENCE
from solver.methods import registry
from solver.params import ParamError, resolve
from solver.step import Simulation, StepReport
from solver.world import World

from ..report.compare import ComparisonTable
from . import commands as cmd
from . import comparison
from .compiling import Kernels
from .context import Context
from . import files as session_files
from . import network
# COLOUR_MODES, IMPULSE_SCALE, heat and contact_slip are re-exported: the Session's colours.
from .colours import COLOUR_MODES, IMPULSE_SCALE, contact_slip, heat, marble_colours
from .copies import Copies
from .friction_key import FRICTION_ON, FrictionKey, follow_friction  # noqa: F401 (the window's)
from .hand import Hand
from .history import DEFAULT_BUDGET
from .history_commands import HistoryCommands
from .holding import alarm_cause, holding_settings, recovered_text
from .parts import command_table, declared, handles
from .run import EnergyBudget
from .spec import SIM_PARAMS, SPEED, RunSpec, route_assignments
from .state import (FRICTION_FALLBACK, RECORD_FIELDS, STABLE_SOLVER,  # noqa: F401
                    SessionState, StepLog, friction_text, world_friction)
from .watch import Watch

ITERATION_LADDER = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
# What the relaxation keys move, in order of preference: the relaxation factor of the
# over-relaxed methods and the damping of the Jacobi forms.
RELAXATION_PARAMS = ("omega", "beta")
WARM_START_CYCLE = {0.0: 0.5, 0.5: 1.0}  # off -> half (the largest stable) -> full -> off
# The per-iteration trace costs one more product with A per iteration, so only the steps the
# residual plot can show, about 25 per second of wall time, record it; and on a large pile,
# whose solve takes longer than that, at most TRACE_SHARE of the wall time goes to it (a
# traced solve costs about two: at 20 000 marbles every step was traced and took twice as long
# in the window as headless).
TRACE_PERIOD = 0.04  # s of wall time
TRACE_SHARE = 0.05
MAX_CATCH_UP = 10  # steps one call may do to keep real time (200 ms at 50 Hz)

class Session:
    """A run of `spec` (its world built by `start`, or `world` if given). `progress(text, done,
    total)` reports kernel compilation (total 0: finished) and may raise to cancel it."""

    def __init__(self, spec: RunSpec, world: World | None = None,
                 progress: Callable[[str, int, int], None] | None = None,
                 history_bytes: int = DEFAULT_BUDGET):
        self.spec = spec
        self.progress = progress
        self.paused = False
        self.diverged = False
        self.colour_mode = COLOUR_MODES[0]
        self.generation = 0
        self.message = ""
        self.message_seq = 0
        self.alarm = ""  # see SessionState.alarm
        self.origin = ""  # the state file the world came from ("" : built from its scene)
        self.origin_snapshot = None  # that file's StateSnapshot, what a reset goes back to
        self.network = False  # the display shows the contact network (lab.session.network)
        self.picked = -1  # the marble whose card the display shows
        self.frozen_state = None  # the state Ctrl+S kept while its name is asked (files.py)
        self.log = StepLog()
        self.last_report: StepReport | None = None
        self.trace: np.ndarray | None = None  # residual per iteration of the last traced step
        self.trace_step = -1
        # The alarm of the step the trace is of ("jacobi diverged"), "" for an ordinary step.
        self.trace_alarm = ""
        self.kernels = Kernels(self._say)
        self.sim: Simulation | None = None
        self._energy: EnergyBudget | None = None  # what the marbles may gain (an explosion)
        self.watch = Watch()  # escaped marbles and deep overlaps: warned of, not paused
        self._world = world
        # Each scene and solver keeps the parameters it was last given.
        self._scene_params = {spec.scene: spec.scene_params}
        self._solver_params = {spec.solver: spec.solver_params}
        self._last_trace_wall = -math.inf
        self._trace_gap = TRACE_PERIOD  # s of wall time from one traced step to the next
        self._clock: tuple[float, float] | None = None  # (wall s, simulated s) of the pacing
        context = Context(self)
        self.hand = Hand(context)
        self.friction_key = FrictionKey(context)
        self.copies = Copies(context)
        self.history = HistoryCommands(context, history_bytes)  # the last steps
        self._handlers = command_table(*map(declared, (self, self.hand, self.friction_key,
                                                        self.copies, self.history)),
                                       declared(session_files, self))

    # ------------------------------------------------------------------------------ life
    def start(self, shown: Callable[[], None] | None = None) -> None:
        """Build the world, call `shown` (its first state can be drawn at once), then compile
        the solver's kernels for it (with progress)."""
        world = self._world if self._world is not None else self.spec.build_world()
        self._world = None
        self.sim = self.spec.simulation(world)
        self._energy = EnergyBudget(world)
        if shown is not None:
            shown()
        self.ensure_compiled(self.spec.solver)

    @property
    def world(self) -> World:
        return self.sim.world

    @property
    def scene_named(self) -> bool:
        """False while the world comes from a state file that names no scene."""
        return self.origin_snapshot is None or self.origin_snapshot.scene is not None

    def ensure_compiled(self, *names: str, world: World | None = None) -> None:
        """Compile (or load from Numba's cache) what steps of `world` (default: the current
        one) run for solvers `names` (compiling.Kernels)."""
        world = world or (self._world if self.sim is None else self.world)
        self.kernels.ensure(names, world, self.spec.options.threads)

    @property
    def compile_seconds(self) -> float:
        return self.kernels.seconds

    def _say(self, text: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(text, done, total)

    # --------------------------------------------------------------------------- stepping
    def step(self, now: float | None = None) -> StepReport:
        """One step (its numbers go to `log`); records the trace if TRACE_PERIOD of wall time
        has passed since the last one. A divergence pauses the Session and says so."""
        now = time.perf_counter() if now is None else now
        trace = now - self._last_trace_wall >= self._trace_gap
        kernels = compiled()
        self.ensure_compiled(self.spec.solver)  # the F key or a state may change the rows
        work = self.hand.pull()
        if work is not None:
            self._energy.work += work  # given by the hand: the energy judgement's to allow
            self.sim.world_edited()  # a backend that keeps the state on a device takes it from here
        self.history.before_step()
        report = self.copies.step(trace)  # side by side, every copy
        self.history.after_step(report)
        self.last_report = report
        fresh = compiled() == kernels  # a step that compiled tells nothing of a solve's cost
        if trace and report.result.trace is not None:
            self._last_trace_wall = now
            self.trace = report.result.trace.copy()
            self.trace_step = self.sim.steps
            self.trace_alarm = ""
        elif fresh:  # an untraced solve: about what a traced one adds
            self._trace_gap = max(TRACE_PERIOD, report.timings.get("solve", 0.0) / TRACE_SHARE)
        said = self.watch.check(self.world, now)
        if said:  # before _check_world: a divergence's message is the one left to show
            self._tell(f"{said} at step {self.sim.steps} (t = {self.world.time:.2f} s); "
                       "the run goes on")
        self._check_world(report)
        self.log.add(self.world.time, float(report.result.residual), report.timings,
                     not fresh)
        return report

    def _check_world(self, report: StepReport) -> None:
        """Pause at every divergence of the solver and whenever the marbles gain more energy
        than physics allows (lab.session.run.EnergyBudget) or stop being finite: resuming
        after one runs on only up to the next (a diverging solver usually diverges again at
        once; a further gain of energy), so the window never runs on silently with marbles
        flying through the glass."""
        w = self.world
        what = why = ""
        if report.result.status == DIVERGENCE:
            what = f"{report.method} diverged"
        else:
            budget = self._energy
            gain = budget.gain(w)
            if budget.exceeded(gain):
                what = "marbles exploded" if math.isfinite(gain) else "marbles became non-finite"
                why = (f" (their energy rose by {gain:.3g} J, over the {budget.allowance:.3g} J"
                       " of lifting each by its radius)" if math.isfinite(gain) else "")
                budget.rebase(w)
        if not what:
            return
        if self.trace_step != self.sim.steps:
            # Only a few steps a second are traced: the plot of the latest step would show
            # an earlier, calm one. The step that raised the alarm is solved again, traced.
            trace = self.sim.retrace()
            if trace is not None:
                self.trace, self.trace_step = trace.copy(), self.sim.steps
        if self.trace_step == self.sim.steps:
            self.trace_alarm = what
        self.diverged = True
        self.paused = True
        self._clock = None
        cause, holding = alarm_cause(w, self.spec, report.result)
        self.alarm = f"{what}{why} at step {self.sim.steps} (t = {w.time:.2f} s): {cause}"
        self._tell(f"{self.alarm}: paused; R resets, X switches to {holding} and resets")

    def _tell(self, message: str) -> None:
        """A message for the display, counted so that it is shown even when repeated."""
        self.message = message
        self.message_seq += 1

    def run_for(self, seconds: float, limit: int | None = None) -> int:
        """Step flat out for `seconds` of wall time (at least one step) or until paused, at
        most `limit` steps; returns the steps made."""
        end = time.perf_counter() + seconds
        self.step()
        done = 1
        while (not self.paused and time.perf_counter() < end
               and (limit is None or done < limit)):
            self.step()
            done += 1
        return done

    def catch_up(self, now: float | None = None, limit: int | None = None) -> int:
        """Step as many times as real time times `speed` asks since the pacing began, at most
        `limit`; a lag of more than MAX_CATCH_UP steps is dropped rather than replayed.
        Returns the steps."""
        if self.paused or self.spec.speed <= 0:
            self._clock = None
            return 0
        now = time.perf_counter() if now is None else now
        w, speed = self.world, self.spec.speed
        if self._clock is None:
            self._start_clock(now)
        wall0, sim0 = self._clock
        due = int(((now - wall0) * speed - (w.time - sim0)) / w.dt + 1e-9)
        if due > MAX_CATCH_UP:
            self._start_clock(now)  # too far behind: drop the lag
            due = 1
        if limit is not None:
            due = min(due, limit)
        done = 0
        for _ in range(due):
            self.step(now)
            done += 1
            if self.paused:  # a divergence paused it
                break
        return done

    def _start_clock(self, now: float) -> None:
        """Pace from `now`, one step due, with the steps' times midway between the calls that
        a timer of period dt / speed makes: a call a millisecond early still finds its step due
        (on the steps' times it would find none, then two at the next call: at 0.05x a step
        every 0.8 s, then two at once)."""
        self._clock = (now - 1.5 * self.world.dt / self.spec.speed, self.world.time)

    # ---------------------------------------------------------------------------- views
    def state(self) -> SessionState:
        s, o = self.spec, self.spec.options
        return SessionState(
            scene=s.scene, solver=s.solver, solver_params=dict(s.solver_params),
            iterations=s.iterations, warm_start=o.warm_start, paused=self.paused,
            colour_mode=self.colour_mode, diverged=self.diverged, speed=s.speed,
            generation=self.generation, message=self.message,
            friction=world_friction(self.world), alarm=self.alarm, message_seq=self.message_seq,
            scene_params=dict(s.scene_params), origin=self.origin, network=self.network,
            scene_named=self.scene_named, marbles=self.world.n,
            picked=self.picked, stabilise=o.stabilise, threads=o.threads, blocks=self.sim.blocks,
            device=self.sim.device, precision=o.precision, warning=self.watch.warning,
            side_by_side=self.copies.labels(), history=self.history.kept.span(self.sim.steps))

    def colours(self) -> np.ndarray:
        """(n, 3) float32 RGB of every marble in the colour mode (lab.session.colours)."""
        return marble_colours(self.colour_mode, self.world, self.sim.problem, self.sim.lam)

    def contact_network(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The last step's contacts as ribbons: ends (m, 2, 3) m, width (m,) m, colour (m, 3)
        (lab.session.network)."""
        ends, impulse = network.contact_network(self.sim.problem, self.sim.lam, self.world)
        width, colour = network.network_style(impulse, self.world)
        return ends, width, colour

    def card(self) -> network.MarbleCard | None:
        """The picked marble's card, None when none is picked."""
        return network.marble_card(self.world, self.sim.problem, self.sim.lam, self.picked)

    # ------------------------------------------------------------------------- commands
    def apply(self, command) -> None:
        """Carry out one command from lab.session.commands; a refused one leaves everything as it
        was and its reason in `message` (one line)."""
        handler = self._handlers.get(type(command))
        if handler is None:
            raise TypeError(f"not a Session command: {command!r}")
        self.message = ""
        seq = self.message_seq
        try:
            handler(command)
        except ParamError as err:
            self.message = str(err)
        if self.message and self.message_seq == seq:
            self.message_seq += 1

    @handles(cmd.Pause)
    def _pause(self, c: cmd.Pause) -> None:
        self.paused = (not self.paused) if c.paused is None else bool(c.paused)
        self._clock = None
        if self.diverged and not self.paused:
            self.message = (f"running on after: {self.alarm}; it pauses again at the next "
                            "divergence (R resets, X switches to the settings that hold it)")

    @handles(cmd.Step)
    def _single_step(self, c: cmd.Step) -> None:
        self.paused = True
        self._clock = None
        self.step()

    @handles(cmd.Reset)
    def _reset(self, c: cmd.Reset) -> None:
        """The scene from t = 0 (or the state file as opened); a pause the user chose stays,
        one a divergence made ends (_new_world)."""
        self._restart()

    def _restart(self) -> None:
        """A new world: the state file's again, or the scene's at t = 0."""
        if self.origin_snapshot is not None:
            session_files.start_from(self, self.origin_snapshot, self.origin)
        else:
            self._new_world(self.spec.build_world())  # may refuse: then nothing changes

    @handles(cmd.Recover)
    def _recover(self, c: cmd.Recover) -> None:
        """The settings that hold the scene (lab.session.holding), then a reset that runs."""
        before = self.spec.solve
        holding = holding_settings(self.world, self.spec)
        self.ensure_compiled(holding.method)
        self._use(holding)
        self._restart()
        self.paused = False
        self.message = recovered_text(before, holding)

    @handles(cmd.SetScene)
    def _set_scene(self, c: cmd.SetScene) -> None:
        """The friction key's choice carries over (FrictionKey.switched). A scene with friction
        while the solver cannot solve it: FRICTION_FALLBACK, said."""
        scene = scenes.get(c.name)
        params = self._scene_params.get(c.name) or resolve(scene.params, {}, c.name)
        params, kept, carried = self.friction_key.switched(c.name, params)
        spec = self.spec.changed(scene=c.name, scene_params=params)
        switch = scenes.has_friction(params) and not registry.get(spec.solver).friction
        if switch:  # compiled by the first step, after a display has shown the new choice
            spec = spec.changed(solve=self._settings_of(FRICTION_FALLBACK))
        world = spec.build_world()  # may refuse: then nothing changes
        if carried:
            self.message = carried
        if switch:
            self.message = "; ".join(filter(None, (
                carried, f"{self.spec.solver} solves frictionless contacts only: switched to "
                         f"{FRICTION_FALLBACK} for {c.name}")))
            self._solver_params[FRICTION_FALLBACK] = spec.solver_params
        if kept is not None:
            self.friction_key.off[c.name] = kept
        self._scene_params[c.name] = params
        self.spec = follow_friction(spec)
        self._new_world(world)

    @handles(cmd.CycleScene)
    def _cycle_scene(self, c: cmd.CycleScene) -> None:
        self._set_scene(cmd.SetScene(_cycled(list(scenes.SCENES), self.spec.scene, c.delta)))

    @handles(cmd.SetSolver)
    def _set_solver(self, c: cmd.SetSolver) -> None:
        """Refused (one line) when the solver cannot solve the world's friction."""
        registry.check_friction(c.name, self.world.frictional)
        # Compiled by the next step (with progress), so that a display shows the solver
        # chosen while its kernels compile, not the one before.
        self._use(self._settings_of(c.name))

    def _settings_of(self, name: str):
        """Solver `name` with the parameters it was last given and the current iterations."""
        return registry.settings(name, self.spec.iterations, False,
                                 self._solver_params.get(name, {}))

    @handles(cmd.CycleSolver)
    def _cycle_solver(self, c: cmd.CycleSolver) -> None:
        """The next solver that can solve the world (with friction: the friction solvers)."""
        frictional = self.world.frictional
        names = [name for name, method in registry.METHODS.items()
                 if method.friction or not frictional]
        self._set_solver(cmd.SetSolver(_cycled(names, self.spec.solver, c.delta)))

    @handles(cmd.SetIterations)
    def _set_iterations(self, c: cmd.SetIterations) -> None:
        self._use(self.spec.solve.but(iterations=c.iterations))

    @handles(cmd.CycleIterations)
    def _cycle_iterations(self, c: cmd.CycleIterations) -> None:
        now = self.spec.iterations
        if c.delta > 0:
            nxt = next((v for v in ITERATION_LADDER if v > now), now)
        else:
            nxt = next((v for v in reversed(ITERATION_LADDER) if v < now), now)
        if nxt == now:
            end = "largest" if c.delta > 0 else "smallest"
            self.message = f"iterations already at the {end} step of the ladder ({now})"
            return
        self._set_iterations(cmd.SetIterations(nxt))

    @handles(cmd.SetParameter)
    def _set_parameter(self, c: cmd.SetParameter) -> None:
        s = self.spec
        scene_over, solver_over, sim_over = route_assignments(s.scene, s.solver,
                                                              {c.name: c.value})
        if sim_over:
            value = resolve(SIM_PARAMS, sim_over, "the simulation")
            if "warm_start" in sim_over:
                self._set_warm_start(float(value["warm_start"]))
            else:
                self.spec = self.spec.changed(**{k: float(value[k]) for k in sim_over})
                self.sim.options = self.spec.options
        elif solver_over:
            self._use(registry.settings(s.solver, s.iterations, False,
                                        {**s.solver_params, **solver_over}))
        else:
            params = resolve(scenes.get(s.scene).params, {**s.scene_params, **scene_over},
                             f"scene {s.scene}")
            registry.check_friction(s.solver, scenes.has_friction(params))
            if set(scene_over) <= set(scenes.MATERIAL_NAMES):
                self._set_material(params)
                return
            world = s.changed(scene_params=params).build_world()  # may refuse: no change
            self._scene_params[s.scene] = params
            self.spec = s.changed(scene_params=params)
            self._new_world(world)

    def _set_material(self, params: dict) -> None:
        """Scene parameters that differ only in the material (drag, friction): put on the current
        world from the next step (a reset keeps them), no rebuild; the warm start follows the
        friction unless the user chose one."""
        scenes.put_material(self.world, params)
        self._scene_params[self.spec.scene] = params
        self.spec = follow_friction(self.spec.changed(scene_params=params))
        self.sim.options = self.spec.options

    @handles(cmd.Relax)
    def _relax(self, c: cmd.Relax) -> None:
        method = registry.get(self.spec.solver)
        spec = next((p for name in RELAXATION_PARAMS for p in method.params
                     if p.name == name and p.kind is float), None)
        if spec is None:
            self.message = f"{self.spec.solver} has no relaxation parameter"
            return
        value = self.spec.solver_params[spec.name]
        proposed = round(value + float(c.delta), 6)
        try:
            spec.parse(proposed)
        except ParamError:
            self.message = f"{spec.name}={value:g} is at its limit ({spec.range_text()})"
            return
        self._set_parameter(cmd.SetParameter(spec.name, proposed))

    @handles(cmd.CycleWarmStart)
    def _cycle_warm_start(self, c: cmd.CycleWarmStart) -> None:
        self._set_warm_start(WARM_START_CYCLE.get(self.spec.options.warm_start, 0.0))

    @handles(cmd.SetColourMode)
    def _set_colour_mode(self, c: cmd.SetColourMode) -> None:
        mode = c.mode
        if mode is None:
            mode = COLOUR_MODES[(COLOUR_MODES.index(self.colour_mode) + 1) % len(COLOUR_MODES)]
        if mode not in COLOUR_MODES:
            raise ParamError(f"colour mode {mode!r} is not one of {', '.join(COLOUR_MODES)}")
        self.colour_mode = mode

    @handles(cmd.SetSpeed)
    def _set_speed(self, c: cmd.SetSpeed) -> None:
        self.spec = self.spec.changed(speed=float(SPEED.parse(c.speed)))
        self._clock = None

    @handles(cmd.ToggleNetwork)
    def _toggle_network(self, c: cmd.ToggleNetwork) -> None:
        self.network = not self.network

    @handles(cmd.Pick)
    def _pick(self, c: cmd.Pick) -> None:
        self.picked = int(c.index) if 0 <= int(c.index) < self.world.n else -1

    def _use(self, settings) -> None:
        """Solver settings from the next step on (already validated)."""
        if settings.method != self.spec.solver:  # T's partner (lab.session.copies)
            self.copies.previous_solver = self.spec.solver
        self._solver_params[settings.method] = settings.params
        self.spec = self.spec.changed(solve=settings)
        self.sim.options = self.spec.options

    def _set_warm_start(self, fraction: float) -> None:
        self.spec = self.spec.changed(warm_start=fraction, warm_start_given=True)
        self.sim.options = self.spec.options

    def _new_world(self, world: World, origin: str = "", snapshot=None) -> None:
        """`world` from now on; `origin` and `snapshot`: the state file it came from. A pause
        that a divergence made ends with the world that diverged; one the user chose stays."""
        self.sim = self.spec.simulation(world)
        self._energy = EnergyBudget(world)
        self.watch = Watch()
        if self.diverged:
            self.paused = False
        self.origin, self.origin_snapshot = origin, snapshot
        if self.picked >= world.n:
            self.picked = -1
        self.generation += 1
        self.diverged = False
        self.alarm = ""
        self.last_report = None
        self.log.clear()
        self.history.kept.clear()
        self.trace = None
        self.trace_step = -1
        self.trace_alarm = ""
        self.hand.let_go()
        self._clock = None
        self.copies.follow()

    # -------------------------------------------------------------------------- compare
    def benchmark(self, iterations: int, out: str | Path, source: str,
                  solvers: tuple[str, ...] = ()) -> tuple[ComparisonTable, list[Path], dict]:
        """`solvers`, or every registered solver that can solve the current step's frozen
        problem (with friction: the friction solvers), from zero impulses, `iterations` each
        (the step shown: a step of the history is frozen as it was); writes
        out/benchmark.npy, .json and .png as one unit (lab.session.comparison.run, which the
        window runs with a name of its own, a time budget and a cancel). Returns (table,
        paths, meta). ParamError when there is no problem yet; OutputError when the files
        cannot be written."""
        done = comparison.run(self, iterations, out, source, solvers)
        return done.table, done.paths, done.meta


def _cycled(names: list[str], current: str, delta: int) -> str:
    k = names.index(current) if current in names else 0
    return names[(k + int(delta)) % len(names)]


__all__ = ["Session", "SessionState", "StepLog", "RECORD_FIELDS", "COLOUR_MODES",
           "ITERATION_LADDER", "heat", "IMPULSE_SCALE", "friction_text", "contact_slip"]
