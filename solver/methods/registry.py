"""The solvers by their stable names (used by the command lines, the keys and the files).

Adding a method: one module under solver/methods/ exposing ``METHOD``, one entry in `_MODULES`,
one test.
"""
from __future__ import annotations

from . import (apgd, coloured_gs, jacobi, mass_split, mprgp, naive, newton, nsgs, pcg, pgs,
               pgs_sm, ppcg, prox_gs, portfolio, prox_jacobi, psor, socp)
from ..params import ParamError, resolve
from .driver import ITERATIONS, Method, SolveSettings

_MODULES = (naive, pgs, psor, jacobi, mass_split, coloured_gs, pcg, ppcg, prox_gs, prox_jacobi,
            nsgs, apgd, pgs_sm, mprgp, newton, socp, portfolio)

METHODS: dict[str, Method] = {module.METHOD.name: module.METHOD for module in _MODULES}


def get(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ParamError(f"unknown solver '{name}'; valid: {', '.join(METHODS)}") from None


def friction_solvers() -> list[str]:
    """The solvers that handle friction, in registry order."""
    return [name for name, method in METHODS.items() if method.friction]


def solvers_for(kind: str) -> list[str]:
    """The solvers of a problem of `kind` (problem.kind), in registry order."""
    return [name for name, method in METHODS.items() if kind in method.solvers]


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
    method = get(name)
    params = resolve(method.all_params, overrides or {}, f"solver {name}")
    return SolveSettings(name, int(ITERATIONS.parse(iterations)), bool(trace), params)
