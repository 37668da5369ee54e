"""The solvers by their stable names (used by the command lines, the keys and the files).

Adding a method: one module under solver/methods/ exposing ``METHOD``, one entry in `_MODULES`,
one test.
"""
from __future__ import annotations

from . import jacobi, mprgp, naive, pcg, pgs, pgs_sm, ppcg, prox_gs, prox_jacobi, psor
from ..params import ParamError, resolve
from .driver import ITERATIONS, Method, SolveSettings

_MODULES = (naive, pgs, psor, jacobi, pcg, ppcg, prox_gs, prox_jacobi, pgs_sm, mprgp)

METHODS: dict[str, Method] = {module.METHOD.name: module.METHOD for module in _MODULES}


def get(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ParamError(f"unknown solver '{name}'; valid: {', '.join(METHODS)}") from None


def settings(name: str, iterations: object = ITERATIONS.default, trace: bool = True,
             overrides: dict | None = None) -> SolveSettings:
    """The validated settings of method `name`: its parameters' defaults updated by
    `overrides` (text or values), and `iterations`; ParamError names a bad value."""
    method = get(name)
    params = resolve(method.all_params, overrides or {}, f"solver {name}")
    return SolveSettings(name, int(ITERATIONS.parse(iterations)), bool(trace), params)
