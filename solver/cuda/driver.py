"""The iteration driver of the GPU's solves: solver/methods/driver.py's tests and statuses (the
residual of λ0, the divergence bound, the fall-back to λ0, the trace) over λ on the GPU. A
reading of the residual is one launch and four numbers back; the fast path reads twice a solve.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .. import metrics
from ..methods import registry
from ..methods.driver import SolveResult
from ..methods.apgd import BACKTRACKS, L, PRODUCTS, RESTARTS, RMIN, STOP
from ..methods import proximal
from ..methods.prox_friction import fresh_friction_state
from ..problem import FRICTIONAL, FRICTIONLESS
from . import apgd as ga
from . import colour as gc
from . import gauss_seidel as gs
from . import jacobi as gj
from . import prox_jacobi as gp
from .launch import kernel
from .runtime import THREADS, blocks_for, cooperative_blocks, cuda


class DeviceSolve:
    """One solve of Jacobi or mass splitting on a DeviceProblem: `solve(λ, count)` the fast
    path's one launch, `sweep(λ, count)` iterations alone, `measure(λ)` the driver's
    readings."""

    done = None  # iterations the fast path performed, when fewer than asked (APGD)

    def __init__(self, problem, split: bool, settings):
        frictional = problem.rows > 1
        self._buffers(problem, (gj.frictional_solve if frictional else gj.solve,
                                gj.frictional_jacobi if frictional else gj.jacobi))
        p, b, size = problem, problem.backend.buffers, problem.size
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
            self.system = (p.rhs, step, p.diag)
        else:
            self.system = (p.rhs, diag, p.diag)
            self.beta = beta

    def _buffers(self, problem, kernels: tuple) -> None:
        """What every solve holds: the problem, the scratch of its products, the kept start,
        the readings, and the blocks of a launch that `kernels` and the measure all fit."""
        self.problem = p = problem
        b = p.backend.buffers
        self.frictional = p.rows > 1
        width = 6 if self.frictional else 3
        self.dv = b.get(f"solve_dv{width}", (p.n, width))
        self.e = b.get("solve_e", (p.size,))
        self.start = b.get("lam_start", (p.size,))
        self.readings = b.get("readings", (2 * gj.MEASURES,), np.float64)
        measure = gj.frictional_measure if self.frictional else gj.measure
        items = max(p.n, p.m)
        self.blocks = min(cooperative_blocks(k, items) for k in (*kernels, measure))
        self.partial = b.get("measure_partial", (self.blocks * gj.MEASURES,), np.float64)

    def solve(self, lam, count: int) -> tuple[tuple, tuple]:
        """λ kept, measured, `count` iterations, measured again (one launch): the two
        readings."""
        self._solve_launch(lam, count)
        both = self.readings.copy_to_host()
        return (self._reading(both[:gj.MEASURES]), self._reading(both[gj.MEASURES:]))

    def _solve_launch(self, lam, count: int) -> None:
        p = self.problem
        if self.frictional:
            gj.frictional_solve[self.blocks, THREADS](
                p.A, self.system, p.laws, lam, p.csr, (self.dv, self.e),
                (self.start, self.partial, self.readings), count)
        else:
            gj.solve[self.blocks, THREADS](p.A, self.system, self.beta, lam, p.csr,
                                           (self.dv, self.start, self.partial), count,
                                           self.readings)

    def sweep(self, lam, count: int) -> None:
        p = self.problem
        if self.frictional:
            gj.frictional_jacobi[self.blocks, THREADS](p.A, self.system[:2], p.laws, lam, p.csr,
                                                       (self.dv, self.e), count)
        else:
            gj.jacobi[self.blocks, THREADS](p.A, self.system[:2], self.beta, lam, p.csr,
                                            self.dv, count)

    def phased(self, lam, count: int) -> None:
        """`count` iterations as `sweep` makes them, each as two ordinary launches (the marbles'
        pass, then the contacts'): the same λ, one launch per phase instead of one a solve."""
        p = self.problem
        marbles, contacts = blocks_for(p.n), blocks_for(p.m)
        for _ in range(count):
            if self.frictional:
                gj.frictional_marble_pass[marbles, THREADS](p.A, lam, p.csr, self.dv)
                gj.frictional_contact_pass[contacts, THREADS](p.A, self.system[:2], p.laws, lam,
                                                              (self.dv, self.e))
            else:
                gj.marble_pass[marbles, THREADS](p.A, lam, p.csr, self.dv)
                gj.contact_pass[contacts, THREADS](p.A, self.system[:2], self.beta, lam,
                                                   self.dv)

    def measure(self, lam) -> tuple[float, bool, float, bool]:
        """(residual m/s, whether b and A's diagonal are finite, max |b|, whether λ is)."""
        p = self.problem
        out = self.readings[:gj.MEASURES]
        if self.frictional:
            gj.frictional_measure[self.blocks, THREADS](
                p.A, (p.rhs, p.diag), p.laws, lam, p.csr, (self.dv, self.e),
                (self.partial, out))
        else:
            gj.measure[self.blocks, THREADS](p.A, (p.rhs, p.diag), lam, p.csr, self.dv,
                                             self.partial, out)
        return self._reading(out.copy_to_host())

    def _reading(self, values) -> tuple[float, bool, float, bool]:
        r, finite, scale, lam_finite = (float(v) for v in values)
        r = max(r, 0.0)
        if self.frictional and math.isfinite(r):
            r = math.sqrt(r)
        return r, finite != 0.0, max(scale, 0.0), lam_finite != 0.0

    def fall_back(self, lam) -> None:
        """λ <- the start kept by `solve` (or by the traced path)."""
        lam.copy_to_device(self.start)

    def prepare(self, lam) -> None:
        """What a method computes from λ0 before its iterations (Jacobi: nothing)."""

    def own_stop(self) -> str | None:
        """A status of the method's own (APGD's converged relaxation), else None."""
        return None

    def spent(self, done: int) -> int:
        """Products with A spent in `done` iterations (Jacobi: one each)."""
        return done

    def info(self) -> dict:
        return {}


class DeviceJacobi(DeviceSolve):
    """Projected Jacobi, damped by β."""

    method = "jacobi"

    def __init__(self, problem, settings):
        super().__init__(problem, False, settings)


class DeviceMassSplit(DeviceSolve):
    """Jacobi with each marble's mass split among its contacts."""

    method = "mass-split"

    def __init__(self, problem, settings):
        super().__init__(problem, True, settings)


class DeviceColouredGs(DeviceSolve):
    """Gauss-Seidel by colours on a DeviceProblem (solver/cuda/gauss_seidel.py): the contacts
    coloured and sorted by colour once (one launch), then DeviceSolve's interface over the
    sweeps by colour."""

    method = "coloured-gs"

    def __init__(self, problem, settings):
        frictional = problem.rows > 1
        self._buffers(problem, (gs.frictional_solve if frictional else gs.solve,
                                gs.frictional_sweeps if frictional else gs.sweeps))
        p, b, m = problem, problem.backend.buffers, problem.m
        tally = b.get("colour_tally", (gc.TALLY,), np.int64)
        self.colours = (b.get("colour_order", (m,), np.int64),
                        b.get("colour_bins", (m + 1,), np.int64), tally)
        ends, graph = (p.A[0], p.A[1]), (p.csr[0], p.csr[1])
        scratch = (b.get("colour", (m,), np.int64), b.get("colour_fresh", (m,), np.int64))
        gc.colour_contacts[cooperative_blocks(gc.colour_contacts, m), THREADS](
            ends, graph, *scratch, (*self.colours[:2], b.get("colour_fill", (m,), np.int64)),
            tally)
        self.count = int(tally.copy_to_host()[gc.COLOURS])
        step = b.get("step", (p.size,))
        gj.row_steps[max(1, (p.size + THREADS - 1) // THREADS), THREADS](1.0, p.diag, step)
        self.system = (p.rhs, step, p.diag)

    def _solve_launch(self, lam, count: int) -> None:
        p = self.problem
        if self.frictional:
            gs.frictional_solve[self.blocks, THREADS](
                p.A, self.system, p.laws, lam, p.csr, self.colours, (self.dv, self.e),
                (self.start, self.partial, self.readings), count)
        else:
            gs.solve[self.blocks, THREADS](p.A, self.system, lam, p.csr, self.colours,
                                           (self.dv, self.start, self.partial), count,
                                           self.readings)

    def sweep(self, lam, count: int) -> None:
        p = self.problem
        if self.frictional:
            gs.frictional_sweeps[self.blocks, THREADS](p.A, self.system[:2], p.laws, lam, p.csr,
                                                       self.colours, self.dv, count)
        else:
            gs.sweeps[self.blocks, THREADS](p.A, self.system[:2], lam, p.csr, self.colours,
                                            self.dv, count)

    def info(self) -> dict:
        return {"colours": self.count}

    def phased(self, lam, count: int) -> None:
        raise NotImplementedError("one launch per phase is for jacobi and mass-split")


class _Stateful(DeviceSolve):
    """A method whose iterations carry state between launches (APGD, prox-Jacobi): `prepare`
    starts it from λ0, `sweep` continues it, `solve` is the fast path (the start kept and
    measured, the start, the iterations, the result measured)."""

    def solve(self, lam, count: int) -> tuple[tuple, tuple]:
        self.start.copy_to_device(lam)
        first = self.measure(lam)
        self.prepare(lam)
        self.done = self.sweep(lam, count)
        return first, self.measure(lam)

    def phased(self, lam, count: int) -> None:
        raise NotImplementedError("one launch per phase is for jacobi and mass-split")


class DeviceApgd(_Stateful):
    """APGD on a DeviceProblem (solver/cuda/apgd.py) behind DeviceSolve's interface; `sweep`
    leaves the best iterate in λ."""

    method = "apgd"

    def __init__(self, problem, settings):
        self.start_kernel, self.kernel = (ga.FRICTIONAL_KERNELS if problem.rows > 1
                                          else ga.FRICTIONLESS_KERNELS)
        self._buffers(problem, (self.start_kernel, self.kernel))
        p, b = problem, problem.backend.buffers
        self.reduce = (b.get("apgd_partial", (self.blocks * ga.SUMS,), np.float64),
                       b.get("apgd_totals", (ga.SUMS,), np.float64))
        self.iterates = tuple(b.get(f"apgd_{name}", (p.size,)) for name in
                              ("gamma", "y", "Ag", "Ay", "cand", "Acand", "best", "z"))
        live = b.get("apgd_live", (p.m,), np.bool_)
        if p.m:
            ga.live_contacts[max(1, (p.m + THREADS - 1) // THREADS), THREADS](p.diag, p.rows,
                                                                              live)
        if self.frictional:
            laws = p.laws
        else:  # no friction: the cone is the half-line, its coefficients 0
            zeros = b.get("apgd_zeros", (p.m,))
            _zero(zeros)
            laws = (zeros, zeros, zeros)
        self.cone = (p.rows, *laws, live)
        self.metric = self._metric(bool(settings["precondition"]))
        self.P = (p.A, p.csr, self.dv)
        self.state = b.get("apgd_state", (4,), np.float64)
        self.counts = b.get("apgd_counts", (ga.COUNTS,), np.int64)
        self.options = (bool(settings["restart"]), float(settings["abs_tol"]))

    def _metric(self, precondition: bool) -> tuple:
        """apgd.metric on the GPU: (scale (size,), μ', μ_roll', μ_spin' (m,) each)."""
        p, b = self.problem, self.problem.backend.buffers
        scale = b.get("apgd_scale", (p.size,))
        if not precondition:
            _fill(scale, 1.0)
            return (scale, *self.cone[1:4])
        scaled = tuple(b.get(f"apgd_{name}", (p.m,)) for name in ("mu", "roll", "spin"))
        if p.m:
            spread = max(1, (p.m + THREADS - 1) // THREADS)
            ga.block_scales[spread, THREADS](p.diag, self.cone, scale, scaled)
        return (scale, *scaled)

    def prepare(self, lam) -> None:
        """The CPU's `start`: γ = y = λ, the first Lipschitz estimate, best = λ (2 products)."""
        self.start_kernel[self.blocks, THREADS](self.P, lam, self.problem.rhs, self.cone,
                                                self.metric[0], self.iterates, self.reduce,
                                                self.state)
        self.counts.copy_to_device(np.array([2, 0, 0, 0], dtype=np.int64))

    def sweep(self, lam, count: int) -> int:
        """`count` iterations (fewer once converged), λ <- the best iterate; the number done."""
        self.kernel[self.blocks, THREADS](self.P, self.problem.rhs, self.cone, self.metric,
                                          self.iterates, self.reduce, self.state, self.counts,
                                          (int(count), *self.options))
        lam.copy_to_device(self.iterates[6])
        self._counts = self.counts.copy_to_host()
        return int(self._counts[ga.DONE])

    def own_stop(self) -> str | None:
        return "absolute" if self.state.copy_to_host()[STOP] != 0.0 else None

    def spent(self, done: int) -> int:
        return int(self._counts[PRODUCTS])

    def info(self) -> dict:
        state = self.state.copy_to_host()
        return {"backtracks": int(self._counts[BACKTRACKS]),
                "restarts": int(self._counts[RESTARTS]),
                "relaxation_residual": float(state[RMIN]), "lipschitz": float(state[L])}


class DeviceProxJacobi(_Stateful):
    """prox-jacobi on a DeviceProblem (solver/cuda/prox_jacobi.py): R0 by the `r` strategy
    computed on the GPU, the adaptation's state and counts kept there between launches."""

    method = "prox-jacobi"

    def __init__(self, problem, settings):
        frictional = problem.rows > 1
        self.kernel = gp.FRICTIONAL if frictional else gp.FRICTIONLESS
        self._buffers(problem, (self.kernel,))
        p, b = problem, problem.backend.buffers
        strategy = settings["r"]
        spread = max(1, (p.m + THREADS - 1) // THREADS)
        factor = settings["r_global"] if strategy == "global" else settings["gamma"]
        nu, grow = proximal.scale_rules(settings)
        if frictional:
            base = b.get("prox_base", (p.m, 3))
            code = {"local": gp.LOCAL, "blocked": gp.BLOCKED, "global": gp.GLOBAL}[strategy]
            gp.frictional_bases[spread, THREADS](p.diag, p.rows, code, float(factor), base)
            self.steps = (base,)
            self.cone = (p.rows, *p.laws)
        else:
            denom = p.diag
            if strategy == "global":
                denom = b.get("prox_denom", (p.m,))
                gp.nonzero[spread, THREADS](p.diag, denom)
            self.steps = (denom, float(factor))
            zeros = b.get("apgd_zeros", (p.m,))
            _zero(zeros)
            self.cone = (1, zeros, zeros, zeros)
        self.rules = proximal.adaptation(settings, nu, grow)
        self.work = (b.get("prox_cand", (p.size,)), b.get("prox_e", (p.size,)),
                     b.get("prox_e_new", (p.size,)))
        self.progress = (b.get("prox_state", (gp.STATE,), np.float64),
                         b.get("prox_counts", (gp.COUNTS,), np.int64),
                         (b.get("apgd_partial", (self.blocks * ga.SUMS,), np.float64),
                          b.get("apgd_totals", (ga.SUMS,), np.float64)))
        self.P = (p.A, p.csr, self.dv)

    def prepare(self, lam) -> None:
        """A fresh adaptation: scale 1, no accepted step, e not cached, no counts."""
        state, _ = fresh_friction_state()
        self.progress[0].copy_to_device(state)
        self.progress[1].copy_to_device(np.zeros(gp.COUNTS, dtype=np.int64))

    def sweep(self, lam, count: int) -> int:
        self.kernel[self.blocks, THREADS](self.P, self.problem.rhs, self.steps, self.cone,
                                          self.rules, (lam, *self.work), self.progress,
                                          int(count))
        self._counts = self.progress[1].copy_to_host()
        return int(self._counts[gp.DONE])

    def own_stop(self) -> str | None:
        code = self.progress[0].copy_to_host()[proximal.STOP]
        if code == proximal.STOP_ABSOLUTE:
            return "absolute"
        if code == proximal.STOP_RELATIVE:
            return "relative"
        return None

    def spent(self, done: int) -> int:
        return int(self._counts[proximal.PRODUCTS])

    def info(self) -> dict:
        return {"accepted": int(self._counts[proximal.ACCEPTED]),
                "rejected": int(self._counts[proximal.REJECTED]),
                "final_scale": float(self.progress[0].copy_to_host()[proximal.SCALE])}


# The GPU's implementation of each method that declares the cuda device (methods/<name>.py's
# METHOD.devices); registered on it below, so the registry is the one list of what runs here.
SOLVES = (DeviceJacobi, DeviceMassSplit, DeviceColouredGs, DeviceProxJacobi, DeviceApgd)
_BY_METHOD = {solve.method: solve for solve in SOLVES}


def device_solve(problem, settings) -> DeviceSolve:
    """The driver's object for one solve of `settings.method` on a DeviceProblem."""
    return _BY_METHOD[settings.method](problem, settings)


def _solver(solve: type) -> callable:
    def on_device(problem, lam, settings) -> SolveResult:
        return run(solve(problem, settings), lam, settings)

    on_device.__name__ = f"{solve.__name__}.run"
    return on_device


for _solve in SOLVES:
    registry.get(_solve.method).on("cuda", dict.fromkeys((FRICTIONLESS, FRICTIONAL),
                                                         _solver(_solve)))


def run(solve: DeviceSolve, lam, settings) -> SolveResult:
    """The driver's fast path (trace off: one launch for the whole solve) or its traced path,
    over λ (updated in place)."""
    if settings.trace:
        return _traced(solve, lam, settings)
    (r0, finite, scale, lam_finite), (r, _, _, end_finite) = solve.solve(lam, settings.iterations)
    count = settings.iterations if solve.done is None else solve.done
    if not finite:
        # A poisoned problem: no iterate can be trusted; end on the start impulses.
        solve.fall_back(lam)
        if not lam_finite:
            _zero(lam)
        return SolveResult(lam, metrics.DIVERGENCE, 0, np.inf, np.inf, None, None, 0)
    if solve.problem.m == 0:
        return SolveResult(lam, metrics.ABSOLUTE, 0, r0, r0, None, None, 0)
    bound = settings["divergence"] * max(r0, scale, 1e-300)
    status = metrics.MAX_ITERATIONS
    if not end_finite or not math.isfinite(r) or r > bound:
        status = metrics.DIVERGENCE
        solve.fall_back(lam)
        r = r0  # the residual of the start, measured before the iterations
    elif r < settings["abs_tol"]:
        status = metrics.ABSOLUTE
    elif (own := solve.own_stop()) is not None:
        status = own
    return SolveResult(lam, status, count, r, r0, None, None, solve.spent(count), solve.info())


def _traced(solve: DeviceSolve, lam, settings) -> SolveResult:
    """One launch an iteration, the exact residual after each (not timed)."""
    r0, finite, scale, lam_finite = solve.measure(lam)
    if not finite:
        if not lam_finite:
            _zero(lam)
        return SolveResult(lam, metrics.DIVERGENCE, 0, np.inf, np.inf, np.array([np.inf]),
                           np.zeros(1), 0)
    if solve.problem.m == 0 or r0 <= settings["abs_tol"]:
        return SolveResult(lam, metrics.ABSOLUTE, 0, r0, r0, np.array([r0]), np.zeros(1), 0)
    bound = settings["divergence"] * max(r0, scale, 1e-300)
    solve.start.copy_to_device(lam)
    solve.prepare(lam)
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
            solve.fall_back(lam)
            trace.append(r if math.isfinite(r) else np.inf)
            seconds.append(elapsed)
            break
        trace.append(r)
        seconds.append(elapsed)
        if r < settings["abs_tol"]:
            status = metrics.ABSOLUTE
            break
        own = solve.own_stop()
        if own is not None:
            status = own
            break
    final = solve.measure(lam)[0]
    return SolveResult(lam, status, done, final, r0, np.array(trace), np.array(seconds),
                       solve.spent(done), solve.info())


@kernel
def _fill_kernel(a, value):
    for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        a[i] = value


def _fill(a, value: float) -> None:
    """a[:] = value on the GPU."""
    _fill_kernel[max(1, (a.shape[0] + THREADS - 1) // THREADS), THREADS](a, float(value))


def _zero(lam) -> None:
    _fill(lam, 0.0)
