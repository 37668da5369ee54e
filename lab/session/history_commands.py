"""The history's part of the Session: every step kept in a ring buffer (lab.session.history),
any kept step shown again, paused, exactly as it was (the world, its impulses, the contact
problem it solved, its report), and the run going on from the step shown, which drops the later
steps: a new future, with whatever solver is chosen then. While a step of the past is shown
everything that reads the current step reads it: the colours, the contact network, Ctrl+S and
Ctrl+E, and the solver comparison (B), which is how a step where a solver went wrong is solved
again with others. A mixin of lab.session.session.Session, whose sim, world, pause and messages
it reads and changes.

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
from .state import world_friction

NO_HISTORY = "no history yet: run at least one step"
SIDE_BY_SIDE = "no history while solvers run side by side (T ends it; the history starts again)"


def shown_message(step: int, first: int, last: int) -> str:
    """The message that step `step` of the history, keeping `first`..`last`, is shown (a
    display that says so already, as the HUD's HISTORY line does, can leave it out)."""
    return f"history: step {step} of {first}–{last} shown"


class HistoryCommands:
    """The Session's history (see the module docstring)."""

    history: History

    def _kept_history(self) -> History:
        """The history, emptied first when the world's drag or friction is no longer the one
        its steps were made under."""
        w = self.world
        material = (world_friction(w), float(w.damping))
        if material != getattr(self, "_history_material", None):
            self.history.clear()
            self._history_material = material
        return self.history

    def _before_step(self) -> None:
        """The state the step starts from is the newest one kept: kept now if the history is
        empty; from a step of the past the later ones are dropped (_branch)."""
        h = self.history
        if h.budget == 0:
            h.clear()
            return
        if self.copies is not None:
            # Side by side the copies would have to go back with copy 0: the history keeps
            # no copies, so it starts again once side by side ends.
            h.clear()
            return
        # Counted before a change of material empties the history: a step of the past that
        # goes on under a new friction is still a new stretch of the run.
        dropped = h.last - self.sim.steps if len(h) else 0
        h = self._kept_history()
        h.truncate(self.sim.steps)
        if not len(h):
            h.add(self.sim.checkpoint(problem=False), self.last_report)
        if dropped > 0:
            self._branch(dropped)
        drag = self._drag
        self._drag_before = None if drag is None else (drag[0], self.world.v[drag[0]].copy())

    def _after_step(self, report) -> None:
        """Keep the step: a checkpoint on a keyframe (lab.session.history), else only what
        making it again needs."""
        h = self.history
        if h.budget > 0 and self.copies is None:
            steps = self.sim.steps
            if len(h) and h.last != steps - 1:  # side by side ended in the step: anew
                h.clear()
            key = not len(h) or steps % KEYFRAME_EVERY == 0
            h.add(self.sim.checkpoint(problem=False) if key else None, report,
                  getattr(self, "_drag_before", None), self.sim.options, steps)

    def _branch(self, dropped: int) -> None:
        """Going on from a step of the past: a new stretch of the run (the plots continue
        their clock, as after a reset), without the alarm of a dropped step."""
        self.generation += 1
        self.diverged = False
        self.alarm = ""
        self._tell(f"went on from step {self.sim.steps} of the history: the {dropped} later "
                   f"step{'s' if dropped != 1 else ''} dropped")

    def _seek(self, c: cmd.Seek) -> None:
        self._show_step(int(c.step))

    def _history_step(self, c: cmd.HistoryStep) -> None:
        """`delta` steps from the one shown, stopping at either end of the history."""
        h = self._kept_history()
        if self.copies is not None:
            raise ParamError(SIDE_BY_SIDE)
        if not len(h):
            raise ParamError(NO_HISTORY)
        target = min(max(self.sim.steps + int(c.delta), h.first), h.last)
        if target == self.sim.steps and c.delta:
            end = "oldest" if c.delta < 0 else "newest"
            self.paused = True
            self._clock = None
            self.message = (f"history: step {target} is the {end} step kept "
                            f"(steps {h.first} to {h.last})")
            return
        self._show_step(target)

    def _show_step(self, step: int) -> None:
        """Step `step` of the history, paused, as it was after it (ParamError outside it)."""
        h = self._kept_history()
        if self.copies is not None:
            raise ParamError(SIDE_BY_SIDE)
        if not len(h):
            raise ParamError(NO_HISTORY)
        try:
            entry = h.get(step)
        except KeyError as err:
            raise ParamError(err.args[0]) from None
        self.paused = True
        self._clock = None
        self._drag = None
        self._make_again(h, entry)
        self._show_trace(entry)
        self.message = shown_message(step, h.first, h.last)

    def _make_again(self, h, entry) -> None:
        """The world as it was after `entry`'s step, with that step's contact problem and its
        report: the steps from the keyframe before it made again (bit for bit the same: the
        same state, impulses, options and trace flags, the hand's spring as it was). The
        oldest step kept has no step before it: its state alone, without a problem."""
        if entry.steps == h.first:
            self.sim.rewind(entry.checkpoint)
            self.last_report = entry.report
            return
        start = h.keyframe(entry.steps - 1)
        self.sim.rewind(start.checkpoint)
        now = self.sim.options
        try:
            for k in range(start.steps + 1, entry.steps + 1):
                again = h.get(k)
                if again.drag is not None:
                    i, v = again.drag
                    self.world.v[i] = v
                    self.sim.world_edited()
                self.sim.options = again.options or now  # the solver may have changed since
                report = self.sim.step(trace=again.report.result.trace is not None)
        finally:
            self.sim.options = now
        self.last_report = replace(report, timings=entry.report.timings)  # as made then

    def _show_trace(self, entry) -> None:
        """The residual per iteration of the step shown: kept if that step was traced, else
        its solve done again with the trace on (the CPU's; on a GPU, none)."""
        report = self.last_report if entry.report is not None else None
        trace = None if report is None else report.result.trace
        if trace is None and report is not None:
            trace = self.sim.retrace()
        self.trace = None if trace is None else trace.copy()
        self.trace_step = entry.steps if trace is not None else -1
        diverged = report is not None and report.result.status == DIVERGENCE
        self.trace_alarm = f"{report.method} diverged" if diverged else ""


HANDLERS = {cmd.Seek: HistoryCommands._seek, cmd.HistoryStep: HistoryCommands._history_step}
