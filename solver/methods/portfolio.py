"""A portfolio of frictional solvers that returns the best answer by FCLIB's error.

No single method wins on the lab's frozen problems: the fixed point on s (socp.py) reaches true
solutions with sliding contacts where `newton` heads for a static pseudo-solution, and `newton`
solves stacks where the fixed point stalls. The members run one after another, each with an
equal share of what is left of `budget` seconds and the solve's iteration count; a member ends
after the iteration that passes its share, and one that overran takes the time from those after
it, so the whole ends about one iteration past the budget:

    0  the fixed point on s (socp) for half its share, then `newton` from its answer for the
       rest (the polish; newton's proximal term, `polish_prox` in units of W's diagonal, is the
       Levenberg–Marquardt-style regularisation that fixes λ where W leaves it undetermined)
    1  `newton` from zero
    2  `newton` started from apgd's cone complementarity answer

The answer is the member's with the least FCLIB error (the natural-map residual for a
frictionless problem); `info["member"]` says which, `info["error_k"]` each member's error.
The whole portfolio counts as one iteration (its trace: the start and the answer).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..params import Param
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS
from .driver import Method, SolveResult
from ..options import SolveSettings
from .newton import METHOD as NEWTON
from .socp import METHOD as SOCP

MEMBERS = ("fixed point + newton polish", "newton from zero", "newton from apgd")

PARAMS = (
    Param("budget", 30.0, float, "seconds shared by the members, each an equal share of what "
          "is left", "s",
          lo=0.0, lo_open=True),
    Param("polish_prox", 1.0, float, "the polish's proximal (Levenberg–Marquardt) weight, in "
          "units of W's diagonal (newton's prox)", lo=0.0, hi=1e6),
    Param("fixed_iterations", 50, int, "iterations (conic solves) of the fixed point on s",
          lo=1, hi=100_000),
)


def _settings(method: Method, iterations: int, seconds: float, abs_tol: float,
              **params) -> SolveSettings:
    return method.settings(iterations, True, {"abs_tol": abs_tol, **params}, time_limit=seconds)


def _error(problem, lam: np.ndarray) -> float:
    fclib = getattr(problem, "fclib_error", None)
    return float(fclib(lam)) if fclib is not None else float(problem.residual(lam))


def solve(problem, lam0: np.ndarray, settings: SolveSettings) -> SolveResult:
    # A profile's time limit bounds the whole portfolio as it bounds any solver.
    budget = settings["budget"] if settings.time_limit is None else min(settings["budget"],
                                                                         settings.time_limit)
    start = time.perf_counter()

    def left(members: int) -> float:
        """A member's share of what is left of the budget: a member that overran its share
        (an iteration is never cut) takes it from those after it, not from the total."""
        return max(budget - (time.perf_counter() - start), 0.0) / members

    n, tol = settings.iterations, settings["abs_tol"]
    zero = np.zeros(problem.size)
    first = left(len(MEMBERS))
    fixed = SOCP.solve(problem, np.array(lam0, dtype=np.float64),
                       _settings(SOCP, settings["fixed_iterations"], first / 2, tol,
                                 polish=0))
    polish = max(first - (time.perf_counter() - start), 0.0)
    polished = NEWTON.solve(problem, fixed.lam.copy(), _settings(
        NEWTON, n, polish, tol, prox=settings["polish_prox"]))
    from_zero = NEWTON.solve(problem, zero.copy(), _settings(NEWTON, n, left(2), tol))
    results = [polished, from_zero,
               NEWTON.solve(problem, zero.copy(), _settings(NEWTON, n, left(1), tol,
                                                            start="apgd"))]
    # The polish may leave the fixed point's answer worse (a pseudo-solution's basin).
    if _error(problem, fixed.lam) < _error(problem, polished.lam):
        results[0] = fixed
    errors = [_error(problem, r.lam) for r in results]
    best = int(np.argmin(errors))
    chosen = results[best]
    info = {"member": best, **{f"error_{k}": e for k, e in enumerate(errors)},
            "fixed_point_error": _error(problem, fixed.lam)}
    if settings.observer is not None:  # the front end's per-iteration report (FCLIB's error)
        settings.observer(chosen.lam)
    r0 = problem.residual(np.asarray(lam0, dtype=np.float64))
    # Members run one after another: the portfolio's trace is its start and its answer.
    elapsed = sum(float(r.seconds[-1]) for r in (fixed, *results[1:], polished))
    traced = settings.trace
    return dataclasses.replace(
        chosen, iterations=1, residual_initial=r0,
        info={**info, "member_iterations": fixed.iterations + sum(r.iterations
                                                                for r in results)},
        trace=np.array([r0, chosen.residual]) if traced else None,
        seconds=np.array([0.0, elapsed]) if traced else None,
        products=sum(r.products for r in results) + fixed.products)


METHOD = Method("portfolio", "Portfolio", {
    FRICTIONLESS: solve, FRICTIONAL: solve, EXPLICIT: solve},
    "socp + newton polish, newton from 0, from apgd: the best by FCLIB error", PARAMS)
