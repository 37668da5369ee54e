"""Independent reference solutions for small contact problems (tests only)."""
from __future__ import annotations

import itertools

import numpy as np

from solver.problem import ContactProblem


def enumerate_lcp(A: np.ndarray, b: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Solve λ >= 0, Aλ + b >= 0, λ·(Aλ + b) = 0 by trying every active set (m <= 12).
    For singular PSD A any solution is returned (the post-impulse errors e are unique)."""
    m = len(b)
    scale = max(1.0, float(np.max(np.abs(b))))
    for size in range(m + 1):
        for S in itertools.combinations(range(m), size):
            lam = np.zeros(m)
            if S:
                idx = list(S)
                lam[idx] = np.linalg.lstsq(A[np.ix_(idx, idx)], -b[idx], rcond=None)[0]
            e = A @ lam + b
            if lam.min() >= -tol * scale and e.min() >= -tol * scale and \
                    np.max(np.abs(lam * e)) <= tol * scale * scale:
                return np.maximum(lam, 0.0)
    raise AssertionError("no solution found by enumeration")


def random_problem(rng: np.random.Generator, n_bodies: int, m: int,
                   walls: bool = True) -> ContactProblem:
    """A random frictionless contact problem A = J M^-1 J^T with m contacts among n bodies;
    with more contacts than 3 n degrees of freedom A is singular, as in packed piles."""
    body_b = rng.integers(0, n_bodies, size=m)
    body_a = rng.integers(-1 if walls else 0, n_bodies, size=m)
    same = body_a == body_b
    body_a[same] = -1
    normal = rng.normal(size=(m, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    gap = rng.uniform(-0.01, 0.01, size=m)
    inv_mass = 1.0 / rng.uniform(0.5, 5.0, size=n_bodies)
    v_pred = rng.normal(size=(n_bodies, 3))
    return ContactProblem(body_a.astype(np.int64), body_b.astype(np.int64), normal, gap,
                          inv_mass, v_pred, 0.02)


def solve(name: str, problem: ContactProblem, iterations: int, trace: bool = True,
          lam0: np.ndarray | None = None, **params):
    """Run registered solver `name` on `problem` from λ0 (default zero) with `params`."""
    from solver.methods import registry

    settings = registry.settings(name, iterations, trace, params)
    start = np.zeros(problem.m) if lam0 is None else lam0
    return registry.METHODS[name].solve(problem, start.copy(), settings)


def random_seed_problem(seed):
    """Seed `seed` of `benchmarks.solvers.survey` (docs/solver-lab.md, table 4)."""
    rng = np.random.default_rng(seed)
    return random_problem(rng, int(rng.integers(1, 5)), int(rng.integers(1, 10)))
