"""The frictional contact update shared by naive, pgs and psor, on single contacts whose answer
is known in closed form: a marble on a floor, sliding, sliding diagonally, at rest, rolling."""
from dataclasses import replace

import numpy as np
import pytest

from solver.friction import FrictionalProblem
from solver.methods import registry
from solver.methods.gauss_seidel import frictional_sweeps
from solver.methods.sweeps import (ARM_A, ARM_B, BIAS, BOX, CCP, CONE, I_A, I_B, MU, NORMAL, STEP_N,
                                   STEP_T, T1, T2, W_A, W_B, pack)
from tests.solver.blocks import packed_box, problem_of

G, H, R = 9.81, 0.02, 0.1


def floor_contact(v, w=(0.0, 0.0, 0.0), mu=0.5, mu_roll=0.0, inv_mass=1.0):
    """One marble of radius R resting on a floor (normal +z), velocities after gravity
    v* = v - g h z and ω."""
    rows = 6 if mu_roll else 3
    V = np.array([[v[0], v[1], v[2] - G * H, *w]])
    return FrictionalProblem(np.array([-1]), np.array([0]), np.array([[0.0, 0.0, 1.0]]),
                             np.array([0.0]), np.array([R]), np.array([inv_mass]), V, H,
                             np.array([mu]), np.array([mu_roll]), np.array([0.0]), rows)


def sweep(problem, law=CONE, naive=False, count=1, omega=1.0):
    lam = np.zeros(problem.size)
    V = problem.velocity(lam)
    frictional_sweeps((problem.body_a, problem.body_b), pack(problem, omega),
                      (law, naive, problem.rows), V, lam, count, problem.partition)
    return lam, V


def test_a_slow_slide_is_stopped_and_the_marble_spun_up_in_one_sweep():
    # Slip 0.1 m/s: stopping it needs 0.1 / (7/2) N s (unit mass), inside μ λ_n = 0.5 g h.
    p = floor_contact((0.1, 0.0, 0.0))
    lam, V = sweep(p)
    assert lam[0] == pytest.approx(G * H)
    t1 = p.t1[0]
    assert lam[1] * t1[0] == pytest.approx(-0.1 / 3.5)
    assert V[0, 0] - R * V[0, 4] == pytest.approx(0.0, abs=1e-15)  # rolling: v = r ω
    assert V[0, 0] == pytest.approx(5 / 7 * 0.1)


@pytest.mark.parametrize("law, bound", [(CONE, 1.0), (BOX, np.sqrt(2.0))])
def test_a_fast_diagonal_slide_meets_the_disk_or_the_box(law, bound):
    p = floor_contact((3.0, 3.0, 0.0))
    lam, V = sweep(p, law)
    friction = np.hypot(lam[1], lam[2])
    # Sliding: the disk gives exactly μ λ_n against the slip; the box √2 μ λ_n diagonally.
    assert friction == pytest.approx(bound * 0.5 * lam[0])
    assert lam[0] == pytest.approx(G * H)


def test_ccp_projects_the_whole_impulse_and_a_sliding_contact_lifts_off():
    p = floor_contact((3.0, 0.0, 0.0))
    lam, V = sweep(p, CCP, count=200)
    # Anitescu's relaxation: the contact leaves the floor at μ ‖u_t‖ (drift of the relaxation).
    slip = np.hypot(*(p.error(lam)[1:3]))
    assert p.error(lam)[0] == pytest.approx(0.5 * slip, rel=1e-9)
    assert np.hypot(lam[1], lam[2]) == pytest.approx(0.5 * lam[0], rel=1e-9)


def test_naive_only_adds_normal_impulse():
    p = floor_contact((0.0, 0.0, 1.0))  # moving up faster than gravity pulls it back
    lam, _ = sweep(p, naive=True)
    assert lam[0] == 0.0
    lam, _ = sweep(floor_contact((0.0, 0.0, -1.0)), naive=True)
    assert lam[0] == pytest.approx(1.0 + G * H)


def test_an_inert_contact_is_left_alone():
    p = floor_contact((1.0, 0.0, -1.0), inv_mass=0.0)
    lam, V = sweep(p)
    assert not lam.any() and np.array_equal(V, p.V_pred)


def test_rolling_resistance_brakes_the_spin_by_at_most_mu_roll_lambda_n():
    p = floor_contact((0.0, 0.0, 0.0), w=(0.0, 50.0, 0.0), mu=0.5, mu_roll=0.01)
    lam, _ = sweep(p)
    rolling = np.hypot(lam[3], lam[4])
    assert rolling == pytest.approx(0.01 * lam[0])  # a fast spin saturates the bound


def test_the_registered_sweeps_solve_a_single_contact_to_rounding():
    p = floor_contact((0.4, -0.2, 0.0))
    for name in registry.friction_solvers():
        result = registry.get(name).solve(p, np.zeros(p.size),
                                          registry.settings(name, 200, overrides={"abs_tol": 0}))
        if name == "apgd":  # its relaxation's answer: the sliding marble lifts off
            assert result.info["relaxation_residual"] < 1e-12
            continue
        assert result.residual < 1e-12, name


def test_a_partitioned_problem_packs_the_serial_rows():
    """Assembled and packed in parallel, the frictional rows are the serial ones."""
    blocked = problem_of(packed_box(5000, mu=0.5), 2, 6)
    serial = replace(blocked, partition=None)
    for name in ("t1", "t2", "arm_a", "arm_b", "inv_inertia", "diag", "rhs"):
        assert np.array_equal(getattr(serial, name), getattr(blocked, name)), name
    assert np.array_equal(pack(serial, 1.3), pack(blocked, 1.3))


def reference_sweep(p, P, law, lam, V):
    """One Gauss-Seidel sweep of the cone or box law written out contact by contact, every
    contact updated in full: what frictional_sweeps must equal, early exits included."""
    for c in range(p.m):
        a, b = int(p.body_a[c]), int(p.body_b[c])
        if P[c, STEP_N] == 0.0:
            continue
        n, t1, t2 = P[c, NORMAL:NORMAL + 3], P[c, T1:T1 + 3], P[c, T2:T2 + 3]
        ra, rb = P[c, ARM_A], P[c, ARM_B]
        dv = V[b, :3] - (V[a, :3] if a >= 0 else 0.0)
        s = rb * V[b, 3:] + (ra * V[a, 3:] if a >= 0 else 0.0)
        e = n @ dv + P[c, BIAS]
        u1 = t1 @ dv - t2 @ s
        u2 = t2 @ dv + t1 @ s
        k = 3 * c
        old = lam[k:k + 3].copy()
        new_n = max(old[0] - P[c, STEP_N] * e, 0.0)
        l1, l2 = old[1] - P[c, STEP_T] * u1, old[2] - P[c, STEP_T] * u2
        bound = P[c, MU] * new_n
        if law == BOX:
            l1, l2 = min(max(l1, -bound), bound), min(max(l2, -bound), bound)
        elif np.hypot(l1, l2) > bound:
            scale = bound / np.hypot(l1, l2)
            l1, l2 = l1 * scale, l2 * scale
        lam[k:k + 3] = new_n, l1, l2
        d = lam[k:k + 3] - old
        impulse = d[0] * n + d[1] * t1 + d[2] * t2
        lever = d[1] * t2 - d[2] * t1
        V[b, :3] += P[c, W_B] * impulse
        V[b, 3:] += -rb * P[c, I_B] * lever
        if a >= 0:
            V[a, :3] -= P[c, W_A] * impulse
            V[a, 3:] += -ra * P[c, I_A] * lever


@pytest.mark.parametrize("law", [CONE, BOX])
def test_the_sweep_over_a_pile_is_every_contact_updated_in_full(law):
    """A pile in which many contacts separate: those without impulse are skipped by the kernel
    (nothing to add), which must change nothing but the sign of a zero."""
    world = packed_box(400, mu=0.5)
    world.v[::3, 2] += 0.5  # a third of the marbles rise: their contacts open
    p = problem_of(world, 1)
    P = pack(p, 1.0)
    lam = np.zeros(p.size)
    lam[0::3][::4] = 1e-3  # some contacts start with an impulse, most without
    V = p.velocity(lam)
    want_lam, want_V = lam.copy(), V.copy()
    frictional_sweeps((p.body_a, p.body_b), P, (law, False, p.rows), V, lam, 3, p.partition)
    for _ in range(3):
        reference_sweep(p, P, law, want_lam, want_V)
    separating = np.count_nonzero(lam[0::3] == 0.0)
    assert separating > p.m // 10 and np.count_nonzero(lam[0::3]) > p.m // 10
    np.testing.assert_allclose(lam, want_lam, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(V, want_V, rtol=1e-12, atol=1e-15)
