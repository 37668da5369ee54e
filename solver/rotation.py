"""Marble spin: the linear and angular velocities in one (n, 6) array for the frictional
kernels, and the orientation quaternions integrated from the angular velocity."""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .drivers import driver
from .motion import integrate_range
from .partition import share_of


@njit(cache=True, nogil=True)
def spinning(omega):
    """Whether any marble turns (any ω != 0): a fraction of a microsecond, where numpy's any
    costs several on the bowl's step."""
    for i in range(omega.shape[0]):
        if omega[i, 0] != 0.0 or omega[i, 1] != 0.0 or omega[i, 2] != 0.0:
            return True
    return False


@njit(cache=True, nogil=True)
def predict_spin_range(v_pred, omega, decay, planar, fixed, V, first, last):
    """predict_spin for marbles [first, last)."""
    for i in range(first, last):
        V[i, 0] = v_pred[i, 0]
        V[i, 1] = v_pred[i, 1]
        V[i, 2] = v_pred[i, 2]
        V[i, 3] = 0.0 if planar else decay * omega[i, 0]
        V[i, 4] = decay * omega[i, 1]
        V[i, 5] = 0.0 if planar else decay * omega[i, 2]
        if fixed[i]:
            for k in range(6):
                V[i, k] = 0.0


@njit(cache=True, nogil=True)
def integrate_spin_range(V_pred, dV, step, out, order, first, last):
    """integrate_spin for marbles [first, last) of V_pred's numbering; out = (x, v, ω) in the
    world's, where marble s is order[s] (an empty order: the same numbering). Writing the
    world's rows here spares a step solved in another numbering three copies back
    (solver/locality.py)."""
    x, v, omega = out
    planar = step[1]
    # The linear columns 0-2 of (n, 6) are what integrate_range reads of v* and dv.
    integrate_range(V_pred, dV, step, (x, v), order, first, last)
    ordered = order.shape[0] > 0
    for s in range(first, last):
        i = order[s] if ordered else s
        omega[i, 0] = 0.0 if planar else V_pred[s, 3] + dV[s, 3]
        omega[i, 1] = V_pred[s, 4] + dV[s, 4]
        omega[i, 2] = 0.0 if planar else V_pred[s, 5] + dV[s, 5]


@njit(cache=True, nogil=True)
def rotate_range(orientation, omega, h, first, last):
    """rotate for marbles [first, last). The GPU's kernels call it for one marble (i, i + 1):
    one source for both devices (solver/cuda/runtime.shared)."""
    for i in range(first, last):
        w0 = omega[i, 0]
        w1 = omega[i, 1]
        w2 = omega[i, 2]
        speed = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        if speed == 0.0:
            continue
        half = 0.5 * h * speed
        s = math.sin(half) / speed
        dw = math.cos(half)
        dx = s * w0
        dy = s * w1
        dz = s * w2
        qw = orientation[i, 0]
        qx = orientation[i, 1]
        qy = orientation[i, 2]
        qz = orientation[i, 3]
        rw = dw * qw - dx * qx - dy * qy - dz * qz
        rx = dw * qx + dx * qw + dy * qz - dz * qy
        ry = dw * qy - dx * qz + dy * qw + dz * qx
        rz = dw * qz + dx * qy - dy * qx + dz * qw
        norm = 1.0 / math.sqrt(rw * rw + rx * rx + ry * ry + rz * rz)
        orientation[i, 0] = rw * norm
        orientation[i, 1] = rx * norm
        orientation[i, 2] = ry * norm
        orientation[i, 3] = rz * norm


@driver(parallel=True, cache=True, nogil=True)
def predict_spin(v_pred, omega, decay, planar, fixed, V, parts):
    """V (n, 6) <- [v_pred, decay ω]: the velocities of the step before contact (m/s, rad/s). A
    planar marble turns about y only; a fixed marble (fixed[i]) neither moves nor turns. Over
    `parts` equal shares of the marbles at once, inline for one."""
    n = v_pred.shape[0]
    if parts == 1:
        predict_spin_range(v_pred, omega, decay, planar, fixed, V, np.int64(0), n)
        return
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        predict_spin_range(v_pred, omega, decay, planar, fixed, V, first, last)


@driver(parallel=True, cache=True, nogil=True)
def integrate_spin(V_pred, dV, step, out, order, parts):
    """v, ω <- V* + ΔV (planar: v_y = ω_x = ω_z = 0), then x += h v; step = (h, planar);
    out = (x, v, ω) in the world's numbering, marble s of V_pred's being order[s]
    (integrate_spin_range). Over `parts` equal shares of the marbles at once, inline for one."""
    n = V_pred.shape[0]
    if parts == 1:
        integrate_spin_range(V_pred, dV, step, out, order, np.int64(0), n)
        return
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        integrate_spin_range(V_pred, dV, step, out, order, first, last)


@driver(parallel=True, cache=True, nogil=True)
def rotate(orientation, omega, h, parts):
    """orientation (n, 4) <- exp(h ω / 2) ⊗ orientation, renormalised: each marble turned by
    the angle h |ω| about ω (world frame), exactly for a constant ω over the step. Over `parts`
    equal shares of the marbles at once, inline for one."""
    n = orientation.shape[0]
    if parts == 1:
        rotate_range(orientation, omega, h, np.int64(0), n)
        return
    for t in prange(parts):
        first, last = share_of(n, parts, t)
        rotate_range(orientation, omega, h, first, last)


def rotation_matrices(orientation: np.ndarray) -> np.ndarray:
    """(n, 3, 3) body-to-world rotation matrices of unit quaternions (w, x, y, z)."""
    w, x, y, z = (orientation[:, k] for k in range(4))
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], axis=1)
