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

from dataclasses import dataclass, field, replace

import numpy as np
from numba import njit

INERTIA_FACTOR = 0.4  # I = 2/5 m r^2, a solid sphere
ROWS_SLIDING = 3  # normal, t1, t2
ROWS_ROLLING = 6  # + rolling t1, t2, spinning n


@njit(cache=True, nogil=True)
def tangent_frames(normal, t1, t2):
    """t1, t2 (m, 3) <- an orthonormal tangent pair of each unit normal, t1 x t2 = n, chosen the
    same way every time: t1 = (e x n)/|e x n| with e = y (x when n is within 45° of y), so a
    normal in the x-z plane gets t1 in that plane and t2 = ±y."""
    for c in range(normal.shape[0]):
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
        s = 1.0 / np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        a0 *= s
        a1 *= s
        a2 *= s
        t1[c, 0] = a0
        t1[c, 1] = a1
        t1[c, 2] = a2
        t2[c, 0] = n1 * a2 - n2 * a1  # n x t1
        t2[c, 1] = n2 * a0 - n0 * a2
        t2[c, 2] = n0 * a1 - n1 * a0


@njit(inline="always", cache=True, nogil=True)
def project_disk(l1, l2, radius):
    """(l1, l2) scaled back onto the disk of the given radius (>= 0) when outside it."""
    norm2 = l1 * l1 + l2 * l2
    if norm2 > radius * radius:
        s = radius / np.sqrt(norm2) if norm2 > 0.0 else 0.0
        return l1 * s, l2 * s
    return l1, l2


@njit(inline="always", cache=True, nogil=True)
def project_cone(zn, z1, z2, mu):
    """The projection of z = (z_n, z_t) onto the cone ‖z_t‖ <= μ z_n (Euclidean)."""
    zt = np.sqrt(z1 * z1 + z2 * z2)
    if zt <= mu * zn:
        return zn, z1, z2
    if mu * zt <= -zn:
        return 0.0, 0.0, 0.0
    a = (zn + mu * zt) / (1.0 + mu * mu)
    s = mu * a / zt
    return a, z1 * s, z2 * s


@njit(cache=True, nogil=True)
def frictional_impulse_velocity(body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass,
                                inv_inertia, lam, rows, dV):
    """dV (n, 6) <- M^-1 J^T λ: the linear (m/s) and angular (rad/s) velocity changes that
    impulses λ (m * rows, N s and N m s) cause."""
    dV[:] = 0.0
    for c in range(body_a.shape[0]):
        a = body_a[c]
        b = body_b[c]
        k = c * rows
        ln = lam[k]
        l1 = lam[k + 1]
        l2 = lam[k + 2]
        # Linear impulse P = ln n + l1 t1 + l2 t2; angular (about b's centre) -r_b (l1 t2 - l2 t1).
        p0 = ln * normal[c, 0] + l1 * t1[c, 0] + l2 * t2[c, 0]
        p1 = ln * normal[c, 1] + l1 * t1[c, 1] + l2 * t2[c, 1]
        p2 = ln * normal[c, 2] + l1 * t1[c, 2] + l2 * t2[c, 2]
        g0 = l1 * t2[c, 0] - l2 * t1[c, 0]
        g1 = l1 * t2[c, 1] - l2 * t1[c, 1]
        g2 = l1 * t2[c, 2] - l2 * t1[c, 2]
        r0 = 0.0
        r1 = 0.0
        r2 = 0.0
        if rows == 6:
            lr1 = lam[k + 3]
            lr2 = lam[k + 4]
            ls = lam[k + 5]
            r0 = lr1 * t1[c, 0] + lr2 * t2[c, 0] + ls * normal[c, 0]
            r1 = lr1 * t1[c, 1] + lr2 * t2[c, 1] + ls * normal[c, 1]
            r2 = lr1 * t1[c, 2] + lr2 * t2[c, 2] + ls * normal[c, 2]
        wb = inv_mass[b]
        ib = inv_inertia[b]
        rb = arm_b[c]
        dV[b, 0] += wb * p0
        dV[b, 1] += wb * p1
        dV[b, 2] += wb * p2
        dV[b, 3] += ib * (r0 - rb * g0)
        dV[b, 4] += ib * (r1 - rb * g1)
        dV[b, 5] += ib * (r2 - rb * g2)
        if a >= 0:
            wa = inv_mass[a]
            ia = inv_inertia[a]
            ra = arm_a[c]
            dV[a, 0] -= wa * p0
            dV[a, 1] -= wa * p1
            dV[a, 2] -= wa * p2
            dV[a, 3] -= ia * (r0 + ra * g0)
            dV[a, 4] -= ia * (r1 + ra * g1)
            dV[a, 5] -= ia * (r2 + ra * g2)


@njit(cache=True, nogil=True)
def frictional_contact_velocity(body_a, body_b, normal, t1, t2, arm_a, arm_b, V, rows, out):
    """out (m * rows) <- J V: each row's relative velocity (m/s; rad/s for rolling rows)."""
    for c in range(body_a.shape[0]):
        a = body_a[c]
        b = body_b[c]
        k = c * rows
        dv0 = V[b, 0]
        dv1 = V[b, 1]
        dv2 = V[b, 2]
        rb = arm_b[c]
        s0 = rb * V[b, 3]  # r_b ω_b + r_a ω_a, the lever terms of the tangent rows
        s1 = rb * V[b, 4]
        s2 = rb * V[b, 5]
        dw0 = V[b, 3]
        dw1 = V[b, 4]
        dw2 = V[b, 5]
        if a >= 0:
            ra = arm_a[c]
            dv0 -= V[a, 0]
            dv1 -= V[a, 1]
            dv2 -= V[a, 2]
            s0 += ra * V[a, 3]
            s1 += ra * V[a, 4]
            s2 += ra * V[a, 5]
            dw0 -= V[a, 3]
            dw1 -= V[a, 4]
            dw2 -= V[a, 5]
        out[k] = normal[c, 0] * dv0 + normal[c, 1] * dv1 + normal[c, 2] * dv2
        # u_t1 = t1·Δv - t2·s, u_t2 = t2·Δv + t1·s (g1 = t2, g2 = -t1)
        out[k + 1] = (t1[c, 0] * dv0 + t1[c, 1] * dv1 + t1[c, 2] * dv2
                      - (t2[c, 0] * s0 + t2[c, 1] * s1 + t2[c, 2] * s2))
        out[k + 2] = (t2[c, 0] * dv0 + t2[c, 1] * dv1 + t2[c, 2] * dv2
                      + (t1[c, 0] * s0 + t1[c, 1] * s1 + t1[c, 2] * s2))
        if rows == 6:
            out[k + 3] = t1[c, 0] * dw0 + t1[c, 1] * dw1 + t1[c, 2] * dw2
            out[k + 4] = t2[c, 0] * dw0 + t2[c, 1] * dw1 + t2[c, 2] * dw2
            out[k + 5] = normal[c, 0] * dw0 + normal[c, 1] * dw1 + normal[c, 2] * dw2


@njit(inline="always", cache=True, nogil=True)
def contact_error(lam, e, k, mu, mu_roll, mu_spin, rows):
    """Contact error of one contact, FCLIB's natural map with De Saxcé's change of variable:
    ‖λ - P_K(λ - ũ)‖₂ with ũ = (e_n + μ ‖u_t‖, u_t), over the normal and tangent rows, and
    the natural map of the rolling disk and the spinning interval for λ_n fixed. With μ = 0
    and λ_t = 0 it is |min(λ_n, e_n)|, the frictionless natural map."""
    ln = lam[k]
    l1 = lam[k + 1]
    l2 = lam[k + 2]
    u1 = e[k + 1]
    u2 = e[k + 2]
    un = e[k] + mu * np.sqrt(u1 * u1 + u2 * u2)
    pn, p1, p2 = project_cone(ln - un, l1 - u1, l2 - u2, mu)
    d0 = ln - pn
    d1 = l1 - p1
    d2 = l2 - p2
    total = d0 * d0 + d1 * d1 + d2 * d2
    if rows == 6:
        lr1 = lam[k + 3]
        lr2 = lam[k + 4]
        ls = lam[k + 5]
        q1, q2 = project_disk(lr1 - e[k + 3], lr2 - e[k + 4], mu_roll * max(ln, 0.0))
        bound = mu_spin * max(ln, 0.0)
        qs = min(max(ls - e[k + 5], -bound), bound)
        total += (lr1 - q1) ** 2 + (lr2 - q2) ** 2 + (ls - qs) ** 2
    return np.sqrt(total)


@njit(cache=True, nogil=True)
def frictional_residual(body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass, inv_inertia,
                        rhs, mu, mu_roll, mu_spin, rows, lam, dV, e):
    """max over contacts of `contact_error` (m/s), from λ exactly (one product with A); dV and e
    are scratch. inf when any value is not finite, so callers see divergence."""
    frictional_impulse_velocity(body_a, body_b, normal, t1, t2, arm_a, arm_b, inv_mass,
                                inv_inertia, lam, rows, dV)
    frictional_contact_velocity(body_a, body_b, normal, t1, t2, arm_a, arm_b, dV, rows, e)
    worst = 0.0
    for c in range(body_a.shape[0]):
        k = c * rows
        for j in range(rows):
            e[k + j] += rhs[k + j]
        r = contact_error(lam, e, k, mu[c], mu_roll[c], mu_spin[c], rows)
        if not np.isfinite(r):
            return np.inf
        if r > worst:
            worst = r
    return worst


@njit(cache=True, nogil=True)
def _assemble_frictional(body_a, body_b, normal, t1, t2, arm_a, arm_b, gap, inv_mass,
                         inv_inertia, V_pred, h, rows, diag, rhs):
    """diag (m * rows) <- A's diagonal; rhs (m * rows) <- b = J V* + (gap/h on the normal)."""
    frictional_contact_velocity(body_a, body_b, normal, t1, t2, arm_a, arm_b, V_pred, rows, rhs)
    for c in range(body_a.shape[0]):
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
    t1: np.ndarray = field(init=False)
    t2: np.ndarray = field(init=False)
    arm_a: np.ndarray = field(init=False)
    arm_b: np.ndarray = field(init=False)
    inv_inertia: np.ndarray = field(init=False)
    diag: np.ndarray = field(init=False)
    rhs: np.ndarray = field(init=False)
    _dV: np.ndarray = field(init=False, repr=False)
    _e: np.ndarray = field(init=False, repr=False)

    frictional = True

    def __post_init__(self) -> None:
        m = self.gap.shape[0]
        self.t1 = np.empty((m, 3))
        self.t2 = np.empty((m, 3))
        tangent_frames(self.normal, self.t1, self.t2)
        self.arm_b = self.radius[self.body_b]
        self.arm_a = np.where(self.body_a >= 0, self.radius[np.maximum(self.body_a, 0)], 0.0)
        self.inv_inertia = self.inv_mass / (INERTIA_FACTOR * self.radius ** 2)
        self.diag = np.empty(m * self.rows)
        self.rhs = np.empty(m * self.rows)
        self._dV = np.empty_like(self.V_pred)
        self._e = np.empty(m * self.rows)
        _assemble_frictional(self.body_a, self.body_b, self.normal, self.t1, self.t2,
                             self.arm_a, self.arm_b, self.gap, self.inv_mass, self.inv_inertia,
                             self.V_pred, float(self.dt), self.rows, self.diag, self.rhs)

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
    def bias(self) -> np.ndarray:
        return self.gap / self.dt

    def _args(self):
        return (self.body_a, self.body_b, self.normal, self.t1, self.t2, self.arm_a, self.arm_b)

    def copy(self) -> "FrictionalProblem":
        return replace(self, body_a=self.body_a.copy(), body_b=self.body_b.copy(),
                       normal=self.normal.copy(), gap=self.gap.copy(), radius=self.radius.copy(),
                       inv_mass=self.inv_mass.copy(), V_pred=self.V_pred.copy(),
                       mu=self.mu.copy(), mu_roll=self.mu_roll.copy(),
                       mu_spin=self.mu_spin.copy(),
                       key=None if self.key is None else self.key.copy())

    def velocity_change(self, lam: np.ndarray) -> np.ndarray:
        """M^-1 J^T λ, (n, 6)."""
        dV = np.empty_like(self.V_pred)
        frictional_impulse_velocity(*self._args(), self.inv_mass, self.inv_inertia,
                                    np.ascontiguousarray(lam, dtype=np.float64), self.rows, dV)
        return dV

    def velocity(self, lam: np.ndarray) -> np.ndarray:
        """V* + M^-1 J^T λ, (n, 6): the velocities the impulses leave."""
        return self.V_pred + self.velocity_change(lam)

    def apply(self, lam: np.ndarray) -> np.ndarray:
        """A λ, (m * rows,)."""
        out = np.empty(self.size)
        frictional_contact_velocity(*self._args(), self.velocity_change(lam), self.rows, out)
        return out

    def error(self, lam: np.ndarray) -> np.ndarray:
        """e = A λ + b: every row's velocity after the impulses (normal with gap/h)."""
        return self.apply(lam) + self.rhs

    def residual(self, lam: np.ndarray) -> float:
        """max over contacts of the FCLIB natural-map error (`contact_error`), m/s."""
        return frictional_residual(*self._args(), self.inv_mass, self.inv_inertia, self.rhs,
                                   self.mu, self.mu_roll, self.mu_spin, self.rows,
                                   np.ascontiguousarray(lam, dtype=np.float64), self._dV,
                                   self._e)

    def scanned_residual(self, lam: np.ndarray) -> tuple[float, bool, float]:
        """(residual(λ), whether rhs and diag are finite, max |rhs| of the normal rows)."""
        finite = bool(np.all(np.isfinite(self.rhs)) and np.all(np.isfinite(self.diag)))
        if not finite:
            return np.inf, False, np.inf
        scale = float(np.max(np.abs(self.rhs), initial=0.0))
        return self.residual(lam), True, scale

    def checked_residual(self, lam: np.ndarray) -> tuple[float, bool]:
        if not np.all(np.isfinite(lam)):
            return np.inf, False
        return self.residual(lam), True

    def fclib_error(self, lam: np.ndarray) -> float:
        """FCLIB's normalised error ‖λ - P_K(λ - ũ)‖₂ / (1 + ‖q‖₂) over the normal and tangent
        rows of every contact (Acary et al.), unitless as FCLIB reports it."""
        lam = np.asarray(lam, dtype=np.float64).reshape(self.m, self.rows)
        e = self.error(lam.ravel()).reshape(self.m, self.rows)
        q = self.rhs.reshape(self.m, self.rows)[:, :3]
        return contact_errors_norm(lam[:, :3], e[:, :3], self.mu) / (1.0 + np.linalg.norm(q))


def contact_errors_norm(lam: np.ndarray, e: np.ndarray, mu: np.ndarray) -> float:
    """‖λ - P_K(λ - ũ)‖₂ over contacts: lam, e (m, 3) in (n, t1, t2) order; mu (m,)."""
    ut = np.linalg.norm(e[:, 1:], axis=1)
    z = lam - np.column_stack([e[:, 0] + mu * ut, e[:, 1:]])
    zt = np.linalg.norm(z[:, 1:], axis=1)
    proj = z.copy()
    inside = zt <= mu * z[:, 0]
    polar = mu * zt <= -z[:, 0]
    side = ~inside & ~polar
    a = (z[side, 0] + mu[side] * zt[side]) / (1.0 + mu[side] ** 2)
    proj[polar] = 0.0
    proj[side, 0] = a
    proj[side, 1:] = z[side, 1:] * (mu[side] * a / zt[side])[:, None]
    return float(np.linalg.norm(lam - proj))


@njit(inline="always", cache=True, nogil=True)
def _push(V, inv_mass, inv_inertia, i, sign, p0, p1, p2, q0, q1, q2):
    """Marble i gets linear impulse sign * p and angular impulse q (already signed)."""
    w = sign * inv_mass[i]
    V[i, 0] += w * p0
    V[i, 1] += w * p1
    V[i, 2] += w * p2
    s = inv_inertia[i]
    V[i, 3] += s * q0
    V[i, 4] += s * q1
    V[i, 5] += s * q2


# Friction laws of the sweeps (pgs's `friction` parameter).
CONE, BOX, CCP = 0, 1, 2
FRICTION_LAWS = {"cone": CONE, "box": BOX, "ccp": CCP}


@njit(inline="always", cache=True, nogil=True)
def _relative(V, a, b, ra, rb):
    """(Δv, s): v_b - v_a and r_b ω_b + r_a ω_a, the lever terms of the tangent rows."""
    dv0 = V[b, 0]
    dv1 = V[b, 1]
    dv2 = V[b, 2]
    s0 = rb * V[b, 3]
    s1 = rb * V[b, 4]
    s2 = rb * V[b, 5]
    if a >= 0:
        dv0 -= V[a, 0]
        dv1 -= V[a, 1]
        dv2 -= V[a, 2]
        s0 += ra * V[a, 3]
        s1 += ra * V[a, 4]
        s2 += ra * V[a, 5]
    return dv0, dv1, dv2, s0, s1, s2


@njit(inline="always", cache=True, nogil=True)
def _apply_contact(V, inv_mass, inv_inertia, a, b, ra, rb, c, normal, t1, t2, dn, d1, d2):
    """Impulse changes (dn, d1, d2) of contact c applied to both marbles: linear
    dn n + d1 t1 + d2 t2, angular -r (d1 t2 - d2 t1) on each (a's with its own lever)."""
    p0 = dn * normal[c, 0] + d1 * t1[c, 0] + d2 * t2[c, 0]
    p1 = dn * normal[c, 1] + d1 * t1[c, 1] + d2 * t2[c, 1]
    p2 = dn * normal[c, 2] + d1 * t1[c, 2] + d2 * t2[c, 2]
    g0 = d1 * t2[c, 0] - d2 * t1[c, 0]
    g1 = d1 * t2[c, 1] - d2 * t1[c, 1]
    g2 = d1 * t2[c, 2] - d2 * t1[c, 2]
    _push(V, inv_mass, inv_inertia, b, 1.0, p0, p1, p2, -rb * g0, -rb * g1, -rb * g2)
    if a >= 0:
        _push(V, inv_mass, inv_inertia, a, -1.0, p0, p1, p2, -ra * g0, -ra * g1, -ra * g2)


@njit(inline="always", cache=True, nogil=True)
def _tangent_velocity(c, t1, t2, dv0, dv1, dv2, s0, s1, s2):
    """(u_t1, u_t2) of contact c: t_k·Δv - g_k·s with g1 = t2, g2 = -t1."""
    u1 = (t1[c, 0] * dv0 + t1[c, 1] * dv1 + t1[c, 2] * dv2
          - (t2[c, 0] * s0 + t2[c, 1] * s1 + t2[c, 2] * s2))
    u2 = (t2[c, 0] * dv0 + t2[c, 1] * dv1 + t2[c, 2] * dv2
          + (t1[c, 0] * s0 + t1[c, 1] * s1 + t1[c, 2] * s2))
    return u1, u2


@njit(inline="always", cache=True, nogil=True)
def _rolling_rows(c, k, a, b, normal, t1, t2, inv_mass, inv_inertia, step, mu_roll, mu_spin,
                  V, lam):
    """Contact c's rolling pair (onto the disk μ_roll λ_n) and spinning row (into ±μ_spin λ_n),
    one step each from the current relative angular velocity."""
    w0 = V[b, 3]
    w1 = V[b, 4]
    w2 = V[b, 5]
    if a >= 0:
        w0 -= V[a, 3]
        w1 -= V[a, 4]
        w2 -= V[a, 5]
    ln = lam[k]
    o1 = lam[k + 3]
    o2 = lam[k + 4]
    os = lam[k + 5]
    r1, r2 = project_disk(o1 - step[k + 3] * (t1[c, 0] * w0 + t1[c, 1] * w1 + t1[c, 2] * w2),
                          o2 - step[k + 4] * (t2[c, 0] * w0 + t2[c, 1] * w1 + t2[c, 2] * w2),
                          mu_roll[c] * ln)
    bound = mu_spin[c] * ln
    rs = os - step[k + 5] * (normal[c, 0] * w0 + normal[c, 1] * w1 + normal[c, 2] * w2)
    rs = min(max(rs, -bound), bound)
    lam[k + 3] = r1
    lam[k + 4] = r2
    lam[k + 5] = rs
    d1 = r1 - o1
    d2 = r2 - o2
    ds = rs - os
    q0 = d1 * t1[c, 0] + d2 * t2[c, 0] + ds * normal[c, 0]
    q1 = d1 * t1[c, 1] + d2 * t2[c, 1] + ds * normal[c, 1]
    q2 = d1 * t1[c, 2] + d2 * t2[c, 2] + ds * normal[c, 2]
    _push(V, inv_mass, inv_inertia, b, 1.0, 0.0, 0.0, 0.0, q0, q1, q2)
    if a >= 0:
        _push(V, inv_mass, inv_inertia, a, -1.0, 0.0, 0.0, 0.0, -q0, -q1, -q2)


@njit(inline="always", cache=True, nogil=True)
def sweep_contact(c, body_a, body_b, normal, t1, t2, arm_a, arm_b, bias, inv_mass, inv_inertia,
                  step, mu, mu_roll, mu_spin, rows, law, naive, V, lam):
    """Update contact c in place. cone and box (Coulomb, Box2D/Bullet style): the normal as PGS
    (λ_n <- max(0, λ_n - s e_n), or naive: λ_n += max(0, -s e_n)), then the tangent pair by one
    step on its 2x2 block (diagonal) projected onto the disk of radius μ λ_n, or with each
    tangent clamped to ±μ λ_n (box). ccp (Anitescu's cone complementarity, as Chrono): the
    three rows at once, z = λ - ω D^-1 u with D the block's diagonal, projected onto the cone
    ‖λ_t‖ <= μ λ_n in D's metric (the exact block step). Then the rolling rows. step
    (m * rows): ω / A_jj, 0 for an inert row."""
    a = body_a[c]
    b = body_b[c]
    k = c * rows
    if step[k] == 0.0:
        return
    ra = arm_a[c]
    rb = arm_b[c]
    dv0, dv1, dv2, s0, s1, s2 = _relative(V, a, b, ra, rb)
    e = normal[c, 0] * dv0 + normal[c, 1] * dv1 + normal[c, 2] * dv2 + bias[c]
    old = lam[k]
    o1 = lam[k + 1]
    o2 = lam[k + 2]
    if law == CCP:
        u1, u2 = _tangent_velocity(c, t1, t2, dv0, dv1, dv2, s0, s1, s2)
        # The contact's 3x3 block of A is diagonal, D = diag(A_nn, A_tt, A_tt), so the exact
        # minimiser over the block is z = λ - ω D^-1 u projected onto the cone in D's metric:
        # scale the normal by q = sqrt(A_nn / A_tt), project onto the cone of μ / q, unscale.
        # (One step ω / A_tt on all three rows, 2/7 of the exact normal step between two
        # marbles, converged far more slowly on the pyramids: docs/friction.md.)
        q = np.sqrt(step[k + 1] / step[k])
        new, l1, l2 = project_cone((old - step[k] * e) * q, o1 - step[k + 1] * u1,
                                   o2 - step[k + 1] * u2, mu[c] / q)
        new /= q
        lam[k] = new
        lam[k + 1] = l1
        lam[k + 2] = l2
        _apply_contact(V, inv_mass, inv_inertia, a, b, ra, rb, c, normal, t1, t2, new - old,
                       l1 - o1, l2 - o2)
    else:
        if naive:
            new = old - step[k] * e if e < 0.0 else old
        else:
            new = old - step[k] * e
            if new < 0.0:
                new = 0.0
        lam[k] = new
        if new != old:
            _apply_contact(V, inv_mass, inv_inertia, a, b, ra, rb, c, normal, t1, t2,
                           new - old, 0.0, 0.0)
            dv0, dv1, dv2, s0, s1, s2 = _relative(V, a, b, ra, rb)
        u1, u2 = _tangent_velocity(c, t1, t2, dv0, dv1, dv2, s0, s1, s2)
        l1 = o1 - step[k + 1] * u1
        l2 = o2 - step[k + 2] * u2
        bound = mu[c] * new
        if law == BOX:
            l1 = min(max(l1, -bound), bound)
            l2 = min(max(l2, -bound), bound)
        else:
            l1, l2 = project_disk(l1, l2, bound)
        lam[k + 1] = l1
        lam[k + 2] = l2
        if l1 != o1 or l2 != o2:
            _apply_contact(V, inv_mass, inv_inertia, a, b, ra, rb, c, normal, t1, t2, 0.0,
                           l1 - o1, l2 - o2)
    if rows == 6:
        _rolling_rows(c, k, a, b, normal, t1, t2, inv_mass, inv_inertia, step, mu_roll,
                      mu_spin, V, lam)


@njit(cache=True, nogil=True)
def frictional_sweeps(body_a, body_b, normal, t1, t2, arm_a, arm_b, bias, inv_mass, inv_inertia,
                      step, mu, mu_roll, mu_spin, rows, law, naive, V, lam, count):
    """`count` Gauss-Seidel sweeps of `sweep_contact` over every contact, in place; V (n, 6) is
    kept equal to V* + M^-1 J^T λ."""
    for _ in range(count):
        for c in range(body_a.shape[0]):
            sweep_contact(c, body_a, body_b, normal, t1, t2, arm_a, arm_b, bias, inv_mass,
                          inv_inertia, step, mu, mu_roll, mu_spin, rows, law, naive, V, lam)


def relaxed_steps(problem: FrictionalProblem, omega: float) -> np.ndarray:
    """ω / A_jj per row (kg, or 1/(kg m^2) units inverted for rolling rows), 0 for inert rows."""
    out = np.zeros(problem.size)
    np.divide(omega, problem.diag, out=out, where=problem.diag != 0.0)
    return out
