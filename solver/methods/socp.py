"""The convex relaxation of Coulomb's law by an interior point, inside a fixed point on De
Saxcé's shift s, for every problem kind.

With u = W λ + q (W = A, q = b), Coulomb's law is the complementarity of λ_c in the cone
K_c = {‖λ_t‖ <= μ λ_n} and of the modified velocity û_c = u_c + s_c e_n in its dual cone,
s_c = μ ‖u_t,c‖ (De Saxcé). For a fixed s the problem is convex: the second-order-cone
program

    min ½ λᵀ W λ + (q + s)ᵀ λ   over λ_c ∈ K_c for every contact,

whose KKT conditions are exactly the complementarity above with that s. It is solved here by
Clarabel (a primal-dual interior point with Nesterov–Todd scaling on the cones); W is sparse
(the matrix-free problems are assembled through `problem.coo()`, an explicit W taken as it is).
Without friction the cone is λ >= 0 and the program is the LCP's quadratic program: one
solve is the answer. With rolling rows the rolling pair has its own cone ‖λ_r‖ <= μ_roll λ_n
and the spin row |λ_s| <= μ_spin λ_n, their shares of s μ_roll ‖u_r‖ and μ_spin |u_s|.

A Coulomb solution is a fixed point of s ↦ F(s) = (μ ‖u_t(λ(s))‖)_c. Each iteration of this
method is one conic solve and one step of that map, accelerated by Anderson's method over the
last `anderson` differences; a step whose map residual ‖F(s) - s‖ grows by more than
`safeguard` times is replaced by the plain step F(s). The map contracts near a solution only
where the problem is benign; `info["expansions"]` counts the iterations whose plain map
residual grew, and the solve ends after `patience` of them in a row rather than iterating blindly
(the driver's status `relative`, with `info["not_contracting"]` 1). `mu_from` < 1 solves first with every coefficient scaled by
it and raises them linearly over `mu_stages` stages (μ-continuation), each stage from the last's
shift. With one iteration from s = 0 the answer is the relaxation's (apgd's ccp problem).

The interior point ends a little short of the law (its complementarity gap is small in total,
not per contact: 4e-6 m/s on a frictionless box of 200); an answer short of `abs_tol` is
polished by up to `polish` iterations of `newton` from it, kept where they lower the residual.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .. import metrics
from ..params import Param
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS
from .driver import Hooks, Method, SolveResult, run
from ..options import SolveSettings
from .newton import METHOD as NEWTON


PARAMS = (
    Param("anderson", 5, int, "Anderson acceleration of the fixed point on s: the number of "
          "past differences mixed (0: the plain map)", lo=0, hi=50),
    Param("safeguard", 2.0, float, "an accelerated step whose map residual ‖F(s) - s‖ grew "
          "more than this factor is replaced by the plain step", lo=1.0),
    Param("patience", 10, int, "iterations in a row whose map residual grew before the solve "
          "ends as not_contracting", lo=1, hi=1_000_000),
    Param("ip_tol", 1e-12, float, "the interior point's gap and feasibility tolerance "
          "(Clarabel's tol_gap_abs, tol_gap_rel, tol_feas)", lo=1e-16, hi=1e-2),
    Param("ip_iterations", 200, int, "interior-point iterations per conic solve", lo=1,
          hi=100_000),
    Param("mu_from", 1.0, float, "μ-continuation: start with every friction coefficient times "
          "mu_from, then linearly towards the problem's own (1: off)", lo=0.0, hi=1.0),
    Param("mu_stages", 3, int, "stages of the μ-continuation before the problem's own μ",
          lo=1, hi=100),
    Param("polish", 20, int, "newton iterations from the answer when it is short of abs_tol "
          "(the interior point stops a little short of Coulomb's law; 0: its answer as it is)",
          lo=0, hi=100_000),
    Param("polish_prox", 1e-3, float, "the polish's proximal weight (newton's prox, in units "
          "of W's diagonal): small, since a proximal step centred near the answer crawls",
          lo=0.0, hi=1e6),
)


class Relaxation:
    """The conic program of a problem for any shift s: W (CSC, upper triangle for Clarabel),
    q, the cone rows. `solve(s, scale)` returns λ (size,) of the program with q + s on the
    normal rows and every coefficient times `scale`, and Clarabel's status."""

    def __init__(self, problem, tol: float = 1e-12, iterations: int = 200):
        import scipy.sparse as sp  # lazily: start-up time of the front ends

        self.problem = problem
        self.m, self.rows, size = problem.m, problem.rows, problem.size
        rows, cols, vals = problem.coo()
        W = sp.csr_matrix((vals, (rows, cols)), shape=(size, size))
        self.W = W
        self.P = sp.triu(W, format="csc")
        self.q = np.asarray(problem.rhs, dtype=np.float64)
        # A contact whose rows W does not touch (both ends fixed) keeps its start impulses, as
        # in every solver; with its q < 0 it would make the program unbounded, so it sees q 0.
        self.inert = np.repeat((W.diagonal().reshape(self.m, self.rows) <= 0.0).all(axis=1),
                               self.rows)
        self.tol, self.iterations = tol, iterations
        if self.rows > 1:
            self.mu = np.asarray(problem.mu, dtype=np.float64)
            zero = np.zeros(self.m)
            self.mu_roll = np.asarray(getattr(problem, "mu_roll", zero), dtype=np.float64)
            self.mu_spin = np.asarray(getattr(problem, "mu_spin", zero), dtype=np.float64)

    def _cones(self, scale: float):
        """(A, b, cones) with A λ + slack = b, slack in the cones: -λ_n >= 0 ... per contact."""
        import clarabel
        import scipy.sparse as sp

        m, rows = self.m, self.rows
        normal = np.arange(m) * rows
        if rows == 1:
            A = -sp.identity(m, format="csc")
            return A, np.zeros(m), [clarabel.NonnegativeConeT(m)]
        # λ_n >= 0 for every contact (a cone of radius 0 alone would leave λ_n free), then one
        # second-order cone (μ λ_n, λ_t) per contact, and for rolling rows (μ_r λ_n, λ_r) and
        # the spin's two half-spaces μ_s λ_n ± λ_s >= 0.
        r, c, v = [np.arange(m)], [normal], [np.ones(m)]
        offset = m
        blocks = [(1, 2, self.mu)] + ([(3, 4, self.mu_roll)] if rows == 6 else [])
        for first, second, coefficient in blocks:
            k = offset + 3 * np.arange(m)
            r += [k, k + 1, k + 2]
            c += [normal, normal + first, normal + second]
            v += [coefficient * scale, np.ones(m), np.ones(m)]
            offset += 3 * m
        if rows == 6:
            k = offset + 2 * np.arange(m)
            spin = self.mu_spin * scale
            r += [k, k, k + 1, k + 1]
            c += [normal, normal + 5, normal, normal + 5]
            v += [spin, np.ones(m), spin, -np.ones(m)]
            offset += 2 * m
        A = -sp.csc_matrix((np.concatenate(v), (np.concatenate(r), np.concatenate(c))),
                           shape=(offset, m * rows))
        cones = [clarabel.NonnegativeConeT(m)]
        cones += [clarabel.SecondOrderConeT(3) for _ in range(m * (len(blocks)))]
        if rows == 6:
            cones.append(clarabel.NonnegativeConeT(2 * m))
        return A, np.zeros(offset), cones

    def solve(self, s: np.ndarray, scale: float = 1.0, start: np.ndarray | None = None,
              seconds: float | None = None) -> tuple[np.ndarray, str]:
        """λ (size,) of the program with shift s (m,) m/s and coefficients times `scale`;
        inert contacts keep `start`'s impulses (0 without). `seconds`: Clarabel's own time
        limit (its status then "MaxTime"), None for none."""
        import clarabel

        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = self.tol
        settings.max_iter = self.iterations
        if seconds is not None:
            settings.time_limit = max(float(seconds), 1e-3)
        q = self.q.copy()
        q[::self.rows] += s
        q[self.inert] = 0.0
        A, b, cones = self._cones(scale)
        solution = clarabel.DefaultSolver(self.P, q, A, b, cones, settings).solve()
        lam = np.asarray(solution.x, dtype=np.float64)
        lam[self.inert] = 0.0 if start is None else start[self.inert]
        return lam, str(solution.status)

    def shift(self, lam: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """De Saxcé's s (m,) m/s at λ: μ ‖u_t‖ (+ μ_roll ‖u_r‖ + μ_spin |u_s|); 0 without
        friction."""
        if self.rows == 1:
            return np.zeros(self.m)
        u = (self.W @ lam + self.q).reshape(self.m, self.rows)
        s = self.mu * np.hypot(u[:, 1], u[:, 2])
        if self.rows == 6:
            s = s + self.mu_roll * np.hypot(u[:, 3], u[:, 4]) + self.mu_spin * np.abs(u[:, 5])
        return scale * s


class _FixedPoint:
    """The fixed point on s with Anderson's acceleration (type II, least squares on the last
    differences of the map residual g = F(s) - s), its safeguard and its contraction count."""

    def __init__(self, relaxation: Relaxation, lam: np.ndarray, settings: SolveSettings):
        self.relaxation, self.lam, self.start = relaxation, lam, lam.copy()
        self.window = settings["anderson"]
        self.safeguard = settings["safeguard"]
        self.patience = settings["patience"]
        stages = settings["mu_stages"] if settings["mu_from"] < 1.0 else 0
        start = settings["mu_from"]
        # The scales of μ, one stage per iteration until the problem's own (1.0) is reached.
        self.scales = [start + (1.0 - start) * k / stages for k in range(stages)]
        self.s = relaxation.shift(lam, self._scale())
        self.history_s: list[np.ndarray] = []
        self.history_g: list[np.ndarray] = []
        self.last_norm = np.inf
        self.counts = {"conic_solves": 0, "expansions": 0, "rejected_anderson": 0,
                       "ip_failures": 0, "map_residual": np.inf, "not_contracting": 0}
        self.growing = 0
        self.stop_status = None
        # One conic solve can outlast a solve's time limit many times over on a large pile:
        # each is given what the limit leaves.
        self.time_limit = settings.time_limit
        self.spent = 0.0

    def _scale(self) -> float:
        return self.scales[0] if self.scales else 1.0

    def step(self) -> None:
        if self.stop_status is not None:
            return
        scale = self._scale()
        left = None if self.time_limit is None else self.time_limit - self.spent
        t0 = time.perf_counter()
        lam, status = self.relaxation.solve(self.s, scale, self.start, left)
        self.spent += time.perf_counter() - t0
        self.counts["conic_solves"] += 1
        if status == "MaxTime":  # an interrupted interior point: its iterate is no answer
            self.stop_status = "time_limit"
            return
        if status != "Solved":
            self.counts["ip_failures"] += 1
            if not np.all(np.isfinite(lam)):
                return
        self.lam[:] = lam
        if self.relaxation.rows == 1:
            self.stop_status = "solved_qp"  # no shift: the one solve is the LCP's answer
            return
        if self.scales:  # a continuation stage: one solve each, then the next coefficient
            self.scales.pop(0)
            self.s = self.relaxation.shift(lam, self._scale())
            return
        mapped = self.relaxation.shift(lam)
        g = mapped - self.s
        norm = float(np.linalg.norm(g))
        self.counts["map_residual"] = norm
        if norm == 0.0:  # s is its own image: another conic solve returns the same λ
            self.stop_status = "fixed"
            return
        if norm > self.last_norm:
            self.counts["expansions"] += 1
            self.growing += 1
            if self.growing >= self.patience:
                self.counts["not_contracting"] = 1
                self.stop_status = "not_contracting"
        else:
            self.growing = 0
        accelerate = norm <= self.safeguard * self.last_norm
        if not accelerate and self.history_g:
            self.counts["rejected_anderson"] += 1
            self.history_s.clear()
            self.history_g.clear()
        self.last_norm = norm
        self.s = self._anderson(self.s, g) if self.window > 0 and accelerate else mapped
        self.s = np.maximum(self.s, 0.0)

    def _anderson(self, s: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The mixed next shift from the last `window` (s, g) pairs."""
        self.history_s.append(s.copy())
        self.history_g.append(g.copy())
        if len(self.history_s) > self.window + 1:
            self.history_s.pop(0)
            self.history_g.pop(0)
        if len(self.history_s) < 2:
            return s + g
        dS = np.diff(np.array(self.history_s), axis=0).T
        dG = np.diff(np.array(self.history_g), axis=0).T
        gamma, *_ = np.linalg.lstsq(dG, g, rcond=None)
        return s + g - (dS + dG) @ gamma


def solve(problem, lam0: np.ndarray, settings: SolveSettings):
    lam = np.array(lam0, dtype=np.float64)
    relaxation = Relaxation(problem, settings["ip_tol"], settings["ip_iterations"])
    fixed = _FixedPoint(relaxation, lam, settings)

    def sweep(count: int) -> int:
        for k in range(count):
            fixed.step()
            if fixed.stop_status is not None:
                return k + 1
        return count

    def stop() -> str | None:
        # The QP's one solve is final, and a map that keeps expanding is not worth iterating;
        # a time limit reached inside a conic solve is the budget spent.
        if fixed.stop_status == "time_limit":
            return metrics.MAX_ITERATIONS
        return metrics.RELATIVE if fixed.stop_status is not None else None

    result = run(problem, lam, settings, sweep, hooks=Hooks(stop=stop, info=fixed.counts))
    return polished(problem, result, settings)


def polished(problem, result: SolveResult, settings: SolveSettings) -> SolveResult:
    """`result` followed by up to `polish` newton iterations from its answer (newton's own
    proximal term fixes λ where W leaves it undetermined), when it ended short of abs_tol and
    not diverged; the polish is kept only where it lowered the residual. The trace, the
    seconds and the products go on from the conic solves'."""
    tol = settings["abs_tol"]
    if (settings["polish"] == 0 or result.status == metrics.DIVERGENCE
            or not result.residual > tol):
        return result
    spent = float(result.seconds[-1]) if result.seconds is not None else 0.0
    left = None if settings.time_limit is None else max(settings.time_limit - spent, 0.0)
    polish = NEWTON.solve(problem, result.lam.copy(), NEWTON.settings(
        settings["polish"], settings.trace,
        {"abs_tol": tol, "rel_tol": settings["rel_tol"], "divergence": settings["divergence"],
         "prox": settings["polish_prox"]}, observer=settings.observer, time_limit=left))
    info = {**result.info, "polish_iterations": polish.iterations}
    if not polish.residual < result.residual:
        return dataclasses.replace(result, info=info)
    traced = result.trace is not None and polish.trace is not None
    return SolveResult(
        polish.lam, polish.status, result.iterations + polish.iterations, polish.residual,
        result.residual_initial,
        np.concatenate([result.trace, polish.trace[1:]]) if traced else None,
        np.concatenate([result.seconds, spent + polish.seconds[1:]]) if traced else None,
        result.products + polish.products, info)


METHOD = Method("socp", "Conic relaxation", {
    FRICTIONLESS: solve, FRICTIONAL: solve, EXPLICIT: solve},
    "Clarabel on De Saxcé's cone relaxation, fixed point on s (Anderson)",
    PARAMS)
