"""One contact's local laws against their definitions: the closed form of a diagonal block and
the general block's enumeration solve Coulomb's law and are the solutions an independent
enumeration finds; the cone step of a sphere is that closed form; the composite projection is
the nearest point of its set."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.coulomb import project_cone
from solver.methods.laws import (BOX, CCP, CONE, contact_step, coulomb_block, coulomb_diagonal,
                                 project_composite)
from tests.solver.methods.coulomb import coulomb_violation, enumerate_solutions, random_block

PROPERTY = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
CASES = st.sampled_from(["separate", "stick", "slide"])


def case_q(rng, case, W, mu):
    """A q for which the diagonal block's answer is the given case."""
    if case == "separate":
        return np.array([rng.uniform(0.0, 2.0), *rng.normal(size=2)])
    ln = rng.uniform(0.1, 2.0)
    direction = rng.normal(size=2)
    direction /= np.linalg.norm(direction)
    reach = mu * ln * W[1, 1]  # the largest |q_t| that sticking can hold
    size = rng.uniform(0.0, 0.95) * reach if case == "stick" else reach * rng.uniform(1.05, 4.0)
    return np.array([-ln * W[0, 0], *(size * direction)])


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), case=CASES, mu=st.floats(0.05, 2.0))
def test_the_diagonal_closed_form_is_the_unique_solution(seed, case, mu):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.2, 3.0), rng.uniform(0.2, 5.0)
    W = np.diag([a, b, b])
    q = case_q(rng, case, W, mu)
    lam = np.array(coulomb_diagonal(q[0], q[1], q[2], a, b, mu))
    assert coulomb_violation(W, q, mu, lam) < 1e-12
    found = enumerate_solutions(W, q, mu)
    assert len(found) == 1  # a diagonal block has one solution
    np.testing.assert_allclose(lam, found[0], rtol=1e-9, atol=1e-12)
    kind = ("separate" if lam[0] == 0 else
            "stick" if np.hypot(lam[1], lam[2]) < mu * lam[0] * (1 - 1e-12) else "slide")
    assert kind == case


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), case=CASES, mu=st.one_of(st.just(0.0), st.floats(0.01, 1.5)),
       coupling=st.sampled_from([0.0, 0.1, 0.4, 0.7]))
def test_a_coupled_block_is_solved_by_enumeration(seed, case, mu, coupling):
    rng = np.random.default_rng(seed)
    W = random_block(rng, coupling)
    q = case_q(rng, case, W, mu)
    n0, n1, n2, ok = coulomb_block(W[None], 0, q[0], q[1], q[2], mu)
    lam = np.array([n0, n1, n2])
    assert ok
    assert coulomb_violation(W, q, mu, lam) < 1e-9
    found = enumerate_solutions(W, q, mu)
    assert found, "the enumeration must find the solution too"
    assert min(np.abs(lam - f).max() for f in found) < 1e-7 * (1 + np.abs(lam).max())


def test_a_coupled_block_can_have_several_solutions_and_one_is_returned():
    """Strong normal-tangent coupling with large μ: the local problem is not unique (Coulomb's
    law is not a monotone problem); the solver returns one of them."""
    W = np.array([[1.61, -1.06, 0.17], [-1.06, 3.71, 1.41], [0.17, 1.41, 1.51]])
    q = np.array([-1.0, 4.68, 4.83])
    found = enumerate_solutions(W, q, 2.87)
    assert len(found) == 3 and all(coulomb_violation(W, q, 2.87, f) < 1e-9 for f in found)
    n0, n1, n2, ok = coulomb_block(W[None], 0, *q, 2.87)
    assert ok and min(np.abs(np.array([n0, n1, n2]) - f).max() for f in found) < 1e-9


@PROPERTY
@given(seed=st.integers(0, 2**32 - 1), case=CASES, mu=st.floats(0.05, 2.0))
def test_a_spheres_cone_step_is_the_exact_local_solution(seed, case, mu):
    """With a diagonal block (spheres) and ω = 1 the cone law's step from any λ lands on the
    closed form: pgs is nsgs there."""
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.2, 3.0), rng.uniform(0.2, 5.0)
    W = np.diag([a, b, b])
    q = case_q(rng, case, W, mu)
    lam0 = rng.uniform(-1, 1, 3)
    u = W @ lam0 + q
    step = contact_step((CONE, False, False), tuple(lam0), tuple(u), (1.0 / a, 1.0 / b),
                        (0.0, 0.0), mu)
    np.testing.assert_allclose(step, coulomb_diagonal(*q, a, b, mu), rtol=1e-12, atol=1e-12)


def test_the_box_law_clamps_each_tangent_and_ccp_lifts_a_slide():
    W = np.diag([1.0, 3.5, 3.5])
    q = np.array([-1.0, 10.0, 10.0])
    _, l1, l2 = contact_step((BOX, False, False), (0.0, 0.0, 0.0), tuple(q), (1.0, 1 / 3.5),
                             (0.0, 0.0), 0.5)
    assert (l1, l2) == (-0.5, -0.5)  # √2 μ λ_n diagonally
    ln, l1, l2 = contact_step((CCP, False, False), (0.0, 0.0, 0.0), tuple(q), (1.0, 1 / 3.5),
                              (0.0, 0.0), 0.5)
    u = W @ np.array([ln, l1, l2]) + q
    assert u[0] == pytest.approx(0.5 * np.hypot(u[1], u[2]))  # Anitescu: u_n = μ ‖u_t‖


def test_a_coupled_cone_step_reads_the_tangent_velocity_after_the_normal():
    """The normal's change moves u_t by W_tn Δλ_n; the tangent step uses the moved value."""
    ln, l1, l2 = contact_step((CONE, False, True), (0.0, 0.0, 0.0), (-1.0, 0.0, 0.0),
                              (1.0, 0.5), (0.4, 0.0), 10.0)
    assert ln == 1.0 and l1 == pytest.approx(-0.5 * 0.4) and l2 == 0.0


def feasible(rng, mu, mu_roll, mu_spin, count):
    a = rng.uniform(0, 3, count)
    def disk(radius):
        r = radius * np.sqrt(rng.uniform(0, 1, count))
        t = rng.uniform(0, 2 * np.pi, count)
        return np.column_stack([r * np.cos(t), r * np.sin(t)])
    return np.column_stack([a, disk(mu * a), disk(mu_roll * a),
                            rng.uniform(-1, 1, count) * mu_spin * a])


@pytest.mark.parametrize("seed", range(30))
def test_the_composite_projection_is_the_nearest_point_of_its_set(seed):
    """A projection p of z onto a convex set satisfies (z - p)·(x - p) <= 0 for every x of
    the set; checked on 4000 random points of it, and p is in the set."""
    rng = np.random.default_rng(seed)
    mu, mu_roll, mu_spin = rng.uniform(0, 1.5), rng.uniform(0, 0.5), rng.choice([0, 0.2])
    z = rng.normal(size=6) * rng.choice([0.1, 1, 10])
    p = np.array(project_composite(tuple(z), (mu, mu_roll, mu_spin)))
    assert p[0] >= 0 and np.hypot(*p[1:3]) <= mu * p[0] * (1 + 1e-12) + 1e-15
    assert np.hypot(*p[3:5]) <= mu_roll * p[0] * (1 + 1e-12) + 1e-15
    assert abs(p[5]) <= mu_spin * p[0] * (1 + 1e-12) + 1e-15
    x = feasible(rng, mu, mu_roll, mu_spin, 4000)
    assert np.max((x - p) @ (z - p)) <= 1e-10 * (1 + np.abs(z).max()) ** 2
    cone = project_cone(z[0], z[1], z[2], mu)
    np.testing.assert_allclose(project_composite((z[0], z[1], z[2], 0.0, 0.0, 0.0),
                                                 (mu, 0.3, 0.1))[:3],
                               cone, rtol=1e-12, atol=1e-15)
