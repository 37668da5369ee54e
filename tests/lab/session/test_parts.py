"""The Session's parts declare their commands and the Session dispatches through one table:
every command has exactly one handler, two declarations of one command are refused, and a
module's handlers get the Session as their first argument."""
from __future__ import annotations

import inspect
import types

import pytest

from lab.session import commands as cmd
from lab.session import files
from lab.session.parts import command_table, declared, handles
from lab.session.session import Session
from lab.session.spec import RunSpec


def test_every_command_has_exactly_one_handler_in_the_sessions_table():
    s = Session(RunSpec.create("column", "pgs", 20, speed=0))
    commands = {c for c in vars(cmd).values()
                if inspect.isclass(c) and c.__module__ == cmd.__name__}
    assert set(s._handlers) == commands - set(cmd.THREAD_COMMANDS)
    # Each part's own commands go to that part.
    assert s._handlers[cmd.ToggleSideBySide].__self__ is s.copies
    assert s._handlers[cmd.Seek].__self__ is s.history
    assert s._handlers[cmd.ToggleFriction].__self__ is s.friction_key
    assert s._handlers[cmd.DragMove].__self__ is s.hand
    assert s._handlers[cmd.Pause].__self__ is s


class One:
    @handles(cmd.Pause, cmd.Step)
    def go(self, c):
        return ("one", c)


class Other:
    @handles(cmd.Step)
    def step(self, c):
        return ("other", c)


def test_two_parts_declaring_one_command_are_refused():
    table = command_table(declared(One()))
    assert table[cmd.Step](cmd.Step()) == ("one", cmd.Step())
    with pytest.raises(TypeError, match="two handlers of Step"):
        command_table(declared(One()), declared(Other()))


def test_a_modules_handlers_take_the_session_first():
    seen = []
    module = types.ModuleType("fake_part")

    @handles(cmd.Reset)
    def reset(session, c):
        seen.append((session, c))

    reset.__module__ = module.__name__
    module.reset = module.imported = reset
    module.files_handler = files.open_state  # another module's function: not this one's
    table = command_table(declared(module, "the session"))
    assert list(table) == [cmd.Reset]
    table[cmd.Reset](cmd.Reset())
    assert seen == [("the session", cmd.Reset())]
    assert {kind for kind, _ in declared(files, None)} == {cmd.OpenState, cmd.SaveState,
                                                          cmd.FreezeState, cmd.ExportProblem}
