"""What a part of the Session (lab.session.parts) may use of it, and nothing else: a `Context`
is the Session's side of every part, handed to the part when the Session makes it."""
from __future__ import annotations

from . import commands as cmd


class Context:
    """What a part of the Session (lab.session.parts) may use of it: the world, the spec, the
    simulation, the last step's report, the hand and whether solvers run side by side, to read;
    the message, a pause, an alarm, a new stretch of the run, a step shown again, the solver's
    settings and the scene's parameters, to change."""

    def __init__(self, session):
        self._session = session

    world = property(lambda self: self._session.world)
    sim = property(lambda self: self._session.sim)
    spec = property(lambda self: self._session.spec)
    last_report = property(lambda self: self._session.last_report)
    hand = property(lambda self: self._session.hand)
    side_by_side = property(lambda self: self._session.copies.running is not None)

    @property
    def message(self) -> str:
        return self._session.message

    @message.setter
    def message(self, text: str) -> None:
        self._session.message = text

    def ensure_compiled(self, *names: str) -> None:
        self._session.ensure_compiled(*names)

    def settings_of(self, name: str):
        """Solver `name` with the parameters it was last given and the current iterations."""
        return self._session._settings_of(name)

    def use(self, settings) -> None:
        """Solver settings (validated) from the next step on."""
        self._session._use(settings)

    def set_solver(self, name: str) -> None:
        self._session._set_solver(cmd.SetSolver(name))

    def set_material(self, params: dict) -> None:
        """The current scene's parameters, changed in the material only, from the next step on
        (Session._set_material: the world, the spec, the warm start that follows friction)."""
        self._session._set_material(params)

    def hold(self) -> None:
        """Paused (the pacing starts again on resuming)."""
        self._session.paused, self._session._clock = True, None

    def raise_alarm(self, alarm: str, said: str) -> None:
        """Paused on `alarm` (SessionState.alarm), saying `said`."""
        s = self._session
        s.diverged = s.paused = True
        s._clock = None
        s.alarm = alarm
        s._tell(said)

    def new_stretch(self, said: str) -> None:
        """A new stretch of the run (the plots continue their clock) without the alarm."""
        s = self._session
        s.generation += 1
        s.diverged = False
        s.alarm = ""
        s._tell(said)

    def show(self, report, trace, trace_step: int, trace_alarm: str) -> None:
        """A step made again: its report and its trace (see Session.trace)."""
        s = self._session
        s.last_report = report
        s.trace, s.trace_step, s.trace_alarm = trace, trace_step, trace_alarm
