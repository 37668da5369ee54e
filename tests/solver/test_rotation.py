"""Spins and orientations: the quaternion update against rotations about an axis (Rodrigues),
its normalisation over long runs, and the split of the (n, 6) velocities."""
import numpy as np
import pytest

from solver.locality import WORLD_ORDER
from solver.rotation import integrate_spin, predict_spin, rotate, rotation_matrices, spinning


def axis_angle_matrix(axis, angle):
    """Rodrigues' rotation by `angle` (rad) about the unit vector `axis`."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k


def quaternion(axis, angle):
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * np.asarray(axis)])


def unit(v):
    return np.asarray(v, dtype=float) / np.linalg.norm(v)


@pytest.mark.parametrize("seed", range(5))
def test_rotation_matrices_of_axis_angle_quaternions(seed):
    rng = np.random.default_rng(seed)
    axes = [unit(rng.normal(size=3)) for _ in range(6)]
    angles = rng.uniform(-2 * np.pi, 2 * np.pi, size=6)
    q = np.array([quaternion(a, t) for a, t in zip(axes, angles)])
    got = rotation_matrices(q)
    for R, a, t in zip(got, axes, angles):
        np.testing.assert_allclose(R, axis_angle_matrix(a, t), atol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_constant_spin_turns_by_exactly_its_angle(seed):
    """k steps of h at constant ω turn a marble by k h |ω| about ω, from any start orientation:
    R(q_k) = R(ω̂, k h |ω|) R(q_0)."""
    rng = np.random.default_rng(seed)
    n, h, k = 4, 0.02, 157
    omega = rng.normal(size=(n, 3)) * rng.uniform(0.1, 30.0, size=(n, 1))
    start = np.array([quaternion(unit(rng.normal(size=3)), rng.uniform(0, 6)) for _ in range(n)])
    q = start.copy()
    for _ in range(k):
        rotate(q, omega, h, 1)
    for i in range(n):
        speed = np.linalg.norm(omega[i])
        turn = axis_angle_matrix(omega[i] / speed, k * h * speed)
        np.testing.assert_allclose(rotation_matrices(q[i:i + 1])[0],
                                   turn @ rotation_matrices(start[i:i + 1])[0], atol=1e-11)


def test_no_spin_leaves_the_orientation_untouched():
    q = np.array([quaternion(unit([1.0, 2.0, 3.0]), 0.7), [1.0, 0.0, 0.0, 0.0]])
    before = q.copy()
    rotate(q, np.zeros((2, 3)), 0.02, 1)
    assert np.array_equal(q, before)


def test_orientation_stays_unit_over_a_long_run():
    rng = np.random.default_rng(7)
    q = np.tile([1.0, 0.0, 0.0, 0.0], (8, 1))
    omega = rng.normal(size=(8, 3)) * 50.0
    for _ in range(100_000):
        rotate(q, omega, 0.02, 1)
    assert np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0)) < 1e-14
    assert np.all(np.isfinite(q))


def test_spinning_is_any_nonzero_spin():
    omega = np.zeros((50, 3))
    assert not spinning(omega)
    assert not spinning(np.zeros((0, 3)))
    for i, k in ((0, 0), (49, 2), (17, 1)):
        omega[:] = 0.0
        omega[i, k] = 1e-300
        assert spinning(omega)


def test_predict_spin_decays_and_respects_planar_and_fixed_marbles():
    v = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    omega = np.array([[0.5, -1.0, 2.0], [3.0, 4.0, -5.0]])
    V = np.empty((2, 6))
    predict_spin(v, omega, 0.5, False, np.array([False, True]), V, 1)
    np.testing.assert_array_equal(V[0], [1.0, 2.0, 3.0, 0.25, -0.5, 1.0])
    np.testing.assert_array_equal(V[1], 0.0)
    predict_spin(v, omega, 1.0, True, np.array([False, False]), V, 1)
    # A planar (x-z) marble turns about y only.
    np.testing.assert_array_equal(V[:, [3, 5]], 0.0)
    np.testing.assert_array_equal(V[:, 4], omega[:, 1])


def test_integrate_spin_is_symplectic_euler():
    """The new velocities, then the positions moved by them (not by the old ones)."""
    V_pred = np.array([[1.0, -2.0, 0.5, 0.1, 0.2, 0.3]])
    dV = np.array([[0.5, 1.0, -0.5, 1.0, 2.0, 3.0]])
    x = np.array([[10.0, 20.0, 30.0]])
    v = np.empty((1, 3))
    omega = np.empty((1, 3))
    integrate_spin(V_pred, dV, (0.1, False), (x, v, omega), WORLD_ORDER, 1)
    np.testing.assert_allclose(v, [[1.5, -1.0, 0.0]])
    np.testing.assert_allclose(omega, [[1.1, 2.2, 3.3]])
    np.testing.assert_allclose(x, [[10.15, 19.9, 30.0]])
    integrate_spin(V_pred, dV, (0.1, True), (x, v, omega), WORLD_ORDER, 1)
    assert v[0, 1] == 0.0 and omega[0, 0] == 0.0 and omega[0, 2] == 0.0


@pytest.mark.parametrize("parts", [2, 3, 4])
def test_the_passes_in_shares_are_bit_for_bit_the_serial_ones(parts):
    """predict_spin, integrate_spin and rotate over equal shares of the marbles at once (a step
    in blocks) give exactly the serial values, planar and fixed marbles included."""
    rng = np.random.default_rng(parts)
    n = 1001
    v, omega = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    omega[::7] = 0.0  # marbles that do not turn keep their orientation
    fixed = rng.random(n) < 0.1
    for planar in (False, True):
        one, two = np.empty((n, 6)), np.full((n, 6), np.nan)
        predict_spin(v, omega, 0.97, planar, fixed, one, 1)
        predict_spin(v, omega, 0.97, planar, fixed, two, parts)
        assert np.array_equal(one, two)
        dV = rng.normal(size=(n, 6))
        x1, x2 = rng.normal(size=(n, 3)), None
        x2 = x1.copy()
        out1 = [np.empty((n, 3)) for _ in range(2)]
        out2 = [np.full((n, 3), np.nan) for _ in range(2)]
        x0 = x1.copy()
        integrate_spin(one, dV, (0.01, planar), (x1, *out1), WORLD_ORDER, 1)
        integrate_spin(one, dV, (0.01, planar), (x2, *out2), WORLD_ORDER, parts)
        assert np.array_equal(x1, x2) and all(np.array_equal(a, b) for a, b in zip(out1, out2))
        # Solved in another numbering (marble s is order[s]): the world's rows written
        # directly are the ones integrated there and copied back.
        order = rng.permutation(n)
        x3, local = x0[order], [np.empty((n, 3)) for _ in range(2)]
        integrate_spin(one, dV, (0.01, planar), (x3, *local), WORLD_ORDER, 1)
        x4, out4 = x0.copy(), [np.full((n, 3), np.nan) for _ in range(2)]
        integrate_spin(one, dV, (0.01, planar), (x4, *out4), order, parts)
        assert np.array_equal(x4[order], x3)
        assert all(np.array_equal(a[order], b) for a, b in zip(out4, local))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    q1, q2 = q.copy(), q.copy()
    rotate(q1, omega, 0.01, 1)
    rotate(q2, omega, 0.01, parts)
    assert np.array_equal(q1, q2) and not np.array_equal(q1, q)
