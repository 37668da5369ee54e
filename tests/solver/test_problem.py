"""The matrix-free contact problem against its dense definition A = J M^-1 J^T."""
import numpy as np
import pytest

from solver import metrics
from tests.solver.methods.reference import random_problem


@pytest.mark.parametrize("seed", range(5))
def test_matrix_free_product_equals_dense(seed):
    rng = np.random.default_rng(seed)
    p = random_problem(rng, n_bodies=6, m=15)
    A = p.dense()
    lam = rng.uniform(0, 2, size=p.m)
    np.testing.assert_allclose(p.apply(lam), A @ lam, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.diag(A), p.diag, rtol=1e-12)
    J = p.jacobian()
    np.testing.assert_allclose(p.rhs, J @ p.v_pred.ravel() + p.gap / p.dt, rtol=1e-12)
    assert np.allclose(A, A.T) and np.linalg.eigvalsh(A).min() > -1e-10


@pytest.mark.parametrize("seed", range(3))
def test_coo_triplets_are_the_dense_matrix(seed):
    p = random_problem(np.random.default_rng(seed), n_bodies=5, m=12)
    rows, cols, vals = p.coo()
    W = np.zeros((p.m, p.m))
    np.add.at(W, (rows, cols), vals)
    np.testing.assert_allclose(W, p.dense(), atol=1e-12)


def test_residual_is_the_natural_map():
    rng = np.random.default_rng(3)
    p = random_problem(rng, 4, 8)
    lam = rng.uniform(0, 1, size=p.m)
    expected = metrics.natural_map(lam, p.dense() @ lam + p.rhs)
    assert p.residual(lam) == pytest.approx(expected, rel=1e-12)
    lam[2] = np.nan
    assert p.residual(lam) == np.inf


def test_residual_of_zero_impulses_skips_nothing_it_needs():
    """λ = 0 takes the shortcut e = b; it must agree with the dense definition, and a
    non-finite b still reads as divergence."""
    rng = np.random.default_rng(8)
    p = random_problem(rng, 5, 10)
    zero = np.zeros(p.m)
    assert p.residual(zero) == metrics.natural_map(zero, p.dense() @ zero + p.rhs)
    assert p.residual(zero) == pytest.approx(np.max(np.maximum(-p.rhs, 0.0)), rel=0, abs=0)
    tiny = zero.copy()
    tiny[3] = 1e-300  # one nonzero entry: the full product path, same value
    assert p.residual(tiny) == pytest.approx(p.residual(zero), rel=1e-12)
    p.rhs[1] = np.nan
    assert p.residual(zero) == np.inf


def test_the_row_helpers_cost_nothing_in_the_sweeps():
    """Every kernel that calls row_error/apply_row per contact is compiled with ROW_KERNEL,
    whose code has no reference counting: an incref/decref pair per contact made a PGS sweep
    5x slower. Read
    from the compiled code of a fresh (uncached) copy, so no timing is involved."""
    from numba import njit

    from solver.methods import gauss_seidel, naive, pgs_sm, prox_gs
    from solver.problem import ROW_KERNEL

    p = random_problem(np.random.default_rng(4), 3, 6)
    lam, v = np.zeros(p.m), p.velocity(np.zeros(p.m))
    args = {
        gauss_seidel.relaxed_range: (p.A, (p.bias, 1 / p.diag), v, lam, 0, p.m),
        naive.naive_sweeps: (p.A, p.bias, p.diag, v, lam, 2),
        prox_gs.prox_gs_range: (p.A, (p.bias, p.diag, p.diag), 1.0, True, v, lam, 0, p.m),
    }

    def copied(a):
        if isinstance(a, tuple):
            return tuple(copied(b) for b in a)
        return a.copy() if isinstance(a, np.ndarray) else a

    for kernel, call in args.items():
        fresh = njit(**{**ROW_KERNEL, "cache": False})(kernel.py_func)
        fresh(*copied(call))
        code = "".join(fresh.inspect_llvm().values())
        assert "NRT_incref" not in code and "NRT_decref" not in code, kernel.__name__
    for kernel in (prox_gs.prox_gs_range, pgs_sm.truncated_cg_phase,
                   pgs_sm.objective_change):
        assert kernel.targetoptions.get("_nrt") is False, kernel.__name__


def test_every_problem_kind_presents_one_interface():
    """What the step, the methods and the lab read of any problem, declared by all three kinds
    with the same meaning: no caller asks a problem what it is."""
    from solver.explicit import MatrixProblem
    from tests.solver.blocks import packed_box, problem_of

    frictionless = random_problem(np.random.default_rng(1), 3, 5)
    frictional = problem_of(packed_box(300, mu=0.5), 1)
    explicit = MatrixProblem.from_problem(frictional)
    for p, kind, rows in ((frictionless, "frictionless", 1), (frictional, "frictional", 3),
                          (explicit, "explicit", 3)):
        assert (p.kind, p.rows, p.size, p.block_count) == (kind, rows, p.m * rows, 1)
        assert p.frictional == (kind != "frictionless") and p.explicit == (kind == "explicit")
        assert p.apply(np.zeros(p.size)).shape == (p.size,)
