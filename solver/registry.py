"""The solvers by their stable names (used by the CLI, the hotkeys and the files).

Adding a method: one module exposing ``METHOD``, one line in `_MODULES`, one test.
"""
from __future__ import annotations

from . import jacobi, mprgp, naive, pcg, pgs, pgs_sm, ppcg, prox_gs, prox_jacobi, psor
from .method import Method, SolveSettings
from .params import ParamError, resolve

_MODULES = (naive, pgs, psor, jacobi, pcg, ppcg, prox_gs, prox_jacobi, pgs_sm, mprgp)

METHODS: dict[str, Method] = {module.METHOD.name: module.METHOD for module in _MODULES}


def get(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ParamError(f"unknown solver '{name}'; valid: {', '.join(METHODS)}") from None


def settings(name: str, iterations: int = 20, trace: bool = True,
             overrides: dict | None = None) -> SolveSettings:
    """Validated settings for method `name` with user overrides (text or values)."""
    method = get(name)
    params = resolve(method.all_params, overrides or {}, f"solver {name}")
    return SolveSettings(iterations=iterations, trace=trace, params=params)
