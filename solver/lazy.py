"""A module imported on its first use, not at start-up.

scipy costs a quarter of a second to import (its sparse and optimize packages), and only
`newton` and the existence test use it: every `marbles-bench` command and the window paid it
before their first line.
"""
from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for module `name`: its first attribute read imports it."""

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str):
        if attr.startswith("__"):  # copy, pickle and inspect ask for dunders: not the module's
            raise AttributeError(attr)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name}>"
