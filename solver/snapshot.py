"""State and LCP snapshots (DESIGN.md, contract) and the atomic file writes every output uses.

Every file is written to a temporary name in the destination folder and renamed into place, so a
reader (or a crash) never sees a half-written file.
"""
from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from .problem import ContactProblem
from .world import World

DENSE_LIMIT = 5000  # contacts; above it the LCP snapshot carries only the COO triplets


class OutputError(ValueError):
    """An output path that cannot be written; the message is one line naming the path."""


def check_writable(path: str | os.PathLike) -> Path:
    """Refuse, before any work starts, an output path that cannot be created."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise OutputError(f"output path {str(p)!r} is a directory")
    if not parent.is_dir():
        raise OutputError(f"output folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise OutputError(f"output path {str(p)!r} is not writable")
    return p


def atomic_write(path: str | os.PathLike, write: Callable[[io.BufferedWriter], None]) -> Path:
    """Call write(file) on a temporary file beside `path`, then rename it to `path`."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return p


def json_safe(value):
    """JSON has no inf or NaN: they become null (a diverged residual reads as null)."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def write_json(path: str | os.PathLike, data: dict) -> Path:
    text = json.dumps(json_safe(data), indent=2, allow_nan=False) + "\n"
    return atomic_write(path, lambda f: f.write(text.encode()))


def write_npz(path: str | os.PathLike, **arrays) -> Path:
    return atomic_write(path, lambda f: np.savez(f, **arrays))


def save_state(path: str | os.PathLike, world: World) -> Path:
    """x, v (n, 3); radius, mass (n,); container (JSON string); gravity (3,); dt; time;
    damping (1/s)."""
    return write_npz(path, x=world.x, v=world.v, radius=world.radius, mass=world.mass,
                     container=np.array(json.dumps(world.container)), gravity=world.gravity,
                     dt=np.float64(world.dt), time=np.float64(world.time),
                     damping=np.float64(world.damping), colour=world.colour)


def load_state(path: str | os.PathLike) -> World:
    """Inverse of save_state; raises ValueError naming the file on a malformed snapshot."""
    try:
        with np.load(path, allow_pickle=False) as z:
            mass = np.asarray(z["mass"], dtype=np.float64)
            with np.errstate(divide="ignore"):
                inv_mass = np.where(np.isfinite(mass), 1.0 / mass, 0.0)
            colour = z["colour"] if "colour" in z.files else None
            # Snapshots written before damping existed are undamped.
            damping = float(z["damping"]) if "damping" in z.files else 0.0
            return World(z["x"], z["v"], z["radius"], inv_mass, json.loads(str(z["container"])),
                         colour, float(z["dt"]), z["gravity"], float(z["time"]), damping)
    except (OSError, KeyError, ValueError) as err:
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


def load_lcp(path: str | os.PathLike) -> ContactProblem:
    """Rebuild the matrix-free problem from an LCP snapshot (for `marbles-bench solve`)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            pairs = np.asarray(z["pairs"], dtype=np.int64)
            if "inv_mass" in z.files:
                inv_mass = np.asarray(z["inv_mass"], dtype=np.float64)
            else:
                mass = np.asarray(z["mass"], dtype=np.float64)
                with np.errstate(divide="ignore"):
                    inv_mass = np.where(np.isfinite(mass), 1.0 / mass, 0.0)
            return ContactProblem(np.ascontiguousarray(pairs[:, 0]),
                                  np.ascontiguousarray(pairs[:, 1]),
                                  np.ascontiguousarray(z["normal"], dtype=np.float64),
                                  np.ascontiguousarray(z["gap"], dtype=np.float64),
                                  inv_mass, np.ascontiguousarray(z["v_pred"], dtype=np.float64),
                                  float(z["dt"]))
    except (OSError, KeyError, ValueError, IndexError) as err:
        raise ValueError(f"{path}: not a marbles LCP snapshot ({err})") from None
