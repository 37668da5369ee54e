"""The two ends of a step on the GPU: the velocities before contact (predict) and the impulses
applied, the marbles moved and turned (integrate); the CPU's formulas (solver/motion.py,
solver/rotation.py) in the same order. The world's arrays (x, v, ω, orientation) stay on the
GPU in the world's numbering; integrate writes them from the solve's slots (order[slot] is
the marble)."""
from __future__ import annotations

from .. import motion as cpu_motion
from .. import rotation
from .jacobi import _frictional_velocity_change, _velocity_change
from .launch import kernel
from .runtime import cuda, shared

# The CPU's bodies, called for one marble: the same source on this device (runtime.shared).
rotate_range = shared(rotation.rotate_range)
integrate_range = shared(cpu_motion.integrate_range)
integrate_spin_range = shared(rotation.integrate_spin_range)

# motion = (h s, drag decay e^(-c h), planar, gravity x, y, z m/s^2): the step's scalars
H, DECAY, PLANAR, GX, GY, GZ = range(6)


@kernel
def predict(state, inv_mass, motion, out):
    """The step's velocities before contact: out = (v* (n, 3), V* (n, 6) or (0, 6)): v* =
    decay v + h g (y = 0 when planar), and with friction V* = [v*, decay ω] (ω_x, ω_z = 0 when
    planar); a fixed marble (inv_mass 0) neither moves nor turns. state = (v, ω) (n, 3)."""
    v, omega = state
    out3, out6 = out
    h = motion[H]
    decay = motion[DECAY]
    planar = motion[PLANAR]
    g0 = h * motion[GX]
    g1 = h * motion[GY]
    g2 = h * motion[GZ]
    spin = out6.shape[0] > 0
    for i in range(cuda.grid(1), v.shape[0], cuda.gridsize(1)):
        fixed = inv_mass[i] == 0.0
        p0 = 0.0 if fixed else decay * v[i, 0] + g0
        p1 = 0.0 if fixed or planar else decay * v[i, 1] + g1
        p2 = 0.0 if fixed else decay * v[i, 2] + g2
        out3[i, 0] = p0
        out3[i, 1] = p1
        out3[i, 2] = p2
        if spin:
            out6[i, 0] = p0
            out6[i, 1] = p1
            out6[i, 2] = p2
            out6[i, 3] = 0.0 if fixed or planar else decay * omega[i, 0]
            out6[i, 4] = 0.0 if fixed else decay * omega[i, 1]
            out6[i, 5] = 0.0 if fixed or planar else decay * omega[i, 2]


@kernel
def integrate(A, lam, csr, slotted, world, motion, dv):
    """Without friction: v <- v* + M^-1 J^T λ (y = 0 when planar), x += h v, into the world's
    rows (motion.integrate_range); spins only decay (nothing exerts a torque) and turn the
    marbles. slotted = (v* (n, 3), order (n,)) by slot; world = (x, v, ω, orientation);
    dv (n, 3) scratch."""
    V, order = slotted
    x, v, omega, orientation = world
    h = motion[H]
    decay = motion[DECAY]
    planar = motion[PLANAR]
    first = cuda.grid(1)
    stride = cuda.gridsize(1)
    for s in range(first, order.shape[0], stride):
        _velocity_change(s, A, lam, csr, dv)
        integrate_range(V, dv, (h, planar), (x, v), order, s, s + 1)
        i = order[s]
        omega[i, 0] *= decay
        omega[i, 1] *= decay
        omega[i, 2] *= decay
        rotate_range(orientation, omega, h, i, i + 1)


@kernel
def frictional_integrate(A, lam, csr, slotted, world, motion, dV):
    """With friction: v, ω <- V* + M^-1 J^T λ (planar: v_y = ω_x = ω_z = 0), x += h v, then
    the orientation turned by ω (rotation.integrate_spin_range, rotate_range); slotted =
    (V* (n, 6), order (n,)) by slot; dV (n, 6) scratch."""
    V, order = slotted
    x, v, omega, orientation = world
    h = motion[H]
    planar = motion[PLANAR]
    for s in range(cuda.grid(1), order.shape[0], cuda.gridsize(1)):
        _frictional_velocity_change(s, A, lam, csr, dV)
        integrate_spin_range(V, dV, (h, planar), (x, v, omega), order, s, s + 1)
        i = order[s]
        rotate_range(orientation, omega, h, i, i + 1)
