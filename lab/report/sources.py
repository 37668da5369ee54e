"""The sources' settings where they differ from the program's defaults. The report reproduces
the papers' experiments, so its runs use the papers' parameters; `compare`, the window and
`solve` use the defaults.

Erleben's proximal Jacobi takes r = 1/A_cc (γ = 1). The program's `prox-jacobi` defaults to a
smaller γ (solver/methods/proximal.JACOBI_GAMMA) because at γ = 1 twenty iterations a step throw
a settled pile apart; the report's claims about the adaptive r-factor are claims about γ = 1.
Mazhar, Heyn, Negrut and Tasora's APGD takes one step 1/L for every row; the program's `apgd`
scales each contact's sub-blocks first (solver/methods/apgd.PRECONDITION), which on piles with
rolling resistance needs several times fewer iterations.
"""
from __future__ import annotations

from solver.methods import registry

SOURCE_PARAMS = {"prox-jacobi": {"gamma": 1.0}, "apgd": {"precondition": False}}
# What each solver's values are, said once.
SOURCE_WHY = {"prox-jacobi": "Erleben's r = 1/A_cc", "apgd": "Chrono's one step 1/L"}


def source_params(solver: str) -> dict:
    """The sources' parameter values for registered solver `solver` ({} for most), only those
    the registered method declares (a stand-in registered under the same name may not)."""
    method = registry.METHODS.get(solver)
    if method is None:
        return {}
    declared = {p.name for p in method.all_params}
    return {k: v for k, v in SOURCE_PARAMS.get(solver, {}).items() if k in declared}


def source_settings(solver: str, iterations: int, trace: bool, params: dict):
    """registry.settings of `solver` with the sources' values under `params`."""
    return registry.settings(solver, iterations, trace, {**source_params(solver), **params})


def with_sources(solvers) -> dict:
    """{solver: source_params(solver)} for those of `solvers` the sources set (a ScenePlan's
    solver_params)."""
    return {s: p for s in solvers if (p := source_params(s))}
