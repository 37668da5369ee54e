"""The iteration driver of the GPU's solves: solver/methods/driver.py's tests and statuses (the
residual of λ0, the divergence bound, the fall-back to λ0, the trace) over λ on the GPU. A
reading of the residual is one launch and four numbers back; the fast path reads twice a solve.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .. import metrics
from ..methods.driver import SolveResult
from . import jacobi as gj
from .runtime import THREADS, cuda


class DeviceSolve:
    """One solve of Jacobi or mass splitting on a DeviceProblem: `measure(λ)` the driver's
    readings, `sweep(λ, count)` count iterations in one launch."""

    def __init__(self, problem, split: bool, settings):
        from .backend import cooperative_blocks
        self.problem = p = problem
        b = p.backend.buffers
        n, size = p.n, p.size
        self.frictional = p.rows > 1
        width = 6 if self.frictional else 3
        self.dv = b.get(f"solve_dv{width}", (n, width))
        self.e = b.get("solve_e", (size,))
        if split:
            diag = b.get("split", (size,))
            kernel = gj.frictional_split_diagonal if self.frictional else gj.split_diagonal
            kernel[max(1, (p.m + THREADS - 1) // THREADS), THREADS](p.A, p.csr[0], diag)
            beta = 1.0
        else:
            diag, beta = p.diag, float(settings["beta"])
        if self.frictional:
            step = b.get("step", (size,))
            gj.row_steps[max(1, (size + THREADS - 1) // THREADS), THREADS](beta, diag, step)
            self.system = (p.rhs, step)
            self.kernel = gj.frictional_jacobi
        else:
            self.system = (p.rhs, diag)
            self.beta = beta
            self.kernel = gj.jacobi
        self.blocks = cooperative_blocks(self.kernel, max(n, p.m))
        measure = gj.frictional_measure if self.frictional else gj.measure
        self.measure_blocks = cooperative_blocks(measure, max(n, p.m))
        self.partial = b.get("measure_partial", (self.measure_blocks * gj.MEASURES,))
        self.out = b.get("measure_out", (gj.MEASURES,))
        self.scratch_lam = b.get("lam_start", (size,))

    def sweep(self, lam, count: int) -> None:
        p = self.problem
        if self.frictional:
            self.kernel[self.blocks, THREADS](p.A, self.system, p.laws, lam, p.csr,
                                              (self.dv, self.e), count)
        else:
            self.kernel[self.blocks, THREADS](p.A, self.system, self.beta, lam, p.csr, self.dv,
                                              count)

    def measure(self, lam) -> tuple[float, bool, float, bool]:
        """(residual m/s, whether b and A's diagonal are finite, max |b|, whether λ is)."""
        p = self.problem
        if self.frictional:
            gj.frictional_measure[self.measure_blocks, THREADS](
                p.A, (p.rhs, p.diag), p.laws, lam, p.csr, (self.dv, self.e), self.partial,
                self.out)
        else:
            gj.measure[self.measure_blocks, THREADS](p.A, (p.rhs, p.diag), lam, p.csr, self.dv,
                                                     self.partial, self.out)
        r, finite, scale, lam_finite = self.out.copy_to_host()
        r = max(r, 0.0)
        if self.frictional and math.isfinite(r):
            r = math.sqrt(r)
        return r, finite != 0.0, max(scale, 0.0), lam_finite != 0.0


def run(solve: DeviceSolve, lam, settings) -> SolveResult:
    """The driver's fast path (trace off) or traced path over λ (updated in place)."""
    trace = settings.trace
    r0, finite, scale, lam_finite = solve.measure(lam)
    if not finite:
        if not lam_finite:
            _zero(lam)
        return SolveResult(lam, metrics.DIVERGENCE, 0, np.inf, np.inf,
                           np.array([np.inf]) if trace else None,
                           np.zeros(1) if trace else None, 0)
    if solve.problem.m == 0 or (trace and r0 <= settings["abs_tol"]):
        return SolveResult(lam, metrics.ABSOLUTE, 0, r0, r0, np.array([r0]) if trace else None,
                           np.zeros(1) if trace else None, 0)
    bound = settings["divergence"] * max(r0, scale, 1e-300)
    start = solve.scratch_lam
    start.copy_to_device(lam)
    if not trace:
        count = settings.iterations
        solve.sweep(lam, count)
        r, _, _, lam_finite = solve.measure(lam)
        status = metrics.MAX_ITERATIONS
        if not lam_finite or not math.isfinite(r) or r > bound:
            status = metrics.DIVERGENCE
            lam.copy_to_device(start)
            r = solve.measure(lam)[0]
        elif r < settings["abs_tol"]:
            status = metrics.ABSOLUTE
        return SolveResult(lam, status, count, r, r0, None, None, count)
    return _traced(solve, lam, settings, r0, bound)


def _traced(solve: DeviceSolve, lam, settings, r0: float, bound: float) -> SolveResult:
    """One launch an iteration, the exact residual after each (not timed)."""
    start = solve.scratch_lam
    trace, seconds = [r0], [0.0]
    elapsed = 0.0
    status = metrics.MAX_ITERATIONS
    done = 0
    for k in range(settings.iterations):
        t0 = time.perf_counter()
        solve.sweep(lam, 1)
        cuda.synchronize()
        elapsed += time.perf_counter() - t0
        done = k + 1
        r, _, _, lam_finite = solve.measure(lam)
        if not math.isfinite(r) or r > bound or not lam_finite:
            status = metrics.DIVERGENCE
            lam.copy_to_device(start)
            trace.append(r if math.isfinite(r) else np.inf)
            seconds.append(elapsed)
            break
        trace.append(r)
        seconds.append(elapsed)
        if r < settings["abs_tol"]:
            status = metrics.ABSOLUTE
            break
    final = solve.measure(lam)[0]
    return SolveResult(lam, status, done, final, r0, np.array(trace), np.array(seconds), done)


@cuda.jit
def _zero_kernel(a):
    for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        a[i] = 0.0


def _zero(lam) -> None:
    _zero_kernel[max(1, (lam.shape[0] + THREADS - 1) // THREADS), THREADS](lam)
