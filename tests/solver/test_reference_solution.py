"""Pile-scale contact problems solved independently of the project's solvers and assembly.

W = J M^-1 J^T and q = J v* + gap/h are rebuilt here from the contact geometry with plain numpy and
scipy.sparse (J: row c has +n_c on marble b's velocity and -n_c on marble a's). The LCP
λ >= 0, e = Wλ + q >= 0, λᵀe = 0 is the optimality system of the QP min f(λ) = ½λᵀWλ + qᵀλ over
λ >= 0, and of its dual, the least-distance problem min ½‖u‖² s.t. G u + q >= 0 with
G = J M^-1/2 and u = Gᵀλ = M^1/2 (v - v*). Two other methods solve it:

- Lawson & Hanson's reduction of least distance to NNLS, scipy.optimize.nnls: min ‖E y - f‖ over
  y >= 0 with E = [Gᵀ; -qᵀ], f = (0, ..., 0, 1); then λ = y / (1 + qᵀy) (dense: the bowl);
- a primal-dual interior-point method (Mehrotra's predictor-corrector) on the QP, one sparse LU of
  W + diag(s/λ) per iteration (the piles).

Every registered solver that converges (natural residual below 1e-12 m/s within its budget) is
checked against them. Where redundant contacts make W singular (piles: more contacts than 3
velocities per marble) λ is not unique and f and u are compared; where W is definite, λ too. The
tolerances are bounds, not guesses: for two candidates λ, λ' >= 0 convexity gives
f(λ) - f(λ') <= eᵀ(λ - λ') <= |eᵀλ| + Σ max(0, -e) λ' (each term zero for an exact solution),
and ½‖u - u'‖² = (e - e')ᵀ(λ - λ') is at most the sum of the two such terms, ½ σ_min(W) ‖λ - λ'‖²
too where W is definite; plus the rounding of the products, a few ε times Σ λ_c (|W|λ + |q|)_c.
A candidate's own residual, recomputed here, must also be the one its solver reported.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls
from scipy.sparse.linalg import splu

import scenes
from solver.methods import registry
from solver.step import Simulation

EPS = np.finfo(np.float64).eps
CONVERGED = 1e-12  # m/s: the solvers' stopping residual
BUDGET = {"pgs-sm": 2000}


def settled(scene: str, steps: int, **params):
    sim = Simulation(scenes.build(scene, params), registry.settings("pgs", 20))
    for _ in range(steps):
        sim.step()
    return sim.problem.copy()


def rebuilt(problem) -> tuple[sp.csr_matrix, np.ndarray]:
    """(G = J M^-1/2, q = J v* + gap/h) from the contact geometry: normals, marble indices
    (-1 a wall), inverse masses, predicted velocities, gaps and the time step."""
    m, n = problem.gap.shape[0], problem.v_pred.shape[0]
    rows = np.repeat(np.arange(m), 3)
    xyz = np.arange(3)
    J = sp.csr_matrix((problem.normal.ravel(), (rows, (3 * problem.body_b[:, None] + xyz).ravel())),
                      shape=(m, 3 * n))
    moving = problem.body_a >= 0
    J = J - sp.csr_matrix((problem.normal[moving].ravel(),
                           (np.repeat(np.flatnonzero(moving), 3),
                            (3 * problem.body_a[moving][:, None] + xyz).ravel())),
                          shape=(m, 3 * n))
    G = (J @ sp.diags(np.sqrt(np.repeat(problem.inv_mass, 3)))).tocsr()
    q = J @ problem.v_pred.ravel() + problem.gap / problem.dt
    return G, q


def nnls_solution(G: sp.csr_matrix, q: np.ndarray) -> np.ndarray:
    E = np.vstack([G.T.toarray(), -q[None, :]])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    y, _ = nnls(E, f, maxiter=50 * q.size)
    r = E @ y - f  # r[-1] = -(1 + qᵀy) < 0 for a feasible problem
    return y / -r[-1]


def interior_point_solution(G: sp.csr_matrix, q: np.ndarray, iterations: int = 100) -> np.ndarray:
    """Mehrotra's predictor-corrector for min ½λᵀWλ + qᵀλ, λ >= 0 (s = Wλ + q, λ s -> 0)."""
    W = (G @ G.T).tocsc()
    m = q.size
    scale = float(np.abs(q).max())
    lam, s = np.full(m, scale / W.diagonal().mean()), np.full(m, scale)

    def longest(x, dx):
        down = dx < 0
        return min(1.0, float(np.min(-x[down] / dx[down]))) if down.any() else 1.0

    for _ in range(iterations):
        rd = W @ lam + q - s
        mu = lam @ s / m
        if np.abs(rd).max() <= 1e-14 * scale and np.abs(np.minimum(lam, s)).max() <= 1e-15 * scale:
            break
        lu = splu((W + sp.diags(s / lam)).tocsc())

        def direction(rc):
            dlam = lu.solve(-rd - rc / lam)
            return dlam, (-rc - s * dlam) / lam

        dlam, ds = direction(lam * s)
        step = min(longest(lam, dlam), longest(s, ds))
        sigma = (((lam + step * dlam) @ (s + step * ds)) / m / mu) ** 3
        dlam, ds = direction(lam * s + dlam * ds - sigma * mu)
        step = 0.99 * min(longest(lam, dlam), longest(s, ds))
        lam, s = lam + step * dlam, s + step * ds
    return lam


class Candidate:
    """λ >= 0 of one LCP with what the bounds need, all computed here from G and q."""

    def __init__(self, G: sp.csr_matrix, q: np.ndarray, lam: np.ndarray):
        self.lam = np.asarray(lam, dtype=np.float64)
        self.u = G.T @ self.lam
        w_lam = G @ self.u
        self.e = w_lam + q
        self.f = 0.5 * self.lam @ (w_lam + 2.0 * q)
        self.residual = float(np.abs(np.minimum(self.lam, self.e)).max())
        # Rounding of e, f and the products below: each e_c sums about ten terms whose sizes
        # add up to (|G||G|ᵀλ)_c + |q_c| >= (|W|λ)_c + |q_c|, and numpy sums the m products
        # pairwise (log2 m).
        size = abs(G) @ (abs(G).T @ self.lam) + np.abs(q)
        self.rounding = (16 + np.log2(q.size)) * EPS * float(self.lam @ size)

    def excess(self, other: "Candidate") -> float:
        """J: an upper bound of f(λ) - f(λ') for λ' = other.λ (convexity: f(λ) - f(λ') <=
        eᵀ(λ - λ') <= |eᵀλ| + Σ max(0, -e) λ'), and what λ lacks of optimality in the bound on
        ½‖u - u'‖² below."""
        return (abs(float(self.lam @ self.e)) + float(np.maximum(-self.e, 0.0) @ other.lam)
                + self.rounding)


def assert_agree(a: Candidate, b: Candidate, sigma_min: float | None = None, what: str = ""):
    """f within max(excess(a, b), excess(b, a)); ½‖u_a - u_b‖² <= f_a - f_b - e_bᵀ(λ_a - λ_b)
    <= excess(a, b) + excess(b, a); and where W is definite, ½ σ_min ‖λ_a - λ_b‖² as well."""
    ab, ba = a.excess(b), b.excess(a)
    assert abs(a.f - b.f) <= max(ab, ba), (what, a.f - b.f, ab, ba)
    assert 0.5 * np.sum((a.u - b.u) ** 2) <= ab + ba, (what, np.linalg.norm(a.u - b.u))
    if sigma_min is not None:  # W definite: λ is unique
        assert 0.5 * sigma_min * np.sum((a.lam - b.lam) ** 2) <= ab + ba, (
            what, np.linalg.norm(a.lam - b.lam))


def check_every_converging_solver(problem, G, q, reference: Candidate, budget: int,
                                  sigma_min: float | None = None,
                                  tol: float = CONVERGED) -> set[str]:
    """Every registered solver from zero to `tol` m/s within `budget` iterations; those that
    get there must solve this LCP (rebuilt here) and agree with the reference. Returns them."""
    converged = set()
    for name in registry.METHODS:
        settings = registry.settings(name, BUDGET.get(name, budget), True, {"abs_tol": tol})
        result = registry.METHODS[name].solve(problem.copy(), np.zeros(problem.m), settings)
        if result.status != "absolute":
            continue
        converged.add(name)
        mine = Candidate(G, q, result.lam)
        assert mine.lam.min() >= 0.0, name
        # Its residual, recomputed from the rebuilt W and q, is the one it reported.
        assert mine.residual <= 2 * tol, (name, mine.residual)
        assert_agree(mine, reference, sigma_min, name)
    return converged


@pytest.fixture(scope="module")
def bowl():
    """The settled bowl: 300 steps of 20 PGS iterations (350 marbles, ~1270 contacts, W
    singular)."""
    problem = settled("bowl", 300)
    G, q = rebuilt(problem)
    return problem, G, q


def test_the_rebuilt_lcp_is_the_problem_the_solvers_get(bowl):
    problem, G, q = bowl
    # b agrees with the project's assembly to rounding; the 1272 contacts of 350 marbles leave
    # W singular (rank <= 1050).
    np.testing.assert_allclose(q, problem.rhs, rtol=0, atol=64 * EPS * np.abs(q).max())
    assert problem.m > 3 * problem.n
    lam = np.random.default_rng(0).uniform(0, 1, problem.m)
    np.testing.assert_allclose(G @ (G.T @ lam), problem.apply(lam), rtol=1e-12, atol=1e-12)


def test_two_independent_references_agree_on_the_settled_bowl(bowl):
    problem, G, q = bowl
    by_nnls = Candidate(G, q, nnls_solution(G, q))
    by_ipm = Candidate(G, q, interior_point_solution(G, q))
    for ref in (by_nnls, by_ipm):
        assert ref.lam.min() >= -1e-15 and ref.residual <= 1e-12
    assert_agree(by_nnls, by_ipm, what="nnls vs interior point")


def test_every_converging_solver_agrees_with_the_reference_on_the_settled_bowl(bowl):
    problem, G, q = bowl
    reference = Candidate(G, q, np.maximum(nnls_solution(G, q), 0.0))
    converged = check_every_converging_solver(problem, G, q, reference, 12000)
    assert {"pgs", "psor", "pcg", "ppcg", "prox-gs", "pgs-sm", "mprgp"} <= converged


@pytest.mark.parametrize("scene, steps, params", [("column", 1, {}), ("mass-ratio", 1, {}),
                                                  ("mass-ratio", 1, {"ratio": 1e6})])
def test_where_w_is_definite_lambda_itself_agrees(scene, steps, params):
    problem = settled(scene, steps, **params)
    G, q = rebuilt(problem)
    W = (G @ G.T).toarray()
    sigma_min = float(np.linalg.eigvalsh(W).min())
    assert sigma_min > 0.0
    reference = Candidate(G, q, np.maximum(nnls_solution(G, q), 0.0))
    # The rounding floor of the residual: each e_c sums terms of size (|W| λ)_c + |q_c|, which
    # at 1e6:1 are 1e6 times e's own scale.
    floor = 64 * EPS * float(np.max(np.abs(W) @ reference.lam + np.abs(q)))
    assert reference.residual <= floor
    converged = check_every_converging_solver(problem, G, q, reference, 5000, sigma_min,
                                              tol=max(CONVERGED, floor))
    assert {"pcg", "ppcg", "pgs-sm", "mprgp"} <= converged


def box_check(n: int, steps: int, budget: int) -> set[str]:
    problem = settled("box", steps, n=n)
    G, q = rebuilt(problem)
    assert problem.m > 3 * problem.n  # a real pile: W singular
    reference = Candidate(G, q, np.maximum(interior_point_solution(G, q), 0.0))
    assert reference.residual <= 1e-12
    return check_every_converging_solver(problem, G, q, reference, budget)


def test_every_converging_solver_agrees_with_the_reference_on_a_box_of_500():
    converged = box_check(500, 300, 5000)
    assert {"pcg", "ppcg", "pgs-sm", "mprgp"} <= converged


@pytest.mark.slow
def test_every_converging_solver_agrees_with_the_reference_on_a_box_of_2000():
    """2000 marbles after 300 steps (7558 contacts; about a minute here): the interior point
    method takes ~17 s, pcg, ppcg, mprgp and pgs-sm converge, and PGS, PSOR and the proximal
    forms run out of their 20000 iterations (1e-4 to 1e-6 m/s). The box of 500 above is the
    same check in the default run."""
    converged = box_check(2000, 300, 20000)
    assert {"pcg", "ppcg", "pgs-sm", "mprgp"} <= converged
