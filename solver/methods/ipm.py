"""A primal-dual interior point on the cone complementarity form of Coulomb's law (after
Acary, Armand, Nguyen and Shpakovych's second-order cone interior point for frictional contact),
for the frictionless, Coulomb (3 rows) and explicit problems.

With u = W λ + q (W = A, q = b) and De Saxcé's shift s_c = μ_c ‖u_t,c‖, Coulomb's law is

    λ_c ∈ K_c = {‖λ_t‖ <= μ λ_n},   ũ_c = u_c + s_c e_n ∈ K_c*,   ⟨λ_c, ũ_c⟩ = 0.

In the standard cone L = {‖x̄‖ <= x_0}, x_c = (μ λ_n, λ_t) ∈ L. The non-smooth s has two
treatments (`form`):

**lifted** (the default): s's norm becomes an unknown t_c >= ‖u_t,c‖, and the law is two
complementarity pairs per contact sharing λ_n,

    λ_n >= 0, u_n >= 0, λ_n u_n = 0;      x = (μ λ_n, λ_t) ∈ L, y = (t, u_t) ∈ L, x ∘ y = 0

(∘ the Jordan product). They are Coulomb's law: a sticking contact (x inside L) has y = 0, so
u_t = 0; a sliding one has x and y on L's boundary, opposite, so t = ‖u_t‖ and λ_t = -μ λ_n
u_t / ‖u_t‖; a separated one has λ = 0, u_n >= 0 and t is free. Everything is linear in
(λ, t): no smoothing, and Newton's step meets the equations b = u_n, ȳ = u_t exactly after a
full step; the problem is not monotone (⟨Δx, Δy⟩ + Δλ_n Δu_n = Δλᵀ W Δλ + μ Δλ_n Δt), which is
where Coulomb's non-convexity went. t is y_0 itself (it has no equation of its own).

**shifted**: z_c = (ũ_n / μ, ũ_t) = (u_n / μ + ‖u_t‖, u_t), x, z ∈ L, x ∘ z = 0, z = Z(x),
with ‖u_t‖ smoothed to √(‖u_t‖² + ε²), ε starting at `smoothing` × ν / x̄_0 (the size of a
sticking contact's slip on the central path) and moving as the gap's target, -(1 - σ) ε, in
the step's right-hand side, so the barrier drives it to 0. `coupling=newton` puts s's
derivative in the step (a non-symmetric Jacobian), `frozen` holds s at the iterate's value (an
interior point on the convex relaxation whose s follows the iterates). Kept for comparison: on
the frozen bowls it stalls where the lifted form converges (docs/solvers.md).

A contact with μ = 0, and every contact of a frictionless problem, has the cone R+ on its
normal row alone (its tangent impulses 0). Each iteration is one Newton step on the equations
and x ∘ y = σ ν e (ν the mean complementarity per cone), in Nesterov–Todd's scaling: the point
with Θ x = Θ⁻¹ y = v for the symmetric Θ of each cone, so that the linearised complementarity
v ∘ (Θ Δx + Θ⁻¹ Δy) = rc is symmetric in the pair. Eliminating the duals leaves one sparse
system in Δλ, W plus a 3 × 3 block per contact (rows of Θ² G, G: λ_c -> (λ_n, x_c)), solved by
scipy's SuperLU. σ is Mehrotra's (σ = (ν_aff / ν)³ from a predictor step, with the
second-order corrector), or `sigma` fixed when > 0; the step is `boundary` times the longest
one that keeps every pair inside its cones (fraction to the boundary), the same for all.

The interior point starts at the cones' centres, scaled to the problem: normal impulses
`start_impulse` × (1 + max|q|) / mean(diag W), velocities 1 + max|q| (λ0 is not a good interior
start; a contact whose rows W does not touch keeps λ0, as in every solver). The problem is not
monotone, so where the path from that start leads depends on it (docs/solvers.md). It ends by
itself (status `relative`) once the gap and the equations are rounding, or the step collapses.
Where it ends short of `abs_tol` (at a degenerate contact, x on its cone's edge with y = 0,
the gap reaches rounding near a residual of 1e-10), up to `polish` iterations of `newton` from
its answer finish it, within what is left of the iterations, kept only where they lower the
residual (socp's polish).
Rolling rows (6 per contact) are not solved here: such a problem goes to `newton`, and
`info["delegated_to_newton"]` says so.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import metrics
from ..lazy import LazyModule
from ..params import Param
from ..problem import EXPLICIT, FRICTIONAL, FRICTIONLESS
from ..options import SolveSettings
from .driver import Hooks, Method, run
from .newton import METHOD as NEWTON
from .socp import polished

sp = LazyModule("scipy.sparse")
_linalg = LazyModule("scipy.sparse.linalg")

PARAMS = (
    Param("form", "lifted", str, "the problem the interior point solves: lifted (t >= ‖u_t‖ "
          "as an unknown, linear) or shifted (u_n + μ‖u_t‖, smoothed)",
          choices=("lifted", "shifted")),
    Param("coupling", "frozen", str, "form=shifted: the shift s = μ‖u_t‖ in the Newton step, "
          "its derivative included (newton) or held at the iterate's value (frozen)",
          choices=("newton", "frozen")),
    Param("start_impulse", 10.0, float, "form=lifted: the starting point's normal impulses, in "
          "units of (1 + max|q|) / mean(diag W) (a larger start: a larger first gap)",
          lo=0.0, lo_open=True),
    Param("polish", 20, int, "newton iterations from the answer when it is short of abs_tol "
          "(a degenerate contact, x on its cone's edge with y = 0, stops the interior point "
          "near 1e-10; 0: its answer as it is)", lo=0, hi=100_000),
    Param("polish_prox", 1e-3, float, "the polish's proximal weight (newton's prox, in units "
          "of W's diagonal)", lo=0.0, hi=1e6),
    Param("sigma", 0.0, float, "centring parameter of every step (0: Mehrotra's "
          "predictor-corrector chooses it)", lo=0.0, hi=1.0),
    Param("boundary", 0.9, float, "fraction of the longest step inside the cones taken "
          "(fraction to the boundary)", lo=0.5, hi=1.0, hi_open=True),
    Param("smoothing", 1.0, float, "form=shifted: ε of √(‖u_t‖² + ε²), in units of the gap "
          "ν over the mean impulse scale (0: the non-smooth norm)", lo=0.0, hi=1e6),
)

# The step is deemed collapsed below STALL_STEP, the solve over after STALL such steps in a row
# or when the gap and the equation residual are both below FLOOR of their starting sizes.
STALL_STEP = 1e-10
STALL = 5
FLOOR = 1e-30


def _cone_step(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Per cone (k, 3): the longest α >= 0 with x + α d in L (inf where the ray stays in it),
    for x inside L. det(x + α d) = a α² + 2 b α + c has c > 0; its least positive root is
    c / (-b + √(b² - a c)) when that denominator is positive, and the ray stays inside if not."""
    a = d[:, 0] ** 2 - d[:, 1] ** 2 - d[:, 2] ** 2
    b = x[:, 0] * d[:, 0] - x[:, 1] * d[:, 1] - x[:, 2] * d[:, 2]
    c = x[:, 0] ** 2 - x[:, 1] ** 2 - x[:, 2] ** 2
    disc = b * b - a * c
    denominator = -b + np.sqrt(np.maximum(disc, 0.0))
    crossing = (disc >= 0.0) & (denominator > 0.0)
    alpha = np.full(len(x), np.inf)
    alpha[crossing] = c[crossing] / denominator[crossing]
    # A ray leaving through the apex's other nappe is caught by x_0 + α d_0 >= 0 too.
    down = d[:, 0] < 0.0
    alpha[down] = np.minimum(alpha[down], -x[down, 0] / d[down, 0])
    return alpha


def _det(x: np.ndarray) -> np.ndarray:
    """x_0² - ‖x̄‖² per cone, factored: near the boundary the difference of squares loses
    every digit that the difference x_0 - ‖x̄‖ keeps."""
    norm = np.hypot(x[:, 1], x[:, 2])
    return (x[:, 0] - norm) * (x[:, 0] + norm)


def _jordan(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """x ∘ z per cone (k, 3): (xᵀz, x_0 z̄ + z_0 x̄)."""
    out = np.empty_like(x)
    out[:, 0] = np.einsum("ij,ij->i", x, z)
    out[:, 1:] = x[:, :1] * z[:, 1:] + z[:, :1] * x[:, 1:]
    return out


def _arrow_solve(v: np.ndarray, r: np.ndarray) -> np.ndarray:
    """w with v ∘ w = r per cone (k, 3), v inside L."""
    w = np.empty_like(r)
    w[:, 0] = (v[:, 0] * r[:, 0] - np.einsum("ij,ij->i", v[:, 1:], r[:, 1:])) / _det(v)
    w[:, 1:] = (r[:, 1:] - w[:, :1] * v[:, 1:]) / v[:, :1]
    return w


class _Scaling:
    """Nesterov–Todd's scaling of x, z inside L per cone (k, 3): Θ = η (2 w wᵀ - J) symmetric
    with Θ x = Θ⁻¹ z = v (J = diag(1, -1, -1), det w = 1), and of the R+ rows: √(z / x)."""

    def __init__(self, x: np.ndarray, z: np.ndarray, xl: np.ndarray, zl: np.ndarray):
        dx, dz = np.sqrt(_det(x)), np.sqrt(_det(z))
        xn, zn = x / dx[:, None], z / dz[:, None]
        gamma = np.sqrt(0.5 * (1.0 + np.einsum("ij,ij->i", xn, zn)))
        jx = xn * np.array([1.0, -1.0, -1.0])
        w = (zn + jx) / (2.0 * gamma[:, None])
        # Θ is the quadratic representation of w's square root (det 1 as w's).
        self.w = (w + np.array([1.0, 0.0, 0.0])) / np.sqrt(2.0 * (w[:, :1] + 1.0))
        self.eta = np.sqrt(dz / dx)
        self.linear = np.sqrt(zl / xl)

    def matrices(self) -> np.ndarray:
        """Θ per cone (k, 3, 3)."""
        w = self.w
        theta = 2.0 * w[:, :, None] * w[:, None, :]
        theta[:, 0, 0] -= 1.0
        theta[:, 1, 1] += 1.0
        theta[:, 2, 2] += 1.0
        return self.eta[:, None, None] * theta

    def apply(self, y: np.ndarray, inverse: bool = False) -> np.ndarray:
        """Θ y (Θ⁻¹ y: η⁻¹ (2 (Jw)(Jw)ᵀ - J) y) per cone."""
        j = np.array([1.0, -1.0, -1.0])
        w = self.w * j if inverse else self.w
        scale = 1.0 / self.eta if inverse else self.eta
        return scale[:, None] * (2.0 * np.einsum("ij,ij->i", w, y)[:, None] * w - y * j)


def _block_square(theta: np.ndarray, linear: np.ndarray):
    """Θ² as a sparse matrix: the cones' 3 × 3 blocks (k, 3, 3), then the R+ rows' diagonal."""
    k, p = len(theta), len(linear)
    base = 3 * np.arange(k)
    rows = (base[:, None, None] + np.arange(3)[None, :, None]) * np.ones((1, 1, 3), dtype=int)
    cols = (base[:, None, None] + np.arange(3)[None, None, :]) * np.ones((1, 3, 1), dtype=int)
    squared = theta @ theta
    diagonal = 3 * k + np.arange(p)
    return sp.csr_matrix((np.concatenate([squared.ravel(), linear]),
                          (np.concatenate([rows.ravel(), diagonal]),
                           np.concatenate([cols.ravel(), diagonal]))),
                         shape=(3 * k + p, 3 * k + p))


class _Variables:
    """The unknowns both forms share: `index` (the λ entries solved for: the k contacts with a
    friction cone, 3 rows each, then the p normal rows with R+), W and q on them (the held
    entries' impulses folded into q), μ of the cones, d (x = d λ: μ on a cone's normal row);
    every other entry of λ is held at λ0 (a contact W does not touch) or 0 (a μ = 0 contact's
    tangent impulses)."""

    def __init__(self, problem, lam: np.ndarray):
        rows_, cols, vals = problem.coo()
        size, rows = problem.size, problem.rows
        W = sp.csr_matrix((vals, (rows_, cols)), shape=(size, size))
        m = problem.m
        live = (W.diagonal().reshape(m, rows) > 0.0).any(axis=1)
        mu = np.asarray(problem.mu, dtype=np.float64) if rows > 1 else np.zeros(m)
        coned = live & (mu > 0.0)
        self.mu = mu[coned]
        self.cone_rows = (np.flatnonzero(coned)[:, None] * rows + np.arange(3)).astype(np.int64)
        self.linear_rows = np.flatnonzero(live & ~coned) * rows
        self.k, self.p = len(self.cone_rows), len(self.linear_rows)
        self.index = np.concatenate([self.cone_rows.ravel(), self.linear_rows])
        held = np.ones(size, dtype=bool)
        held[self.index] = False
        self.lam = lam
        lam[~held] = 0.0
        lam[(np.repeat(live, rows)) & held] = 0.0  # a μ = 0 contact's tangent impulses
        self.W = W[self.index][:, self.index].tocsc()
        self.q = (W @ lam + np.asarray(problem.rhs, dtype=np.float64))[self.index]
        # x = d λ on the variables: μ on a cone's normal row, 1 elsewhere.
        self.d = np.ones(len(self.index))
        self.d[0:3 * self.k:3] = self.mu


class _Interior(_Variables):
    """The shifted form's state: x (cones k × 3, then the R+ rows) and z, and the map Z."""

    def __init__(self, problem, lam: np.ndarray, settings: SolveSettings):
        super().__init__(problem, lam)
        self.settings = settings
        self.sigma_fixed = settings["sigma"]
        self.boundary = settings["boundary"]
        self.frozen = settings["coupling"] == "frozen"
        self.smoothing = settings["smoothing"]
        self._start()
        self.counts = {"gap": float(self.gap()), "equation": float(np.linalg.norm(
            self.equation())), "step": 1.0, "sigma": 0.0, "stalled": 0}
        self.start_gap, self.start_equation = self.counts["gap"], self.counts["equation"]
        self.stall = 0
        self.done = False

    # The two halves of a vector of the variables.
    def cones(self, y: np.ndarray) -> np.ndarray:
        return y[:3 * self.k].reshape(self.k, 3)

    def linear(self, y: np.ndarray) -> np.ndarray:
        return y[3 * self.k:]

    def _start(self) -> None:
        """x and z at the cones' centres e, scaled so that z's centre is the size of q and x's
        the impulse W's diagonal would answer it with."""
        n = len(self.index)
        unit = np.zeros(n)
        unit[0:3 * self.k:3] = 1.0
        unit[3 * self.k:] = 1.0
        speed = 1.0 + float(np.abs(self.q).max(initial=0.0))
        diagonal = float(np.mean(self.W.diagonal())) if n else 1.0
        self.x = unit * (speed / max(diagonal, 1e-300))
        self.z = unit * speed
        self.epsilon = self._epsilon()

    def gap(self) -> float:
        """ν: x·z per cone."""
        cones = self.k + self.p
        return float(self.x @ self.z) / max(cones, 1)

    def _scale(self) -> float:
        """The mean of x_0 over the cones: the impulses' scale."""
        return float(np.mean(np.concatenate([self.cones(self.x)[:, 0], self.linear(self.x)])))

    def _epsilon(self) -> float:
        return self.smoothing * self.gap() / max(self._scale(), 1e-300)

    def velocity(self, x: np.ndarray) -> np.ndarray:
        """u on the variables at x."""
        return self.W @ (x / self.d) + self.q

    def target(self, x: np.ndarray) -> np.ndarray:
        """Z(x): (u_n / μ + √(‖u_t‖² + ε²), u_t) per cone, u_n on the R+ rows."""
        u = self.velocity(x)
        z = u.copy()
        cones = self.cones(z)
        cones[:, 0] = cones[:, 0] / self.mu + np.sqrt(cones[:, 1] ** 2 + cones[:, 2] ** 2
                                                      + self.epsilon ** 2)
        return z

    def equation(self) -> np.ndarray:
        return self.z - self.target(self.x)

    def _shrink(self, x: np.ndarray) -> np.ndarray:
        """∂Z/∂ε: ε / √(‖u_t‖² + ε²) on each cone's normal row."""
        out = np.zeros(len(self.index))
        if self.k and self.epsilon > 0.0:
            u = self.cones(self.velocity(x))
            out[0:3 * self.k:3] = self.epsilon / np.sqrt(u[:, 1] ** 2 + u[:, 2] ** 2
                                                          + self.epsilon ** 2)
        return out

    def _jacobian(self, x: np.ndarray):
        """∂Z/∂x (sparse, variables × variables): D⁻¹ (I + C) W D⁻¹, C the shift's
        derivative on each cone's normal row (none when the coupling is frozen)."""
        inverse = sp.diags(1.0 / self.d)
        J = self.W
        if not self.frozen and self.k:
            u = self.cones(self.velocity(x))
            norm = np.sqrt(u[:, 1] ** 2 + u[:, 2] ** 2 + self.epsilon ** 2)
            norm = np.where(norm > 0.0, norm, np.inf)  # ε = 0 at rest: a zero subgradient
            normal = 3 * np.arange(self.k)
            rows = np.concatenate([normal, normal])
            cols = np.concatenate([normal + 1, normal + 2])
            vals = np.concatenate([self.mu * u[:, 1] / norm, self.mu * u[:, 2] / norm])
            n = len(self.index)
            C = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
            J = J + C @ self.W
        # z_0 = u_n / μ + ‖u_t‖: the normal row of ũ divided by μ.
        return inverse @ J @ inverse

    def step(self) -> None:
        if self.done:
            return
        x, z = self.x, self.z
        xc, zc, xl, zl = self.cones(x), self.cones(z), self.linear(x), self.linear(z)
        if not (np.all(_det(xc) > 0.0) and np.all(_det(zc) > 0.0) and np.all(xl > 0.0)
                and np.all(zl > 0.0) and np.all(xc[:, 0] > 0.0) and np.all(zc[:, 0] > 0.0)):
            # Rounding has put an iterate on a cone's boundary: no scaling exists there.
            self.counts["stalled"] = 1
            self.done = True
            return
        scaling = _Scaling(xc, zc, xl, zl)
        vc = scaling.apply(xc)
        vl = np.sqrt(xl * zl)
        residual = self.equation()
        shrink = self._shrink(x)
        k = self.k
        square = _block_square(scaling.matrices(), scaling.linear ** 2)
        try:
            lu = _linalg.splu(sp.csc_matrix(square + self._jacobian(x)))
        except RuntimeError:  # exactly singular: the scaling has left the cones' interior
            self.counts["stalled"] = 1
            self.done = True
            return
        nu = self.gap()

        def direction(rc_c, rc_l, sigma):
            """(Δx, Δz) for the complementarity right-hand sides rc (v ∘ (ΘΔx + Θ⁻¹Δz)),
            with ε moving by -(1 - σ) ε as the gap's target does."""
            wc = scaling.apply(_arrow_solve(vc, rc_c)) if k else np.zeros((0, 3))
            wl = scaling.linear * rc_l / vl
            moved = shrink * (1.0 - sigma) * self.epsilon
            dx = lu.solve(np.concatenate([wc.ravel(), wl]) + residual + moved)
            dz = np.concatenate([wc.ravel(), wl]) - square @ dx
            return dx, dz

        e_c = np.zeros((k, 3))
        e_c[:, 0] = 1.0
        vv_c, vv_l = _jordan(vc, vc), vl * vl
        dx, dz = direction(-vv_c, -vv_l, 0.0)
        sigma = self.sigma_fixed
        if sigma == 0.0:
            alpha = self._longest(dx, dz)
            affine = float((x + alpha * dx) @ (z + alpha * dz)) / max(k + self.p, 1)
            sigma = min(max(affine / nu, 0.0), 1.0) ** 3
            # Mehrotra's corrector: the second-order term (Θ Δx_aff) ∘ (Θ⁻¹ Δz_aff).
            sx = scaling.apply(self.cones(dx))
            sz = scaling.apply(self.cones(dz), inverse=True)
            corr_c = _jordan(sx, sz)
            corr_l = self.linear(dx) * self.linear(dz)
            dx, dz = direction(sigma * nu * e_c - vv_c - corr_c,
                               sigma * nu - vv_l - corr_l, sigma)
        else:
            dx, dz = direction(sigma * nu * e_c - vv_c, sigma * nu - vv_l, sigma)
        alpha = min(1.0, self.boundary * self._longest(dx, dz))
        self.x = x + alpha * dx
        self.z = z + alpha * dz
        self.epsilon *= 1.0 - alpha * (1.0 - sigma)
        self._record(alpha, sigma)
        self.lam[self.index] = self.x / self.d

    def _longest(self, dx: np.ndarray, dz: np.ndarray) -> float:
        steps = [1.0 / self.boundary]  # never more than a full step, after the fraction
        for y, dy in ((self.x, dx), (self.z, dz)):
            if self.k:
                steps.append(float(np.min(_cone_step(self.cones(y), self.cones(dy)))))
            down = self.linear(dy) < 0.0
            if np.any(down):
                steps.append(float(np.min(-self.linear(y)[down] / self.linear(dy)[down])))
        return min(steps)

    def _record(self, alpha: float, sigma: float) -> None:
        gap, equation = self.gap(), float(np.linalg.norm(self.equation()))
        self.counts.update(gap=gap, equation=equation, step=alpha, sigma=sigma,
                           epsilon=self.epsilon)
        self.stall = self.stall + 1 if alpha < STALL_STEP else 0
        if self.stall >= STALL:
            self.counts["stalled"] = 1
            self.done = True
        if (gap <= FLOOR * max(self.start_gap, 1e-300)
                and equation <= FLOOR * max(self.start_equation, 1e-300)):
            self.done = True
        if not (np.all(np.isfinite(self.x)) and np.all(np.isfinite(self.z))):
            self.done = True


class _Lifted(_Variables):
    """The lifted form (module docstring): unknowns λ on the variables and the duals b (the R+
    pairs' u_n, k + p) and y (k, 3) = (t, u_t) per cone, with b - u_n = 0 and ȳ - u_t = 0 kept
    as residuals (an infeasible start); t is free, so y_0 needs no equation."""

    def __init__(self, problem, lam: np.ndarray, settings: SolveSettings):
        super().__init__(problem, lam)
        self.boundary, self.sigma_fixed = settings["boundary"], settings["sigma"]
        speed = 1.0 + float(np.abs(self.q).max(initial=0.0))
        n = len(self.index)
        impulse = settings["start_impulse"] * speed / max(
            float(np.mean(self.W.diagonal())) if n else 1.0, 1e-300)
        self.r = np.zeros(n)
        self.r[0:3 * self.k:3] = impulse
        self.r[3 * self.k:] = impulse
        self.b = np.full(self.k + self.p, speed)
        self.y = np.zeros((self.k, 3))
        self.y[:, 0] = speed / np.maximum(self.mu, 1e-300)
        self.counts = {"gap": self.gap(), "equation": float(np.linalg.norm(self.equation())),
                       "step": 1.0, "sigma": 0.0, "stalled": 0}
        self.start_gap, self.start_equation = self.counts["gap"], self.counts["equation"]
        self.stall, self.done = 0, False

    def primal(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a, x): the R+ parts (λ_n of every contact: cones first) and x = (μ λ_n, λ_t)."""
        k = self.k
        cones = r[:3 * k].reshape(k, 3) * np.column_stack([self.mu, np.ones((k, 2))])
        return np.concatenate([r[0:3 * k:3], r[3 * k:]]), cones

    def gap(self) -> float:
        a, x = self.primal(self.r)
        return float(a @ self.b + np.sum(x * self.y)) / max(2 * self.k + self.p, 1)

    def equation(self) -> np.ndarray:
        """(b, ȳ) - (u_n, u_t) in the variables' order."""
        k = self.k
        out = -(self.W @ self.r + self.q)
        out[0:3 * k:3] += self.b[:k]
        out[3 * k:] += self.b[k:]
        cones = out[:3 * k].reshape(k, 3)
        cones[:, 1:] += self.y[:, 1:]
        return out

    def _matrix(self, theta: np.ndarray, linear: np.ndarray):
        """The step's matrix: W plus, per contact, the rows of Θ² G (module docstring)."""
        k, p = self.k, self.p
        base = 3 * np.arange(k)
        squared = theta @ theta
        blocks = np.zeros((k, 3, 3))
        blocks[:, 0, 0] = linear[:k]
        blocks[:, 1:, :] = squared[:, 1:, :] * np.column_stack([self.mu, np.ones((k, 2))])[
            :, None, :]
        rows = np.repeat(base[:, None] + np.arange(3), 3, axis=1).ravel()
        cols = np.tile(base[:, None] + np.arange(3), (1, 3)).ravel()
        diagonal = 3 * k + np.arange(p)
        n = 3 * k + p
        G = sp.csr_matrix((np.concatenate([blocks.ravel(), linear[k:]]),
                           (np.concatenate([rows, diagonal]), np.concatenate([cols, diagonal]))),
                          shape=(n, n))
        return sp.csc_matrix(G + self.W)

    def step(self) -> None:
        if self.done:
            return
        k = self.k
        a, x = self.primal(self.r)
        if not (np.all(a > 0.0) and np.all(self.b > 0.0) and np.all(_det(x) > 0.0)
                and np.all(_det(self.y) > 0.0) and np.all(x[:, 0] > 0.0)
                and np.all(self.y[:, 0] > 0.0)):
            self.counts["stalled"] = 1
            self.done = True
            return
        scaling = _Scaling(x, self.y, a, self.b)
        vc, vl = scaling.apply(x), np.sqrt(a * self.b)
        try:
            lu = _linalg.splu(self._matrix(scaling.matrices(), scaling.linear ** 2))
        except RuntimeError:
            self.counts["stalled"] = 1
            self.done = True
            return
        residual = self.equation()
        nu = self.gap()
        def direction(rc_c, rc_l):
            wc = scaling.apply(_arrow_solve(vc, rc_c))
            wl = scaling.linear * rc_l / vl
            rhs = residual.copy()
            rhs[0:3 * k:3] += wl[:k]
            rhs[3 * k:] += wl[k:]
            rhs[:3 * k].reshape(k, 3)[:, 1:] += wc[:, 1:]
            dr = lu.solve(rhs)
            da, dx = self.primal(dr)
            db = wl - scaling.linear ** 2 * da
            dy = wc - scaling.apply(scaling.apply(dx))
            return dr, da, dx, db, dy

        e_c = np.zeros((k, 3))
        e_c[:, 0] = 1.0
        vv_c, vv_l = _jordan(vc, vc), vl * vl
        sigma = self.sigma_fixed
        if sigma == 0.0:
            dr, da, dx, db, dy = direction(-vv_c, -vv_l)
            alpha = self._longest(a, x, da, dx, db, dy)
            affine = (float((a + alpha * da) @ (self.b + alpha * db))
                      + float(np.sum((x + alpha * dx) * (self.y + alpha * dy)))) / max(
                          2 * k + self.p, 1)
            sigma = min(max(affine / nu, 0.0), 1.0) ** 3
            corr_c = _jordan(scaling.apply(dx), scaling.apply(dy, inverse=True))
            corr_l = da * db
            dr, da, dx, db, dy = direction(sigma * nu * e_c - vv_c - corr_c,
                                           sigma * nu - vv_l - corr_l)
        else:
            dr, da, dx, db, dy = direction(sigma * nu * e_c - vv_c, sigma * nu - vv_l)
        alpha = min(1.0, self.boundary * self._longest(a, x, da, dx, db, dy))
        self.r = self.r + alpha * dr
        self.b = self.b + alpha * db
        self.y = self.y + alpha * dy
        self.lam[self.index] = self.r
        self._record(alpha, sigma)

    def _record(self, alpha: float, sigma: float) -> None:
        gap, equation = self.gap(), float(np.linalg.norm(self.equation()))
        self.counts.update(gap=gap, equation=equation, step=alpha, sigma=sigma)
        self.stall = self.stall + 1 if alpha < STALL_STEP else 0
        finite = np.all(np.isfinite(self.r)) and np.all(np.isfinite(self.y))
        if (self.stall >= STALL or not finite
                or (gap <= FLOOR * max(self.start_gap, 1e-300)
                    and equation <= FLOOR * max(self.start_equation, 1e-300))):
            self.counts["stalled"] = int(self.stall >= STALL)
            self.done = True

    def _longest(self, a, x, da, dx, db, dy) -> float:
        steps = [1.0 / self.boundary]
        for y, dyy in ((x, dx), (self.y, dy)):
            if len(y):
                steps.append(float(np.min(_cone_step(y, dyy))))
        for y, dyy in ((a, da), (self.b, db)):
            down = dyy < 0.0
            if np.any(down):
                steps.append(float(np.min(-y[down] / dyy[down])))
        return min(steps)


def solve(problem, lam0: np.ndarray, settings: SolveSettings):
    if problem.rows not in (1, 3):
        return _delegated(problem, lam0, settings)
    lam = np.array(lam0, dtype=np.float64)
    form = _Lifted if settings["form"] == "lifted" else _Interior
    # Built at the first iteration: the driver first checks λ0 and the problem, and a poisoned
    # problem ends on λ0 untouched (building zeroes the unknowns' start).
    held: list = []
    counts: dict = {}

    def sweep(count: int) -> int:
        if not held:
            held.append(form(problem, lam, settings))
            counts.update(held[0].counts)
            held[0].counts = counts
        for k in range(count):
            held[0].step()
            if held[0].done:
                return k + 1
        return count

    def stop() -> str | None:
        return metrics.RELATIVE if held and held[0].done else None

    result = run(problem, lam, settings, sweep, hooks=Hooks(stop=stop, info=counts))
    # The polish spends what the interior point left of the iterations, never more.
    left = min(settings["polish"], max(settings.iterations - result.iterations, 0))
    return polished(problem, result, dataclasses.replace(
        settings, params={**settings.params, "polish": left}))


def _delegated(problem, lam0: np.ndarray, settings: SolveSettings):
    """A problem with rolling rows, which this method does not solve, handed to `newton` with
    the same iterations, tolerances, observer and time limit; `info["delegated_to_newton"]` 1
    says so (a refusal here would stop a run that switched solver mid-way)."""
    common = {p.name: settings[p.name] for p in NEWTON.all_params
              if p.name in ("abs_tol", "rel_tol", "divergence")}
    result = NEWTON.solve(problem, lam0, NEWTON.settings(
        settings.iterations, settings.trace, common, observer=settings.observer,
        time_limit=settings.time_limit))
    result.info = {**result.info, "delegated_to_newton": 1}
    return result


METHOD = Method("ipm", "Interior point", {
    FRICTIONLESS: solve, FRICTIONAL: solve, EXPLICIT: solve},
    "SOCCP, Nesterov–Todd scaling",
    PARAMS)
