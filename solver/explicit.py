"""A frictional contact problem given by its matrix: u = W λ + q with W sparse (CSR), three rows
per contact in FCLIB's order (normal, t1, t2) and a friction coefficient per contact, with no
geometry behind it (docs/friction-lab.md). It is the second implementation of the problem
interface that FrictionalProblem implements (apply, error, residual, fclib_error, coo, dense,
copy, size, rows, diag, rhs, mu), so every frictional solver runs on problems other tools
wrote (FCLIB files, lab/io/fclib.py). The Gauss-Seidel solvers update u = W λ + q by W's columns
(kept as the CSR of Wᵀ) and read each contact's 3x3 diagonal block (`blocks`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .coulomb import contact_error, contact_errors_norm
from .friction import ROWS_SLIDING
from .problem import EXPLICIT, ROW_KERNEL


@njit(**ROW_KERNEL)
def csr_apply(indptr, indices, data, lam, out):
    """out <- W λ for W in CSR (indptr (size + 1,), indices, data (nnz,))."""
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            total += data[p] * lam[indices[p]]
        out[i] = total


@njit(**ROW_KERNEL)
def matrix_residual(indptr, indices, data, q, mu, lam, e):
    """max over contacts of `contact_error` (m/s) for u = W λ + q; e is scratch. inf when a
    value is not finite."""
    csr_apply(indptr, indices, data, lam, e)
    worst = 0.0
    for c in range(mu.shape[0]):
        k = 3 * c
        for j in range(3):
            e[k + j] += q[k + j]
        r = contact_error(lam, e, k, mu[c], 0.0, 0.0, ROWS_SLIDING)
        if not np.isfinite(r):
            return np.inf
        if r > worst:
            worst = r
    return worst


@njit(cache=True, nogil=True)
def _blocks(indptr, indices, data, out):
    """out (m, 3, 3) <- each contact's diagonal block W[3c:3c+3, 3c:3c+3]."""
    out[:] = 0.0
    for i in range(indptr.shape[0] - 1):
        c = i // 3
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j // 3 == c:
                out[c, i - 3 * c, j - 3 * c] += data[p]


def csr_from_coo(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, size: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr, indices, data) of the size x size matrix with the given triplets, duplicates
    summed, each row's columns ascending."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    flat = rows * size + cols
    uniq, inverse = np.unique(flat, return_inverse=True)
    data = np.zeros(uniq.size)
    np.add.at(data, inverse, np.asarray(vals, dtype=np.float64))
    r = uniq // size
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.add.at(indptr, r + 1, 1)
    return np.cumsum(indptr), (uniq % size).astype(np.int64), data


def _check_csr(indptr, indices, data, size: int) -> None:
    if indptr.shape != (size + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        raise ValueError(f"W: row pointers must be {size + 1} non-decreasing values from 0")
    if indices.shape != data.shape or indptr[-1] != data.shape[0]:
        raise ValueError(f"W: {indptr[-1]} entries by the row pointers, {indices.shape[0]} "
                         f"column indices and {data.shape[0]} values")
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise ValueError(f"W: column indices must be in [0, {size})")


@dataclass
class MatrixProblem:
    """u = W λ + q with Coulomb friction per contact. indptr, indices, data: W (size x size)
    in CSR, int64/int64/float64; q: (size,) m/s; mu: (m,); size = 3 m (FCLIB's order).
    Derived: diag (size,) W's diagonal, blocks (m, 3, 3) the contacts' diagonal blocks, and Wᵀ
    in CSR (t_indptr, t_indices, t_data: W's columns, which Gauss-Seidel updates u by).
    title/description: what the problem is, for reports and FCLIB's info."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    q: np.ndarray
    mu: np.ndarray
    title: str = ""
    description: str = ""
    diag: np.ndarray = field(init=False)
    blocks: np.ndarray = field(init=False)
    t_indptr: np.ndarray = field(init=False, repr=False)
    t_indices: np.ndarray = field(init=False, repr=False)
    t_data: np.ndarray = field(init=False, repr=False)
    _e: np.ndarray = field(init=False, repr=False)

    kind = EXPLICIT
    device = "cpu"  # where its arrays live (methods.driver.DEVICES)
    frictional = True
    explicit = True  # no geometry: the solvers take W's path
    rows = ROWS_SLIDING
    key = None
    partition = None  # no geometry, so no blocks of contacts: one
    block_count = 1

    def __post_init__(self) -> None:
        self.indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(self.indices, dtype=np.int64)
        self.data = np.ascontiguousarray(self.data, dtype=np.float64)
        self.q = np.ascontiguousarray(self.q, dtype=np.float64)
        self.mu = np.ascontiguousarray(self.mu, dtype=np.float64)
        size = self.q.shape[0]
        if self.q.ndim != 1 or size % 3 or self.mu.shape != (size // 3,):
            raise ValueError(f"q must have 3 rows per contact and mu one value per contact, got "
                             f"q {self.q.shape} and mu {self.mu.shape}")
        _check_csr(self.indptr, self.indices, self.data, size)
        rows = np.repeat(np.arange(size), np.diff(self.indptr))
        self.diag = np.zeros(size)
        on = rows == self.indices
        np.add.at(self.diag, rows[on], self.data[on])
        self.blocks = np.zeros((size // 3, 3, 3))
        _blocks(self.indptr, self.indices, self.data, self.blocks)
        self.t_indptr, self.t_indices, self.t_data = csr_from_coo(self.indices, rows,
                                                                  self.data, size)
        self._e = np.empty(size)

    @property
    def A(self) -> tuple:
        """W in CSR, the tuple the kernels take: (indptr (size + 1,), indices, data (nnz,))."""
        return (self.indptr, self.indices, self.data)

    @property
    def columns(self) -> tuple:
        """W by its columns and diagonal blocks, the tuple the Gauss-Seidel kernels take:
        (t_indptr, t_indices, t_data) the CSR of Wᵀ, and blocks (m, 3, 3)."""
        return (self.t_indptr, self.t_indices, self.t_data, self.blocks)

    @property
    def laws(self) -> tuple:
        """(mu, mu_roll, mu_spin), (m,) each: the last two 0 (FCLIB has no rolling rows)."""
        return (self.mu, self.mu_roll, self.mu_spin)

    @classmethod
    def from_coo(cls, rows, cols, vals, q, mu, **info) -> "MatrixProblem":
        size = np.shape(q)[0]
        return cls(*csr_from_coo(rows, cols, vals, size), q, mu, **info)

    @classmethod
    def from_dense(cls, W, q, mu, **info) -> "MatrixProblem":
        W = np.asarray(W, dtype=np.float64)
        rows, cols = np.nonzero(W)
        return cls.from_coo(rows, cols, W[rows, cols], q, mu, **info)

    @classmethod
    def from_problem(cls, problem, **info) -> "MatrixProblem":
        """The explicit form of a FrictionalProblem with 3 rows per contact: W = A (its COO
        triplets), q = b."""
        if problem.rows != ROWS_SLIDING:
            raise ValueError(f"an explicit problem has {ROWS_SLIDING} rows per contact (FCLIB's "
                             f"local problem); this one has {problem.rows} (rolling or spinning "
                             "resistance): set mu_roll and mu_spin to 0")
        return cls.from_coo(*problem.coo(), problem.rhs.copy(), problem.mu.copy(), **info)

    @property
    def m(self) -> int:
        return self.mu.shape[0]

    @property
    def n(self) -> int:
        """Marbles: none (the problem has no geometry)."""
        return 0

    @property
    def size(self) -> int:
        return self.q.shape[0]

    def tangent_bound(self) -> np.ndarray:
        """(m,) the largest eigenvalue of each contact's 2x2 tangent block of W (1/kg)."""
        b = self.blocks
        half = 0.5 * (b[:, 1, 1] - b[:, 2, 2])
        off = 0.5 * (b[:, 1, 2] + b[:, 2, 1])
        return 0.5 * (b[:, 1, 1] + b[:, 2, 2]) + np.hypot(half, off)

    def block_bound(self) -> np.ndarray:
        """(m,) the largest eigenvalue of each contact's symmetrised 3x3 block of W (1/kg)."""
        sym = 0.5 * (self.blocks + self.blocks.transpose(0, 2, 1))
        return np.linalg.eigvalsh(sym)[:, -1] if self.m else np.zeros(0)

    @property
    def rhs(self) -> np.ndarray:
        return self.q

    @property
    def mu_roll(self) -> np.ndarray:
        return np.zeros(self.m)

    @property
    def mu_spin(self) -> np.ndarray:
        return np.zeros(self.m)

    def copy(self) -> "MatrixProblem":
        return MatrixProblem(self.indptr.copy(), self.indices.copy(), self.data.copy(),
                             self.q.copy(), self.mu.copy(), self.title, self.description)

    def apply(self, lam: np.ndarray) -> np.ndarray:
        """W λ, (size,)."""
        out = np.empty(self.size)
        csr_apply(self.indptr, self.indices, self.data,
                  np.ascontiguousarray(lam, dtype=np.float64), out)
        return out

    def error(self, lam: np.ndarray) -> np.ndarray:
        """u = W λ + q."""
        return self.apply(lam) + self.q

    def residual(self, lam: np.ndarray) -> float:
        """max over contacts of FCLIB's natural-map error (`contact_error`)."""
        return matrix_residual(self.indptr, self.indices, self.data, self.q, self.mu,
                               np.ascontiguousarray(lam, dtype=np.float64), self._e)

    def scanned_residual(self, lam: np.ndarray) -> tuple[float, bool, float]:
        """(residual(λ), whether W, q and μ are finite, max |q|)."""
        finite = bool(np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.data))
                      and np.all(np.isfinite(self.mu)))
        if not finite:
            return np.inf, False, np.inf
        return self.residual(lam), True, float(np.max(np.abs(self.q), initial=0.0))

    def checked_residual(self, lam: np.ndarray) -> tuple[float, bool]:
        if not np.all(np.isfinite(lam)):
            return np.inf, False
        return self.residual(lam), True

    def coo(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = np.repeat(np.arange(self.size), np.diff(self.indptr))
        return rows, self.indices.copy(), self.data.copy()

    def dense(self) -> np.ndarray:
        W = np.zeros((self.size, self.size))
        r, c, v = self.coo()
        np.add.at(W, (r, c), v)
        return W

    def fclib_error(self, lam: np.ndarray) -> float:
        """FCLIB's normalised error ‖λ - P_K(λ - ũ)‖₂ / (1 + ‖q‖₂)."""
        lam = np.asarray(lam, dtype=np.float64)
        return contact_errors_norm(lam, self.error(lam), self.laws, 3) / (
            1.0 + np.linalg.norm(self.q))
