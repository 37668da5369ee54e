"""Every frictional solver on FCLIB files this project did not write, and on its own exports
(not a test): iterations and seconds to an FCLIB error of 1e-12 (docs/friction-lab.md's table).

The files not its own are stacks of spheres built here from first principles: contact frames
from the sphere centres, H row by row from each contact point's lever arms, W = H M⁻¹ Hᵀ and
q = H v (v: one step of gravity from rest), written with h5py in FCLIB's triplet layout
(lab.io.fclib writes compressed columns and is not used to write them). They are then read by
the same reader as any file, as `marbles-bench solve --fclib` does.

    python -m benchmarks.handmade_fclib
    python -m benchmarks.handmade_fclib --stacks tetrahedron --exports none --sweeps 500
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import tempfile
import time
from pathlib import Path

import numpy as np

R, MASS, G, DT = 0.1, 1.0, 9.81, 0.02
MU_SPHERES, MU_FLOOR = 0.4, 0.6
TOLERANCE = 1e-12


def tetrahedral(side: int) -> np.ndarray:
    """Centres (n, 3) of a close-packed tetrahedral pile on the floor, `side` spheres along
    the base triangle's edge."""
    centres = []
    for layer in range(side):
        shift = layer * np.array([R, R / math.sqrt(3.0), 2.0 * R * math.sqrt(2.0 / 3.0)])
        for j in range(side - layer):
            for i in range(side - layer - j):
                centres.append(np.array([2 * R * (i + 0.5 * j), 2 * R * j * math.sqrt(0.75),
                                         R]) + shift)
    return np.array(centres)


def square_pyramid() -> np.ndarray:
    """Four touching spheres in a square on the floor and one on top."""
    base = [(x, y, R) for x in (0.0, 2 * R) for y in (0.0, 2 * R)]
    return np.array(base + [(R, R, R + math.sqrt(2.0) * R)])


STACKS = {"tetrahedron": lambda: tetrahedral(2), "tetrahedral-10": lambda: tetrahedral(3),
          "tetrahedral-20": lambda: tetrahedral(4), "square-pyramid": square_pyramid}


def contacts(x: np.ndarray):
    """(a, b, n) of every touching pair (a < b) and every sphere on the floor (a = -1): n (m, 3)
    the unit normal from a to b."""
    pairs = [(a, b) for a, b in itertools.combinations(range(len(x)), 2)
             if abs(np.linalg.norm(x[b] - x[a]) - 2 * R) < 1e-9]
    floor = [(-1, b) for b in range(len(x)) if abs(x[b, 2] - R) < 1e-9]
    a = np.array([p[0] for p in floor + pairs])
    b = np.array([p[1] for p in floor + pairs])
    n = np.array([[0.0, 0.0, 1.0] if i < 0 else (x[j] - x[i]) / (2 * R) for i, j in zip(a, b)])
    return a, b, n


def local_problem(x: np.ndarray):
    """W (3m, 3m), q (3m,), μ (m,) of the first step from rest: u = W r + q, rows n, t1, t2."""
    a, b, n = contacts(x)
    m, bodies = len(a), len(x)
    H = np.zeros((3 * m, 6 * bodies))
    for c in range(m):
        helper = np.array([1.0, 0.0, 0.0]) if abs(n[c, 0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        t1 = np.cross(n[c], helper)
        t1 /= np.linalg.norm(t1)
        frame = (n[c], t1, np.cross(n[c], t1))
        point = x[b[c]] - R * n[c]
        for k, d in enumerate(frame):
            for body, sign in ((b[c], 1.0), (a[c], -1.0)):
                if body >= 0:  # velocity of b's point minus a's; the floor does not move
                    H[3 * c + k, 6 * body:6 * body + 3] = sign * d
                    H[3 * c + k, 6 * body + 3:6 * body + 6] = sign * np.cross(point - x[body], d)
    inverse = np.tile(np.r_[np.full(3, 1.0 / MASS), np.full(3, 1.0 / (0.4 * MASS * R * R))],
                      bodies)
    v = np.zeros(6 * bodies)
    v[2::6] = -G * DT
    mu = np.where(a < 0, MU_FLOOR, MU_SPHERES)
    return (H * inverse) @ H.T, H @ v, mu


def write_by_hand(path: Path, W: np.ndarray, q: np.ndarray, mu: np.ndarray, title: str) -> None:
    """FCLIB's local layout with W as triplets, by h5py alone."""
    import h5py

    rows, cols = np.nonzero(W)
    with h5py.File(path, "w") as f:
        g = f.create_group("fclib_local")
        g["spacedim"] = np.array([3], dtype=np.int32)
        for key, value in (("m", len(q)), ("n", len(q)), ("nzmax", len(rows)),
                           ("nz", len(rows))):
            g[f"W/{key}"] = np.array([value], dtype=np.int32)
        g["W/p"], g["W/i"] = cols.astype(np.int32), rows.astype(np.int32)
        g["W/x"] = W[rows, cols]
        g["vectors/q"], g["vectors/mu"] = q, mu
        g["info/title"] = title
        g["info/description"] = "a stack of spheres at rest, built by hand (benchmarks)"
        g["info/math_info"] = "u = W r + q"


def exports(names: list[str], folder: Path) -> dict:
    """The project's own FCLIB exports of frozen steps (benchmarks.newton's piles, without
    rolling resistance)."""
    from benchmarks.newton import PILES, frozen
    from lab.io.fclib import save_fclib

    files = {}
    for name in names:
        path = folder / f"{name}.hdf5"
        scene, params, steps = PILES[name]
        # FCLIB's local problem has no rolling rows: the piles without rolling resistance
        params = {**params, "mu_roll": 0.0, "mu_spin": 0.0}
        save_fclib(path, frozen(scene, params, steps), title=name)
        files[f"{name} (export)"] = path
    return files


# Rows beyond the registry's defaults: label -> (solver, parameters)
VARIANTS = {"newton start=apgd": ("newton", {"start": "apgd", "start_iterations": 300})}


def reach(problem, name: str, cap: int, params: dict | None = None):
    """(iterations, seconds) to FCLIB's error TOLERANCE from zero, (None, None) if not within
    `cap` iterations, and the best error: seconds are the solve's own (the driver's clock
    stops while the error is measured); `params`: the solver's, beside abs_tol."""
    from lab.report.sources import source_settings  # prox-jacobi at Erleben's γ = 1
    from solver.methods import registry

    errors: list[float] = []
    settings = dataclasses.replace(
        source_settings(name, cap, True, {**(params or {}), "abs_tol": 1e-300}),
        observer=lambda lam: errors.append(problem.fclib_error(lam)))
    result = registry.get(name).solve(problem, np.zeros(problem.size), settings)
    done = [k for k, e in enumerate(errors) if e < TOLERANCE]
    best = min(errors, default=np.inf)
    if not done:
        return None, None, best
    return done[0] + 1, float(result.seconds[done[0] + 1]), best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.handmade_fclib",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--stacks", default=",".join(STACKS),
                        help="stacks built by hand, comma-separated (default: all)")
    parser.add_argument("--exports", default="pyramid,disk,heap",
                        help="the project's own exports, comma-separated, or none")
    parser.add_argument("--solvers", help="comma-separated (default: every frictional solver)")
    parser.add_argument("--newton-iterations", type=int, default=200,
                        help="newton's iterations at most (default %(default)s)")
    parser.add_argument("--sweeps", type=int, default=5000,
                        help="every other solver's iterations at most (default %(default)s)")
    parser.add_argument("--keep", metavar="DIR", help="keep the files in DIR")
    args = parser.parse_args(argv)
    from benchmarks.newton import PILES
    from lab.io.fclib import read_fclib
    from solver.methods import registry

    stacks = [s for s in args.stacks.split(",") if s]
    piles = [] if args.exports == "none" else [p for p in args.exports.split(",") if p]
    solvers = args.solvers.split(",") if args.solvers else registry.friction_solvers()
    for value, known, what in ((stacks, STACKS, "--stacks"), (piles, PILES, "--exports"),
                               (solvers, registry.friction_solvers(), "--solvers")):
        for item in value:
            if item not in known:
                parser.error(f"{what}: unknown {item!r} (one of {', '.join(known)})")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        files = {}
        for name in stacks:
            W, q, mu = local_problem(STACKS[name]())
            files[name] = folder / f"{name}.hdf5"
            write_by_hand(files[name], W, q, mu, name)
        files.update(exports(piles, folder))
        print(f"FCLIB error {TOLERANCE:g} from zero: iterations, ms (best error when not "
              f"reached; newton {args.newton_iterations} iterations, others {args.sweeps})")
        print("| solver | " + " | ".join(f"{k} ({read_fclib(p)[0].m})" for k, p in files.items())
              + " |")
        print("|---" * (len(files) + 1) + "|")
        rows = {name: (name, {}) for name in solvers}
        rows.update({k: v for k, v in VARIANTS.items() if v[0] in solvers})
        for label, (name, params) in rows.items():
            cells = []
            for path in files.values():
                problem = read_fclib(path)[0]
                cap = args.newton_iterations if name == "newton" else args.sweeps
                done, seconds, best = reach(problem, name, cap, params)
                cells.append(f"{done}, {1e3 * seconds:.1f} ms" if done else f"{best:.1e}")
            print(f"| `{label}` | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
