"""Typed, range-checked parameters shared by scenes, solvers and the command lines.

Every tunable value (a scene's marble count, a solver's ω, ...) is a `Param`; user text such as
``omega=2.5`` is parsed and checked here, so every front end refuses bad input with the same
one-line message that names the bad value and the allowed range.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping


class ParamError(ValueError):
    """A bad parameter name or value; the message is one line meant for the user."""


@dataclass(frozen=True)
class Param:
    name: str
    default: object
    kind: type  # int, float, bool or str
    help: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False  # True: the bound itself is excluded
    hi_open: bool = False
    choices: tuple[str, ...] | None = None

    def range_text(self) -> str:
        if self.choices:
            return "one of " + "|".join(self.choices)
        if self.kind is bool:
            return "0 or 1"
        if self.lo is None and self.hi is None:
            return self.kind.__name__
        left = ("(" if self.lo_open else "[") + ("-inf" if self.lo is None else f"{self.lo:g}")
        right = ("inf" if self.hi is None else f"{self.hi:g}") + (")" if self.hi_open else "]")
        return f"{self.kind.__name__} in {left}, {right}"

    def describe(self) -> str:
        return f"{self.name}={self.default!s:<8} {self.range_text():<24} {self.help}"

    def parse(self, value: object) -> object:
        """Convert text (or a value) to this parameter's type and check its range."""
        text = str(value).strip()
        bad = f"{self.name}={text} is not valid: must be {self.range_text()}"
        if self.choices:
            if text not in self.choices:
                raise ParamError(bad)
            return text
        if self.kind is bool:
            lowered = text.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ParamError(bad)
        try:
            if self.kind is int:
                number = float(text)
                if not number.is_integer():
                    raise ValueError
                parsed: float = int(number)
            else:
                parsed = float(text)
        except (ValueError, OverflowError):
            raise ParamError(bad) from None
        if not math.isfinite(parsed):
            raise ParamError(bad)
        if self.lo is not None and (parsed < self.lo or (self.lo_open and parsed == self.lo)):
            raise ParamError(bad)
        if self.hi is not None and (parsed > self.hi or (self.hi_open and parsed == self.hi)):
            raise ParamError(bad)
        return parsed


def resolve(specs: Iterable[Param], overrides: Mapping[str, object], owner: str) -> dict:
    """Defaults of `specs` updated by `overrides`; unknown names raise a ParamError listing the
    valid ones. `owner` names what the parameters belong to in messages ("solver psor")."""
    table = {p.name: p for p in specs}
    values = {name: p.default for name, p in table.items()}
    for name, raw in overrides.items():
        if name not in table:
            valid = ", ".join(sorted(table)) or "none"
            raise ParamError(f"unknown parameter '{name}' for {owner}; valid: {valid}")
        values[name] = table[name].parse(raw)
    return values


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """Split ``["omega=1.5", "n=10"]`` into a dict; a malformed item raises ParamError."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ParamError(f"--set {item!r} is not of the form name=value")
        out[name.strip()] = value.strip()
    return out
