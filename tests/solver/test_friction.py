"""The frictional contact problem against its definitions: the Jacobian from the relative
velocity of the contact points, the impulses from forces and torques at those points, the
Delassus operator and the tangent frames (the cone projection and FCLIB's error measure:
test_coulomb.py)."""
import numpy as np
import pytest

from solver.friction import (INERTIA_FACTOR, ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem,
                             tangent_frames)


def random_frictional(rng, n_bodies=5, m=9, rows=ROWS_SLIDING, mu=None):
    """A random frictional problem: random pairs (a = -1 a wall), unit normals, radii, masses,
    linear and angular velocities, gaps and friction coefficients."""
    body_b = rng.integers(0, n_bodies, size=m)
    body_a = rng.integers(-1, n_bodies, size=m)
    body_a[body_a == body_b] = -1
    normal = rng.normal(size=(m, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    return FrictionalProblem(
        body_a.astype(np.int64), body_b.astype(np.int64), normal,
        rng.uniform(-0.01, 0.01, size=m), rng.uniform(0.05, 0.3, size=n_bodies),
        1.0 / rng.uniform(0.5, 5.0, size=n_bodies), rng.normal(size=(n_bodies, 6)), 0.02,
        rng.uniform(0.0, 1.0, size=m) if mu is None else np.full(m, mu),
        rng.uniform(0.0, 0.05, size=m), rng.uniform(0.0, 0.05, size=m), rows)


def relative_row_velocities(p, V):
    """J V from the definition: u = (v_b + ω_b × (−r_b n)) − (v_a + ω_a × (r_a n)) on n, t1, t2;
    the relative spin ω_b − ω_a on t1, t2, n for the rolling and spinning rows."""
    out = np.zeros((p.m, p.rows))
    for c in range(p.m):
        a, b, n = p.body_a[c], p.body_b[c], p.normal[c]
        u = V[b, :3] + np.cross(V[b, 3:], -p.radius[b] * n)
        spin = V[b, 3:].copy()
        if a >= 0:
            u -= V[a, :3] + np.cross(V[a, 3:], p.radius[a] * n)
            spin -= V[a, 3:]
        out[c, :3] = [u @ n, u @ p.t1[c], u @ p.t2[c]]
        if p.rows == ROWS_ROLLING:
            out[c, 3:] = [spin @ p.t1[c], spin @ p.t2[c], spin @ n]
    return out.ravel()


def velocity_change_from_forces(p, lam):
    """M^-1 J^T λ from the definition: the impulse P = λ_n n + λ_1 t1 + λ_2 t2 acts on b at its
    contact point −r_b n and −P on a at r_a n; the rolling and spinning impulses are pure
    torques, + on b and − on a. Solid spheres, I = 2/5 m r^2."""
    mass = 1.0 / p.inv_mass
    inertia = INERTIA_FACTOR * mass * p.radius ** 2
    force = np.zeros((p.n, 3))
    torque = np.zeros((p.n, 3))
    lam = lam.reshape(p.m, p.rows)
    for c in range(p.m):
        a, b, n = p.body_a[c], p.body_b[c], p.normal[c]
        P = lam[c, 0] * n + lam[c, 1] * p.t1[c] + lam[c, 2] * p.t2[c]
        pure = np.zeros(3)
        if p.rows == ROWS_ROLLING:
            pure = lam[c, 3] * p.t1[c] + lam[c, 4] * p.t2[c] + lam[c, 5] * n
        force[b] += P
        torque[b] += np.cross(-p.radius[b] * n, P) + pure
        if a >= 0:
            force[a] -= P
            torque[a] += np.cross(p.radius[a] * n, -P) - pure
    return np.column_stack([force / mass[:, None], torque / inertia[:, None]])


def dense(p):
    """A = J M^-1 J^T column by column from the matrix-free product."""
    return np.column_stack([p.apply(col) for col in np.eye(p.size)])


@pytest.mark.parametrize("rows", [ROWS_SLIDING, ROWS_ROLLING])
@pytest.mark.parametrize("seed", range(4))
def test_rows_are_the_relative_velocity_of_the_contact_points(seed, rows):
    rng = np.random.default_rng(seed)
    p = random_frictional(rng, rows=rows)
    V = rng.normal(size=(p.n, 6))
    still = FrictionalProblem(p.body_a, p.body_b, p.normal, np.zeros(p.m), p.radius,
                              p.inv_mass, V, p.dt, p.mu, p.mu_roll, p.mu_spin, rows)
    np.testing.assert_allclose(still.rhs, relative_row_velocities(p, V), atol=1e-12)
    expected = relative_row_velocities(p, p.V_pred)
    expected.reshape(p.m, rows)[:, 0] += p.gap / p.dt
    np.testing.assert_allclose(p.rhs, expected, atol=1e-12)


@pytest.mark.parametrize("rows", [ROWS_SLIDING, ROWS_ROLLING])
@pytest.mark.parametrize("seed", range(4))
def test_impulses_act_as_forces_and_torques_at_the_contact_points(seed, rows):
    rng = np.random.default_rng(10 + seed)
    p = random_frictional(rng, rows=rows)
    lam = rng.normal(size=p.size)
    np.testing.assert_allclose(p.velocity_change(lam), velocity_change_from_forces(p, lam),
                               atol=1e-12)
    np.testing.assert_allclose(p.velocity(lam), p.V_pred + velocity_change_from_forces(p, lam),
                               atol=1e-12)


@pytest.mark.parametrize("rows", [ROWS_SLIDING, ROWS_ROLLING])
@pytest.mark.parametrize("seed", range(4))
def test_delassus_operator_is_symmetric_psd_with_the_stored_diagonal(seed, rows):
    rng = np.random.default_rng(20 + seed)
    p = random_frictional(rng, n_bodies=4, m=12, rows=rows)  # more rows than 6n: singular
    A = dense(p)
    np.testing.assert_allclose(A, A.T, atol=1e-12)
    assert np.linalg.eigvalsh(A).min() > -1e-10 * np.abs(A).max()
    np.testing.assert_allclose(np.diag(A), p.diag, rtol=1e-12)
    lam = rng.normal(size=p.size)
    np.testing.assert_allclose(p.error(lam), A @ lam + p.rhs, atol=1e-12)


def test_tangent_row_of_a_single_sphere_on_a_wall_feels_seven_halves_of_its_mass():
    """A_tt = (1 + m r^2 / I) / m = 7/2 / m: a sphere's contact point is 7/2 times easier to push
    sideways than its centre."""
    p = FrictionalProblem(np.array([-1]), np.array([0]), np.array([[0.0, 0.0, 1.0]]),
                          np.zeros(1), np.array([0.1]), np.array([0.25]), np.zeros((1, 6)),
                          0.02, np.full(1, 0.5), np.zeros(1), np.zeros(1))
    assert p.diag == pytest.approx([0.25, 3.5 * 0.25, 3.5 * 0.25], rel=1e-14)


def frames(normals):
    t1 = np.empty_like(normals)
    t2 = np.empty_like(normals)
    tangent_frames(np.ascontiguousarray(normals), t1, t2)
    return t1, t2


def test_tangent_frames_are_right_handed_orthonormal():
    rng = np.random.default_rng(5)
    normals = rng.normal(size=(2000, 3))
    # the axes, both signs, and normals either side of the switch at 45 degrees from y
    switch = np.array([[np.sin(a), np.cos(a), 0.0] for a in np.radians([44.99, 45.0, 45.01])])
    normals = np.concatenate([normals, np.eye(3), -np.eye(3), switch, -switch])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    t1, t2 = frames(normals)
    for u, w in ((t1, t1), (t2, t2)):
        np.testing.assert_allclose(np.einsum("ij,ij->i", u, w), 1.0, atol=1e-14)
    for u, w in ((t1, normals), (t2, normals), (t1, t2)):
        np.testing.assert_allclose(np.einsum("ij,ij->i", u, w), 0.0, atol=1e-14)
    np.testing.assert_allclose(np.cross(t1, t2), normals, atol=1e-14)
    again = frames(normals)
    assert np.array_equal(again[0], t1) and np.array_equal(again[1], t2)


def test_planar_normals_get_a_tangent_in_their_plane():
    """A disk scene's contacts (normals in x-z): t1 in the x-z plane, t2 = ±y, so the planar
    motion's friction is one row and the out-of-plane row stays idle."""
    angles = np.linspace(0.0, 2.0 * np.pi, 721)
    normals = np.column_stack([np.cos(angles), np.zeros_like(angles), np.sin(angles)])
    t1, t2 = frames(normals)
    np.testing.assert_array_equal(t1[:, 1], 0.0)
    np.testing.assert_allclose(np.abs(t2[:, 1]), 1.0, atol=1e-15)


def one_contact(rng, wall):
    """A random single contact: a marble on a wall, or two marbles of different sizes."""
    n = 1 if wall else 2
    normal = rng.normal(size=(1, 3))
    normal /= np.linalg.norm(normal)
    return FrictionalProblem(np.array([-1 if wall else 0]), np.array([0 if wall else 1]), normal,
                             rng.uniform(-0.01, 0.01, size=1), rng.uniform(0.05, 0.3, size=n),
                             1.0 / rng.uniform(0.5, 5.0, size=n), rng.normal(size=(n, 6)), 0.02,
                             np.full(1, rng.uniform(0.05, 1.5)), np.zeros(1), np.zeros(1))


def one_sweep(p, law):
    from solver.methods.gauss_seidel import frictional_sweeps
    from solver.methods.sweeps import FRICTION_LAWS, pack
    lam = np.zeros(p.size)
    V = p.velocity(lam)
    frictional_sweeps((p.body_a, p.body_b), pack(p, 1.0), (FRICTION_LAWS[law], False, p.rows), V,
                      lam, 1, p.partition)
    np.testing.assert_allclose(V, p.velocity(lam), atol=1e-12)
    return lam


@pytest.mark.parametrize("wall", [True, False])
@pytest.mark.parametrize("seed", range(10))
def test_one_sweep_solves_an_isolated_contact_exactly(seed, wall):
    """A contact's 3x3 block of A is diagonal, so one sweep solves a lone contact: the cone law
    (normal, then the tangents onto the disk) gives Coulomb's law, ccp (the block projected in
    A's metric) gives the cone complementarity λ ∈ K, u ∈ K*, λ·u = 0 with K* the dual cone
    μ ‖u_t‖ <= u_n."""
    p = one_contact(np.random.default_rng(50 + seed), wall)
    np.testing.assert_allclose(dense(p), np.diag(p.diag), atol=1e-12 * p.diag.max())
    lam = one_sweep(p, "cone")
    assert p.residual(lam) < 1e-12 * (1.0 + np.abs(p.rhs).max())
    lam = one_sweep(p, "ccp")
    u = p.error(lam)
    mu = p.mu[0]
    scale = 1.0 + np.abs(p.rhs).max()
    assert np.hypot(lam[1], lam[2]) <= mu * lam[0] * (1 + 1e-12) + 1e-15
    assert mu * np.hypot(u[1], u[2]) <= u[0] + 1e-12 * scale
    assert abs(lam @ u) < 1e-12 * scale * (1.0 + np.abs(lam).max())


@pytest.mark.parametrize("rows", [3, 6])
def test_a_partitioned_problem_has_the_serial_residual_and_products(rows):
    from solver.coulomb import frictional_residual
    from solver.partition import one_block
    from tests.solver.blocks import packed_box, problem_of

    p = problem_of(packed_box(5000, mu=0.5), 2, rows)
    assert p.block_count == 2
    rng = np.random.default_rng(3)
    for lam in (np.zeros(p.size), rng.uniform(-1e-4, 1e-3, p.size)):
        scratch = (np.empty_like(p.V_pred), np.empty(p.size))
        want, _ = frictional_residual(p.A, p.rhs, p.laws, lam, scratch, one_block(p.m), False)
        assert want > 0.0 and p.residual(lam) == want
        assert p.scanned_residual(lam) == (want, True, np.abs(p.rhs).max())
        assert p.checked_residual(lam) == (want, True)
    lam[-1] = np.nan
    assert p.checked_residual(lam) == (np.inf, False)


@pytest.mark.parametrize("partitioned", [False, True])
def test_the_kept_product_is_never_another_impulses(partitioned):
    """The problem reuses its last product M^-1 J^T λ for the same λ only: every call, in any
    order, after λ changed in place or by a sign of zero, is a fresh problem's answer."""
    from tests.solver.blocks import packed_box, problem_of

    rng = np.random.default_rng(5)
    if partitioned:
        p = problem_of(packed_box(2000, mu=0.5), 2, ROWS_SLIDING)
        assert p.block_count == 2
    else:
        p = random_frictional(rng, n_bodies=6, m=12)
    lam = rng.uniform(0.0, 1e-3, p.size)
    signed = np.zeros(p.size)
    signed[1::3] = -0.0
    calls = ("velocity", "residual", "scanned_residual", "velocity_change", "checked_residual",
             "apply")
    for step in range(30):
        if step % 5 == 4:
            lam[rng.integers(p.size)] += 1e-4  # in place: the same array, other values
        x = (lam, lam.copy(), np.zeros(p.size), signed)[step % 4]
        name = calls[step % len(calls)]
        got, want = getattr(p, name)(x), getattr(p.copy(), name)(x)
        bits = [np.asarray(r, dtype=np.float64).view(np.int64) for r in (got, want)]
        assert np.array_equal(*bits), (step, name)
