"""The Session's copies, solvers side by side (lab.session.side_by_side): its commands, the copies
stepped with the Session's own world, and what a display shows of them. A part of the Session
(lab.session.parts) that reads and changes its world, spec, pause and messages through
lab.session.context.Context.

Copy 0 is the Session's own simulation: the mouse, the colour modes' numbers, the contact
network, saving and the B key's comparison act on it, and the solver keys change its solver.
The other copies follow the Session's iterations, warm start, stabilisation and friction (the
F key, the material parameters) from the next step; a new world (reset, scene, parameter, state
file) restarts every copy from it. A copy that diverges pauses the Session as copy 0 does.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from solver.metrics import DIVERGENCE
import scenes
from solver.methods import registry

from . import commands as cmd
from .frame import frozen
from .parts import handles
from .run import EnergyBudget
from .side_by_side import COPY_COLOURS, SideBySide, check_count, label, parse_copies



@dataclass(frozen=True)
class CopyView:
    """What a display shows of one copy: label ("psor omega=1.2"); colour "#rrggbb" of its
    marbles and curves; x (n, 3) float32 m; orientation (n, 4) float32 quaternions; trace
    (k + 1,) m/s of the last traced step or None; residuals (s,) m/s of every step since the
    last view (the same steps as the Session's StepLog)."""

    label: str
    colour: str
    x: np.ndarray
    orientation: np.ndarray
    trace: np.ndarray | None
    residuals: np.ndarray


class Copies:
    """The Session's side by side (see the module docstring). `session`: what it may use of
    the Session (lab.session.context.Context)."""

    def __init__(self, session):
        self.session = session
        self.running: SideBySide | None = None  # the copies while side by side
        self.previous_solver: str | None = None  # the solver before the current one (T's partner)
        self._settings: tuple = ()  # SolveSettings of copies 1.. (copy 0's is the spec's)
        self._budgets: tuple = ()  # lab.session.run.EnergyBudget of copies 1..
        self._spec = None  # the spec the copies' options were last made from

    # ----------------------------------------------------------------------- commands
    @handles(cmd.SideBySide)
    def side_by_side(self, c: cmd.SideBySide) -> None:
        if not c.solvers:
            self._leave()
            return
        solvers = c.solvers if isinstance(c.solvers, str) else ",".join(c.solvers)
        spec = self.session.spec
        choices = parse_copies(solvers, spec.iterations)
        self._start([ch.settings(spec.iterations) for ch in choices])

    @handles(cmd.ToggleSideBySide)
    def toggle(self, c: cmd.ToggleSideBySide) -> None:
        if self.running is not None:
            self._leave()
            return
        check_count(int(c.copies))
        spec = self.session.spec
        frictional = self.session.world.frictional
        names = [n for n, m in registry.METHODS.items() if m.friction or not frictional]
        at = names.index(spec.solver) if spec.solver in names else 0
        # The solver used before this one first (M from pgs to jacobi, then T: the two side by
        # side), then the ones after the current.
        partners = [self.previous_solver] + [names[(at + k) % len(names)]
                                             for k in range(1, len(names))]
        others = list(dict.fromkeys(n for n in partners
                                    if n in names and n != spec.solver))
        others = others[:int(c.copies) - 1]
        self._start([spec.solve] + [self.session.settings_of(n) for n in others])

    def _start(self, settings: list) -> None:
        """Copies with `settings` (copy 0's becomes the Session's) from the world as it is;
        refused (nothing changes) when one cannot solve the world's friction."""
        session = self.session
        for s in settings:
            registry.check_friction(s.method, session.world.frictional)
        session.ensure_compiled(*dict.fromkeys(s.method for s in settings))
        session.use(settings[0])
        self._close()
        self._settings = tuple(settings[1:])
        self._make()
        names = ", ".join(f"{lab} ({colour})" for lab, colour in
                          zip(self.labels(), _colour_names()))
        session.message = (f"side by side from t = {session.world.time:.2f} s: {names}; "
                           "no history while side by side")

    def _leave(self) -> None:
        if self.running is None:
            self.session.message = "not side by side"
            return
        self._close()
        self.session.message = f"side by side ended: {self.session.spec.solver} goes on"

    def _make(self) -> None:
        """Copies of the Session's world as it is now, with the current settings."""
        self.running = SideBySide.start(self.session.sim, self._options())
        self._spec = self.session.spec
        self._budgets = tuple(EnergyBudget(w) for w in self.running.worlds[1:])

    def _close(self) -> None:
        if self.running is not None:
            self.running.close()
        self.running = None
        self._spec = None

    def _options(self) -> list:
        """Every copy's StepOptions: the Session's, with each copy's solver settings and the
        Session's iterations."""
        spec = self.session.spec
        solves = [spec.solve] + [dataclasses.replace(s, iterations=spec.iterations)
                                 for s in self._settings]
        return [spec.options.but(solve=s) for s in solves]

    def follow(self) -> None:
        """A new world: every copy starts again from it; side by side ends (said) when a
        copy cannot solve its friction."""
        if self.running is None:
            return
        self._close()
        session = self.session
        refused = [s.method for s in self._settings
                   if session.world.frictional and not registry.get(s.method).friction]
        if refused:
            said = (f"side by side ended: {', '.join(refused)} solves frictionless contacts "
                    "only")
            session.message = "; ".join(filter(None, (session.message, said)))
            return
        self._make()

    # ------------------------------------------------------------------------ stepping
    def step(self, trace: bool):
        """One step of the Session's simulation and, side by side, of every copy; returns
        copy 0's report."""
        sim = self.session.sim
        if self.running is None:
            return sim.step(trace=trace)
        self._sync()
        if self.running is None:  # the friction ended side by side
            return sim.step(trace=trace)
        reports = self.running.step(trace)
        self._check(reports[1:])
        return reports[0]

    def _sync(self) -> None:
        """The Session's material (drag, friction) and settings on every copy."""
        main, spec = self.session.world, self.session.spec
        for world in self.running.worlds[1:]:
            scenes.put_material(world, spec.scene_params)
        if main.frictional and any(not registry.get(s.method).friction
                                   for s in self._settings):
            self.follow()  # ends side by side, said
            return
        if self._spec is not spec:
            for sim, options in zip(self.running.sims, self._options()):
                if sim.options != options:
                    sim.options = options
            self._spec = spec

    def _check(self, reports) -> None:
        """Pause at a copy's divergence or at energy its marbles cannot have gained."""
        for k, (report, budget) in enumerate(zip(reports, self._budgets), start=1):
            world = self.running.worlds[k]
            what = ""
            if report.result.status == DIVERGENCE:
                what = f"{report.method} (side by side) diverged"
            else:
                gain = budget.gain(world)
                if budget.exceeded(gain):
                    what = ("marbles of " + report.method + " (side by side) "
                            + ("exploded" if math.isfinite(gain) else "became non-finite"))
                    budget.rebase(world)
            if what:
                alarm = f"{what} at step {self.session.sim.steps} (t = {world.time:.2f} s)"
                self.session.raise_alarm(alarm, f"{alarm}: paused; R resets every copy")
                return

    # --------------------------------------------------------------------------- views
    @property
    def threads(self) -> int:
        """The threads a step keeps busy (the copies' threads side by side)."""
        return self.running.threads if self.running is not None else self.session.sim.blocks

    def labels(self) -> tuple[str, ...]:
        """Each copy's label in order, () when not side by side."""
        if self.running is None:
            return ()
        return tuple(label(s.settings) for s in self.running.sims)

    def views(self) -> tuple[CopyView, ...]:
        """What a display shows of each copy (() when not side by side); takes the residuals
        of the steps made since the last call."""
        if self.running is None:
            return ()
        residuals = self.running.take_residuals()
        views = []
        for k, (sim, name) in enumerate(zip(self.running.sims, self.labels())):
            trace = self.running.traces[k]
            views.append(CopyView(
                name, COPY_COLOURS[k], frozen(sim.world.x), frozen(sim.world.orientation),
                None if trace is None else frozen(trace, np.float64),
                frozen(residuals[k], np.float64)))
        return tuple(views)


def _colour_names() -> tuple[str, ...]:
    """COPY_COLOURS in words, for messages."""
    return ("sky blue", "orange", "green", "purple")

