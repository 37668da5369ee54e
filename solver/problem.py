"""The frictionless contact LCP of one step, matrix-free (docs/solvers.md, the problem).

    e = A λ + b,   A = J M^-1 J^T,   b = J v* + gap/h,   λ >= 0, e >= 0, λ·e = 0

Row c of J holds -n_c at marble a and +n_c at marble b (nothing for a wall). A is never formed in
a step: `apply_matrix` computes J (M^-1 (J^T λ)) in O(m + n). The dense matrix and its COO
triplets exist for tests, small snapshots and exports only. The kernels take plain arrays, so
every method compiles against the same few signatures.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from numba import njit, prange

from .drivers import driver
from .partition import one_block, share, shares
from .products import (ROW_KERNEL, checked_residual, contact_velocity, gather, impulse_velocity,
                       natural_residual, scanned_residual, velocity_change)

# The kinds of contact problem, each class's `kind`: this module's ContactProblem, friction.py's
# FrictionalProblem, explicit.py's MatrixProblem (a frictional problem given by its matrix W).
FRICTIONLESS, FRICTIONAL, EXPLICIT = "frictionless", "frictional", "explicit"


@njit(inline="always", cache=True, nogil=True)
def contact_row(body_a, body_b, normal, c):
    """Contact c's marbles and normal: (a, b, n0, n1, n2), a = -1 for a wall. Loaded once and
    handed to row_error and apply_row, which is as fast as the loop written out."""
    return body_a[c], body_b[c], normal[c, 0], normal[c, 1], normal[c, 2]


@njit(inline="always", cache=True, nogil=True)
def row_error(v, a, b, n0, n1, n2, bias_c):
    """e_c = n_c · (v_b - v_a) + bias_c, m/s: a contact's velocity error for velocities v
    (n, 3). For kernels compiled with ROW_KERNEL."""
    e = n0 * v[b, 0] + n1 * v[b, 1] + n2 * v[b, 2] + bias_c
    if a >= 0:
        e -= n0 * v[a, 0] + n1 * v[a, 1] + n2 * v[a, 2]
    return e


@njit(inline="always", cache=True, nogil=True)
def apply_row(v, inv_mass, a, b, n0, n1, n2, delta):
    """v <- v + M^-1 J_c^T delta: a contact's impulse change delta (N s) applied to both of its
    marbles. For kernels compiled with ROW_KERNEL."""
    s = inv_mass[b] * delta
    v[b, 0] += s * n0
    v[b, 1] += s * n1
    v[b, 2] += s * n2
    if a >= 0:
        s = inv_mass[a] * delta
        v[a, 0] -= s * n0
        v[a, 1] -= s * n1
        v[a, 2] -= s * n2


@njit(inline="always", cache=True, nogil=True)
def row_step(factor, d):
    """factor / A_jj, a row's step (kg for factor 1), and 0 for an inert row: A_jj = 0 (both
    ends fixed, so no impulse can change its velocity and none is ever applied) or, in a
    matrix from elsewhere, A_jj < 0. Every method's ω / A_jj is this."""
    return factor / d if d > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _row_steps(factor, diag, out):
    for j in range(diag.shape[0]):
        out[j] = row_step(factor, diag[j])


def inverse_diag(diag: np.ndarray, factor: float = 1.0) -> np.ndarray:
    """factor / A_jj per row (`row_step`), kg for factor 1, (len(diag),), new."""
    diag = np.ascontiguousarray(diag, dtype=np.float64)
    out = np.empty_like(diag)
    _row_steps(float(factor), diag, out)
    return out


@njit(cache=True, nogil=True)
def contact_graph(body_a, body_b, n):
    """Contacts around each marble, CSR: marble i's contacts are items[start[i]:start[i+1]],
    with sign[k] = -1 where the marble is side a, +1 where it is side b (the row of J)."""
    m = body_a.shape[0]
    count = np.zeros(n + 1, dtype=np.int64)
    for c in range(m):
        if body_a[c] >= 0:
            count[body_a[c] + 1] += 1
        count[body_b[c] + 1] += 1
    for i in range(n):
        count[i + 1] += count[i]
    start = count.copy()
    fill = count[:n].copy()
    items = np.empty(start[n], dtype=np.int64)
    sign = np.empty(start[n])
    for c in range(m):
        a = body_a[c]
        if a >= 0:
            items[fill[a]] = c
            sign[fill[a]] = -1.0
            fill[a] += 1
        b = body_b[c]
        items[fill[b]] = c
        sign[fill[b]] = 1.0
        fill[b] += 1
    return start, items, sign


@njit(cache=True, nogil=True)
def apply_matrix(A, lam, dv, out):
    """out <- A λ over every contact in order, using dv (n, 3) as scratch; A the operator's
    factors (solver/products.py)."""
    impulse_velocity(A, lam, dv)
    gather(A, dv, out, np.int64(0), out.shape[0])


@njit(cache=True, nogil=True)
def assemble_range(A, gap, v_pred, h, out, first, last):
    """out = (diag, rhs), (m,) each: A_cc (1/kg) and J v* + gap/h (m/s) for contacts
    [first, last)."""
    body_a, body_b, normal, inv_mass = A
    diag, rhs = out
    for c in range(np.uint64(first), np.uint64(last)):
        a = body_a[c]
        b = body_b[c]
        u = normal[c, 0] * v_pred[b, 0] + normal[c, 1] * v_pred[b, 1] + normal[c, 2] * v_pred[b, 2]
        k = inv_mass[b]
        if a >= 0:
            u -= normal[c, 0] * v_pred[a, 0] + normal[c, 1] * v_pred[a, 1] + normal[c, 2] * v_pred[a, 2]
            k += inv_mass[a]
        diag[c] = k
        rhs[c] = u + gap[c] / h


@driver(parallel=True, cache=True, nogil=True)
def assemble(A, gap, v_pred, h, out, ranges):
    """assemble_range over a partition's contacts in equal shares at once; inline for one
    block."""
    parts = shares(ranges)
    if parts == 1:
        assemble_range(A, gap, v_pred, h, out, np.int64(0), gap.shape[0])
        return
    for t in prange(parts):
        first, last = share(ranges, t)
        assemble_range(A, gap, v_pred, h, out, first, last)


@dataclass
class ContactProblem:
    """One step's LCP. body_a, body_b: (m,) int64 (-1 = wall); normal: (m, 3); gap: (m,) m;
    inv_mass: (n,) 1/kg; v_pred: (n, 3) m/s, velocities after gravity, before contact;
    dt: s. Derived: diag (m,) = A_cc = w_a + w_b (1/kg); rhs (m,) = b = J v* + gap/h (m/s)."""

    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    inv_mass: np.ndarray
    v_pred: np.ndarray
    dt: float
    key: np.ndarray | None = None
    # The contacts' blocks (solver/partition.py); None: one block, a serial problem.
    partition: tuple[np.ndarray, np.ndarray] | None = None
    diag: np.ndarray = field(init=False)
    rhs: np.ndarray = field(init=False)
    _dv: np.ndarray = field(init=False, repr=False)

    # What every problem kind declares (friction.FrictionalProblem, explicit.MatrixProblem):
    # one row per contact, over geometry.
    kind = FRICTIONLESS
    device = "cpu"  # where its arrays live (methods.driver.DEVICES)
    frictional = False
    explicit = False
    rows = 1

    def __post_init__(self) -> None:
        m = self.gap.shape[0]
        self.diag = np.empty(m)
        self.rhs = np.empty(m)
        self._dv = np.empty_like(self.v_pred)
        if self.partition is None:
            self.partition = one_block(m)
        assemble(self.A, self.gap, self.v_pred, float(self.dt), (self.diag, self.rhs),
                 self.partition[0])

    @property
    def A(self) -> tuple:
        """A = J M^-1 J^T by its factors, the tuple the kernels take: (body_a, body_b, normal,
        inv_mass) (solver/products.py)."""
        return (self.body_a, self.body_b, self.normal, self.inv_mass)

    @property
    def m(self) -> int:
        return self.gap.shape[0]

    @property
    def n(self) -> int:
        return self.v_pred.shape[0]

    @property
    def size(self) -> int:
        """Entries of λ: one per contact."""
        return self.gap.shape[0]

    @property
    def bias(self) -> np.ndarray:
        """gap / h, m/s: the part of b that does not depend on velocities."""
        return self.gap / self.dt

    def copy(self) -> "ContactProblem":
        return replace(self, body_a=self.body_a.copy(), body_b=self.body_b.copy(),
                       normal=self.normal.copy(), gap=self.gap.copy(),
                       inv_mass=self.inv_mass.copy(), v_pred=self.v_pred.copy(),
                       key=None if self.key is None else self.key.copy())

    @property
    def block_count(self) -> int:
        """Blocks of the contacts (threads a product runs on); 1 for a serial problem."""
        return shares(self.partition[0])

    def apply(self, lam: np.ndarray) -> np.ndarray:
        """A λ, (m,)."""
        out = np.empty(self.m)
        self.impulse_velocity(np.ascontiguousarray(lam, dtype=np.float64), self._dv)
        contact_velocity(self.A, self._dv, out, self.partition[0])
        return out

    def impulse_velocity(self, lam: np.ndarray, dv: np.ndarray) -> None:
        """dv (n, 3) <- M^-1 J^T λ, m/s, over the partition (the same result for any number of
        blocks of the same contacts)."""
        velocity_change(self.A, lam, dv, self.partition)

    def error(self, lam: np.ndarray) -> np.ndarray:
        """e = A λ + b, (m,) m/s: post-impulse velocity errors."""
        return self.apply(lam) + self.rhs

    def velocity(self, lam: np.ndarray) -> np.ndarray:
        """v* + M^-1 J^T λ, (n, 3) m/s: the velocities the impulses λ leave."""
        dv = np.empty_like(self.v_pred)
        self.impulse_velocity(np.ascontiguousarray(lam, dtype=np.float64), dv)
        return self.v_pred + dv

    def residual(self, lam: np.ndarray) -> float:
        """Natural-map residual ‖min(λ, Aλ + b)‖∞, m/s (inf when not finite)."""
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        return natural_residual(self.A, self.rhs, lam, self._dv, self.partition)

    def scanned_residual(self, lam: np.ndarray) -> tuple[float, bool, float]:
        """(residual(λ), whether rhs and diag are all finite, max |rhs|) in one kernel call;
        the residual is inf, and not computed, when they are not finite."""
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        return scanned_residual(self.A, self.rhs, self.diag, lam, self._dv, self.partition)

    def checked_residual(self, lam: np.ndarray) -> tuple[float, bool]:
        """(residual(λ), whether λ is all finite) in one kernel call; the residual is inf, and
        not computed, when λ is not finite."""
        lam = np.ascontiguousarray(lam, dtype=np.float64)
        return checked_residual(self.A, self.rhs, lam, self._dv, self.partition)

    def jacobian(self) -> np.ndarray:
        """Dense J, (m, 3n). For tests and small exports."""
        J = np.zeros((self.m, 3 * self.n))
        rows = np.arange(self.m)
        for k in range(3):
            J[rows, 3 * self.body_b + k] += self.normal[:, k]
            marble = self.body_a >= 0
            J[rows[marble], 3 * self.body_a[marble] + k] -= self.normal[marble, k]
        return J

    def dense(self) -> np.ndarray:
        """Dense A, (m, m). For tests and small exports."""
        J = self.jacobian()
        return J @ (np.repeat(self.inv_mass, 3)[:, None] * J.T)

    def coo(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A as COO triplets (row, col, value), built from the contacts around each marble, so
        its size is the number of nonzeros, not m^2."""
        ends = np.concatenate([self.body_a, self.body_b])
        sign = np.concatenate([-np.ones(self.m), np.ones(self.m)])
        contact = np.concatenate([np.arange(self.m), np.arange(self.m)])
        keep = ends >= 0
        ends, sign, contact = ends[keep], sign[keep], contact[keep]
        order = np.argsort(ends, kind="stable")
        ends, sign, contact = ends[order], sign[order], contact[order]
        bounds = np.flatnonzero(np.diff(ends)) + 1
        rows, cols, vals = [], [], []
        for group in np.split(np.arange(ends.size), bounds):
            if group.size == 0:
                continue
            i = ends[group[0]]
            c = contact[group]
            s = sign[group]
            nn = self.normal[c] @ self.normal[c].T
            rows.append(np.repeat(c, c.size))
            cols.append(np.tile(c, c.size))
            vals.append((self.inv_mass[i] * np.outer(s, s) * nn).ravel())
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        r, cc, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
        # Two contacts between the same two marbles would appear once per shared marble; sum them.
        flat = r * self.m + cc
        uniq, inverse = np.unique(flat, return_inverse=True)
        summed = np.zeros(uniq.size)
        np.add.at(summed, inverse, v)
        return uniq // self.m, uniq % self.m, summed
