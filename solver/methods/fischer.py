"""The Fischer–Burmeister function of the second-order cone (Fukushima, Luo and Tseng 2001) for
Coulomb's law, with a generalized Jacobian: newton's `function=fb` (docs/solvers.md).

Per contact with μ > 0, scaled to the self-dual cone K = {(a, b): ‖b‖ <= a} of R³:

    x = (μ λ_n, λ_t),    y = ρ_n (u_n + μ‖u_t‖, μ u_t)

(y: De Saxcé's modified velocity, in impulse units by ρ_n = 1/W_nn). x ∈ K, y ∈ K and x·y = 0
is Coulomb's law (λ in its cone, the modified velocity in the dual cone, complementary), and
holds exactly where

    Φ = x + y - (x∘x + y∘y)^{1/2} = 0

in the Jordan algebra of K: a∘b = (a·b, a₀ b̄ + b₀ ā); the square root of w by its spectral
decomposition w = s₁ c₁ + s₂ c₂, s_{1,2} = w₀ ∓ ‖w̄‖, c_{1,2} = ½(1, ∓w̄/‖w̄‖). With z = √w,
z∘z = w gives dz = L_z⁻¹ (L_x dx + L_y dy), L_a = [[a₀, āᵀ], [ā, a₀ I]] (a∘b = L_a b), so

    dΦ = (I - L_z⁻¹ L_x) dx + (I - L_z⁻¹ L_y) dy.

Where z is on the cone's boundary L_z is singular and Φ not differentiable: the Jacobian then
takes z's smaller spectral value as a small share of the larger one (an element of the
limiting set in the smooth directions). A contact without friction (μ = 0, or a problem with
only normal rows) uses the scalar function φ = x + y - √(x² + y²), x = λ_n, y = ρ_n u_n, its
tangential impulses held at 0 by the caller.
"""
from __future__ import annotations

import numpy as np

BOUNDARY = 1e-12  # z's smaller spectral value at least this share of the larger in L_z


def arrow(a: np.ndarray) -> np.ndarray:
    """L_a (m, 3, 3) of vectors a (m, 3): the matrix of b -> a∘b."""
    L = a[:, 0, None, None] * np.eye(3)
    L[:, 0, 1:] = a[:, 1:]
    L[:, 1:, 0] = a[:, 1:]
    return L


def root(w: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """√w (m, 3) of w (m, 3) in K, by its spectral values (their smaller one at least `floor`
    times the larger)."""
    bar = w[:, 1:]
    norm = np.sqrt((bar * bar).sum(axis=1))
    big = np.sqrt(np.maximum(w[:, 0] + norm, 0.0))
    small = np.sqrt(np.maximum(w[:, 0] - norm, floor * np.maximum(w[:, 0] + norm, 0.0)))
    unit = np.divide(bar, norm[:, None], out=np.zeros_like(bar), where=norm[:, None] > 0.0)
    z = np.empty_like(w)
    z[:, 0] = 0.5 * (big + small)
    z[:, 1:] = 0.5 * (big - small)[:, None] * unit
    return z


def coulomb(lam: np.ndarray, u: np.ndarray, rho: np.ndarray, mu: np.ndarray, slopes: bool):
    """Φ (m, 3) for impulses and velocities (m, 3) (rows n, t1, t2), ρ_n (m,), μ (m,) > 0; with
    `slopes` also ∂Φ/∂λ and ∂Φ/∂u (m, 3, 3), else None for both."""
    ut = u[:, 1:]
    slip = np.sqrt((ut * ut).sum(axis=1))
    x = np.column_stack([mu * lam[:, 0], lam[:, 1:]])
    y = rho[:, None] * np.column_stack([u[:, 0] + mu * slip, mu[:, None] * ut])
    w = np.column_stack([(x * x).sum(axis=1) + (y * y).sum(axis=1),
                         2.0 * (x[:, :1] * x[:, 1:] + y[:, :1] * y[:, 1:])])
    phi = x + y - root(w)
    if not slopes:
        return phi, None, None
    z = root(w, BOUNDARY)
    tiny = np.finfo(np.float64).tiny
    z[:, 0] = np.maximum(z[:, 0], tiny)  # x = y = 0: L_z = tiny I, Φ's slopes I dx + I dy
    Lz = arrow(z)
    inv_x = np.linalg.solve(Lz, arrow(x))
    inv_y = np.linalg.solve(Lz, arrow(y))
    dx = np.zeros((len(mu), 3, 3))
    dx[:, 0, 0] = mu
    dx[:, 1, 1] = dx[:, 2, 2] = 1.0
    direction = np.divide(ut, slip[:, None], out=np.zeros_like(ut), where=slip[:, None] > 0.0)
    dy = np.zeros((len(mu), 3, 3))
    dy[:, 0, 0] = 1.0
    dy[:, 0, 1:] = mu[:, None] * direction
    dy[:, 1, 1] = dy[:, 2, 2] = mu
    dy *= rho[:, None, None]
    eye = np.eye(3)
    return phi, np.matmul(eye - inv_x, dx), np.matmul(eye - inv_y, dy)


def normal(lam: np.ndarray, u: np.ndarray, rho: np.ndarray, slopes: bool):
    """The scalar function of x = λ_n, y = ρ_n u_n, each (m,): φ (m,) and with `slopes` its
    derivatives in λ_n and u_n (at x = y = 0: 1 - 1/√2 each, an element of the limiting set)."""
    y = rho * u
    r = np.sqrt(lam * lam + y * y)
    phi = lam + y - r
    if not slopes:
        return phi, None, None
    safe = np.where(r > 0.0, r, 1.0)
    a = np.where(r > 0.0, lam / safe, np.sqrt(0.5))
    b = np.where(r > 0.0, y / safe, np.sqrt(0.5))
    return phi, 1.0 - a, (1.0 - b) * rho
