"""The Session's side by side (lab.session.side_by_side): its commands, the copies stepped with
the Session's own world, and what a display shows of them. A mixin of lab.session.session.Session,
whose world, spec, pause and messages it reads and changes.

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
from .run import EnergyBudget
from .side_by_side import COPY_COLOURS, SideBySide, check_count, label, parse_copies

MATERIAL = scenes.MATERIAL_NAMES  # World fields the copies share


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


def _frozen(a, dtype=np.float32) -> np.ndarray:
    out = np.array(a, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


class SideBySideMixin:
    """The Session's side by side (see the module docstring)."""

    copies: SideBySide | None = None
    previous_solver: str | None = None  # the solver used before the current one (Session._use)
    _copy_settings: tuple = ()  # SolveSettings of copies 1.. (copy 0's is the spec's)
    _copy_budgets: tuple = ()  # lab.session.run.EnergyBudget of copies 1..
    _copies_spec = None  # the spec the copies' options were last made from

    # ----------------------------------------------------------------------- commands
    def _side_by_side(self, c: cmd.SideBySide) -> None:
        if not c.solvers:
            self._leave_side_by_side()
            return
        solvers = c.solvers if isinstance(c.solvers, str) else ",".join(c.solvers)
        choices = parse_copies(solvers, self.spec.iterations)
        self._start_side_by_side([ch.settings(self.spec.iterations) for ch in choices])

    def _toggle_side_by_side(self, c: cmd.ToggleSideBySide) -> None:
        if self.copies is not None:
            self._leave_side_by_side()
            return
        check_count(int(c.copies))
        frictional = self.world.frictional
        names = [n for n, m in registry.METHODS.items() if m.friction or not frictional]
        at = names.index(self.spec.solver) if self.spec.solver in names else 0
        # The solver used before this one first (M from pgs to jacobi, then T: the two side by
        # side), then the ones after the current.
        partners = [self.previous_solver] + [names[(at + k) % len(names)]
                                             for k in range(1, len(names))]
        others = list(dict.fromkeys(n for n in partners
                                    if n in names and n != self.spec.solver))
        others = others[:int(c.copies) - 1]
        self._start_side_by_side([self.spec.solve] + [self._settings_of(n) for n in others])

    def _start_side_by_side(self, settings: list) -> None:
        """Copies with `settings` (copy 0's becomes the Session's) from the world as it is;
        refused (nothing changes) when one cannot solve the world's friction."""
        for s in settings:
            registry.check_friction(s.method, self.world.frictional)
        self.ensure_compiled(*dict.fromkeys(s.method for s in settings))
        self._use(settings[0])
        self._close_copies()
        self._copy_settings = tuple(settings[1:])
        self._make_copies()
        names = ", ".join(f"{lab} ({colour})" for lab, colour in
                          zip(self.copy_labels(), _colour_names()))
        self.message = f"side by side from t = {self.world.time:.2f} s: {names}"

    def _leave_side_by_side(self) -> None:
        if self.copies is None:
            self.message = "not side by side"
            return
        self._close_copies()
        self.message = f"side by side ended: {self.spec.solver} goes on"

    def _make_copies(self) -> None:
        """Copies of the Session's world as it is now, with the current settings."""
        self.copies = SideBySide.start(self.sim, self._copy_options())
        self._copies_spec = self.spec
        self._copy_budgets = tuple(EnergyBudget(w) for w in self.copies.worlds[1:])

    def _close_copies(self) -> None:
        if self.copies is not None:
            self.copies.close()
        self.copies = None
        self._copies_spec = None

    def _copy_options(self) -> list:
        """Every copy's StepOptions: the Session's, with each copy's solver settings and the
        Session's iterations."""
        base = self.spec.options
        solves = [self.spec.solve] + [dataclasses.replace(s, iterations=self.spec.iterations)
                                      for s in self._copy_settings]
        return [base.but(solve=s) for s in solves]

    def _follow_copies(self) -> None:
        """A new world: every copy starts again from it; side by side ends (said) when a
        copy cannot solve its friction."""
        if self.copies is None:
            return
        self._close_copies()
        refused = [s.method for s in self._copy_settings
                   if self.world.frictional and not registry.get(s.method).friction]
        if refused:
            said = (f"side by side ended: {', '.join(refused)} solves frictionless contacts "
                    "only")
            self.message = "; ".join(filter(None, (self.message, said)))
            return
        self._make_copies()

    # ------------------------------------------------------------------------ stepping
    def _step_sims(self, trace: bool):
        """One step of the Session's simulation and, side by side, of every copy; returns
        copy 0's report."""
        if self.copies is None:
            return self.sim.step(trace=trace)
        self._sync_copies()
        if self.copies is None:  # the friction ended side by side
            return self.sim.step(trace=trace)
        reports = self.copies.step(trace)
        self._check_copies(reports[1:])
        return reports[0]

    def _sync_copies(self) -> None:
        """The Session's material (drag, friction) and settings on every copy."""
        main = self.world
        for world in self.copies.worlds[1:]:
            for name in MATERIAL:
                setattr(world, name, getattr(main, name))
        if main.frictional and any(not registry.get(s.method).friction
                                   for s in self._copy_settings):
            self._follow_copies()  # ends side by side, said
            return
        if self._copies_spec is not self.spec:
            for sim, options in zip(self.copies.sims, self._copy_options()):
                if sim.options != options:
                    sim.options = options
            self._copies_spec = self.spec

    def _check_copies(self, reports) -> None:
        """Pause at a copy's divergence or at energy its marbles cannot have gained."""
        for k, (report, budget) in enumerate(zip(reports, self._copy_budgets), start=1):
            world = self.copies.worlds[k]
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
                self.diverged = True
                self.paused = True
                self._clock = None
                self.alarm = f"{what} at step {self.sim.steps} (t = {world.time:.2f} s)"
                self._tell(f"{self.alarm}: paused; R resets every copy")
                return

    # --------------------------------------------------------------------------- views
    @property
    def step_threads(self) -> int:
        """The threads a step keeps busy (the copies' threads side by side)."""
        return self.copies.threads if self.copies is not None else self.sim.blocks

    def copy_labels(self) -> tuple[str, ...]:
        """Each copy's label in order, () when not side by side."""
        if self.copies is None:
            return ()
        return tuple(label(s.settings) for s in self.copies.sims)

    def copy_views(self) -> tuple[CopyView, ...]:
        """What a display shows of each copy (() when not side by side); takes the residuals
        of the steps made since the last call."""
        if self.copies is None:
            return ()
        residuals = self.copies.take_residuals()
        views = []
        for k, (sim, name) in enumerate(zip(self.copies.sims, self.copy_labels())):
            trace = self.copies.traces[k]
            views.append(CopyView(
                name, COPY_COLOURS[k], _frozen(sim.world.x), _frozen(sim.world.orientation),
                None if trace is None else _frozen(trace, np.float64),
                _frozen(residuals[k], np.float64)))
        return tuple(views)

    _SIDE_BY_SIDE_HANDLERS = {cmd.SideBySide: _side_by_side,
                              cmd.ToggleSideBySide: _toggle_side_by_side}


def _colour_names() -> tuple[str, ...]:
    """COPY_COLOURS in words, for messages."""
    return ("sky blue", "orange", "green", "purple")

