"""Scenes, solvers and parameters as text, generated from their declarations: `marbles-bench
list`, the README's tables and docs/parameters.md all come from here (a test keeps the files in
step with the code)."""
from __future__ import annotations

import scenes
from scenes.seed import MATERIAL
from solver.methods import registry
from solver.methods.driver import COMMON_PARAMS
from solver.options import ITERATIONS
from solver.parallel import THREADS
from solver.params import Param
from solver.world import DT

from ..session.spec import SIM_PARAMS, SPEED

RUN_OPTIONS = (ITERATIONS, DT, SPEED, THREADS)


def _short(params: tuple[Param, ...]) -> str:
    """`name`=default unit, ... for a table cell."""
    def one(p: Param) -> str:
        unit = f" {p.unit}" if p.unit else ""
        return f"`{p.name}`={p.default_text()}{unit}"

    return ", ".join(one(p) for p in params) or "—"


def list_text() -> str:
    """The output of `marbles-bench list`."""
    out = ["Scenes (--scene NAME; parameters by --set name=value):"]
    for scene in scenes.SCENES.values():
        out.append(f"  {scene.name:<12} {scene.description}")
        out += [f"      {p.describe()}" for p in scene.params]
    out.append("Solvers (--solver NAME):")
    for method in registry.METHODS.values():
        handles = "friction: yes" if method.friction else "friction: no, frictionless only"
        out.append(f"  {method.name:<12} {method.label}: {method.description} ({handles}; "
                   f"devices: {', '.join(method.devices)})")
        out += [f"      {p.describe()}" for p in method.params]
    out.append("Parameters every solver takes:")
    out += [f"      {p.describe()}" for p in COMMON_PARAMS]
    out.append("Simulation parameters (--set):")
    out += [f"      {p.describe()}" for p in SIM_PARAMS]
    out.append("Run options (--iterations, --dt, --threads; --speed for the window):")
    out += [f"      {p.describe()}" for p in RUN_OPTIONS]
    return "\n".join(out)


def _own(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """A scene's parameters without the material ones it takes at their common default."""
    common = {p.name: p.default for p in MATERIAL}
    return tuple(p for p in params if common.get(p.name, object()) != p.default)


def scenes_markdown() -> str:
    rows = ["| scene | what | parameters (default) |", "|---|---|---|"]
    rows += [f"| `{s.name}` | {s.description} | {_short(_own(s.params))} |"
             for s in scenes.SCENES.values()]
    rows.append(f"| every scene | material | {_short(MATERIAL)}, unless listed above |")
    return "\n".join(rows) + "\n"


def solvers_markdown() -> str:
    rows = ["| solver | what | friction | parameters (default) |", "|---|---|---|---|"]
    rows += [f"| `{m.name}` | {m.label}: {m.description} | {'yes' if m.friction else 'no'} | "
             f"{_short(m.params)} |" for m in registry.METHODS.values()]
    rows.append(f"| every solver | stopping tests | | {_short(COMMON_PARAMS)} |")
    return "\n".join(rows) + "\n"


def _param_rows(params: tuple[Param, ...]) -> list[str]:
    return [f"| `{p.name}` | {p.range_text()} | {p.default_text()} | {p.unit or '—'} | "
            f"{p.help} |" for p in params]


def parameters_markdown() -> str:
    """docs/parameters.md: every declared parameter, by owner."""
    head = ["| name | type and range | default | unit | what |", "|---|---|---|---|---|"]
    out = ["# Parameters", "",
           "Generated from the declarations in the code by `python -m lab.cli.catalog` (a test "
           "checks this file is current). Set them with `--set name=value` on both command "
           "lines; `marbles-bench list` prints the same.", "",
           "## Run options", "", *head, *_param_rows(RUN_OPTIONS), "",
           "## Simulation", "", *head, *_param_rows(SIM_PARAMS), "",
           "## Every solver", "", *head, *_param_rows(COMMON_PARAMS)]
    for scene in scenes.SCENES.values():
        out += ["", f"## Scene `{scene.name}`", "", scene.description + ".", "", *head,
                *_param_rows(scene.params)]
    for m in registry.METHODS.values():
        out += ["", f"## Solver `{m.name}`", "", f"{m.label}: {m.description}.", ""]
        out += [*head, *_param_rows(m.params)] if m.params else ["No parameters of its own."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(parameters_markdown(), end="")
