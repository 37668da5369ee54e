"""How the Session is made of parts: side by side (lab.session.copies), the history
(lab.session.history_commands), the friction key (lab.session.friction_key) and the hand that
drags a marble (lab.session.hand) each own their state and declare the commands they handle
with `handles`; the Session builds one table from every declaration (`command_table`) and
dispatches through it. A part sees of the Session only what lab.session.context.Context gives
it, not the Session."""
from __future__ import annotations

from functools import partial
from itertools import chain
from types import ModuleType
from typing import Callable, Iterator


def handles(*kinds: type) -> Callable:
    """Declares the decorated method (or function of the Session and a command) the handler
    of the commands `kinds` (classes of lab.session.commands)."""
    def declare(handler: Callable) -> Callable:
        handler.handles = kinds
        return handler
    return declare


def declared(owner, *bound) -> Iterator[tuple[type, Callable]]:
    """(command class, handler) of every handler `owner` declares: an object's methods, bound
    to it; a module's own functions, with `bound` as their first arguments."""
    if isinstance(owner, ModuleType):
        # Each function once, though the module may name it twice.
        for function in {id(f): f for f in vars(owner).values()}.values():
            if getattr(function, "__module__", None) == owner.__name__:
                for kind in getattr(function, "handles", ()):
                    yield kind, partial(function, *bound)
        return
    seen = set()
    for klass in type(owner).__mro__:
        for name, member in vars(klass).items():
            if name not in seen and hasattr(member, "handles"):
                seen.add(name)
                for kind in member.handles:
                    yield kind, getattr(owner, name)


def command_table(*declarations) -> dict[type, Callable[[object], None]]:
    """Command class -> its handler, from `declared(...)` of every part; TypeError when two
    declare one command."""
    table: dict[type, Callable[[object], None]] = {}
    for kind, handler in chain(*declarations):
        if kind in table:
            raise TypeError(f"two handlers of {kind.__name__}: {table[kind]} and {handler}")
        table[kind] = handler
    return table
