"""A nonsmooth Newton method on the Alart–Curnier function (Alart and Curnier 1991; the method of
Siconos' NSN-AC), for every problem kind: frictionless, Coulomb (with rolling rows), and an
explicit W.

With u = W λ + q (W = A, q = b), per contact, ρ > 0 per row,

    Φ_n = λ_n - max(0, λ_n - ρ_n u_n)
    Φ_g = λ_g - P_{B(μ_g a)}(λ_g - ρ_g u_g),   a = max(0, λ_n - ρ_n u_n)

for each group g of rows beside the normal: the tangent pair onto the disk of radius μ a, the
rolling pair onto μ_roll a, the spin row into ±μ_spin a. Φ(λ) = 0 exactly at Coulomb's law
(separate, stick, or slide against the slip), so a zero is a solution of the frictional problem,
and without friction of the LCP. Writing Φ = λ - P(z), z = λ - diag(ρ) u, a generalized
Jacobian is H = (I - S) + S diag(ρ) W with S = ∂P/∂z block-diagonal per contact: 1 on an active
normal row, the identity on a sticking group, (r/‖z_g‖)(I - ẑẑᵀ) on a sliding one (0 for the
spin row) with the column μ_g ẑ under the normal when that is active (docs/solvers.md).

Each iteration solves H Δ = -Φ by sparse LU (scipy's SuperLU) and takes the longest step t in
1, ½, ¼, ... that satisfies Armijo's test on ψ = ½‖Φ‖²: ψ(λ + tΔ) <= (1 - 2σt) ψ(λ). A pile's W
is singular (more contact rows than the marbles' six degrees of freedom), and so is H wherever
its rows stick. Each step is therefore the Newton step of a proximal problem (W + αD,
q - αD λ_c), D = W's diagonal, centred at λ_c, whose Φ at its centre is Φ itself (Siconos' PROX
re-centres after an inner solve); it fixes the impulses' share in W's null space where nothing
determines them. The centre moves once the proximal problem is solved well enough (then α
shrinks) or after a few steps; a shortened step or a failed line search makes α larger (a
Levenberg–Marquardt safeguard; the constants below). One iteration = one factorisation;
`products` counts the products with W of the line search.

`function=fb` seeks the zero of Fischer–Burmeister's function of the second-order cone instead
(fischer.py) on the normal and tangent rows: the same zeros, another Jacobian.

Hybrids, each an option (docs/solvers.md has what each did): `start` runs another solver first
(its whole run is the first iteration, timed with the rest): a few Coulomb sweeps (pgs, nsgs),
or apgd, whose cone complementarity relaxation has unique velocities and is static wherever
statics allows, so that Newton then polishes the static solution when there is one (the least
motion: a ccp answer without slip is a Coulomb answer); `zero` ignores the given impulses.
`restarts` runs those sweeps again (pgs where the start is no sweep) where Newton stalls.
`mu_from` solves a sequence of problems whose friction coefficients go linearly from mu_from
times the problem's to the problem's own in `mu_stages` stages, each from the last's answer.
"""
from __future__ import annotations

import copy

import numpy as np

from ..lazy import LazyModule
from ..params import Param, resolve
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS
from .apgd import METHOD as APGD
from . import fischer
from .driver import Hooks, Method, projected_status, run
from ..options import SolveSettings
from .feasible import project_answer
from .nsgs import METHOD as NSGS
from .pgs import METHOD as PGS

sp = LazyModule("scipy.sparse")
_linalg = LazyModule("scipy.sparse.linalg")

SIGMA = 1e-4  # Armijo's slope fraction
HALVINGS = 30  # trial steps 1, 1/2, ..., 2^-29
# The proximal weight α (in units of W's diagonal): never below FLOOR × prox nor above CEILING;
# times GROWTH after a failed or shortened step (Newton struggling: a more regular problem),
# times SHRINK after a proximal problem solved within EASY steps (closer to the true one).
# A proximal problem counts as solved once its ‖Φ‖ is INNER × the true problem's, and is
# re-centred after HARD steps however far it got. Chosen on the probe piles (bowl, pyramid,
# box, column, heap, disk: docs/solvers.md); a one-step memory keeps Armijo's test monotone.
FLOOR = 1e-8
CEILING = 1e4
GROWTH = 4.0
SHRINK = 0.1
INNER = 1e-3
EASY = 3
HARD = 8
# A stage of μ-continuation ends once its ‖Φ‖∞ is STAGE × ‖λ‖∞ or after STAGE_STEPS steps; Newton
# stalls (for `restarts`) when STALL steps have not cut the best ‖Φ‖ by a tenth.
STAGE = 1e-10
STAGE_STEPS = 30
STALL = 50
STARTERS = {"pgs": PGS, "nsgs": NSGS, "apgd": APGD}  # the registry's, without importing it
STARTS = ("given", "zero", *STARTERS)

PROX = Param("prox", 1.0, float, "proximal regularisation: each step is Newton's on W + αD (D: "
             "W's diagonal) centred at an earlier λ; α starts at prox and adapts (0: plain "
             "Newton until its matrix is singular or its step is shortened)", lo=0.0, hi=1e6)
PARAMS = (
    PROX,
    Param("function", "ac", str, "the function whose zero Newton seeks: ac (Alart–Curnier) "
          "or fb (Fischer–Burmeister of the second-order cone, on the normal and tangent rows)",
          choices=("ac", "fb")),
    Param("line_search", True, bool, "Armijo's backtracking on ½‖Φ‖² (off: full steps)"),
    Param("start", "given", str, "what Newton starts from: the given impulses (a step's warm "
          "start), zero, or start_iterations of pgs, nsgs or apgd (the ccp relaxation: its "
          "static answer, where statics allows one, is polished to Coulomb's: the least "
          "motion); that run is the first iteration", choices=STARTS),
    Param("start_iterations", 100, int, "iterations of the start's solver, and of each restart",
          lo=1, hi=1_000_000),
    Param("restarts", 0, int, "times Newton, stalled (50 steps without cutting ‖Φ‖ by a "
          "tenth), runs start_iterations sweeps (pgs, or the start's nsgs) and goes on",
          lo=0, hi=1000),
    Param("mu_from", 1.0, float, "μ-continuation: solve first with every friction coefficient "
          "times mu_from, then linearly towards the problem's own (1: off)", lo=0.0, hi=1e3),
    Param("mu_stages", 3, int, "stages of the μ-continuation before the problem's own μ",
          lo=1, hi=100),
)


class _Law:
    """The problem's data the function reads, per contact (m, rows): ρ, the coefficients, and
    which contacts are inert (W's normal diagonal 0: they keep their start impulses)."""

    def __init__(self, problem, fischer: bool = False):
        p = problem
        self.m, self.rows = p.m, p.rows
        self.fischer = fischer
        diag = np.asarray(p.diag, dtype=np.float64).reshape(self.m, self.rows)
        rho = np.zeros_like(diag)
        np.divide(1.0, diag, out=rho, where=diag > 0.0)
        for group in self.groups[1:]:  # a group's rows share one ρ: slides stay opposed to slip
            shared = diag[:, group].max(axis=1)
            rho[:, group] = np.divide(1.0, shared, out=np.zeros(self.m),
                                      where=shared > 0.0)[:, None]
        self.rho = rho
        self.inert = diag[:, 0] <= 0.0
        coefficients = [np.zeros(self.m)]
        if self.rows > 1:
            coefficients.append(np.asarray(p.mu, dtype=np.float64))
        if self.rows > 3:
            coefficients += [np.asarray(p.mu_roll, dtype=np.float64),
                             np.asarray(p.mu_spin, dtype=np.float64)]
        self.mu = coefficients

    def scaled(self, factor: float) -> "_Law":
        """The same law with every friction coefficient times `factor` (μ-continuation)."""
        law = copy.copy(self)
        law.mu = [coefficient * factor for coefficient in self.mu]
        return law

    @property
    def groups(self) -> list[list[int]]:
        """The normal, then the rows projected together onto one ball (disk or interval)."""
        return [[0], [1, 2], [3, 4], [5]][:{1: 1, 3: 2, 6: 4}[self.rows]]

    def function(self, lam: np.ndarray, u: np.ndarray, start: np.ndarray, slopes: bool):
        """Φ (size,) at λ with u = W λ + q, and with `slopes` its blocks (m, rows, rows)
        ∂Φ/∂λ and ∂Φ/∂u (the contact's own rows of u; else None for both); an inert
        contact's Φ is λ - λ0, so its rows of H are the identity's."""
        if self.fischer and self.rows <= 3:
            # Fischer–Burmeister writes every row but a frictionless contact's tangents, whose
            # Alart–Curnier value is λ_t itself (slope I): no Alart–Curnier to compute.
            phi = lam.reshape(self.m, self.rows).copy()
            S = np.zeros((self.m, self.rows, self.rows)) if slopes else None
        else:
            phi, S = self._alart_curnier(lam, u, start, slopes)
        direct = through = None
        if slopes:
            direct = np.eye(self.rows) - S
            through = S * self.rho[:, None, :]
        if self.fischer:
            self._fischer(lam, u, phi, direct, through)
        if self.inert.any():
            phi[self.inert] = (lam - start).reshape(self.m, self.rows)[self.inert]
            if slopes:
                direct[self.inert] = np.eye(self.rows)
                through[self.inert] = 0.0
        return phi.ravel(), direct, through

    def _fischer(self, lam, u, phi, direct, through) -> None:
        """Fischer–Burmeister's rows (fischer.py) in place of Alart–Curnier's for the normal and
        the tangent pair: the three-row function where μ > 0, the scalar one elsewhere (its
        tangent rows stay Alart–Curnier's, λ_t = 0 without friction)."""
        L, U = lam.reshape(self.m, self.rows), u.reshape(self.m, self.rows)
        rho = self.rho[:, 0]
        slopes = direct is not None
        k = min(self.rows, 3)
        cone = self.mu[1] > 0.0 if self.rows > 1 else np.zeros(self.m, dtype=bool)
        if slopes:
            direct[:, :k] = 0.0
            through[:, :k] = 0.0
        if cone.any():
            value, dl, du = fischer.coulomb(L[cone, :3], U[cone, :3], rho[cone],
                                            self.mu[1][cone], slopes)
            phi[cone, :3] = value
            if slopes:
                direct[np.ix_(cone, range(3), range(3))] = dl
                through[np.ix_(cone, range(3), range(3))] = du
        flat = ~cone
        value, dl, du = fischer.normal(L[flat, 0], U[flat, 0], rho[flat], slopes)
        phi[flat, 0] = value
        if slopes:
            direct[flat, 0, 0] = dl
            through[flat, 0, 0] = du
            if k == 3:  # no friction: λ_t - 0
                direct[np.ix_(flat, [1, 2], [1, 2])] = np.eye(2)

    def _alart_curnier(self, lam, u, start, slopes):
        """Φ (m, rows) and S (m, rows, rows) = ∂P/∂z (module docstring), or None."""
        m, rows = self.m, self.rows
        L = lam.reshape(m, rows)
        z = L - self.rho * u.reshape(m, rows)
        phi = np.empty((m, rows))
        a = np.maximum(z[:, 0], 0.0)
        phi[:, 0] = L[:, 0] - a
        S = np.zeros((m, rows, rows)) if slopes else None
        active = z[:, 0] > 0.0
        if slopes:
            S[:, 0, 0] = active
        for g, group in enumerate(self.groups[1:], start=1):
            zg = z[:, group]
            radius = self.mu[g] * a
            norm = np.sqrt((zg * zg).sum(axis=1))
            # Without friction the ball is a point for every z: the projection's slope is 0
            # even at z = 0 (a stage of μ-continuation from 0 must leave λ_g at 0).
            slide = (norm > radius) | (self.mu[g] <= 0.0)
            scale = np.divide(radius, norm, out=np.zeros(m), where=slide & (norm > 0.0))
            proj = np.where(slide[:, None], zg * scale[:, None], zg)
            phi[:, group] = L[:, group] - proj
            if slopes:
                unit = np.divide(zg, norm[:, None], out=np.zeros_like(zg),
                                 where=norm[:, None] > 0.0)
                k = len(group)
                inside = np.broadcast_to(np.eye(k), (m, k, k))
                outside = scale[:, None, None] * (np.eye(k) - unit[:, :, None] * unit[:, None, :])
                S[:, group[0]:group[-1] + 1, group[0]:group[-1] + 1] = np.where(
                    slide[:, None, None], outside, inside)
                S[:, group, 0] = np.where((slide & active)[:, None],
                                          self.mu[g][:, None] * unit, 0.0)
        return phi, S


class _Pattern:
    """W by blocks of rows × rows (a block row per contact), every diagonal block present: the
    pattern H shares with W. W's blocks (`W`, (blocks, rows, rows)), each block's block row
    (`row_of`), and where each row's diagonal block is (`diagonal`, (m,))."""

    def __init__(self, W: sp.csr_matrix, rows: int):
        size = W.shape[0]
        # + I makes every diagonal block structural (an inert contact's row of W is empty);
        # W's diagonal is >= 0, so no entry cancels.
        bsr = (W + sp.identity(size, format="csr")).tobsr(blocksize=(rows, rows))
        bsr.sort_indices()
        self.indices, self.indptr, self.shape = bsr.indices, bsr.indptr, W.shape
        self.row_of = np.repeat(np.arange(len(bsr.indptr) - 1), np.diff(bsr.indptr))
        self.diagonal = np.flatnonzero(bsr.indices == self.row_of)
        self.W = bsr.data.copy()
        self.W[self.diagonal] -= np.eye(rows)


class _Hybrid:
    """What the hybrid options decide between Newton steps: the start's solver still to run,
    the μ-continuation's remaining stages, the restarts left and the stall count."""

    def __init__(self, settings: SolveSettings, frictional: bool):
        start = settings["start"]
        self.pending = start if start in STARTERS else None
        self.restart = "nsgs" if start == "nsgs" else "pgs"
        self.iterations = settings["start_iterations"]
        self.restarts = settings["restarts"]
        first, stages = settings["mu_from"], settings["mu_stages"]
        self.factors = ([first + (1.0 - first) * k / stages for k in range(stages)]
                        if frictional and first != 1.0 else [])
        self.staging = bool(self.factors)  # Newton solves a stage, not the problem, yet
        self.base = None
        self.steps = 0
        self.best, self.since = np.inf, 0

    def first_law(self, law: _Law) -> _Law:
        self.base = law
        return law.scaled(self.factors.pop(0)) if self.staging else law

    def stage_done(self, phi: float, lam: float) -> bool:
        """Whether the stage is solved (‖Φ‖∞ <= STAGE ‖λ‖∞) or has had its steps."""
        if not self.staging:
            return False
        self.steps += 1
        return phi <= STAGE * max(lam, 1e-300) or self.steps >= STAGE_STEPS

    def next_law(self) -> _Law:
        """The next stage's law: the problem's own after the last."""
        self.steps = 0
        if self.factors:
            return self.base.scaled(self.factors.pop(0))
        self.staging = False
        return self.base

    def stalled(self, phi: float) -> bool:
        """Whether Newton has stalled (STALL steps without cutting the best ‖Φ‖∞ by a tenth)
        and a restart is left; counts it."""
        if phi < 0.9 * self.best:
            self.best, self.since = phi, 0
            return False
        self.since += 1
        if self.since < STALL or self.restarts == 0:
            return False
        self.restarts -= 1
        self.best, self.since = np.inf, 0
        return True


class _Solve:
    """One Newton solve's state: W (CSR), q, the law, the proximal centre and α, the counts."""

    def __init__(self, problem, lam: np.ndarray, settings: SolveSettings):
        rows, cols, vals = problem.coo()
        size = problem.size
        self.W = sp.csr_matrix((vals, (rows, cols)), shape=(size, size))
        self.pattern = _Pattern(self.W, problem.rows)
        self.q = np.asarray(problem.rhs, dtype=np.float64)
        self.law = _Law(problem, settings["function"] == "fb")
        self.problem, self.lam, self.start = problem, lam, lam.copy()
        diag = self.W.diagonal()
        # The proximal term's metric: W's own diagonal (1 on an empty row), so α is unitless
        # and a rolling row (its diagonal 1/I, thousands of times a normal row's) is damped
        # alike.
        self.metric = np.where(diag > 0.0, diag, 1.0)
        self.prox = settings["prox"]
        self.line_search = settings["line_search"]
        self.abs_tol = settings["abs_tol"]
        self.counts = {"newton_steps": 0, "prox_steps": 0, "backtracks": 0,
                       "failed_searches": 0, "products": 0, "sweeps": 0, "restarts": 0}
        self.stop = None
        self.hybrid = _Hybrid(settings, problem.rows > 1)
        self.law = self.hybrid.first_law(self.law)
        self.sync()

    def sync(self) -> None:
        """Re-centre on λ (after the driver restored it, and at the start)."""
        self.u = self._u(self.lam)
        self.phi, *_ = self.law.function(self.lam, self.u, self.start, False)
        self.alpha = self.prox
        self._centre(1.0)

    def _centre(self, factor: float) -> None:
        """The proximal problem centred at λ, α times `factor` (within its bounds)."""
        self.centre = self.lam.copy()
        self.alpha = min(max(self.alpha * factor, FLOOR * self.prox), CEILING)
        self.phi_prox = self.phi  # at its centre the proximal Φ is Φ
        self.inner = 0
        self.counts["prox_steps"] += 1

    def _regularise(self) -> None:
        """A more regular proximal problem from λ: α × GROWTH; without a proximal term yet
        (prox 0: plain Newton until its H is singular or its step is shortened or fails) the
        default one's."""
        if self.prox == 0.0:
            self.prox = self.alpha = PROX.default
        self._centre(GROWTH)

    def _u(self, lam: np.ndarray) -> np.ndarray:
        self.counts["products"] += 1
        return self.W @ lam + self.q

    def _evaluate(self, lam: np.ndarray):
        """(u, Φ, Φ of the proximal problem) at λ: one product."""
        u = self._u(lam)
        phi, *_ = self.law.function(lam, u, self.start, False)
        shifted = u + self.alpha * self.metric * (lam - self.centre)
        phi_prox, *_ = self.law.function(lam, shifted, self.start, False)
        return u, phi, phi_prox

    def _matrix(self, direct: np.ndarray, through: np.ndarray) -> sp.csr_matrix:
        """H = ∂Φ/∂λ + ∂Φ/∂u (W + αD), both block-diagonal (for Alart–Curnier I - S and
        S diag(ρ)): block by block on W's pattern (contact c's block of ∂Φ/∂u times each of
        W's blocks in its row), no sparse products."""
        P, m, rows = self.pattern, self.law.m, self.law.rows
        regular = P.W.copy()
        regular[P.diagonal] += (self.alpha * self.metric).reshape(m, rows)[:, None, :] \
            * np.eye(rows)
        data = np.matmul(through[P.row_of], regular)
        data[P.diagonal] += direct
        H = sp.bsr_matrix((data, P.indices, P.indptr), shape=P.shape).tocsr()
        H.eliminate_zeros()  # a block's zeros (inactive rows, sticking groups' couplings) would
        return H             # be fill for the factorisation

    def _direction(self, direct: np.ndarray, through: np.ndarray) -> np.ndarray:
        """Newton's direction: H Δ = -Φ of the proximal problem. A row of H that is the
        identity's (a separated contact's rows: Φ there is λ itself) fixes its Δ at once, so
        only the other rows are factorised, their right side less those columns: on a pile
        half of whose contacts are open, the factorisation is a fraction of the full one's."""
        rhs = -self.phi_prox
        H = self._matrix(direct, through)
        fixed = (np.all(through == 0.0, axis=2)
                 & np.all(direct == np.eye(self.law.rows), axis=2)).ravel()
        if not fixed.any():
            return _linalg.splu(H.tocsc()).solve(rhs)
        delta = np.where(fixed, rhs, 0.0)
        rest = ~fixed
        if rest.any():
            coo = H.tocoo()
            keep = rest[coo.row] & rest[coo.col]
            place = np.cumsum(rest) - 1  # a kept row's (and column's) index among the kept
            count = int(rest.sum())
            reduced = sp.csc_matrix((coo.data[keep], (place[coo.row[keep]],
                                                      place[coo.col[keep]])),
                                    shape=(count, count))
            delta[rest] = _linalg.splu(reduced).solve(rhs[rest] - (H @ delta)[rest])
        return delta

    def step(self) -> None:
        """One iteration: the start's run first when there is one, else a Newton step, then
        the continuation's and the restarts' bookkeeping (module docstring)."""
        hybrid = self.hybrid
        if hybrid.pending is not None:
            self._sweeps(hybrid.pending)
            hybrid.pending = None
            return
        self._newton()
        size = float(np.max(np.abs(self.phi), initial=0.0))
        if hybrid.stage_done(size, float(np.max(np.abs(self.lam), initial=0.0))):
            self.law = hybrid.next_law()
            self.sync()
        elif hybrid.stalled(size):
            self.counts["restarts"] += 1
            self._sweeps(hybrid.restart)

    def _sweeps(self, name: str) -> None:
        """`start_iterations` of solver `name` from λ, in place, then re-centred there."""
        method = STARTERS[name]
        settings = SolveSettings(name, self.hybrid.iterations, False, resolve(
            method.all_params, {"abs_tol": self.abs_tol}, f"solver {name}"))
        result = method.solve(self.problem, self.lam.copy(), settings)
        self.lam[:] = result.lam
        self.counts["products"] += result.products
        self.counts["sweeps"] += result.iterations
        self.sync()

    def _newton(self) -> None:
        """One Newton iteration of the proximal problem on λ in place, re-centred once its Φ
        is small beside the true one (module docstring)."""
        lam, law = self.lam, self.law
        shifted = self.u + self.alpha * self.metric * (lam - self.centre)
        _, direct, through = law.function(lam, shifted, self.start, True)
        try:
            delta = self._direction(direct, through)
        except RuntimeError:  # exactly singular (prox 0 on a resting pile): a regular matrix
            self.counts["failed_searches"] += 1
            self._regularise()
            return
        self.counts["newton_steps"] += 1
        psi = 0.5 * float(self.phi_prox @ self.phi_prox)
        t = 1.0
        chosen = None
        for _ in range(HALVINGS if self.line_search else 1):
            trial = lam + t * delta
            values = self._evaluate(trial)
            value = 0.5 * float(values[2] @ values[2])
            if not self.line_search or value <= psi - 2.0 * SIGMA * t * psi:
                chosen = (trial, *values)
                break
            t *= 0.5
            self.counts["backtracks"] += 1
        if chosen is None:  # no Armijo step: a more regular proximal problem from here
            self.counts["failed_searches"] += 1
            self._regularise()
            return
        lam[:], self.u, self.phi, self.phi_prox = chosen
        self.inner += 1
        inner = float(np.linalg.norm(self.phi_prox))
        if inner <= INNER * float(np.linalg.norm(self.phi)) or inner == 0.0:
            # Solved: the next proximal problem may be closer to the true one.
            self._centre(SHRINK if self.inner <= EASY else 1.0)
        elif t < 1.0 or self.inner >= HARD:
            # Newton is struggling: a more regular problem, from here.
            self._regularise()

    def sweep(self, count: int) -> int:
        done = 0
        for _ in range(count):
            if self.stop is not None:
                break
            done += 1
            self.step()
            if self.problem.residual(self.lam) < self.abs_tol:
                self.stop = "absolute"
        return done


def solve(problem, lam0: np.ndarray, settings: SolveSettings):
    """Newton from λ0 (module docstring); info: newton_steps, backtracks, failed_searches (line
    searches that found no Armijo step), alpha (the final α / W's mean diagonal), sweeps (the
    start's and restarts' iterations) and restarts."""
    lam = np.array(lam0, dtype=np.float64)
    if settings["start"] == "zero":
        lam[:] = 0.0
    newton = _Solve(problem, lam, settings)
    info: dict = {}

    def products() -> int:
        info.update({k: v for k, v in newton.counts.items() if k != "products"})
        info["alpha"] = newton.alpha
        return newton.counts["products"]

    result = run(problem, lam, settings, newton.sweep, newton.sync,
                 Hooks(lambda: newton.stop, products, info))
    # Newton's steps leave the cone (λ + tΔ is not projected: Φ = 0 holds only at the
    # solution), so an answer short of it is put back into the cone, and measured again.
    if project_answer(problem, result.lam, True):
        result.residual = problem.residual(result.lam)
        result.status = projected_status(result.status, result.residual, settings)
        if result.trace is not None:
            result.trace[-1] = result.residual
    return result


METHOD = Method("newton", "Nonsmooth Newton (Alart–Curnier)",
                {FRICTIONLESS: solve, FRICTIONAL: solve, EXPLICIT: solve},
                "semismooth Newton on the Alart–Curnier function, sparse LU, Armijo line search "
                "and a proximal term for singular W (Siconos' NSN-AC)", PARAMS)
