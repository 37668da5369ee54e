"""Coulomb's law in numbers: the cone projection against a brute-force nearest point, the disk
projection, and FCLIB's contact error against its formula, the frictionless natural map and a
sliding marble's known solution."""
import numpy as np
import pytest

from solver import metrics
from solver.coulomb import project_cone, project_disk
from solver.friction import ROWS_ROLLING, FrictionalProblem
from solver.problem import ContactProblem
from tests.solver.test_friction import dense, random_frictional


def brute_force_cone_projection(z, mu, samples=200_001):
    """The nearest point of the cone {‖x_t‖ <= μ x_n} to z: z itself when inside; otherwise the
    nearest point of the cone's surface, scanned over the surface's generators
    d(φ) = (1, μ cos φ, μ sin φ) with the best a >= 0 along each, a = max(0, z·d / d·d)."""
    zn, z1, z2 = z
    if np.hypot(z1, z2) <= mu * zn:
        return np.array(z, dtype=float)
    phi = np.linspace(0.0, 2.0 * np.pi, samples)
    d = np.column_stack([np.ones_like(phi), mu * np.cos(phi), mu * np.sin(phi)])
    a = np.maximum(0.0, d @ np.asarray(z) / np.einsum("ij,ij->i", d, d))
    points = a[:, None] * d
    return points[np.argmin(np.linalg.norm(points - z, axis=1))]


@pytest.mark.parametrize("seed", range(40))
def test_cone_projection_is_the_nearest_point_of_the_cone(seed):
    rng = np.random.default_rng(seed)
    mu = [0.0, 0.1, 0.5, 1.0, 3.0][seed % 5]
    z = rng.normal(size=3) * [1.0, 2.0, 2.0]
    got = np.array(project_cone(*z, mu))
    expected = brute_force_cone_projection(z, mu)
    # The scan's φ spacing (3e-5 rad) bounds its error; the closed form is exact.
    np.testing.assert_allclose(got, expected, atol=1e-4)
    assert np.hypot(got[1], got[2]) <= mu * got[0] + 1e-12
    assert np.linalg.norm(got - z) <= np.linalg.norm(expected - z) + 1e-12
    # Moreau: z - P(z) lies in the polar cone and is orthogonal to P(z).
    rest = z - got
    assert abs(rest @ got) < 1e-12
    assert mu * np.hypot(rest[1], rest[2]) <= -rest[0] + 1e-12 or np.allclose(rest, 0.0)


def test_disk_projection_scales_back_onto_the_circle():
    assert project_disk(3.0, 4.0, 10.0) == (3.0, 4.0)
    assert np.allclose(project_disk(3.0, 4.0, 2.5), (1.5, 2.0))
    assert project_disk(3.0, 4.0, 0.0) == (0.0, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_without_friction_the_error_is_the_natural_map_of_the_lcp(seed):
    """The same contacts built as today's ContactProblem and as a FrictionalProblem with μ = 0
    and zero tangent impulses: the frictional residual is ‖min(λ, Aλ + b)‖∞ of the LCP, and
    FCLIB's error has ‖min(λ, Aλ + b)‖₂ over 1 + ‖q‖₂ of the three rows."""
    rng = np.random.default_rng(30 + seed)
    p = random_frictional(rng, n_bodies=6, m=14, mu=0.0)
    p.mu_roll[:] = 0.0
    p.mu_spin[:] = 0.0
    lcp = ContactProblem(p.body_a, p.body_b, p.normal, p.gap, p.inv_mass,
                         np.ascontiguousarray(p.V_pred[:, :3]), p.dt)
    lam_n = np.where(rng.random(p.m) < 0.3, 0.0, rng.uniform(0.0, 2.0, size=p.m))
    lam = np.zeros((p.m, p.rows))
    lam[:, 0] = lam_n
    natural = np.minimum(lam_n, lcp.dense() @ lam_n + lcp.rhs)
    assert p.residual(lam.ravel()) == pytest.approx(lcp.residual(lam_n), rel=1e-12, abs=1e-15)
    assert p.residual(lam.ravel()) == pytest.approx(metrics.natural_map(
        lam_n, lcp.dense() @ lam_n + lcp.rhs), rel=1e-12)
    q = p.rhs.reshape(p.m, p.rows)[:, :3]
    assert p.fclib_error(lam.ravel()) == pytest.approx(
        np.linalg.norm(natural) / (1.0 + np.linalg.norm(q)), rel=1e-12)


def fclib_error_dense(W, q, mu, r):
    """FCLIB's error from its definition (Acary, Brémond, Huber 2014): u = W r + q,
    ũ = u + μ ‖u_t‖ e_n per contact, err = ‖r − P_K(r − ũ)‖₂ / (1 + ‖q‖₂), P_K the projection
    onto the product of the cones ‖x_t‖ <= μ x_n, written out here from the formula."""
    u = (W @ r + q).reshape(-1, 3)
    r = r.reshape(-1, 3)
    total = 0.0
    for c in range(len(mu)):
        ut = np.linalg.norm(u[c, 1:])
        x = r[c] - (u[c] + np.array([mu[c] * ut, 0.0, 0.0]))
        xt = np.linalg.norm(x[1:])
        if xt <= mu[c] * x[0]:
            proj = x
        elif mu[c] * xt <= -x[0]:
            proj = np.zeros(3)
        else:
            a = (x[0] + mu[c] * xt) / (1.0 + mu[c] ** 2)
            proj = np.concatenate([[a], mu[c] * a * x[1:] / xt])
        total += np.sum((r[c] - proj) ** 2)
    return np.sqrt(total) / (1.0 + np.linalg.norm(q))


@pytest.mark.parametrize("seed", range(6))
def test_fclib_error_follows_fclibs_formula(seed):
    rng = np.random.default_rng(40 + seed)
    p = random_frictional(rng, n_bodies=5, m=10)
    W = dense(p)
    for lam in (np.zeros(p.size), rng.normal(size=p.size), np.abs(rng.normal(size=p.size))):
        expected = fclib_error_dense(W, p.rhs, p.mu, lam)
        assert p.fclib_error(lam) == pytest.approx(expected, rel=1e-12)


def test_fclib_error_vanishes_at_solutions_only():
    """One marble on a floor, moving sideways at 1 m/s after gravity's step: it keeps sliding
    (μ = 0.2, too little to stop it in one step), so λ_n = m g h cancels the fall and the friction
    is μ λ_n against the slip; anything else is not a solution."""
    m, g, h, mu = 2.0, 9.81, 0.01, 0.2
    V = np.array([[1.0, 0.0, -g * h, 0.0, 0.0, 0.0]])
    p = FrictionalProblem(np.array([-1]), np.array([0]), np.array([[0.0, 0.0, 1.0]]),
                          np.zeros(1), np.array([0.1]), np.array([1.0 / m]), V, h,
                          np.full(1, mu), np.zeros(1), np.zeros(1))
    ln = m * g * h
    t1_x = p.t1[0, 0]  # ±1: the frame's first tangent is along x
    sliding = np.array([ln, -mu * ln * t1_x, 0.0])
    assert p.fclib_error(sliding) < 1e-15 and p.residual(sliding) < 1e-15
    for wrong in (np.array([ln, 0.0, 0.0]), np.array([ln, -0.5 * mu * ln * t1_x, 0.0]),
                  np.array([1.1 * ln, -mu * 1.1 * ln * t1_x, 0.0]),
                  np.array([ln, mu * ln * t1_x, 0.0])):
        assert p.fclib_error(wrong) > 1e-3 and p.residual(wrong) > 1e-3


def test_with_rolling_rows_the_error_holds_the_disk_and_the_spin_interval():
    """FCLIB's formula over every row of a problem with rolling rows: the normal and tangent
    rows' cone term as FCLIB's, plus ‖λ_r − P_D(λ_r − u_r)‖² for the rolling disk of radius
    μ_r λ_n and (λ_s − clip(λ_s − u_s, ±μ_s λ_n))² for the spin, over 1 + ‖q‖₂ of all rows,
    written out here from the definition."""
    rng = np.random.default_rng(77)
    p = random_frictional(rng, n_bodies=5, m=8, rows=ROWS_ROLLING)
    W = dense(p)
    for lam in (rng.normal(size=p.size), np.abs(rng.normal(size=p.size))):
        u = (W @ lam + p.rhs).reshape(p.m, 6)
        r = lam.reshape(p.m, 6)
        total = rolling = 0.0
        for c in range(p.m):
            ut = np.linalg.norm(u[c, 1:3])
            x = r[c, :3] - (u[c, :3] + np.array([p.mu[c] * ut, 0.0, 0.0]))
            xt = np.linalg.norm(x[1:])
            if xt <= p.mu[c] * x[0]:
                proj = x
            elif p.mu[c] * xt <= -x[0]:
                proj = np.zeros(3)
            else:
                a = (x[0] + p.mu[c] * xt) / (1.0 + p.mu[c] ** 2)
                proj = np.concatenate([[a], p.mu[c] * a * x[1:] / xt])
            total += np.sum((r[c, :3] - proj) ** 2)
            radius = p.mu_roll[c] * max(r[c, 0], 0.0)
            y = r[c, 3:5] - u[c, 3:5]
            disk = y if np.linalg.norm(y) <= radius else radius * y / np.linalg.norm(y)
            bound = p.mu_spin[c] * max(r[c, 0], 0.0)
            spin = np.clip(r[c, 5] - u[c, 5], -bound, bound)
            rolling += np.sum((r[c, 3:5] - disk) ** 2) + (r[c, 5] - spin) ** 2
        total += rolling
        expected = np.sqrt(total) / (1.0 + np.linalg.norm(p.rhs))
        assert p.fclib_error(lam) == pytest.approx(expected, rel=1e-12)
        assert rolling > 0.01 * total  # the rolling rows weigh: leaving them out would show
