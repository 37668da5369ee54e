"""State and LCP snapshots (the file formats of the README), written atomically and read back
with every array checked before a compiled kernel indexes with it."""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from solver.problem import ContactProblem
from solver.world import World

from .files import write_npz

DENSE_LIMIT = 5000  # contacts; above it the LCP snapshot carries only the COO triplets
GEOMETRY = ("pairs", "normal", "gap", "v_pred", "dt")


def save_state(path: str | os.PathLike, world: World) -> Path:
    """x, v (n, 3); radius, mass (n,); container (JSON string); gravity (3,); dt; time;
    damping (1/s); colour (n, 3)."""
    return write_npz(path, x=world.x, v=world.v, radius=world.radius, mass=world.mass,
                     container=np.array(json.dumps(world.container)), gravity=world.gravity,
                     dt=np.float64(world.dt), time=np.float64(world.time),
                     damping=np.float64(world.damping), colour=world.colour)


def _inverse_mass(mass: np.ndarray) -> np.ndarray:
    """1/mass, 0 for an infinite mass (a fixed body)."""
    mass = np.asarray(mass, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(mass), 1.0 / mass, 0.0)


def load_state(path: str | os.PathLike) -> World:
    """Inverse of save_state; raises ValueError naming the file on a malformed snapshot."""
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError("a single array, not an .npz archive")
        with z:
            colour = z["colour"] if "colour" in z.files else None
            # Snapshots written before damping existed are undamped.
            damping = float(z["damping"]) if "damping" in z.files else 0.0
            return World(z["x"], z["v"], z["radius"], _inverse_mass(z["mass"]),
                         json.loads(str(z["container"])), colour, float(z["dt"]), z["gravity"],
                         float(z["time"]), damping)
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: not a marbles state snapshot ({err})") from None


def save_lcp(path: str | os.PathLike, problem: ContactProblem, lam: np.ndarray,
             world: World) -> Path:
    """The LCP of one step in FCLIB's names: W = A, q = b, plus the geometry it came from."""
    rows, cols, vals = problem.coo()
    arrays = dict(q=problem.rhs, W_row=rows, W_col=cols, W_val=vals, lam=np.asarray(lam),
                  pairs=np.stack([problem.body_a, problem.body_b], axis=1), normal=problem.normal,
                  gap=problem.gap, dt=np.float64(problem.dt), mass=world.mass, x=world.x,
                  v_pred=problem.v_pred, inv_mass=problem.inv_mass)
    if problem.m <= DENSE_LIMIT:
        arrays["W"] = problem.dense()
    return write_npz(path, **arrays)


def load_lcp(path: str | os.PathLike) -> tuple[ContactProblem, dict]:
    """The matrix-free problem of an LCP snapshot and its extras: {"lam": stored impulses or
    None, "q": the stored q}. Raises ValueError with a one-line message naming the file for
    anything unusable: not an npz, missing or inconsistent arrays, out-of-range marble indices,
    non-finite values, or a bare W/q snapshot without contact geometry (the solvers apply
    A = J M^-1 J^T from the geometry and never read a matrix)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such LCP snapshot file")
    arrays = _read_lcp_arrays(p)
    _check_lcp_arrays(p, arrays)
    pairs = arrays["pairs"].astype(np.int64)
    inv_mass = (np.asarray(arrays["inv_mass"], dtype=np.float64) if "inv_mass" in arrays
                else _inverse_mass(arrays["mass"]))
    problem = ContactProblem(np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1]),
                             np.ascontiguousarray(arrays["normal"], dtype=np.float64),
                             np.ascontiguousarray(arrays["gap"], dtype=np.float64), inv_mass,
                             np.ascontiguousarray(arrays["v_pred"], dtype=np.float64),
                             float(arrays["dt"]))
    q = arrays.get("q")
    if q is not None:
        if q.shape != (problem.m,):
            raise ValueError(f"{p}: q has shape {q.shape}, expected ({problem.m},)")
        scale = max(1.0, float(np.max(np.abs(q), initial=0.0)))
        if not np.allclose(problem.rhs, q, rtol=1e-9, atol=1e-12 * scale):
            raise ValueError(f"{p}: q does not match the contact geometry (b = J v_pred + gap/dt)"
                             "; the solvers use the geometry, so they would solve another LCP")
    lam = arrays.get("lam")
    if lam is not None and (lam.shape != (problem.m,) or not np.all(np.isfinite(lam))):
        lam = None
    return problem, {"lam": lam, "q": q}


def _read_lcp_arrays(p: Path) -> dict:
    try:
        z = np.load(p, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError("a single array, not an .npz archive")
        with z:
            files = set(z.files)
            if "mu" in files:
                raise ValueError("it has friction (mu, 3 rows per contact); the solvers here "
                                 "are frictionless")
            missing = [k for k in GEOMETRY if k not in files]
            if "inv_mass" not in files and "mass" not in files:
                missing.append("mass")
            if missing:
                bare = len(missing) == len(GEOMETRY) + 1
                if bare and "q" in files and ("W" in files or "W_val" in files):
                    raise ValueError(
                        f"has W and q but no contact geometry ({', '.join(missing)} missing); "
                        "the solvers are matrix-free (A = J M^-1 J^T from the contacts), so a "
                        "bare matrix cannot be solved")
                raise ValueError(f"missing {', '.join(missing)}")
            return {k: np.array(z[k]) for k in files}
    except (OSError, EOFError, zipfile.BadZipFile, KeyError) as err:
        raise ValueError(f"{p}: not a readable LCP snapshot ({err})") from None
    except ValueError as err:
        raise ValueError(f"{p}: not a usable LCP snapshot: {err}") from None


def _check_lcp_arrays(p: Path, a: dict) -> None:
    def bad(message: str) -> ValueError:
        return ValueError(f"{p}: not a usable LCP snapshot: {message}")

    pairs = a["pairs"]
    if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
        raise bad(f"pairs must be (m, 2) integers, got {pairs.dtype} {pairs.shape}")
    m = pairs.shape[0]
    mass_key = "inv_mass" if "inv_mass" in a else "mass"
    v_pred = a["v_pred"]
    if v_pred.ndim != 2 or v_pred.shape[1] != 3:
        raise bad(f"v_pred must be (n, 3), got {v_pred.shape}")
    n = v_pred.shape[0]
    for key, shape in {"normal": (m, 3), "gap": (m,), "dt": (), mass_key: (n,)}.items():
        if a[key].shape != shape:
            raise bad(f"{key} has shape {a[key].shape}, expected {shape}")
    for key in ("normal", "gap", "v_pred", "dt", mass_key):
        if not np.issubdtype(a[key].dtype, np.number) or (
                key != "mass" and not np.all(np.isfinite(a[key]))):
            raise bad(f"{key} has non-finite or non-numeric values")
    if float(a["dt"]) <= 0.0:
        raise bad(f"dt={float(a['dt'])} must be positive")
    if m and (pairs[:, 1].min() < 0 or pairs[:, 1].max() >= n or pairs[:, 0].min() < -1
              or pairs[:, 0].max() >= n):
        raise bad(f"pairs index marbles outside [-1, {n})")
    if np.any(np.asarray(a[mass_key], dtype=float) < 0):
        raise bad("negative masses")
