"""The history's part of the Session: every step kept in a ring buffer (lab.session.history),
any kept step shown again, paused, exactly as it was (the world, its impulses, the contact
problem it solved, its report), and the run going on from the step shown, which drops the later
steps: a new future, with whatever solver is chosen then. While a step of the past is shown
everything that reads the current step reads it: the colours, the contact network, Ctrl+S and
Ctrl+E, and the solver comparison (B), which is how a step where a solver went wrong is solved
again with others. A part of the Session (lab.session.parts) that reads and changes its sim,
world, pause and messages through lab.session.context.Context.

The history holds the steps of one world under one material: a new world (reset, scene, state
file) empties it, and so does a change of drag or friction (the friction key), after which the
step it was made at is the first one kept.
"""
from __future__ import annotations

from dataclasses import replace

from solver.metrics import DIVERGENCE
from solver.params import ParamError

from . import commands as cmd
from .history import KEYFRAME_EVERY, History
from .parts import handles
from .state import world_friction

NO_HISTORY = "no history yet: run at least one step"
SIDE_BY_SIDE = "no history while solvers run side by side (T ends it; the history starts again)"


def shown_message(step: int, first: int, last: int) -> str:
    """The message that step `step` of the history, keeping `first`..`last`, is shown (a
    display that says so already, as the HUD's HISTORY line does, can leave it out)."""
    return f"history: step {step} of {first}–{last} shown"


class HistoryCommands:
    """The Session's history (see the module docstring): `kept`, the steps kept, at most
    `budget` bytes of them. `session`: what it may use of the Session
    (lab.session.context.Context)."""

    def __init__(self, session, budget: int):
        self.session = session
        self.kept = History(budget)
        self._material = None  # (friction, drag) the steps kept were made under
        self._drag_before = None  # (marble, velocity (3,)) the hand gave the step being made

    def _kept_history(self) -> History:
        """The history, emptied first when the world's drag or friction is no longer the one
        its steps were made under."""
        w = self.session.world
        material = (world_friction(w), float(w.damping))
        if material != self._material:
            self.kept.clear()
            self._material = material
        return self.kept

    def before_step(self) -> None:
        """The state the step starts from is the newest one kept: kept now if the history is
        empty; from a step of the past the later ones are dropped (_branch)."""
        h, session = self.kept, self.session
        if h.budget == 0:
            h.clear()
            return
        if session.side_by_side:
            # Side by side the copies would have to go back with copy 0: the history keeps
            # no copies, so it starts again once side by side ends.
            h.clear()
            return
        # Counted before a change of material empties the history: a step of the past that
        # goes on under a new friction is still a new stretch of the run.
        sim = session.sim
        dropped = h.last - sim.steps if len(h) else 0
        h = self._kept_history()
        h.truncate(sim.steps)
        if not len(h):
            h.add(sim.checkpoint(problem=False), session.last_report)
        if dropped > 0:
            self._branch(dropped)
        i = session.hand.marble
        self._drag_before = None if i is None else (i, session.world.v[i].copy())

    def after_step(self, report) -> None:
        """Keep the step: a checkpoint on a keyframe (lab.session.history), else only what
        making it again needs."""
        h, sim = self.kept, self.session.sim
        if h.budget > 0 and not self.session.side_by_side:
            steps = sim.steps
            if len(h) and h.last != steps - 1:  # side by side ended in the step: anew
                h.clear()
            key = not len(h) or steps % KEYFRAME_EVERY == 0
            h.add(sim.checkpoint(problem=False) if key else None, report,
                  self._drag_before, sim.options, steps)

    def _branch(self, dropped: int) -> None:
        """Going on from a step of the past: a new stretch of the run (the plots continue
        their clock, as after a reset), without the alarm of a dropped step."""
        self.session.new_stretch(
            f"went on from step {self.session.sim.steps} of the history: the {dropped} later "
            f"step{'s' if dropped != 1 else ''} dropped")

    @handles(cmd.Seek)
    def seek(self, c: cmd.Seek) -> None:
        self._show_step(int(c.step))

    @handles(cmd.HistoryStep)
    def step_by(self, c: cmd.HistoryStep) -> None:
        """`delta` steps from the one shown, stopping at either end of the history."""
        h, session = self._kept_history(), self.session
        if session.side_by_side:
            raise ParamError(SIDE_BY_SIDE)
        if not len(h):
            raise ParamError(NO_HISTORY)
        steps = session.sim.steps
        target = min(max(steps + int(c.delta), h.first), h.last)
        if target == steps and c.delta:
            end = "oldest" if c.delta < 0 else "newest"
            session.hold()
            session.message = (f"history: step {target} is the {end} step kept "
                               f"(steps {h.first} to {h.last})")
            return
        self._show_step(target)

    def _show_step(self, step: int) -> None:
        """Step `step` of the history, paused, as it was after it (ParamError outside it)."""
        h, session = self._kept_history(), self.session
        if session.side_by_side:
            raise ParamError(SIDE_BY_SIDE)
        if not len(h):
            raise ParamError(NO_HISTORY)
        try:
            entry = h.get(step)
        except KeyError as err:
            raise ParamError(err.args[0]) from None
        session.hold()
        session.hand.let_go()
        report = self._make_again(h, entry)
        session.show(report, *self._trace(entry, report))
        session.message = shown_message(step, h.first, h.last)

    def _make_again(self, h, entry):
        """The world as it was after `entry`'s step, and that step's report: the steps from
        the keyframe before it made again, with its contact problem (bit for bit the same: the
        same state, impulses, options and trace flags, the hand's spring as it was). The
        oldest step kept has no step before it: its state alone, without a problem."""
        sim = self.session.sim
        if entry.steps == h.first:
            sim.rewind(entry.checkpoint)
            return entry.report
        start = h.keyframe(entry.steps - 1)
        sim.rewind(start.checkpoint)
        now = sim.options
        try:
            for k in range(start.steps + 1, entry.steps + 1):
                again = h.get(k)
                if again.drag is not None:
                    i, v = again.drag
                    sim.world.v[i] = v
                    sim.world_edited()
                sim.options = again.options or now  # the solver may have changed since
                report = sim.step(trace=again.report.result.trace is not None)
        finally:
            sim.options = now
        return replace(report, timings=entry.report.timings)  # as made then

    def _trace(self, entry, report) -> tuple:
        """(trace, its step, its alarm) of the step shown: the residual per iteration, kept
        if that step was traced, else its solve done again with the trace on (the CPU's; on a
        GPU, none)."""
        report = report if entry.report is not None else None
        trace = None if report is None else report.result.trace
        if trace is None and report is not None:
            trace = self.session.sim.retrace()
        diverged = report is not None and report.result.status == DIVERGENCE
        return (None if trace is None else trace.copy(),
                entry.steps if trace is not None else -1,
                f"{report.method} diverged" if diverged else "")
