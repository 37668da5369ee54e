"""What every solver shares: its declaration (`Method`), its settings, its result, and the
iteration driver `run`.

A method supplies `sweep(count)`, performing `count` of its iterations in place on λ; the driver
does the rest the same way for all: the natural-map residual after each iteration (outside the
timed region), cumulative solve time, the stopping tests and exit status, the fall-back on
divergence to the starting impulses, so a step never applies a blown-up iterate, and an answer
whose normal impulses pull projected back onto the cones (feasible.py; its residual measured
again), so every answer pushes. With
``trace=False`` it calls ``sweep(iterations)`` once: the fast path, timed, final residual only.
A traced solve also ends when its solve time passes ``settings.time_limit`` (seconds).

Optional: ``sweep`` may return how many iterations it performed (a method that stopped on its own
merit); ``sync()`` rebuilds what the method caches of λ after a fall-back; `Hooks`: ``stop()``
returns an exit status when the method's own test holds, ``products()`` the products with A spent
so far where that is not one per iteration, ``info`` the method's own counts.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from .. import metrics
from ..params import Param, resolve
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS, ContactProblem
from .feasible import project_answer

KINDS = (FRICTIONLESS, FRICTIONAL, EXPLICIT)
# Where a method may run: the Numba CPU core, the GPU (solver/cuda/); StepOptions.device's names.
DEVICES = ("cpu", "cuda")

ITERATIONS = Param("iterations", 20, int, "solver iterations per step", lo=1, hi=10_000_000)

# Rounding of one row of A λ + b relative to the size of its terms, |(Aλ)_c| + |b_c| + A_cc λ_c
# (the last for sums that cancel, as between two marbles of a resting column): a few ε for the
# handful of products and sums per row. A change of f = ½λᵀAλ + bᵀλ computed from these rows
# along a step Δλ is rounding below GRADIENT_NOISE Σ_c |Δλ_c| × that size; the safeguards of
# pcg/ppcg and pgs-sm compare with it.
GRADIENT_NOISE = 4.0 * float(np.finfo(np.float64).eps)

COMMON_PARAMS = (
    Param("abs_tol", 1e-12, float, "stop when the natural-map residual is below this", "m/s",
          lo=0.0),
    Param("rel_tol", 0.0, float, "stop when ‖Δλ‖∞/‖λ‖∞ is below this (0: off)", lo=0.0),
    Param("divergence", 1e4, float, "divergence when the residual exceeds this times the first",
          lo=1.0, lo_open=True),
)


@dataclass(frozen=True)
class SolveSettings:
    """A validated solver choice (built by `registry.settings`): method name, iteration budget,
    whether to record the residual after every iteration, and every parameter of the method and
    of COMMON_PARAMS by name (`settings["omega"]`)."""

    method: str
    iterations: int
    trace: bool
    params: dict = field(default_factory=dict)
    # Called with λ after every traced iteration, outside the timed region (a front end that
    # reports more than the residual, e.g. FCLIB's error); not a parameter of the method.
    observer: Callable[[np.ndarray], None] | None = field(default=None, compare=False)
    # Solve seconds (the timed region only: sweeps, not residuals or the observer) after which a
    # traced solve ends as max_iterations, its budget spent; None: the iterations alone bound
    # it. A performance profile gives every solver the same time rather than the same count.
    time_limit: float | None = field(default=None, compare=False)

    def __getitem__(self, name: str):
        return self.params[name]

    def with_trace(self, trace: bool) -> "SolveSettings":
        return self if bool(trace) == self.trace else dataclasses.replace(self, trace=bool(trace))


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




@dataclass(frozen=True)
class Method:
    """A registered solver. `solvers` maps each problem kind the method solves (KINDS) to its
    function `(problem, lam0, settings) -> SolveResult`, which keeps λ >= 0 and never raises on
    divergence; `solve` picks the one for the problem's kind, so no method asks a problem what
    it is. One function for every kind may be given alone: it then solves the frictionless
    problem, and the frictional and explicit ones too when `friction`. `params` are the
    method's own parameters; COMMON_PARAMS apply to all. `devices` (DEVICES) are where it
    runs: `solvers` are the CPU's; another device's package registers its functions with `on`
    when it is imported, so this declaration needs none of that device's libraries."""

    name: str
    label: str
    solvers: Mapping[str, Callable] | Callable
    description: str
    params: tuple[Param, ...] = ()
    friction: bool = False  # derived from `solvers`: solves the frictional problem
    devices: tuple[str, ...] = ("cpu",)
    _elsewhere: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        solvers = self.solvers
        if callable(solvers):
            solvers = {kind: solvers for kind in (KINDS if self.friction else (FRICTIONLESS,))}
        unknown = set(solvers) - set(KINDS)
        if unknown:
            raise ValueError(f"method {self.name}: unknown problem kinds {sorted(unknown)}")
        if "cpu" not in self.devices or set(self.devices) - set(DEVICES):
            raise ValueError(f"method {self.name}: devices {self.devices} must hold cpu and "
                             f"only {DEVICES}")
        object.__setattr__(self, "solvers", MappingProxyType(dict(solvers)))
        object.__setattr__(self, "friction", FRICTIONAL in solvers)

    def on(self, device: str, solvers: Mapping[str, Callable]) -> None:
        """Register `device`'s function for each problem kind (a subset of the CPU's kinds)."""
        if device == "cpu" or device not in self.devices:
            raise ValueError(f"method {self.name} does not declare device {device}")
        if set(solvers) - set(self.solvers):
            raise ValueError(f"method {self.name}: {device} kinds {sorted(solvers)} beyond "
                             f"the CPU's {sorted(self.solvers)}")
        self._elsewhere[device] = MappingProxyType(dict(solvers))

    def solve(self, problem, lam0: np.ndarray, settings: SolveSettings) -> SolveResult:
        """The method's solve of `problem` from λ0 (problem.size entries, checked: the kernels
        index λ without bounds checks, so a λ0 of another problem would write past arrays), on
        the problem's device."""
        device = problem.device
        solvers = self.solvers if device == "cpu" else self._elsewhere.get(device, {})
        function = solvers.get(problem.kind)
        if function is None:
            where = "" if device == "cpu" else f" on the {device} device"
            raise ValueError(f"solver {self.name} does not solve {problem.kind} problems{where}")
        shape = tuple(np.shape(lam0))
        if shape != (problem.size,):
            raise ValueError(f"{self.name}: λ0 must have {problem.size} entries for this "
                             f"problem ({problem.m} contacts), got shape {shape}")
        return function(problem, lam0, settings)

    @property
    def all_params(self) -> tuple[Param, ...]:
        return self.params + COMMON_PARAMS

    def settings(self, iterations: int, trace: bool = True, overrides: dict | None = None,
                 **extra) -> SolveSettings:
        """Validated settings of this method: its parameters' defaults updated by `overrides`
        (text or values; ParamError names a bad one); `extra`: SolveSettings' other fields
        (observer, time_limit)."""
        params = resolve(self.all_params, overrides or {}, f"solver {self.name}")
        return SolveSettings(self.name, int(iterations), bool(trace), params, **extra)


@dataclass(frozen=True)
class Hooks:
    """A method's additions to the driver's loop (module docstring)."""

    stop: Callable[[], str | None] | None = None
    products: Callable[[], int] | None = None
    info: dict = field(default_factory=dict)


@dataclass
class _Run:
    """One solve's state for the driver: λ (updated in place), where it started, the hooks."""

    problem: ContactProblem
    lam: np.ndarray
    settings: SolveSettings
    sweep: Callable[[int], int | None]
    sync: Callable[[], None] | None
    hooks: Hooks

    def spent(self, done: int) -> int:
        if self.hooks.products is not None:
            return int(self.hooks.products())
        return done

    def fall_back(self, to: np.ndarray) -> None:
        self.lam[:] = to
        if self.sync is not None:
            self.sync()

    def own_stop(self) -> str | None:
        return self.hooks.stop() if self.hooks.stop is not None else None


def run(problem: ContactProblem, lam: np.ndarray, settings: SolveSettings,
        sweep: Callable[[int], int | None], sync: Callable[[], None] | None = None,
        hooks: Hooks | None = None) -> SolveResult:
    """Drive `sweep` on λ (updated in place) and return the result. `sync()` rebuilds a
    method's cached state (velocities, residual vectors) after λ was restored by a fall-back;
    `hooks` the optional ones of the module docstring."""
    job = _Run(problem, lam, settings, sweep, sync, hooks if hooks is not None else Hooks())
    trace = settings.trace
    # One kernel call for the residual of λ0, the finiteness of the problem and the scale of b.
    r0, finite, scale = problem.scanned_residual(lam)
    if not finite:
        # A poisoned problem (NaN/inf velocities, masses or normals): no iterate can be trusted,
        # and min(λ, NaN) can even look finite to a kernel; end at once on the start impulses.
        if not np.all(np.isfinite(lam)):
            lam[:] = 0.0
        return SolveResult(lam, metrics.DIVERGENCE, 0, np.inf, np.inf,
                           np.array([np.inf]) if trace else None,
                           np.zeros(1) if trace else None, 0, job.hooks.info)
    if problem.m == 0 or (trace and r0 <= settings["abs_tol"]):
        return SolveResult(lam, metrics.ABSOLUTE, 0, r0, r0, np.array([r0]) if trace else None,
                           np.zeros(1) if trace else None, job.spent(0), job.hooks.info)
    # The bound needs a scale even when λ0 is already a solution (r0 = 0).
    bound = settings["divergence"] * max(r0, scale, 1e-300)
    return (_traced if trace else _fast)(job, r0, bound)


def _fast(job: _Run, r0: float, bound: float) -> SolveResult:
    """The whole budget in one sweep call; only the final residual is measured."""
    settings, lam = job.settings, job.lam
    start = lam.copy()
    done = job.sweep(settings.iterations)
    done = settings.iterations if done is None else int(done)
    # Not finite λ gives r = inf: the same divergence as the separate tests would find.
    r, finite = job.problem.checked_residual(lam)
    status = metrics.MAX_ITERATIONS
    own = job.own_stop()
    if not finite or not np.isfinite(r) or r > bound:
        status = metrics.DIVERGENCE
        job.fall_back(start)
        r = job.problem.residual(lam)
    elif r < settings["abs_tol"]:
        status = metrics.ABSOLUTE
    elif own is not None:
        status = own
    if project_answer(job.problem, lam, False):
        r = job.problem.residual(lam)
        status = projected_status(status, r, settings)
    return SolveResult(lam, status, done, r, r0, None, None, job.spent(done), job.hooks.info)


def projected_status(status: str, r: float, settings: SolveSettings) -> str:
    """The exit status of an answer after projection moved it, at its residual r (m/s): one
    that met the absolute tolerance before and no longer does ran out of iterations."""
    if status == metrics.ABSOLUTE and not r < settings["abs_tol"]:
        return metrics.MAX_ITERATIONS
    return status


def _traced(job: _Run, r0: float, bound: float) -> SolveResult:
    """One sweep at a time, with the exact residual after each (not timed)."""
    settings, lam, problem = job.settings, job.lam, job.problem
    abs_tol, rel_tol = settings["abs_tol"], settings["rel_tol"]
    start = lam.copy()
    trace, seconds = [r0], [0.0]
    elapsed = 0.0
    status = metrics.MAX_ITERATIONS
    previous = lam.copy()
    done = 0
    for k in range(settings.iterations):
        previous[:] = lam
        t0 = time.perf_counter()
        job.sweep(1)
        elapsed += time.perf_counter() - t0
        done = k + 1
        r, finite = problem.checked_residual(lam)  # one kernel: the residual and finiteness
        if not finite or not np.isfinite(r) or r > bound:
            status = metrics.DIVERGENCE
            job.fall_back(start)
            trace.append(r if np.isfinite(r) else np.inf)
            seconds.append(elapsed)
            break
        trace.append(r)
        seconds.append(elapsed)
        if settings.observer is not None:
            settings.observer(lam)
        if r < abs_tol:
            status = metrics.ABSOLUTE
            break
        if rel_tol > 0.0 and _stalled(lam, previous, rel_tol):
            status = metrics.RELATIVE
            break
        own = job.own_stop()
        if own is not None:
            status = own
            break
        if settings.time_limit is not None and elapsed >= settings.time_limit:
            break
    moved = project_answer(problem, lam, False)
    final = problem.residual(lam)
    if moved:  # the last iterate's residual is that of the answer handed back
        status = projected_status(status, final, settings)
        trace[-1] = final
    return SolveResult(lam, status, done, final, r0, np.array(trace), np.array(seconds),
                       job.spent(done), job.hooks.info)


def _stalled(lam: np.ndarray, previous: np.ndarray, rel_tol: float) -> bool:
    """‖Δλ‖∞ <= rel_tol ‖λ‖∞, for a change that is not exactly zero: an adaptive method that
    rejected its step keeps λ while far from converged, and a true fixed point is caught by the
    residual test."""
    scale = float(np.max(np.abs(lam), initial=0.0))
    change = float(np.max(np.abs(lam - previous), initial=0.0))
    return 0.0 < change <= rel_tol * scale
