"""The two ends of a step, serial: the velocities before contact (predict) and the impulses
applied and positions advanced (integrate). Their parallel forms are in blocked.py."""
from __future__ import annotations

from numba import njit

from .blocked import integrate_range
from .problem import impulse_velocity


@njit(cache=True, nogil=True)
def predict(v, gravity, h, decay, planar, out):
    """out (n, 3) <- decay v + h g, m/s: the velocities after drag and gravity, before contact,
    with y = 0 when `planar`. v: (n, 3) m/s; gravity: (3,) m/s^2; h: s; decay = e^(-c h) for
    linear drag c (1/s). With decay = 1 (no drag) the same operations, in the same order, as the
    numpy expression ``v + h * gravity`` (x * 1.0 is exact); one call instead of two temporaries."""
    g0 = h * gravity[0]
    g1 = h * gravity[1]
    g2 = h * gravity[2]
    for i in range(v.shape[0]):
        out[i, 0] = decay * v[i, 0] + g0
        out[i, 1] = 0.0 if planar else decay * v[i, 1] + g1
        out[i, 2] = decay * v[i, 2] + g2


@njit(cache=True, nogil=True)
def integrate(body_a, body_b, normal, inv_mass, lam, v_pred, h, planar, x, v, dv, order):
    """v (n, 3) <- v* + M^-1 J^T λ (m/s, y = 0 when `planar`), then x (n, 3) += h v (m): the
    end of a step in one call. Bit for bit what ContactProblem.velocity and ``x += h * v`` give:
    the impulses are summed from zero into dv (n, 3) first, then added to v*. The contacts and
    v* in the step's numbering, x and v in the world's (blocked.integrate_range)."""
    impulse_velocity(body_a, body_b, normal, inv_mass, lam, dv)
    integrate_range(v_pred, dv, h, planar, x, v, order, 0, v.shape[0])
