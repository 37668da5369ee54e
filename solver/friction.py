"""The frictional contact problem of one step, matrix-free (docs/solvers.md, friction).

Each contact c has a frame (n, t1, t2), t1 x t2 = n, and `rows` rows: the normal, two tangents
and, with rolling or spinning resistance, two rolling rows (about t1, t2) and a spinning row
(about n). Impulses are one flat array λ of m * rows values, contact by contact in that order
(FCLIB's order for the first three). Marbles carry linear and angular velocity in one (n, 6)
array V = [v, ω] (m/s, rad/s), so one contact's update touches two cache lines.

Rows of J for contact c between marble a (or a wall, a = -1) and marble b, with g_k = n x t_k
(g1 = t2, g2 = -t1), r_a, r_b the radii (lever arms to the contact point):

    normal     v_b, v_a: +n, -n                  ω: none (the normal passes through both centres)
    tangent k  v_b, v_a: +t_k, -t_k              ω_b, ω_a: -r_b g_k, -r_a g_k
    rolling k  ω_b, ω_a: +t_k, -t_k              spinning:  ω_b, ω_a: +n, -n

Coulomb's law per contact: λ_n >= 0 complementary to e_n = u_n + gap/h (stabilisation and
anticipation as without friction); ‖λ_t‖ <= μ λ_n, opposing slip; rolling ‖λ_r‖ <= μ_roll λ_n
(a length: the torque impulse, N m s), spinning |λ_s| <= μ_spin λ_n. Solid spheres:
I = 2/5 m r^2, so a tangent row's A_tt = 7/2 (w_a + w_b).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from numba import njit, prange

from .drivers import driver
from .coulomb import (checked_frictional_residual, contact_errors_norm, frictional_residual,
                      scanned_frictional_residual)
from .partition import one_block, share, share_of, shares
from .problem import FRICTIONAL
from .products import (frictional_contact_velocities, frictional_gather,
                       frictional_velocity_change, same_bits)

INERTIA_FACTOR = 0.4  # I = 2/5 m r^2, a solid sphere
ROWS_FRICTIONLESS = 1  # rows per contact without friction: the normal
ROWS_SLIDING = 3  # normal, t1, t2
ROWS_ROLLING = 6  # + rolling t1, t2, spinning n


@njit(cache=True, nogil=True)
def tangent_frames(normal, t1, t2):
    """t1, t2 (m, 3) <- an orthonormal tangent pair of each unit normal, t1 x t2 = n, chosen the
    same way every time: t1 = (e x n)/|e x n| with e = y (x when n is within 45° of y), so a
    normal in the x-z plane gets t1 in that plane and t2 = ±y."""
    tangent_frames_range(normal, t1, t2, np.int64(0), normal.shape[0])


@njit(cache=True, nogil=True)
def tangent_frames_range(normal, t1, t2, first, last):
    """tangent_frames for contacts [first, last)."""
    for c in range(first, last):
        n0 = normal[c, 0]
        n1 = normal[c, 1]
        n2 = normal[c, 2]
        if abs(n1) < 0.7071:
            a0 = n2  # y x n
            a1 = 0.0
            a2 = -n0
        else:
            a0 = 0.0  # x x n
            a1 = -n2
            a2 = n1
        s = 1.0 / math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        a0 *= s
        a1 *= s
        a2 *= s
        t1[c, 0] = a0
        t1[c, 1] = a1
        t1[c, 2] = a2
        t2[c, 0] = n1 * a2 - n2 * a1  # n x t1
        t2[c, 1] = n2 * a0 - n0 * a2
        t2[c, 2] = n0 * a1 - n1 * a0


@njit(cache=True, nogil=True)
def contact_rows(A, gap, radius, V_pred, h, out, first, last):
    """The lever arms (A's arm_a, arm_b) and out = (diag, rhs) of contacts [first, last), from
    their frames and the marbles' inverse inertias (assemble_frictional). One source for both
    devices: the GPU's kernels call it for one contact (first, first + 1) as a device function
    (solver/cuda/runtime.shared); a loop over a range, not a per-contact function inlined into
    one, keeps the CPU's code as fast as it was."""
    body_a, body_b, _, _, _, arm_a, arm_b, inv_mass, inv_inertia, rows = A
    diag, rhs = out
    for c in range(first, last):
        arm_b[c] = radius[body_b[c]]
        arm_a[c] = radius[body_a[c]] if body_a[c] >= 0 else 0.0
    frictional_gather(A, V_pred, rhs, first, last)
    for c in range(first, last):
        a = body_a[c]
        b = body_b[c]
        k = c * rows
        rb = arm_b[c]
        lin = inv_mass[b]
        lever = rb * rb * inv_inertia[b]
        rot = inv_inertia[b]
        if a >= 0:
            ra = arm_a[c]
            lin += inv_mass[a]
            lever += ra * ra * inv_inertia[a]
            rot += inv_inertia[a]
        diag[k] = lin
        diag[k + 1] = lin + lever
        diag[k + 2] = lin + lever
        rhs[k] += gap[c] / h
        if rows == 6:
            diag[k + 3] = rot
            diag[k + 4] = rot
            diag[k + 5] = rot


@njit(inline="always", cache=True, nogil=True)
def contact_mu(a, mu, mu_wall):
    """Coulomb's coefficient of a contact whose first body is `a`: mu_wall against a wall
    (a = -1), mu between marbles. One body for both devices, as contact_rows."""
    return mu_wall if a < 0 else mu


@njit(cache=True, nogil=True)
def contact_coefficients(body_a, mu, mu_wall, mu_roll, mu_spin):
    """(mu, mu_roll, mu_spin) per contact, (m,) each: mu_wall for a wall contact (a = -1)."""
    m = body_a.shape[0]
    out_mu = np.empty(m)
    out_roll = np.full(m, mu_roll)
    out_spin = np.full(m, mu_spin)
    for c in range(m):
        out_mu[c] = contact_mu(body_a[c], mu, mu_wall)
    return out_mu, out_roll, out_spin


@driver(parallel=True, cache=True, nogil=True)
def assemble_frictional(A, gap, radius, V_pred, h, out, ranges):
    """Everything derived, in one pass: A's t1, t2 (m, 3) the tangent frames, arm_a, arm_b
    (m,) the lever arms (0 for a wall) and inv_inertia (n,) 1/(2/5 m r^2); out = (diag, rhs),
    (m * rows,) each: A's diagonal and b = J V* + (gap/h on the normal). Over a partition's
    contacts in equal shares at once, inline for one block."""
    body_a, _, normal, t1, t2, _, _, inv_mass, inv_inertia, _ = A
    parts = shares(ranges)
    if parts == 1:
        tangent_frames_range(normal, t1, t2, np.int64(0), normal.shape[0])
        inverse_inertias(inv_mass, radius, inv_inertia, np.int64(0), radius.shape[0])
        contact_rows(A, gap, radius, V_pred, h, out, np.int64(0), body_a.shape[0])
        return
    n = radius.shape[0]
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        inverse_inertias(inv_mass, radius, inv_inertia, first, last)
    for t in prange(parts):
        first, last = share(ranges, t)
        tangent_frames_range(normal, t1, t2, first, last)
        contact_rows(A, gap, radius, V_pred, h, out, first, last)


@njit(cache=True, nogil=True)
def inverse_inertias(inv_mass, radius, inv_inertia, first, last):
    """inv_inertia <- 1 / (2/5 m r^2) for marbles [first, last), 1/(kg m^2)."""
    for i in range(first, last):
        inv_inertia[i] = inv_mass[i] / (INERTIA_FACTOR * radius[i] * radius[i])


@dataclass
class FrictionalProblem:
    """One step's frictional contact problem. body_a, body_b: (m,) int64 (-1 = wall); normal,
    t1, t2: (m, 3) the contact frames; gap: (m,) m; radius, inv_mass: (n,) m and 1/kg;
    V_pred: (n, 6) velocities after gravity and drag, before contact (m/s, rad/s); dt: s;
    mu, mu_roll, mu_spin: (m,) per contact (mu_roll, mu_spin lengths, m); rows: 3 or 6.
    Derived: arm_a, arm_b (m,) lever arms (0 for a wall); inv_inertia (n,) 1/(kg m^2);
    diag, rhs (m * rows,): A's diagonal and b."""

    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    radius: np.ndarray
    inv_mass: np.ndarray
    V_pred: np.ndarray
    dt: float
    mu: np.ndarray
    mu_roll: np.ndarray
    mu_spin: np.ndarray
    rows: int = ROWS_SLIDING
    key: np.ndarray | None = None
    partition: tuple[np.ndarray, np.ndarray] | None = None
    t1: np.ndarray = field(init=False)
    t2: np.ndarray = field(init=False)
    arm_a: np.ndarray = field(init=False)
    arm_b: np.ndarray = field(init=False)
    inv_inertia: np.ndarray = field(init=False)
    diag: np.ndarray = field(init=False)
    rhs: np.ndarray = field(init=False)
    _dV: np.ndarray = field(init=False, repr=False)
    _e: np.ndarray = field(init=False, repr=False)
    _lam_of: np.ndarray = field(init=False, repr=False)
    _holding: bool = field(init=False, repr=False)

    kind = FRICTIONAL
    device = "cpu"  # where its arrays live (methods.driver.DEVICES)
    frictional = True
    explicit = False

    def __post_init__(self) -> None:
        m = self.gap.shape[0]
        self.t1 = np.empty((m, 3))
        self.t2 = np.empty((m, 3))
        self.arm_a = np.empty(m)
        self.arm_b = np.empty(m)
        self.inv_inertia = np.empty_like(self.inv_mass)
        self.diag = np.empty(m * self.rows)
        self.rhs = np.empty(m * self.rows)
        self._dV = np.empty_like(self.V_pred)
        self._e = np.empty(m * self.rows)
        self._lam_of = np.empty(m * self.rows)  # the λ whose product _dV holds, if _holding
        self._holding = False
        if self.partition is None:
            self.partition = one_block(m)
        assemble_frictional(self.A, self.gap, self.radius, self.V_pred, float(self.dt),
                            (self.diag, self.rhs), self.partition[0])

    @property
    def A(self) -> tuple:
        """A = J M^-1 J^T by its factors, the tuple the kernels take: (body_a, body_b, normal,
        t1, t2, arm_a, arm_b, inv_mass, inv_inertia, rows) (solver/products.py)."""
        return (self.body_a, self.body_b, self.normal, self.t1, self.t2, self.arm_a, self.arm_b,
                self.inv_mass, self.inv_inertia, self.rows)

    @property
    def laws(self) -> tuple:
        """The contacts' friction coefficients, the tuple the kernels take: (mu, mu_roll,
        mu_spin), (m,) each."""
        return (self.mu, self.mu_roll, self.mu_spin)

    @property
    def m(self) -> int:
        return self.gap.shape[0]

    @property
    def n(self) -> int:
        return self.V_pred.shape[0]

    @property
    def size(self) -> int:
        """Length of λ: m * rows."""
        return self.m * self.rows

    @property
    def block_count(self) -> int:
        """Blocks of the contacts (threads a product runs on); 1 for a serial problem."""
        return shares(self.partition[0])

    def tangent_bound(self) -> np.ndarray:
        """(m,) the largest eigenvalue of each contact's 2x2 tangent block (1/kg): A_tt, since
        a sphere's tangent block is A_tt I."""
        return self.diag[1::self.rows].copy()

    def block_bound(self) -> np.ndarray:
        """(m,) the largest eigenvalue of each contact's 3x3 block of A (1/kg): max(A_nn, A_tt)
        of a sphere's diagonal block."""
        return self.diag.reshape(self.m, self.rows)[:, :3].max(axis=1)

    @property
    def bias(self) -> np.ndarray:
        return self.gap / self.dt

    def copy(self) -> "FrictionalProblem":
        return replace(self, body_a=self.body_a.copy(), body_b=self.body_b.copy(),
                       normal=self.normal.copy(), gap=self.gap.copy(), radius=self.radius.copy(),
                       inv_mass=self.inv_mass.copy(), V_pred=self.V_pred.copy(),
                       mu=self.mu.copy(), mu_roll=self.mu_roll.copy(),
                       mu_spin=self.mu_spin.copy(),
                       key=None if self.key is None else self.key.copy())

    def _product(self, lam: np.ndarray) -> np.ndarray:
        """Scratch dV <- M^-1 J^T λ (n, 6) unless it holds it: the same kernel on the same λ
        (bits) gives the same bits, so a warm start's V and r0, and r and the step's V, share
        one product."""
        if not self._holds(lam):
            frictional_velocity_change(self.A, lam, self._dV, self.partition)
            self._held(lam, True)
        return self._dV

    def _holds(self, lam: np.ndarray) -> bool:
        return self._holding and same_bits(lam, self._lam_of)

    def _held(self, lam: np.ndarray, product: bool, held: bool = False) -> None:
        """Record whether the scratch dV now holds the product of λ (held: it did before)."""
        if product and not held:
            np.copyto(self._lam_of, lam)
        self._holding = bool(product)

    def velocity_change(self, lam: np.ndarray) -> np.ndarray:
        """M^-1 J^T λ, (n, 6)."""
        return self._product(np.ascontiguousarray(lam, dtype=np.float64)).copy()

    def velocity(self, lam: np.ndarray) -> np.ndarray:
        """V* + M^-1 J^T λ, (n, 6): the velocities the impulses leave."""
        return self.V_pred + self._product(np.ascontiguousarray(lam, dtype=np.float64))

    def apply(self, lam: np.ndarray) -> np.ndarray:
        """A λ, (m * rows,)."""
        out = np.empty(self.size)
        dV = self._product(np.ascontiguousarray(lam, dtype=np.float64))
        frictional_contact_velocities(self.A, dV, out, self.partition[0])
        return out

    def error(self, lam: np.ndarray) -> np.ndarray:
        """e = A λ + b: every row's velocity after the impulses (normal with gap/h)."""
        return self.apply(lam) + self.rhs

    def residual(self, lam: np.ndarray) -> float:
        """max over contacts of the FCLIB natural-map error (`contact_error`), m/s."""
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        held = self._holds(lam)
        r, product = frictional_residual(self.A, self.rhs, self.laws, lam, (self._dV, self._e),
                                         self.partition, held)
        self._held(lam, product, held)
        return r

    def scanned_residual(self, lam: np.ndarray) -> tuple[float, bool, float]:
        """(residual(λ), whether rhs and diag are finite, max |rhs|) in one kernel call; the
        residual is inf, and not computed, when they are not finite."""
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        held = self._holds(lam)
        r, finite, scale, product = scanned_frictional_residual(
            self.A, self.rhs, self.diag, self.laws, lam, (self._dV, self._e), self.partition,
            held)
        self._held(lam, product, held)
        return r, finite, scale

    def checked_residual(self, lam: np.ndarray) -> tuple[float, bool]:
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        held = self._holds(lam)
        r, finite, product = checked_frictional_residual(
            self.A, self.rhs, self.laws, lam, (self._dV, self._e), self.partition, held)
        self._held(lam, product, held)
        return r, finite

    def coo(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A as COO triplets (row, col, value), rows in λ's order."""
        return frictional_coo(self)

    def dense(self) -> np.ndarray:
        """Dense A, (m rows, m rows). For tests and small exports."""
        return frictional_dense(self)

    def fclib_error(self, lam: np.ndarray) -> float:
        """FCLIB's normalised error ‖λ - P_K(λ - ũ)‖₂ / (1 + ‖q‖₂) (Acary et al.), unitless as
        FCLIB reports it. With rolling rows, which FCLIB's local problem has not, the sum of
        squares also holds their natural map (the rolling disk and the spinning interval for
        λ_n fixed, as `contact_error`) and q is every row's: the same formula over all rows."""
        lam = np.asarray(lam, dtype=np.float64)
        return contact_errors_norm(lam, self.error(lam), self.laws, self.rows) / (
            1.0 + np.linalg.norm(self.rhs))


def jacobian_rows(problem: FrictionalProblem) -> tuple[np.ndarray, np.ndarray]:
    """J as two (m * rows, 6) blocks, the row's entries for marble b and for marble a (zero
    for a wall): linear (3) then angular (3), in the row order of λ."""
    m, rows = problem.m, problem.rows
    n_, t1, t2 = problem.normal, problem.t1, problem.t2
    Jb = np.zeros((m, rows, 6))
    Ja = np.zeros((m, rows, 6))
    g = (t2, -t1)  # g_k = n x t_k
    Jb[:, 0, :3], Ja[:, 0, :3] = n_, -n_
    for k, t in enumerate((t1, t2)):
        Jb[:, k + 1, :3], Ja[:, k + 1, :3] = t, -t
        Jb[:, k + 1, 3:] = -problem.arm_b[:, None] * g[k]
        Ja[:, k + 1, 3:] = -problem.arm_a[:, None] * g[k]
    if rows == ROWS_ROLLING:
        for k, axis in enumerate((t1, t2, n_)):
            Jb[:, k + 3, 3:], Ja[:, k + 3, 3:] = axis, -axis
    Ja[problem.body_a < 0] = 0.0
    return Jb.reshape(m * rows, 6), Ja.reshape(m * rows, 6)


def frictional_coo(problem: FrictionalProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A = J M^-1 J^T as COO triplets (row, col, value), built marble by marble from the rows
    that touch it, so its size is the number of nonzeros, not (m rows)^2."""
    Jb, Ja = jacobian_rows(problem)
    rows = problem.rows
    body = np.concatenate([np.repeat(problem.body_b, rows), np.repeat(problem.body_a, rows)])
    entries = np.concatenate([Jb, Ja])
    index = np.concatenate([np.arange(problem.size), np.arange(problem.size)])
    keep = body >= 0
    body, entries, index = body[keep], entries[keep], index[keep]
    order = np.argsort(body, kind="stable")
    body, entries, index = body[order], entries[order], index[order]
    weight = np.concatenate([np.repeat(problem.inv_mass[:, None], 3, axis=1),
                             np.repeat(problem.inv_inertia[:, None], 3, axis=1)], axis=1)
    out_r, out_c, out_v = [], [], []
    for group in np.split(np.arange(body.size), np.flatnonzero(np.diff(body)) + 1):
        if group.size == 0:
            continue
        J = entries[group]
        block = (J * weight[body[group[0]]]) @ J.T
        out_r.append(np.repeat(index[group], group.size))
        out_c.append(np.tile(index[group], group.size))
        out_v.append(block.ravel())
    if not out_r:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    r, c, v = np.concatenate(out_r), np.concatenate(out_c), np.concatenate(out_v)
    flat = r * problem.size + c
    uniq, inverse = np.unique(flat, return_inverse=True)
    summed = np.zeros(uniq.size)
    np.add.at(summed, inverse, v)
    return uniq // problem.size, uniq % problem.size, summed


def frictional_dense(problem: FrictionalProblem) -> np.ndarray:
    """Dense A, (m rows, m rows). For tests and small exports."""
    A = np.zeros((problem.size, problem.size))
    r, c, v = frictional_coo(problem)
    A[r, c] = v
    return A
