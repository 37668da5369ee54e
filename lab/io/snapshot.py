"""State and LCP snapshots (the file formats of the README), written atomically and read back
strictly (lab/io/npz.py): only the members needed, each header checked before its array is
allocated, every value checked before a compiled kernel sees it. A refusal is a ValueError with
one line naming the file and the bad value.

A state snapshot also carries the impulses of the step it was saved after (`contact_key`,
`contact_impulse`), so a warm-started run restarted from it is the uninterrupted run bit for
bit, and the scene it came from (`scene`), so a report can name it. Files without them load:
the restart is then cold and the scene unknown.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

import numpy as np

import scenes
from scenes import seed
from solver.params import ParamError, resolve
from solver.friction import ROWS_ROLLING, ROWS_SLIDING, FrictionalProblem
from solver.problem import ContactProblem
from solver.step import impulses_error
from solver.world import DT, World, container_geometry

from .files import write_npz
from .npz import Archive, ArchiveError

DENSE_LIMIT = 5000  # contacts; above it the LCP snapshot carries only the COO triplets
GEOMETRY = ("pairs", "normal", "gap", "v_pred", "dt")
FRICTIONAL_GEOMETRY = ("radius", "w_pred", "mu_roll", "mu_spin")
STATE = "state snapshot"
LCP = "LCP snapshot"
STATE_KEYS = ("x", "v", "radius", "mass", "container", "gravity", "dt", "time")
# Friction coefficients, each checked against the declaration every scene takes.
FRICTION = {p.name: p for p in (seed.MU, seed.MU_WALL, seed.MU_ROLL, seed.MU_SPIN)}
MAX_JSON_CHARS = 64 * 1024  # a container is about 100 characters
MAX_JSON_DEPTH = 8  # a container is 2 deep, a scene 2


def save_state(path: str | os.PathLike, world: World,
               impulses: tuple[np.ndarray, np.ndarray] | None = None,
               scene: dict | None = None) -> Path:
    """x, v (n, 3); radius, mass (n,); container (JSON string); gravity (3,); dt; time;
    damping (1/s); colour (n, 3); w (n, 3) angular velocity, rad/s; q (n, 4) orientation
    quaternions (w, x, y, z); mu, mu_wall, mu_roll, mu_spin; with `impulses`
    (Simulation.impulses()): contact_key (k,) int64 and contact_impulse (k,) N s, or (k, rows)
    with friction; with `scene` ({"name": ..., "params": {...}}): scene (JSON string)."""
    arrays = dict(x=world.x, v=world.v, radius=world.radius, mass=world.mass,
                  container=np.array(json.dumps(world.container)), gravity=world.gravity,
                  dt=np.float64(world.dt), time=np.float64(world.time),
                  damping=np.float64(world.damping), colour=world.colour, w=world.omega,
                  q=world.orientation, **{name: np.float64(getattr(world, name))
                                          for name in FRICTION})
    if impulses is not None:
        arrays["contact_key"] = np.asarray(impulses[0], dtype=np.int64)
        arrays["contact_impulse"] = np.asarray(impulses[1], dtype=np.float64)
    if scene is not None:
        arrays["scene"] = np.array(json.dumps({"name": scene["name"],
                                               "params": scene["params"]}))
    return write_npz(path, **arrays)


@dataclass
class StateSnapshot:
    """A loaded state: world; contact_key (k,) int64 and contact_impulse (k,) N s, the
    impulses of the step before (empty for a file without them); scene: {"name", "params"} of
    the scene the state came from, or None when the file does not say."""

    world: World
    contact_key: np.ndarray
    contact_impulse: np.ndarray
    scene: dict | None = None

    @property
    def impulses(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, lam) for Simulation.set_impulses."""
        return self.contact_key, self.contact_impulse

    def origin(self, path: str | os.PathLike) -> dict:
        """What a report says a run from this file (`path`) started from: "scene" (the stored
        name, or "state" when the file does not say), "state" (the file) and "scene_params"
        only when they are known."""
        out = {"scene": self.scene["name"] if self.scene else "state", "state": str(path)}
        if self.scene:
            out["scene_params"] = self.scene["params"]
        return out


def _inverse_mass(mass: np.ndarray) -> np.ndarray:
    """1/mass, 0 for an infinite mass (a fixed body)."""
    mass = np.asarray(mass, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(mass), 1.0 / mass, 0.0)


def _first_bad(values: np.ndarray, bad: np.ndarray) -> str:
    """'nan at [3, 1]': the first offending value and its index."""
    index = np.argwhere(bad)[0]
    where = f" at [{', '.join(map(str, index))}]" if values.ndim else ""
    return f"{values[tuple(index)].item()!r}{where}"


def _real(z: Archive, key: str, shape: tuple, finite: bool = True) -> np.ndarray:
    """Member `key` as float64 of `shape`; with `finite`, refused when a value is NaN or inf."""
    with np.errstate(over="ignore", invalid="ignore"):  # a wider float may overflow to inf
        values = np.array(z.array(key, shape), dtype=np.float64)
    if finite and not np.all(np.isfinite(values)):
        raise z.error(f"{key} must be finite, got {_first_bad(values, ~np.isfinite(values))}")
    return values


def _scalar(z: Archive, key: str) -> float:
    return float(_real(z, key, ()))


def _mass_error(mass: np.ndarray) -> str | None:
    """Why `mass` (kg) is not a mass: each must be > 0 (+inf: a fixed marble) with a finite
    inverse; NaN, 0, negative and -inf are not."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        bad = np.isnan(mass) | (mass <= 0) | ~np.isfinite(1.0 / mass)
    if bad.any():
        return (f"mass must be > 0 kg (inf for a fixed marble), got "
                f"{_first_bad(mass, bad)}")
    return None


def _json(z: Archive, key: str) -> object:
    """A JSON text member, bounded in size and nesting before it is parsed; NaN and Infinity
    (which Python's json reads) are refused."""
    text = z.text(key, MAX_JSON_CHARS)
    outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    steps = [1 if c in "[{" else -1 for c in outside_strings if c in "[]{}"]
    if max(accumulate(steps), default=0) > MAX_JSON_DEPTH:
        raise z.error(f"{key} is nested deeper than {MAX_JSON_DEPTH} levels")

    def refuse(word: str) -> None:
        raise ValueError(f"{word} is not a JSON number")
    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as err:
        raise z.error(f"{key} is not valid JSON ({err})") from None


def _container(z: Archive) -> dict:
    container = _json(z, "container")
    try:
        container_geometry(container)
    except ValueError as err:
        raise z.error(f"container: {err}") from None
    return container


def _scene(z: Archive) -> dict | None:
    """The stored scene, its parameters checked against the scene's declarations."""
    if "scene" not in z:
        return None
    scene = _json(z, "scene")
    if not (isinstance(scene, dict) and set(scene) == {"name", "params"}
            and isinstance(scene["params"], dict)):
        raise z.error('scene must be {"name": ..., "params": {...}}')
    if not isinstance(scene["name"], str) or scene["name"] not in scenes.SCENES:
        raise z.error(f"scene {scene['name']!r} is not a known scene; known: "
                      f"{', '.join(scenes.SCENES)}")
    try:
        params = resolve(scenes.get(scene["name"]).params, scene["params"],
                         f"scene {scene['name']}")
    except ParamError as err:
        raise z.error(f"scene: {err}") from None
    return {"name": scene["name"], "params": params}


def _marbles(z: Archive) -> dict:
    """x, v, radius and inverse mass of the marbles, checked."""
    x = _real(z, "x", ("n", 3))
    v = _real(z, "v", ("n", 3))
    radius = _real(z, "radius", ("n",))
    if np.any(radius <= 0):
        raise z.error(f"radius must be > 0 m, got {_first_bad(radius, radius <= 0)}")
    mass = _real(z, "mass", ("n",), finite=False)
    problem = _mass_error(mass)
    if problem:
        raise z.error(problem)
    colour = None
    if "colour" in z:
        colour = _real(z, "colour", ("n", 3))
        outside = (colour < 0) | (colour > 1)
        if outside.any():
            raise z.error(f"colour must be in [0, 1], got {_first_bad(colour, outside)}")
    return dict(x=x, v=v, radius=radius, inv_mass=_inverse_mass(mass), colour=colour)


def _settings(z: Archive) -> dict:
    """dt (s), gravity (m/s^2), time (s) and damping (1/s), checked."""
    gravity = _real(z, "gravity", (3,))
    try:
        dt = float(DT.parse(_scalar(z, "dt")))
    except ParamError as err:
        raise z.error(f"{err} s") from None
    damping = _scalar(z, "damping") if "damping" in z else 0.0  # older files: undamped
    if damping < 0:
        raise z.error(f"damping must be >= 0 1/s, got {damping!r}")
    return dict(dt=dt, gravity=gravity, time=_scalar(z, "time"), damping=damping)


def _spin_and_friction(z: Archive) -> dict:
    """omega (n, 3) rad/s, orientation (n, 4) unit quaternions and the friction coefficients;
    files written before marbles turned have no spin, the identity orientation and no
    friction."""
    out: dict = {}
    if "w" in z:
        out["omega"] = _real(z, "w", ("n", 3))
    if "q" in z:
        q = _real(z, "q", ("n", 4))
        norm = np.linalg.norm(q, axis=1)
        off = np.abs(norm - 1.0) > 1e-6
        if off.any():
            raise z.error(f"q must hold unit quaternions, got one of norm "
                          f"{_first_bad(norm, off)}")
        # Renormalised only where they are off by more than rounding: a saved state then
        # reopens bit for bit (the window's Ctrl+S, Ctrl+O).
        out["orientation"] = np.where(np.abs(norm - 1.0)[:, None] <= 1e-12, q, q / norm[:, None])
    for name, param in FRICTION.items():
        if name in z:
            try:
                out[name] = float(param.parse(_scalar(z, name)))
            except ParamError as err:
                raise z.error(str(err)) from None
    return out


def _impulses(z: Archive, n: int, walls: int) -> tuple[np.ndarray, np.ndarray]:
    stored = [key in z for key in ("contact_key", "contact_impulse")]
    if not any(stored):
        return np.zeros(0, np.int64), np.zeros(0)  # written before they were: a cold restart
    if not all(stored):
        raise z.error("contact_key and contact_impulse come together; one is missing")
    keys = z.array("contact_key", ("k",), kinds="iu")
    try:
        lam = z.array("contact_impulse", ("k",))
    except ArchiveError:  # with friction: (k, rows), rows checked by impulses_error
        lam = z.array("contact_impulse", ("k", None))
    problem = impulses_error(keys, lam, n, walls)
    if problem:
        raise z.error(problem)
    return np.array(keys, dtype=np.int64), np.array(lam, dtype=np.float64)


def read_state(path: str | os.PathLike) -> StateSnapshot:
    """Inverse of save_state; ValueError (one line naming the file) for anything else."""
    with Archive(path, STATE) as z:
        missing = [key for key in STATE_KEYS if key not in z]
        if missing:
            raise z.error(f"missing {', '.join(missing)}")
        marbles = _marbles(z)
        container = _container(z)
        world = World(container=container, **marbles, **_settings(z), **_spin_and_friction(z))
        walls = container_geometry(container).n_features
        keys, lam = _impulses(z, world.n, walls)
        return StateSnapshot(world, keys, lam, _scene(z))


def load_state(path: str | os.PathLike) -> World:
    """The world of a state snapshot (read_state has its impulses and scene too)."""
    return read_state(path).world


def save_lcp(path: str | os.PathLike, problem: ContactProblem, lam: np.ndarray,
             world: World | None = None) -> Path:
    """The LCP of one step in FCLIB's names: W = A, q = b, plus the geometry it came from.
    With friction (a FrictionalProblem) the problem has `rows` rows per contact (normal, t1,
    t2, then rolling t1, t2 and spinning with rolling resistance), and the file adds mu,
    mu_roll, mu_spin (m,), the tangents t1, t2 (m, 3), radius (n,), w_pred (n, 3) and rows.
    The world adds its masses and positions (x, never read back); without it the problem's
    inverse masses say everything the solvers read."""
    if problem.frictional:
        return _save_frictional_lcp(path, problem, lam, world)
    rows, cols, vals = problem.coo()
    arrays = dict(q=problem.rhs, W_row=rows, W_col=cols, W_val=vals, lam=np.asarray(lam),
                  pairs=np.stack([problem.body_a, problem.body_b], axis=1), normal=problem.normal,
                  gap=problem.gap, dt=np.float64(problem.dt), **_world_arrays(world),
                  v_pred=problem.v_pred, inv_mass=problem.inv_mass)
    if problem.m <= DENSE_LIMIT:
        arrays["W"] = problem.dense()
    return write_npz(path, **arrays)


def _world_arrays(world: World | None) -> dict:
    return {} if world is None else {"mass": world.mass, "x": world.x}


def _save_frictional_lcp(path, problem: FrictionalProblem, lam: np.ndarray,
                         world: World | None) -> Path:
    rows, cols, vals = problem.coo()
    arrays = dict(q=problem.rhs, W_row=rows, W_col=cols, W_val=vals, lam=np.asarray(lam),
                  pairs=np.stack([problem.body_a, problem.body_b], axis=1), normal=problem.normal,
                  t1=problem.t1, t2=problem.t2, gap=problem.gap, dt=np.float64(problem.dt),
                  **_world_arrays(world), inv_mass=problem.inv_mass, radius=problem.radius,
                  v_pred=problem.V_pred[:, :3], w_pred=problem.V_pred[:, 3:], mu=problem.mu,
                  mu_roll=problem.mu_roll, mu_spin=problem.mu_spin,
                  rows=np.int64(problem.rows))
    if problem.size <= DENSE_LIMIT:
        arrays["W"] = problem.dense()
    return write_npz(path, **arrays)


def load_lcp(path: str | os.PathLike) -> tuple[ContactProblem, dict]:
    """The matrix-free problem of an LCP snapshot and its extras: {"lam": stored impulses or
    None, "q": the stored q}. Raises ValueError with a one-line message naming the file for
    anything unusable: not an npz, missing or inconsistent arrays, out-of-range marble indices,
    non-finite values, a mass that is not > 0 (or inf), or a bare W/q snapshot without contact
    geometry (the solvers apply A = J M^-1 J^T from the geometry and never read a matrix, so
    W, W_row, W_col, W_val and x are never read)."""
    with Archive(path, LCP) as z:
        _check_lcp_members(z)
        v_pred = _real(z, "v_pred", ("n", 3))
        pairs = _pairs(z, v_pred.shape[0])
        normal = _real(z, "normal", ("m", 3))
        gap = _real(z, "gap", ("m",))
        dt = _scalar(z, "dt")
        if dt <= 0.0:
            raise z.error(f"dt={dt} must be positive")
        inv_mass = _lcp_inverse_mass(z)
        frictional = [k for k in FRICTIONAL_GEOMETRY + ("rows", "t1", "t2") if k in z]
        if "mu" not in z and frictional:
            raise z.error(f"mu missing: the member mu of a frictional snapshot is absent "
                          f"(it has {', '.join(frictional)})")
        if "mu" in z:
            problem = _frictional_problem(z, pairs, normal, gap, inv_mass, v_pred, dt)
        else:
            problem = ContactProblem(np.ascontiguousarray(pairs[:, 0]),
                                     np.ascontiguousarray(pairs[:, 1]), normal, gap, inv_mass,
                                     v_pred, dt)
        size = problem.size
        q = _real(z, "q", (size,)) if "q" in z else None
        lam = z.array("lam", (None,)) if "lam" in z else None
    _check_q(z, problem, q)
    lam = None if lam is None else np.array(lam, dtype=np.float64)
    if lam is not None and (lam.shape != (size,) or not np.all(np.isfinite(lam))):
        lam = None  # impulses that do not fit are dropped; --start stored then says so
    return problem, {"lam": lam, "q": q}


def _frictional_problem(z: Archive, pairs, normal, gap, inv_mass, v_pred, dt) -> FrictionalProblem:
    """The frictional problem of a snapshot with `mu`: its extra members checked, the tangents
    the ones this program would choose (the solvers rebuild A from the geometry)."""
    missing = [k for k in FRICTIONAL_GEOMETRY if k not in z]
    if missing:
        raise z.error(f"has mu but misses {', '.join(missing)}")
    radius = _real(z, "radius", ("n",))
    if np.any(radius <= 0):
        raise z.error(f"radius must be > 0 m, got {_first_bad(radius, radius <= 0)}")
    w_pred = _real(z, "w_pred", ("n", 3))
    coefficients = {}
    for name in ("mu", "mu_roll", "mu_spin"):
        values = _real(z, name, ("m",))
        if np.any(values < 0):
            raise z.error(f"{name} must be >= 0, got {_first_bad(values, values < 0)}")
        coefficients[name] = values
    rows = int(_real(z, "rows", ())) if "rows" in z else ROWS_SLIDING
    if rows not in (ROWS_SLIDING, ROWS_ROLLING):
        raise z.error(f"rows={rows} must be {ROWS_SLIDING} or {ROWS_ROLLING}")
    if rows == ROWS_SLIDING and (coefficients["mu_roll"].any() or coefficients["mu_spin"].any()):
        raise z.error("mu_roll or mu_spin > 0 needs rows=6 (rolling and spinning rows)")
    lengths = np.linalg.norm(normal, axis=1)
    if np.any(np.abs(lengths - 1.0) > 1e-9):
        raise z.error("normal must hold unit vectors")
    problem = FrictionalProblem(np.ascontiguousarray(pairs[:, 0]),
                                np.ascontiguousarray(pairs[:, 1]), normal, gap, radius,
                                inv_mass, np.ascontiguousarray(np.hstack([v_pred, w_pred])), dt,
                                coefficients["mu"], coefficients["mu_roll"],
                                coefficients["mu_spin"], rows)
    for name, chosen in (("t1", problem.t1), ("t2", problem.t2)):
        if name in z:
            stored = _real(z, name, ("m", 3))
            if not np.allclose(stored, chosen, rtol=0.0, atol=1e-12):
                raise z.error(f"{name} differs from the tangents this program chooses for "
                              "those normals; W would not be the problem the solvers solve")
    return problem


def _check_lcp_members(z: Archive) -> None:
    missing = [k for k in GEOMETRY if k not in z]
    if "inv_mass" not in z and "mass" not in z:
        missing.append("mass")
    if not missing:
        return
    if len(missing) == len(GEOMETRY) + 1 and "q" in z and ("W" in z or "W_val" in z):
        raise z.error(f"has W and q but no contact geometry ({', '.join(missing)} missing); "
                      "the solvers are matrix-free (A = J M^-1 J^T from the contacts), so a bare "
                      "matrix cannot be solved")
    raise z.error(f"missing {', '.join(missing)}")


def _pairs(z: Archive, n: int) -> np.ndarray:
    """(m, 2) int64: body_a in [-1, n) (-1: a wall), body_b in [0, n), not the same marble."""
    raw = z.array("pairs", ("m", 2), kinds="iu")
    if raw.size and (raw[:, 0].min() < -1 or raw[:, 1].min() < 0 or raw.max() >= n):
        raise z.error(f"pairs index marbles outside [-1, {n})")
    pairs = np.array(raw, dtype=np.int64)
    same = pairs[:, 0] == pairs[:, 1]
    if same.any():
        c = int(np.argmax(same))
        raise z.error(f"pairs[{c}] joins marble {pairs[c, 0]} to itself")
    return pairs


def _lcp_inverse_mass(z: Archive) -> np.ndarray:
    """(n,) 1/kg from inv_mass (finite, >= 0) or mass (> 0 or inf); both must agree."""
    mass = None
    if "mass" in z:
        mass = _real(z, "mass", ("n",), finite=False)
        problem = _mass_error(mass)
        if problem:
            raise z.error(problem)
    if "inv_mass" not in z:
        return _inverse_mass(mass)
    inv_mass = _real(z, "inv_mass", ("n",))
    if np.any(inv_mass < 0):
        raise z.error(f"inv_mass must be >= 0 1/kg, got {_first_bad(inv_mass, inv_mass < 0)}")
    if mass is not None and not np.allclose(inv_mass, _inverse_mass(mass), rtol=1e-12, atol=0):
        raise z.error("mass and inv_mass disagree (inv_mass must be 1/mass)")
    return inv_mass


def _check_q(z: Archive, problem: ContactProblem, q: np.ndarray | None) -> None:
    if q is None:
        return
    scale = max(1.0, float(np.max(np.abs(q), initial=0.0)))
    if not np.allclose(problem.rhs, q, rtol=1e-9, atol=1e-12 * scale):
        raise z.error("q does not match the contact geometry (b = J v_pred + gap/dt); the "
                      "solvers use the geometry, so they would solve another LCP")
