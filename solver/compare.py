"""Every solver on the same frozen contact problem: the comparison engine (no Qt).

The problem is copied once and every method starts from the same λ0, runs exactly N iterations
(tolerances off, so curves have equal length) with its per-iteration trace, and contributes one
row: the natural-map residual after each iteration and the cumulative solve time. Kernels are
compiled (and run once on the frozen problem itself) before anything is timed.

Timing: a solve is repeated (up to `repeats` times while it stays cheap) and the row holds the
element-wise median of the cumulative-time curves; the median of non-decreasing curves is itself
non-decreasing. The residual curve is the first run's; a repeat that gives a different curve marks
the solver as non-deterministic in the metadata. The times are those of the iterations only: the
residual evaluated after each iteration by the shared driver is outside the timed region.

Also here, because every front end needs them: `settle` (step a world and freeze the problem of
the last step, with the warm start that step would use), `reach` (when a curve first gets below
a tolerance) and `load_lcp_file` (an LCP snapshot checked before any kernel touches it).
"""
from __future__ import annotations

import json
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from . import metrics, registry
from .params import ParamError
from .problem import ContactProblem
from .snapshot import atomic_write, load_lcp, write_json
from .step import Simulation, StepReport, carry_over
from .warmup import warmup
from .world import World

NO_STOP = {"abs_tol": 0.0, "rel_tol": 0.0}
ERROR = "error"  # a solver that raised: its row is NaN and the message is in meta["errors"]
METRIC = "natural map ||min(lam, A lam + b)||_inf, m/s"


@dataclass
class ComparisonTable:
    """solvers: k names; residual, seconds: (k, N + 1) float64, index 0 = before the first
    iteration; residual in m/s (natural map), seconds cumulative solve time. A solve that stopped
    early keeps its last value (it converged, or stopped changing); after a divergence the
    residual is +inf (there is no usable iterate) and the time stays flat; a solver that raised
    has NaN rows. status: k exit statuses (metrics.STATUSES, or "error");
    meta: problem description (contacts, metric, iterations run, repeats, ...)."""

    solvers: list[str]
    residual: np.ndarray
    seconds: np.ndarray
    status: list[str]
    meta: dict = field(default_factory=dict)

    def structured(self) -> np.ndarray:
        """The `benchmark.npy` array of DESIGN.md: fields solver, residual, seconds."""
        width = max((len(s) for s in self.solvers), default=1)
        n = self.residual.shape[1]
        dtype = np.dtype([("solver", f"<U{width}"), ("residual", "<f8", (n,)),
                          ("seconds", "<f8", (n,))])
        out = np.zeros(len(self.solvers), dtype=dtype)
        out["solver"] = self.solvers
        out["residual"] = self.residual
        out["seconds"] = self.seconds
        return out

    def row(self, name: str) -> int:
        return self.solvers.index(name)

    @property
    def iterations(self) -> int:
        return self.residual.shape[1] - 1


def _pad(values: np.ndarray, length: int, fill: float | None = None) -> np.ndarray:
    """values extended to `length` with `fill` (default: its last value)."""
    last = values[-1] if values.size else np.nan
    out = np.full(length, last if fill is None else fill, dtype=np.float64)
    out[:values.size] = values[:length]
    return out


def _timed_runs(method, frozen: ContactProblem, start: np.ndarray, settings, repeats: int,
                budget: float):
    """The first result and the per-run cumulative-time curves of up to `repeats` runs; repeats
    stop once this solver has used `budget` seconds of wall time. Returns (result, curves,
    deterministic)."""
    wall = time.perf_counter()
    first = method.solve(frozen, start.copy(), settings)
    curves = [first.seconds]
    deterministic = True
    while len(curves) < repeats and time.perf_counter() - wall < budget:
        again = method.solve(frozen, start.copy(), settings)
        if again.trace.shape != first.trace.shape or not np.array_equal(again.trace, first.trace):
            deterministic = False
            break
        curves.append(again.seconds)
    return first, curves, deterministic


def compare(problem: ContactProblem, iterations: int, solvers: Iterable[str] | None = None,
            lam0: np.ndarray | None = None, params: dict[str, dict] | None = None,
            progress: Callable[[int, int, str], None] | None = None, repeats: int = 3,
            budget: float = 2.0) -> ComparisonTable:
    """Run `solvers` (default: every registered one) on a copy of `problem` for `iterations`
    iterations each, all from the same λ0 (`lam0`, (m,) N s, or zero). params: per-solver
    parameter overrides, e.g. {"psor": {"omega": 1.3}}; they win over the tolerances switched
    off here. repeats/budget: timing runs per solver, and the wall seconds after which no further
    repeat starts. progress(done, total, name) is called after each solver."""
    names = list(solvers) if solvers is not None else list(registry.METHODS)
    if not names:
        raise ParamError("no solver to compare")
    for name in names:
        registry.get(name)
    if len(set(names)) != len(names):
        raise ParamError(f"a solver is listed twice: {', '.join(names)}")
    if iterations < 1:
        raise ParamError(f"iterations={iterations} is not valid: must be at least 1")
    if repeats < 1:
        raise ParamError(f"repeats={repeats} is not valid: must be at least 1")
    frozen = problem.copy()
    start = np.zeros(frozen.m) if lam0 is None else np.array(lam0, dtype=np.float64)
    if start.shape != (frozen.m,) or not np.all(np.isfinite(start)) or np.any(start < 0):
        raise ParamError(f"lam0 must be {frozen.m} finite non-negative impulses")
    settings = {}
    for name in names:
        overrides = {**NO_STOP, **(params or {}).get(name, {})}
        settings[name] = registry.settings(name, iterations, True, overrides)
    compile_seconds = 0.0
    width = iterations + 1
    rows_r, rows_s, status = [], [], []
    done_its, runs, errors, nondeterministic = {}, {}, {}, []
    for k, name in enumerate(names):
        method = registry.METHODS[name]
        own = frozen.copy()  # a solver that wrote into its problem cannot change the next one's
        try:
            compile_seconds += warmup([name])
            # One short untimed run on this very problem: any specialisation the tiny warm-up
            # problem did not trigger is compiled here, and caches are warm for the timing.
            method.solve(own, start.copy(), registry.settings(name, 2, True, NO_STOP))
            result, curves, deterministic = _timed_runs(method, own, start, settings[name],
                                                        repeats, budget)
        except Exception as err:  # a broken solver must not take the others' rows with it
            errors[name] = f"{type(err).__name__}: {err}"
            rows_r.append(np.full(width, np.nan))
            rows_s.append(np.full(width, np.nan))
            status.append(ERROR)
            done_its[name], runs[name] = 0, 0
        else:
            diverged = result.status == metrics.DIVERGENCE
            rows_r.append(_pad(result.trace, width, np.inf if diverged else None))
            seconds = np.median(np.array([_pad(c, width) for c in curves]), axis=0)
            rows_s.append(seconds)
            status.append(result.status)
            done_its[name], runs[name] = int(result.iterations), len(curves)
            if not deterministic:
                nondeterministic.append(name)
        if progress is not None:
            progress(k + 1, len(names), name)
    meta = {"contacts": frozen.m, "marbles": frozen.n, "iterations": iterations,
            "metric": METRIC, "rhs_norm": float(np.max(np.abs(frozen.rhs), initial=0.0)),
            "warm_start": lam0 is not None, "status": dict(zip(names, status)),
            "iterations_run": done_its, "timing_runs": runs,
            "timing": "median over timing_runs runs of the cumulative time of the iterations; "
                      "residual evaluation and compilation excluded",
            "compile_seconds": compile_seconds,
            "params": {name: (params or {}).get(name, {}) for name in names},
            "solver_settings": {name: s.params for name, s in settings.items()}}
    if errors:
        meta["errors"] = errors
    if nondeterministic:
        meta["nondeterministic"] = nondeterministic
    return ComparisonTable(names, np.array(rows_r), np.array(rows_s), status, meta)


def reach(table: ComparisonTable, name: str, tol: float) -> tuple[int, float] | None:
    """(iterations, seconds) at which solver `name` first has a residual <= tol (m/s), or None
    if it never does within the table's iterations."""
    row = table.row(name)
    hit = np.flatnonzero(table.residual[row] <= tol)
    if hit.size == 0:
        return None
    k = int(hit[0])
    return k, float(table.seconds[row, k])


def benchmark_info(table: ComparisonTable, meta: dict | None = None) -> dict:
    """The benchmark.json content: the table's meta, `meta`, and per-solver summaries."""
    final = {}
    for k, name in enumerate(table.solvers):
        final[name] = {"status": table.status[k], "residual": float(table.residual[k, -1]),
                       "best_residual": float(np.nanmin(table.residual[k]))
                       if np.any(np.isfinite(table.residual[k])) else None,
                       "iterations_run": table.meta.get("iterations_run", {}).get(name),
                       "seconds": float(table.seconds[k, -1])}
    return {**table.meta, **(meta or {}), "solvers": table.solvers,
            "final_residual": {n: f["residual"] for n, f in final.items()},
            "total_seconds": {n: f["seconds"] for n, f in final.items()},
            "per_solver": final}


def write_benchmark(out_dir: str | Path, table: ComparisonTable, meta: dict | None = None
                    ) -> list[Path]:
    """Write DIR/benchmark.npy and DIR/benchmark.json atomically; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    npy = atomic_write(out / "benchmark.npy", lambda f: np.save(f, table.structured(),
                                                                 allow_pickle=False))
    info = json.loads(json.dumps(benchmark_info(table, meta), default=str))
    jsn = write_json(out / "benchmark.json", info)
    return [npy, jsn]


@dataclass
class FrozenStep:
    """The contact problem of the last step of a settled simulation. problem: a copy of it;
    warm: (m,) impulses of the step before, matched by marble pair (what a fully warm-started
    step starts from); report: that step's StepReport (its solve started from the simulation's
    `warm_start` fraction of `warm`); sim: the simulation, positioned after the step."""

    problem: ContactProblem
    warm: np.ndarray
    report: StepReport
    sim: Simulation

    @property
    def step(self) -> int:
        return self.sim.steps

    @property
    def time(self) -> float:
        """Simulated time, s, at the start of the frozen step."""
        return self.sim.world.time - self.sim.world.dt


def match_impulses(prev_keys: np.ndarray, prev_lam: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Impulses for contacts `keys` (m,) taken from the previous step's (`prev_keys`,
    `prev_lam`) where the same marble pair appears, zero elsewhere: the simulation's own warm
    start matching (step.carry_over)."""
    out = np.zeros(keys.shape[0])
    if prev_keys is not None and prev_keys.size and keys.size:
        carry_over(prev_keys, prev_lam, keys, out)
    return out


def settle(world: World, steps: int, solver: str = "pgs", iterations: int = 20,
           params: dict | None = None, warm_start: float = 0.0,
           progress: Callable[[int, int], None] | None = None) -> FrozenStep:
    """Step `world` (in place) `steps` times with `solver` and freeze the last step's problem."""
    if steps < 1:
        raise ParamError(f"settle={steps} is not valid: must be at least 1")
    sim = Simulation(world, solver, iterations, params, warm_start=warm_start, trace=False)
    prev_keys, prev_lam = np.zeros(0, np.int64), np.zeros(0)
    report = None
    for k in range(steps):
        last = k == steps - 1
        if last and sim.problem is not None:
            prev_keys = sim.problem.key if sim.problem.key is not None else prev_keys
            prev_lam = np.array(sim.lam)
        report = sim.step(trace=last)
        if progress is not None:
            progress(k + 1, steps)
    problem = sim.problem.copy()
    keys = problem.key if problem.key is not None else np.zeros(0, np.int64)
    warm = match_impulses(prev_keys, prev_lam, keys)
    return FrozenStep(problem, warm, report, sim)


# ---------------------------------------------------------------------------------------------
# LCP snapshot files, checked before any (unchecked, compiled) kernel indexes with their contents

GEOMETRY = ("pairs", "normal", "gap", "v_pred", "dt")


def load_lcp_file(path: str | Path) -> tuple[ContactProblem, dict]:
    """The matrix-free problem of an LCP snapshot (DESIGN.md) and its extras: {"lam": stored
    impulses or None, "q": the stored q}. Raises ValueError with a one-line message naming the
    file for anything unusable: not an npz, missing or inconsistent arrays, out-of-range marble
    indices, non-finite values, or a bare W/q snapshot without contact geometry (the solvers
    apply A = J M^-1 J^T from the geometry and never read a matrix)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such LCP snapshot file")
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
            arrays = {k: np.array(z[k]) for k in files}
    except (OSError, EOFError, zipfile.BadZipFile, KeyError) as err:
        raise ValueError(f"{p}: not a readable LCP snapshot ({err})") from None
    except ValueError as err:
        raise ValueError(f"{p}: not a usable LCP snapshot: {err}") from None
    _check_lcp_arrays(p, arrays)
    problem = load_lcp(p)
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


def _check_lcp_arrays(p: Path, a: dict) -> None:
    def bad(message: str) -> ValueError:
        return ValueError(f"{p}: not a usable LCP snapshot: {message}")

    pairs = a["pairs"]
    if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
        raise bad(f"pairs must be (m, 2) integers, got {pairs.dtype} {pairs.shape}")
    m = pairs.shape[0]
    mass = a.get("inv_mass", a.get("mass"))
    v_pred = a["v_pred"]
    if v_pred.ndim != 2 or v_pred.shape[1] != 3:
        raise bad(f"v_pred must be (n, 3), got {v_pred.shape}")
    n = v_pred.shape[0]
    shapes = {"normal": (m, 3), "gap": (m,), "dt": ()}
    shapes["inv_mass" if "inv_mass" in a else "mass"] = (n,)
    for key, shape in shapes.items():
        if a[key].shape != shape:
            raise bad(f"{key} has shape {a[key].shape}, expected {shape}")
    for key in ("normal", "gap", "v_pred", "dt", "inv_mass" if "inv_mass" in a else "mass"):
        if not np.issubdtype(a[key].dtype, np.number) or (
                key != "mass" and not np.all(np.isfinite(a[key]))):
            raise bad(f"{key} has non-finite or non-numeric values")
    if float(a["dt"]) <= 0.0:
        raise bad(f"dt={float(a['dt'])} must be positive")
    if m and (pairs[:, 1].min() < 0 or pairs[:, 1].max() >= n or pairs[:, 0].min() < -1
              or pairs[:, 0].max() >= n):
        raise bad(f"pairs index marbles outside [-1, {n})")
    if mass is not None and np.any(np.asarray(mass, dtype=float) < 0):
        raise bad("negative masses")
