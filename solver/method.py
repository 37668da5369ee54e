"""What every solver shares: its settings, its result, and the iteration driver.

A method supplies `sweep(count)`, which performs `count` of its iterations in place on λ, and the
driver does the rest the same way for all: the exact natural-map residual after each iteration
(one product with A, outside the timed region), cumulative solve time, the stopping tests and exit
status, and the fall-back on divergence: λ returns to the starting impulses (the warm start, or
zero), the last ones known to be finite and bounded, so the step never applies a blown-up iterate.

With ``trace=False`` the driver calls ``sweep(iterations)`` once, so a Numba method runs its whole
budget in one call: that is the fast path used for timing; only the final residual is measured.

Optional hooks, for methods that need them (all default to the original behaviour):

- ``sweep(count)`` may return the number of iterations it actually performed (fewer than
  ``count`` when the method stopped itself on its own merit, e.g. the proximal methods' ρ);
  returning None means all ``count``.
- ``stop()`` returns an exit status when the method's own stopping test holds after the last
  iteration (None otherwise); it is asked after every traced iteration and after the fast path.
- ``products()`` returns the cumulative number of products with A spent so far, for methods whose
  cost per iteration varies (rejected iterates, CG vs expansion steps); without it the count is
  iterations × ``products_per_iteration``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import metrics
from .params import Param
from .problem import ContactProblem

COMMON_PARAMS = (
    Param("abs_tol", 1e-12, float, "stop when the natural-map residual (m/s) is below this",
          lo=0.0),
    Param("rel_tol", 0.0, float, "stop when ‖Δλ‖∞/‖λ‖∞ is below this (0: off)", lo=0.0),
    Param("divergence", 1e4, float, "divergence when the residual exceeds this times the first",
          lo=1.0, lo_open=True),
)


@dataclass(frozen=True)
class SolveSettings:
    """iterations: the budget; trace: record the residual after every iteration; params: the
    method's own parameters plus COMMON_PARAMS, already validated."""

    iterations: int = 20
    trace: bool = True
    params: dict = field(default_factory=dict)

    def get(self, name: str, default=None):
        return self.params.get(name, default)


@dataclass
class SolveResult:
    """lam: (m,) impulses, N s, always finite; residual: final natural map, m/s;
    trace/seconds: (iterations + 1,) residual and cumulative solve time after each iteration
    (index 0: before the first), None on the fast path; products: products with A (or sweeps
    of equal cost) spent, to compare costs fairly; info: method-specific counts."""

    lam: np.ndarray
    status: str
    iterations: int
    residual: float
    residual_initial: float
    trace: np.ndarray | None = None
    seconds: np.ndarray | None = None
    products: int = 0
    info: dict = field(default_factory=dict)


def run(problem: ContactProblem, lam: np.ndarray, settings: SolveSettings,
        sweep: Callable[[int], int | None], sync: Callable[[], None] | None = None,
        products_per_iteration: int = 1, info: dict | None = None,
        stop: Callable[[], str | None] | None = None,
        products: Callable[[], int] | None = None) -> SolveResult:
    """Drive `sweep` on λ (updated in place) and return the result. `sync()` rebuilds a
    method's cached state (velocities, residual vectors) after λ was restored by a fall-back;
    `stop` and `products` are the optional hooks of the module docstring."""

    def spent(done: int) -> int:
        return int(products()) if products is not None else done * products_per_iteration

    def result_info() -> dict:
        return info if info is not None else {}

    abs_tol = float(settings.get("abs_tol", 0.0))
    rel_tol = float(settings.get("rel_tol", 0.0))
    bound_factor = float(settings.get("divergence", 1e4))
    start = lam.copy()
    # One kernel call for the residual of λ0, the finiteness of the problem and the scale of b.
    r0, finite, scale = problem.scanned_residual(lam)
    # The bound needs a scale even when λ0 is already a solution (r0 = 0).
    bound = bound_factor * max(r0, scale, 1e-300)

    def fall_back(to: np.ndarray) -> None:
        lam[:] = to
        if sync is not None:
            sync()

    if not finite:
        # A poisoned problem (NaN/inf velocities, masses or normals): no iterate can be trusted,
        # and min(λ, NaN) can even look finite to a kernel; end at once on the start impulses.
        if not np.all(np.isfinite(lam)):
            lam[:] = 0.0
        return SolveResult(lam, metrics.DIVERGENCE, 0, np.inf, np.inf,
                           np.array([np.inf]) if settings.trace else None,
                           np.zeros(1) if settings.trace else None, 0, result_info())

    if problem.m == 0 or (settings.trace and r0 <= abs_tol):
        zeros = np.zeros(1)
        return SolveResult(lam, metrics.ABSOLUTE, 0, r0, r0,
                           np.array([r0]) if settings.trace else None,
                           zeros if settings.trace else None, spent(0), result_info())

    if not settings.trace:
        done = sweep(settings.iterations)
        done = settings.iterations if done is None else int(done)
        # Not finite λ gives r = inf: the same divergence as the separate tests would find.
        r, finite = problem.checked_residual(lam)
        status = metrics.MAX_ITERATIONS
        own = stop() if stop is not None else None
        if not finite or not np.isfinite(r) or r > bound:
            status = metrics.DIVERGENCE
            fall_back(start)
            r = problem.residual(lam)
        elif r < abs_tol:
            status = metrics.ABSOLUTE
        elif own is not None:
            status = own
        return SolveResult(lam, status, done, r, r0, None, None, spent(done), result_info())

    trace = [r0]
    seconds = [0.0]
    elapsed = 0.0
    status = metrics.MAX_ITERATIONS
    previous = lam.copy()
    done = 0
    for k in range(settings.iterations):
        previous[:] = lam
        t0 = time.perf_counter()
        sweep(1)
        elapsed += time.perf_counter() - t0
        done = k + 1
        r = problem.residual(lam)
        if not np.isfinite(r) or r > bound or not np.all(np.isfinite(lam)):
            status = metrics.DIVERGENCE
            fall_back(start)
            trace.append(r if np.isfinite(r) else np.inf)
            seconds.append(elapsed)
            break
        trace.append(r)
        seconds.append(elapsed)
        if r < abs_tol:
            status = metrics.ABSOLUTE
            break
        if rel_tol > 0.0:
            scale = float(np.max(np.abs(lam), initial=0.0))
            change = float(np.max(np.abs(lam - previous), initial=0.0))
            # An iterate left exactly unchanged says nothing: an adaptive method that rejected
            # its step (prox with R <- νR) keeps λ while it is far from converged, and a true
            # fixed point is caught by the residual test above.
            if 0.0 < change <= rel_tol * scale:
                status = metrics.RELATIVE
                break
        own = stop() if stop is not None else None
        if own is not None:
            status = own
            break
    final = problem.residual(lam)
    return SolveResult(lam, status, done, final, r0, np.array(trace), np.array(seconds),
                       spent(done), result_info())


@dataclass(frozen=True)
class Method:
    """A registered solver: `solve(problem, lam0, settings) -> SolveResult` keeps λ >= 0 and
    never raises on divergence. `params` are its own parameters; COMMON_PARAMS apply to all."""

    name: str
    label: str
    solve: Callable[[ContactProblem, np.ndarray, SolveSettings], SolveResult]
    description: str
    params: tuple[Param, ...] = ()

    @property
    def all_params(self) -> tuple[Param, ...]:
        return self.params + COMMON_PARAMS
