"""The explicit-matrix problem against the geometry it was built from: the same products,
errors and FCLIB error; its CSR, blocks and transpose; malformed matrices refused."""
import numpy as np
import pytest

from solver.explicit import MatrixProblem, csr_from_coo
from solver.friction import ROWS_ROLLING
from tests.solver.test_friction import random_frictional


@pytest.mark.parametrize("seed", range(5))
def test_it_is_the_geometry_problem_as_a_matrix(seed):
    rng = np.random.default_rng(seed)
    p = random_frictional(rng, n_bodies=6, m=10)
    mp = MatrixProblem.from_problem(p)
    lam = rng.normal(size=p.size)
    np.testing.assert_allclose(mp.apply(lam), p.apply(lam), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(mp.dense(), p.dense(), rtol=0, atol=1e-15)
    assert mp.residual(lam) == pytest.approx(p.residual(lam), rel=1e-10)
    assert mp.fclib_error(lam) == pytest.approx(p.fclib_error(lam), rel=1e-10)
    np.testing.assert_array_equal(mp.diag, np.diag(p.dense()))
    for c in range(p.m):
        np.testing.assert_array_equal(mp.blocks[c], mp.dense()[3 * c:3 * c + 3, 3 * c:3 * c + 3])
    # The transpose holds W's columns.
    W = mp.dense()
    for j in range(mp.size):
        col = np.zeros(mp.size)
        span = slice(mp.t_indptr[j], mp.t_indptr[j + 1])
        col[mp.t_indices[span]] = mp.t_data[span]
        np.testing.assert_array_equal(col, W[:, j])


def test_from_dense_and_coo_agree_and_sum_duplicates():
    W = np.array([[2.0, 0.5, 0, 0, 0, 0], [0.5, 3, 0, 0, 0, 0], [0, 0, 3, 0, 0, 0],
                  [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 2, 0], [0, 0, 0, 0, 0, 2]])
    q, mu = np.arange(6.0) - 3, np.array([0.3, 0.6])
    a = MatrixProblem.from_dense(W, q, mu)
    rows, cols = np.nonzero(W)
    vals = W[rows, cols]
    # The same entries split into two halves each: duplicates are summed.
    b = MatrixProblem.from_coo(np.r_[rows, rows], np.r_[cols, cols], np.r_[vals, vals] / 2, q, mu)
    np.testing.assert_array_equal(a.dense(), W)
    np.testing.assert_array_equal(b.dense(), W)
    assert a.m == 2 and a.size == 6 and a.n == 0 and a.rows == 3


@pytest.mark.parametrize("bad, message", [
    (dict(indptr=[0, 1, 1]), "row pointers"),
    (dict(indices=[0, 7]), "column indices"),
    (dict(data=[1.0]), "entries by the row pointers"),
    (dict(q=np.zeros(4)), "3 rows per contact"),
])
def test_malformed_matrices_are_refused_in_one_line(bad, message):
    good = dict(indptr=[0, 1, 2, 2], indices=[0, 1], data=[1.0, 2.0], q=np.zeros(3),
                mu=np.array([0.5]))
    args = {**good, **bad}
    if "indptr" in bad:
        args["indptr"] = bad["indptr"]
    with pytest.raises(ValueError, match=message) as err:
        MatrixProblem(**{k: np.asarray(v) for k, v in args.items()})
    assert "\n" not in str(err.value)


def test_rolling_rows_have_no_explicit_form():
    p = random_frictional(np.random.default_rng(1), rows=ROWS_ROLLING)
    with pytest.raises(ValueError, match="3 rows per contact"):
        MatrixProblem.from_problem(p)


def test_csr_from_coo_sorts_each_row():
    indptr, indices, data = csr_from_coo([1, 0, 1], [2, 1, 0], [3.0, 1.0, 2.0], 3)
    assert indptr.tolist() == [0, 1, 3, 3]
    assert indices.tolist() == [1, 0, 2] and data.tolist() == [1.0, 2.0, 3.0]
