"""Products for the all-at-once methods: the same A λ on every kind of problem, and the step
sizes of the local laws from the contacts' blocks."""
import numpy as np
import pytest

from solver.explicit import MatrixProblem
from solver.methods.operator import (block_bound, local_steps, operator, product,
                                     tangent_bound)
from tests.solver.methods.reference import random_problem
from tests.solver.test_friction import random_frictional


@pytest.mark.parametrize("kind", ["frictionless", "geometry", "rolling", "matrix"])
def test_product_is_the_problems_own(kind):
    rng = np.random.default_rng(4)
    if kind == "frictionless":
        p = random_problem(rng, 5, 9)
    else:
        p = random_frictional(rng, 6, 10, rows=6 if kind == "rolling" else 3)
        if kind == "matrix":
            p = MatrixProblem.from_problem(p)
    lam = rng.normal(size=p.size)
    out = np.empty(p.size)
    product(operator(p), lam, out)
    np.testing.assert_allclose(out, p.apply(lam), rtol=1e-13, atol=1e-14)


def test_bounds_are_the_blocks_largest_eigenvalues():
    rng = np.random.default_rng(2)
    p = random_frictional(rng, 6, 10)
    A = p.dense()
    blocks = [A[3 * c:3 * c + 3, 3 * c:3 * c + 3] for c in range(p.m)]
    np.testing.assert_allclose(block_bound(p), [np.linalg.eigvalsh(b)[-1] for b in blocks])
    np.testing.assert_allclose(tangent_bound(p), [np.linalg.eigvalsh(b[1:, 1:])[-1]
                                                  for b in blocks])
    W = np.diag([1.0, 2.0, 4.0])
    W[1, 2] = W[2, 1] = 1.0
    mp = MatrixProblem.from_dense(W, np.zeros(3), np.array([0.5]))
    assert tangent_bound(mp)[0] == pytest.approx(np.linalg.eigvalsh(W[1:, 1:])[-1])
    assert block_bound(mp)[0] == pytest.approx(np.linalg.eigvalsh(W)[-1])
    steps = local_steps(mp, 1.5)
    assert steps[0, 0] == 1.5 and steps[0, 1] == pytest.approx(1.5 / tangent_bound(mp)[0])


def test_an_inert_contact_gets_no_steps():
    W = np.zeros((3, 3))
    mp = MatrixProblem.from_dense(np.eye(3) * 0.0 + W, np.zeros(3), np.array([0.5]))
    assert not local_steps(mp, 1.0).any()
