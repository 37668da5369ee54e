"""FCLIB exchange (Acary et al.'s collection of frictional contact problems): the local 3D
problem u = W r + q with Coulomb friction in FCLIB's HDF5 layout, written atomically and read
back strictly (docs/formats.md, docs/friction-lab.md).

    /fclib_local/spacedim               int (1,) = 3
    /fclib_local/W/{m, n, nzmax, nz}    int (1,) each; nz = -1 compressed columns (p: n + 1
                                        column pointers, i: row indices), -2 compressed rows
                                        (p: m + 1 row pointers, i: column indices), >= 0
                                        triplets (p: column, i: row indices, nz of them)
    /fclib_local/W/{p, i}               int32, /fclib_local/W/x float64 (nzmax)
    /fclib_local/vectors/{q, mu}        float64 (m), (m / 3)
    /fclib_local/info/{title, description, math_info}   strings
    /guesses/number_of_guesses, /guesses/1/{r, u}       the run's impulses (written here)

The writer stores W in compressed columns, as FCLIB's own files do. The reader takes any of the
three forms, checks every size against the others before an array is read, refuses 2D problems,
bilateral constraints (R, V), global problems, non-finite values and a W that is not symmetric
(|W_ij − W_ji| above SYMMETRY × max |W|: a Delassus operator H M⁻¹ Hᵀ is symmetric by
construction) in one line, and starts
`--start stored` from /solution/r, else the first guess.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from solver.explicit import MatrixProblem, csr_from_coo
from solver.params import ParamError

from .files import atomic_write

FCLIB = "FCLIB file"
MAX_ENTRIES = 1 << 27  # values of W (1 GiB of float64): far beyond a pile stepped here
MAX_TEXT = 64 * 1024
# W's entries are sums of products rounded in different orders on either side of the diagonal:
# 1e-8 of the largest entry leaves the rounding of any double-precision writer far behind.
SYMMETRY = 1e-8
MATH_INFO = ("u = W r + q; r: impulses (N s), u: relative velocities (m/s), rows normal, t1, "
             "t2 per contact; Coulomb friction with coefficient mu; W = J M^-1 J^T (1/kg)")


class FclibError(ValueError):
    """A refused FCLIB file; the message is one line and names the file."""


def _h5py():
    import h5py  # only when an FCLIB file is written or read
    return h5py


def _int(value: int) -> np.ndarray:
    return np.array([value], dtype=np.int32)


def explicit(problem, title: str = "", description: str = "") -> MatrixProblem:
    """The explicit form of `problem` (a FrictionalProblem with 3 rows per contact, or an
    explicit problem already); ValueError (one line) with rolling or spinning rows."""
    if problem.explicit:
        return problem
    if not problem.frictional:
        raise ValueError("FCLIB holds frictional problems; this one has no friction rows "
                         "(set mu > 0)")
    try:
        return MatrixProblem.from_problem(problem, title=title, description=description)
    except ValueError as err:
        raise ValueError(f"FCLIB's local problem: {err}") from None


def _write(f, problem: MatrixProblem, lam, title: str, description: str) -> None:
    h5py = _h5py()
    size = problem.size
    rows, cols, vals = problem.coo()
    t_indptr, t_rows, t_vals = csr_from_coo(cols, rows, vals, size)  # CSR of Wᵀ = CSC of W
    with h5py.File(f, "w") as h5:
        local = h5.create_group("fclib_local")
        local.create_dataset("spacedim", data=_int(3))
        W = local.create_group("W")
        for name, value in (("m", size), ("n", size), ("nzmax", t_vals.size), ("nz", -1)):
            W.create_dataset(name, data=_int(value))
        W.create_dataset("p", data=t_indptr.astype(np.int32))
        W.create_dataset("i", data=t_rows.astype(np.int32))
        W.create_dataset("x", data=t_vals)
        vectors = local.create_group("vectors")
        vectors.create_dataset("q", data=problem.q)
        vectors.create_dataset("mu", data=problem.mu)
        info = local.create_group("info")
        for name, text in (("title", title), ("description", description),
                           ("math_info", MATH_INFO)):
            info.create_dataset(name, data=np.bytes_(text.encode("utf-8")))
        if lam is not None:
            guesses = h5.create_group("guesses")
            guesses.create_dataset("number_of_guesses", data=_int(1))
            first = guesses.create_group("1")
            first.create_dataset("r", data=np.asarray(lam, dtype=np.float64))
            first.create_dataset("u", data=problem.error(lam))


def save_fclib(path: str | os.PathLike, problem, lam: np.ndarray | None = None,
               title: str = "marbles contact problem", description: str = "") -> Path:
    """Write `problem` (FrictionalProblem with 3 rows per contact, or MatrixProblem) as an
    FCLIB local problem, atomically; `lam`, the impulses a solve found, goes in as the first
    guess. ValueError (one line) for a problem FCLIB cannot hold (rolling resistance)."""
    problem = explicit(problem)
    if lam is not None and np.shape(lam) != (problem.size,):
        raise ValueError(f"lam must have {problem.size} entries, got shape {np.shape(lam)}")
    buffer = io.BytesIO()
    _write(buffer, problem, lam, title, description)
    data = buffer.getvalue()
    return atomic_write(path, lambda f: f.write(data))


class _Reader:
    """An open FCLIB file with checked access to its datasets."""

    def __init__(self, h5, path):
        self.h5 = h5
        self.path = path

    def error(self, message: str) -> FclibError:
        return FclibError(f"{self.path}: not a usable {FCLIB}: {' '.join(message.split())}")

    def dataset(self, key: str, shape: tuple | None, kinds: str):
        """The dataset at `key` (not read yet) after its kind and shape are checked."""
        h5py = _h5py()
        item = self.h5.get(key)
        if item is None:
            raise self.error(f"missing {key}")
        if not isinstance(item, h5py.Dataset):
            raise self.error(f"{key} is not a dataset")
        if item.dtype.kind not in kinds:
            raise self.error(f"{key} has dtype {item.dtype}, expected "
                             f"{'integers' if kinds == 'iu' else 'real numbers'}")
        if shape is not None and item.shape != shape:
            raise self.error(f"{key} has shape {item.shape}, expected {shape}")
        return item

    def integer(self, key: str) -> int:
        item = self.dataset(key, None, "iu")
        if item.shape not in ((), (1,)):
            raise self.error(f"{key} must be one integer, got shape {item.shape}")
        return int(np.asarray(item[()]).reshape(-1)[0])

    def reals(self, key: str, length: int, count: int | None = None) -> np.ndarray:
        """float64 values of a 1D dataset of `length` (its first `count`), all finite."""
        values = np.asarray(self.dataset(key, (length,), "iuf")[:count], dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            j = int(np.argmax(bad))
            raise self.error(f"{key} must be finite, got {float(values[j])!r} at [{j}]")
        return values

    def indices(self, key: str, length: int, bound: int, count: int | None = None):
        values = np.asarray(self.dataset(key, (length,), "iu")[:count], dtype=np.int64)
        if values.size and (values.min() < 0 or values.max() >= bound):
            raise self.error(f"{key} holds indices outside [0, {bound})")
        return values

    def text(self, key: str) -> str:
        item = self.h5.get(key)
        if item is None or not isinstance(item, _h5py().Dataset) or item.size != 1 \
                or item.dtype.kind not in "SOU" or (item.dtype.itemsize or 0) > MAX_TEXT:
            return ""
        value = np.asarray(item[()]).reshape(-1)[0]
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        return str(value)[:MAX_TEXT]


def _pointers(r: _Reader, key: str, length: int, nzmax: int) -> np.ndarray:
    p = r.indices(key, length, nzmax + 1)
    if p[0] != 0 or np.any(np.diff(p) < 0):
        raise r.error(f"{key} must rise from 0 (compressed pointers)")
    return p


def _matrix(r: _Reader) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """(size, rows, cols, values) of W in any of FCLIB's three forms, every size checked
    against the others before an array is read."""
    g = "fclib_local/W/"
    m, n, nzmax, nz = (r.integer(g + k) for k in ("m", "n", "nzmax", "nz"))
    if m != n or m <= 0 or m % 3:
        raise r.error(f"W is {m} x {n}; a 3D local problem has a square W of 3 rows per "
                      "contact")
    if not 0 <= nzmax <= min(MAX_ENTRIES, m * n):
        raise r.error(f"W/nzmax = {nzmax} must be in [0, min({m * n}, {MAX_ENTRIES})]")
    if nz == -1 or nz == -2:
        outer = n if nz == -1 else m
        p = _pointers(r, g + "p", outer + 1, nzmax)
        count = int(p[-1])
        inner = r.indices(g + "i", nzmax, m if nz == -1 else n, count)
        x = r.reals(g + "x", nzmax, count)
        major = np.repeat(np.arange(outer), np.diff(p))
        rows, cols = (inner, major) if nz == -1 else (major, inner)
    elif 0 <= nz <= nzmax:
        cols = r.indices(g + "p", nz, n)
        rows = r.indices(g + "i", nz, m)
        length = r.dataset(g + "x", None, "iuf").shape
        if length not in ((nz,), (nzmax,)):
            raise r.error(f"W/x has shape {length}, expected ({nz},) or ({nzmax},)")
        x = r.reals(g + "x", length[0], nz)
    else:
        raise r.error(f"W/nz = {nz}: -1 (compressed columns), -2 (compressed rows) or "
                      f"0..nzmax (triplets)")
    return m, rows, cols, x


def _open(path: Path):
    """h5py.File of `path` after the file checks (exists, regular, not empty, HDF5)."""
    h5py = _h5py()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FclibError(f"{path}: no such {FCLIB}") from None
    except OSError as err:
        raise FclibError(f"{path}: cannot read the {FCLIB} ({err.strerror})") from None
    if not os.path.isfile(path):
        raise FclibError(f"{path}: not a regular file, so not an {FCLIB}")
    if st.st_size == 0:
        raise FclibError(f"{path}: not a usable {FCLIB}: the file is empty")
    try:
        if not h5py.is_hdf5(path):
            raise FclibError(f"{path}: not a usable {FCLIB}: not an HDF5 file")
        return h5py.File(path, "r")
    except OSError as err:
        raise FclibError(f"{path}: not a usable {FCLIB}: {' '.join(str(err).split())}") from None


def _stored(r: _Reader, size: int) -> np.ndarray | None:
    """/solution/r, else the first guess's r, when it fits (size, finite); else None."""
    for key in ("solution/r", "guesses/1/r"):
        item = r.h5.get(key)
        if item is not None and isinstance(item, _h5py().Dataset) and item.shape == (size,) \
                and item.dtype.kind in "iuf":
            values = np.asarray(item[()], dtype=np.float64)
            if np.all(np.isfinite(values)):
                return values
    return None


def _check_symmetric(r: _Reader, problem: MatrixProblem) -> None:
    """Refuse a W whose largest |W_ij − W_ji| exceeds SYMMETRY × max |W| (duplicates summed)."""
    rows, cols, values = problem.coo()
    if values.size == 0:
        return
    size = problem.size
    key = rows * size + cols
    mirror = cols * size + rows
    order = np.argsort(key)
    found = np.searchsorted(key[order], mirror)
    found = np.minimum(found, key.size - 1)
    present = key[order][found] == mirror
    other = np.where(present, values[order][found], 0.0)
    gap = np.abs(values - other)
    j = int(np.argmax(gap))
    largest = float(np.max(np.abs(values)))
    if gap[j] > SYMMETRY * largest:
        raise r.error(f"W is not symmetric: W[{rows[j]}, {cols[j]}] = {float(values[j])!r} but "
                      f"W[{cols[j]}, {rows[j]}] = {float(other[j])!r} (difference "
                      f"{float(gap[j]):.3g} > {SYMMETRY:g} x max |W| = {largest:.3g}); the W of "
                      "a contact problem, H M^-1 H^T, is symmetric")


def _problem(r: _Reader) -> tuple[MatrixProblem, dict]:
    if "fclib_local" not in r.h5:
        if "fclib_global" in r.h5:
            raise r.error("a global problem (M, H, G); only local problems (W, q, mu) are "
                          "solved here")
        raise r.error("no /fclib_local group")
    dim = r.integer("fclib_local/spacedim")
    if dim != 3:
        raise r.error(f"spacedim = {dim}: only 3D problems are supported"
                      + (" (a 2D problem)" if dim == 2 else ""))
    for key in ("R", "V"):
        if f"fclib_local/{key}" in r.h5:
            raise r.error(f"has /fclib_local/{key} (bilateral constraints), which is not "
                          "supported")
    size, rows, cols, x = _matrix(r)
    q = r.reals("fclib_local/vectors/q", size)
    mu = r.reals("fclib_local/vectors/mu", size // 3)
    if np.any(mu < 0):
        j = int(np.argmax(mu < 0))
        raise r.error(f"vectors/mu must be >= 0, got {float(mu[j])!r} at [{j}]")
    problem = MatrixProblem.from_coo(rows, cols, x, q, mu, title=r.text("fclib_local/info/title"),
                                     description=r.text("fclib_local/info/description"))
    if np.any(problem.diag < 0):
        j = int(np.argmax(problem.diag < 0))
        raise r.error(f"W's diagonal must be >= 0 (a Delassus operator), got "
                      f"{float(problem.diag[j])!r} at row {j}")
    _check_symmetric(r, problem)
    return problem, {"lam": _stored(r, size), "title": problem.title,
                     "description": problem.description}


def read_fclib(path: str | os.PathLike) -> tuple[MatrixProblem, dict]:
    """The explicit problem of an FCLIB local 3D file and its extras {"lam": stored impulses or
    None, "title", "description"}; FclibError (a ValueError, one line naming the file) for
    anything unusable."""
    path = Path(path)
    with _open(path) as h5:
        try:
            return _problem(_Reader(h5, path))
        except (OSError, KeyError, TypeError) as err:  # a damaged dataset while reading
            raise FclibError(f"{path}: not a usable {FCLIB}: "
                             f"{' '.join(str(err).split())}") from None


def fclib_refusal(world, what: str = "--save-fclib") -> None:
    """ParamError (one line) when a run of `world` cannot be written as an FCLIB local problem:
    no friction, or rolling/spinning resistance (6 rows per contact, which FCLIB's local
    problem cannot hold; exporting only the Coulomb rows would be another problem)."""
    if not world.frictional:
        raise ParamError(f"{what}: FCLIB holds frictional problems and this run has no "
                         "friction; set mu or mu_wall > 0")
    if world.mu_roll > 0.0 or world.mu_spin > 0.0:
        raise ParamError(f"{what}: FCLIB's local problem has 3 rows per contact; "
                         f"mu_roll={world.mu_roll:g}, mu_spin={world.mu_spin:g} add rolling "
                         "rows: set both to 0")
