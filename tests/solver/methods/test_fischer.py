"""The Fischer–Burmeister function of the second-order cone: zero exactly on Coulomb's law (cases
worked by hand), its Jordan-algebra square root, and its slopes against finite differences."""
import numpy as np
import pytest

from solver.methods import fischer


def phi(lam, u, rho=1.0, mu=0.5):
    value, _, _ = fischer.coulomb(np.atleast_2d(lam), np.atleast_2d(u), np.array([rho]),
                                  np.array([mu]), False)
    return value[0]


def test_the_square_root_squares_back():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 3))
    w = np.column_stack([(x * x).sum(axis=1), 2.0 * x[:, :1] * x[:, 1:]])  # x∘x, in K
    z = fischer.root(w)
    zz = np.column_stack([(z * z).sum(axis=1), 2.0 * z[:, :1] * z[:, 1:]])
    assert np.allclose(zz, w, rtol=1e-12, atol=1e-12)
    assert np.all(z[:, 0] >= np.linalg.norm(z[:, 1:], axis=1) - 1e-12)  # √w lies in K


@pytest.mark.parametrize("lam, u", [
    ((0.0, 0.0, 0.0), (0.3, -0.2, 0.1)),   # separated: no impulse, moving apart
    ((2.0, 0.3, -0.4), (0.0, 0.0, 0.0)),   # sticking inside the cone
    ((2.0, -0.6, -0.8), (0.0, 0.3, 0.4)),  # sliding: friction μλ_n against the slip
])
def test_zero_on_coulombs_law(lam, u):
    assert np.max(np.abs(phi(np.array(lam), np.array(u)))) < 1e-12


@pytest.mark.parametrize("lam, u", [
    ((1.0, 0.0, 0.0), (0.2, 0.0, 0.0)),     # pushing while separating
    ((2.0, 0.6, 0.8), (0.0, 0.3, 0.4)),     # friction along the slip
    ((2.0, -0.3, -0.4), (0.0, 0.3, 0.4)),   # sliding below the cone's edge
    ((0.0, 0.0, 0.0), (-0.1, 0.0, 0.0)),    # approaching without an impulse
])
def test_not_zero_off_coulombs_law(lam, u):
    assert np.max(np.abs(phi(np.array(lam), np.array(u)))) > 1e-3


def test_the_slopes_are_the_derivatives_where_it_is_smooth():
    rng = np.random.default_rng(2)
    m = 40
    lam = rng.normal(size=(m, 3))
    u = rng.normal(size=(m, 3))
    rho = rng.uniform(0.5, 2.0, m)
    mu = rng.uniform(0.1, 1.0, m)
    value, dl, du = fischer.coulomb(lam, u, rho, mu, True)
    h = 1e-7
    for k in range(3):
        step = np.zeros((m, 3))
        step[:, k] = h
        by_lam = (fischer.coulomb(lam + step, u, rho, mu, False)[0]
                  - fischer.coulomb(lam - step, u, rho, mu, False)[0]) / (2 * h)
        by_u = (fischer.coulomb(lam, u + step, rho, mu, False)[0]
                - fischer.coulomb(lam, u - step, rho, mu, False)[0]) / (2 * h)
        assert np.allclose(dl[:, :, k], by_lam, atol=1e-6)
        assert np.allclose(du[:, :, k], by_u, atol=1e-6)


def test_the_scalar_function_is_the_lcps():
    lam = np.array([0.0, 1.0, 0.0, 1.0])
    u = np.array([1.0, 0.0, 0.0, 1.0])
    value, dl, du = fischer.normal(lam, u, np.ones(4), True)
    assert np.allclose(value[:3], 0.0) and value[3] > 0.5  # the last pushes and separates
    assert np.allclose(dl, [1.0, 0.0, 1.0 - np.sqrt(0.5), 1.0 - np.sqrt(0.5)])
    assert np.allclose(du, [0.0, 1.0, 1.0 - np.sqrt(0.5), 1.0 - np.sqrt(0.5)])
