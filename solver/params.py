"""Declared parameters: every tunable value is one `Param`, declared once next to the code that
uses it, and checked by `Param.parse` wherever a value enters from outside (command line, key,
API call). Front ends generate their help, `marbles-bench list` and the README tables from these
declarations, so a name, range, default or unit is written in one place only.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Iterable, Mapping


# No integer parameter goes beyond this, declared bound or not: every integer up to it is exact
# in a float (the text is read as one, so "1e6" works) and far inside the int64 of the kernels.
INT_LIMIT = 2 ** 53


class ParamError(ValueError):
    """A bad parameter name or value; the message is one line meant for the user."""


@dataclass(frozen=True)
class Param:
    """name; default; kind: int, float, bool or str; help: one line; unit: SI unit of the
    value ("" for pure numbers); lo/hi: range (None: unbounded), lo_open/hi_open exclude the
    bound itself; choices: the allowed words of a str parameter; shown: the default as the
    help and the documentation say it, where it depends on the machine ("every core")."""

    name: str
    default: object
    kind: type
    help: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[str, ...] | None = None
    shown: str | None = None

    def __post_init__(self) -> None:
        # A float parameter keeps a float default: the kernels compile one signature per type.
        if self.kind is float and isinstance(self.default, int):
            object.__setattr__(self, "default", float(self.default))

    def but(self, **changes) -> "Param":
        """The same declaration with some fields changed (a command's own default, say)."""
        return dataclasses.replace(self, **changes)

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

    def default_text(self) -> str:
        """The default as help and documentation say it."""
        return self.shown if self.shown is not None else self.value_text()

    def value_text(self) -> str:
        """The default as a value the parser reads back."""
        if self.kind is bool:
            return "1" if self.default else "0"
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)

    def help_text(self) -> str:
        """One line for --help: what it is, its default with unit, and its range."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.help} (default {self.default_text()}{unit}; {self.range_text()})"

    def describe(self) -> str:
        """One line for `marbles-bench list`."""
        unit = f"[{self.unit}]" if self.unit else ""
        return (f"{self.name + '=' + self.default_text():<20} {unit:<6} "
                f"{self.range_text():<24} {self.help}")

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
                if not number.is_integer() or abs(number) > INT_LIMIT:
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
