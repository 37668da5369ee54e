"""The solvers by their stable names (used by the command lines, the keys and the files).

Adding a method: one module under solver/methods/ exposing ``METHOD``, one entry in `_MODULES`,
one test.

A solver outside this package (a plug-in) is a module exposing ``METHOD``, a `driver.Method`:
named on a command line (``--solver-module package.module``, `load_module`) or registered under
the entry-point group ``marbles.solvers`` (its value ``package.module``, loaded when this module
is imported). It then appears wherever the registry is read. A plug-in that fails to import,
has no Method, or takes a registered name is refused in one line naming it; an entry point's
refusal is written to stderr and the rest of the program goes on.
"""
from __future__ import annotations

import importlib
import sys

from . import (apgd, coloured_gs, ipm, jacobi, mass_split, mprgp, naive, newton, nsgs, pcg,
               pgs, pgs_sm, ppcg, prox_gs, portfolio, prox_jacobi, psor, socp)
from ..params import ParamError
from .driver import Method
from ..options import ITERATIONS, SolveSettings

_MODULES = (naive, pgs, psor, jacobi, mass_split, coloured_gs, pcg, ppcg, prox_gs, prox_jacobi,
            nsgs, apgd, pgs_sm, mprgp, newton, socp, portfolio, ipm)

METHODS: dict[str, Method] = {module.METHOD.name: module.METHOD for module in _MODULES}

ENTRY_POINTS = "marbles.solvers"
# Plug-in solver name -> its module: what another process (a campaign's worker) loads to know it.
PLUGINS: dict[str, str] = {}


def load_module(name: str) -> Method:
    """Register the ``METHOD`` of module `name` (dotted); ParamError (one line, naming it) when
    it cannot be imported, has no Method, or its name is taken. Loading it twice is a no-op."""
    try:
        module = importlib.import_module(name)
    except Exception as err:  # a plug-in's own bug must not take the program down
        raise ParamError(f"solver plug-in {name}: cannot import it ({type(err).__name__}: "
                         f"{str(err).splitlines()[0] if str(err) else ''})") from None
    method = getattr(module, "METHOD", None)
    if not isinstance(method, Method):
        raise ParamError(f"solver plug-in {name}: no METHOD (a solver.methods.driver.Method) in "
                         f"it")
    known = METHODS.get(method.name)
    if known is not None and known is not method:
        raise ParamError(f"solver plug-in {name}: the name '{method.name}' is taken")
    METHODS[method.name] = method
    PLUGINS[method.name] = name
    return method


def load_entry_points() -> list[str]:
    """Register every installed ``marbles.solvers`` entry point; a broken one is refused with
    one line on stderr. Returns the refusals."""
    from importlib.metadata import entry_points

    refused = []
    for point in entry_points(group=ENTRY_POINTS):
        try:
            load_module(point.value.split(":")[0])
        except ParamError as err:
            refused.append(str(err))
            sys.stderr.write(f"marbles: {err}; skipped\n")
    return refused


def get(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ParamError(f"unknown solver '{name}'; valid: {', '.join(METHODS)}") from None


def friction_solvers() -> list[str]:
    """The solvers that handle friction, in registry order."""
    return [name for name, method in METHODS.items() if method.friction]


def on_device(device: str) -> list[str]:
    """The solvers whose Method declares `device` (driver.DEVICES), in registry order."""
    return [name for name, method in METHODS.items() if device in method.devices]


def check_friction(name: str, frictional: bool) -> None:
    """ParamError (one line) when solver `name` cannot solve the frictional problem and there
    is friction."""
    if frictional and not get(name).friction:
        raise ParamError(f"solver {name} solves frictionless contacts only; with friction "
                         f"(mu, mu_wall, mu_roll or mu_spin > 0) use one of "
                         f"{', '.join(friction_solvers())}, or set the friction to 0")


def settings(name: str, iterations: object = ITERATIONS.default, trace: bool = True,
             overrides: dict | None = None) -> SolveSettings:
    """The validated settings of method `name`: its parameters' defaults updated by
    `overrides` (text or values), and `iterations`; ParamError names a bad value."""
    return get(name).settings(iterations, trace, overrides)


load_entry_points()
