"""Every solver on the same frozen contact problem: the comparison engine.

The problem is copied once and every method starts from the same λ0, runs exactly N iterations
(tolerances off, so curves have equal length) with its per-iteration trace, and contributes one
row: the natural-map residual after each iteration and the cumulative solve time. Kernels are
compiled, and run once on the frozen problem itself, before anything is timed; a solve is
repeated while it stays cheap and the element-wise median of the time curves is kept (the
residual evaluated after each iteration is outside the timed region).

Also here, because every front end needs them: `settle` (step a world and freeze the problem of
its last step, with the impulses that step could start from) and `reach` (when a curve first
gets below a tolerance).
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

import scenes
from solver import metrics
from solver.contact_states import contact_states, pseudo_solution
from solver.methods import registry
from solver.options import ITERATIONS, SolveSettings
from solver.options import DEVICE, PUSH_SPEED, StepOptions, auto_device, usable
from solver.parallel import activate
from solver.params import Param, ParamError
from solver.problem import ContactProblem
from solver.step import STABILISE, WARM_START, Simulation, StepReport, carry_over, carry_over_rows
from solver.warmup import warmup, warmup_for
from solver.world import World

from ..io.files import json_bytes, write_group
from .job import Cancelled, Job
from .progress import Progress
from .tables import reach as reach_curve

NO_STOP = {"abs_tol": 0.0, "rel_tol": 0.0}
# The options of a comparison; `iterations` is the solvers' own declaration with its default.
COMPARE_ITERATIONS = ITERATIONS.but(default=200, help="iterations of every solver on the "
                                    "frozen problem", hi=1_000_000)
SETTLE = Param("settle", 1, int, "steps to run; the last one's problem is frozen", lo=1,
               hi=10_000_000)
REPEATS = Param("repeats", 3, int, "timing runs per solver; the median curve is kept", lo=1,
                hi=100)
ERROR = "error"  # a solver that raised: its row is NaN and the message is in meta["errors"]
METRIC = "natural map ||min(lam, A lam + b)||_inf, m/s"
FRICTIONAL_METRIC = ("max over contacts of FCLIB's natural-map error ||lam - P_K(lam - u~)||_2, "
                     "u~ = u + mu ||u_t|| e_n (De Saxce), m/s")


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
        """The `benchmark.npy` array (docs/formats.md): fields solver, residual (m/s) and
        seconds (cumulative), each row one solver, shape (solvers,)."""
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


def ran_out(result, settings) -> bool:
    """Whether a traced solve ended at its time limit (settings.time_limit), short of its
    iterations, neither converged nor diverged."""
    return (settings.time_limit is not None and result.status == metrics.MAX_ITERATIONS
            and result.iterations < settings.iterations and result.seconds is not None
            and float(result.seconds[-1]) >= settings.time_limit)


def _timed_runs(method, frozen: ContactProblem, start: np.ndarray, settings, repeats: int,
                budget: float):
    """The first result and the per-run cumulative-time curves of up to `repeats` runs; repeats
    stop once this solver has used `budget` seconds of wall time, or at once when the first run
    ran out of its time limit. Returns (result, curves, deterministic)."""
    wall = time.perf_counter()
    first = method.solve(frozen, start.copy(), settings)
    curves = [first.seconds]
    deterministic = True
    while (len(curves) < repeats and time.perf_counter() - wall < budget
           and not ran_out(first, settings)):
        again = method.solve(frozen, start.copy(), settings)
        if again.trace.shape != first.trace.shape or not np.array_equal(again.trace, first.trace):
            deterministic = False
            break
        curves.append(again.seconds)
    return first, curves, deterministic


def comparison_device(device: object) -> str:
    """DEVICE parsed, and for cuda checked usable here: ParamError (one line) before any
    settling is spent."""
    device = str(DEVICE.parse(device))
    if device == "cuda":
        from solver.cuda.runtime import unavailable

        why = unavailable()
        if why:
            raise ParamError(f"--device cuda: {why}")
    return device


def device_of(name: str, device: str, problem) -> str:
    """Where solver `name` solves `problem` in a comparison on `device` (DEVICE): the GPU
    for a method that runs there (with auto: when the GPU is usable and the pile large enough,
    as a step decides), else the CPU, so a comparison on the GPU still shows every solver."""
    if device == "cpu" or problem.explicit:
        return "cpu"
    settings = registry.settings(name)
    if device == "auto":
        return auto_device(settings, problem.n)
    return "cuda" if usable(settings, "cuda") else "cpu"


def _method_on(name: str, device: str):
    """Something with `solve(problem, λ0, settings)` that runs `name` on `device`."""
    if device == "cuda":
        from solver.cuda.frozen import FrozenSolver

        return FrozenSolver(name)
    return registry.METHODS[name]


def _solver_names(solvers: Iterable[str] | None, frictional: bool) -> list[str]:
    """The solvers to compare (default: every one that solves the problem), checked."""
    if solvers is None:
        names = registry.friction_solvers() if frictional else list(registry.METHODS)
    else:
        names = list(solvers)
    if not names:
        raise ParamError("no solver to compare")
    for name in names:
        registry.check_friction(name, frictional)
    if len(set(names)) != len(names):
        raise ParamError(f"a solver is listed twice: {', '.join(names)}")
    return names


def _start(lam0: np.ndarray | None, problem) -> np.ndarray:
    """The impulses every solver starts from: λ0 checked, or zero."""
    size, rows = problem.size, problem.rows
    start = np.zeros(size) if lam0 is None else np.array(lam0, dtype=np.float64)
    if (start.shape != (size,) or not np.all(np.isfinite(start))
            or np.any(start[::rows] < 0)):
        raise ParamError(f"lam0 must be {size} finite impulses, the normal ones non-negative")
    return start


def _pseudo(states: dict, result, settings) -> dict | None:
    """contact_states.pseudo_solution of a solve's answer."""
    return pseudo_solution(states, result.trace, settings["abs_tol"])


# long: one loop over the solvers, each row's curves, counts and exits gathered into one table.
def compare(problem: ContactProblem, iterations: int, solvers: Iterable[str] | None = None,
            lam0: np.ndarray | None = None, params: dict[str, dict] | None = None,
            progress: Callable[[int, int, str], None] | None = None, repeats: int = 3,
            budget: float = 2.0, device: str = "cpu", job: Job | None = None
            ) -> ComparisonTable:
    """Run `solvers` (default: every registered one) on a copy of `problem` for `iterations`
    iterations each, all from the same λ0 (`lam0`, (m,) N s, or zero). params: per-solver
    parameter overrides, e.g. {"psor": {"omega": 1.3}}; they win over the tolerances switched
    off here. repeats/budget: timing runs per solver, and the wall seconds after which no further
    repeat starts. device (DEVICE): the methods that run on the GPU solve there (device_of),
    meta["devices"] says where each ran; a GPU curve's times are one launch per iteration (the
    trace reads the residual between them). progress(done, total, name) is called after each
    solver. job (lab.report.job): each solver's solve stops at job.solver_budget seconds of
    solve time (meta["out_of_time"]: those that did, with their seconds), and job.cancel()
    ends the comparison within an iteration: the table then holds the solvers that finished
    (meta["cancelled"]: the one under way, how many finished of how many, those not run)."""
    device = comparison_device(device)
    frictional = problem.frictional
    names = _solver_names(solvers, frictional)
    repeats = int(REPEATS.parse(repeats))
    frozen = problem.copy()
    if frozen.block_count > 1:  # frozen in blocks: solved on as many threads (Numba's count
        activate(frozen.block_count)  # is per calling thread)
    rows = frozen.rows
    start = _start(lam0, frozen)
    settings = {name: _followed(registry.settings(name, iterations, True,
                                                  {**NO_STOP, **(params or {}).get(name, {})}),
                                job) for name in names}
    iterations = settings[names[0]].iterations
    compile_seconds = 0.0
    width = iterations + 1
    rows_r, rows_s, status = [], [], []
    done_its, runs, errors, nondeterministic, out_of_time = {}, {}, {}, [], {}
    states, pseudos = {}, {}  # with friction: what each answer makes the contacts do; stalls
    devices = {name: device_of(name, device, frozen) for name in names}
    cancelled = None
    if job is not None:
        job.begin(len(names))
    for k, name in enumerate(names):
        method = _method_on(name, devices[name])
        own = frozen.copy()  # a solver that wrote into its problem cannot change the next one's
        try:
            if job is not None:
                job.solver_started(name, k)
            if devices[name] == "cpu":  # a GPU kernel compiles at its first launch, below
                compile_seconds += warmup([name], None, frozen.block_count, (rows,))
            # One short untimed run on this very problem: any specialisation the tiny warm-up
            # problem did not trigger is compiled here, and caches are warm for the timing.
            method.solve(own, start.copy(), _followed(registry.settings(name, 2, True, NO_STOP),
                                                      job))
            result, curves, deterministic = _timed_runs(method, own, start, settings[name],
                                                        repeats, budget)
        except Cancelled:
            cancelled = {"solver": name, "finished": k, "of": len(names), "not_run": names[k:]}
            names = names[:k]
            break
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
            if frictional and not diverged:
                states[name] = contact_states(own, result.lam, result.residual)
                if (pseudo := _pseudo(states[name], result, settings[name])) is not None:
                    pseudos[name] = pseudo
            if not deterministic:
                nondeterministic.append(name)
            if ran_out(result, settings[name]):
                out_of_time[name] = float(result.seconds[-1])
        if progress is not None:
            progress(k + 1, len(names), name)
    meta = {"contacts": frozen.m, "marbles": frozen.n, "iterations": iterations,
            "metric": FRICTIONAL_METRIC if frictional else METRIC, "rows": rows,
            "rhs_norm": float(np.max(np.abs(frozen.rhs), initial=0.0)),
            "warm_start": lam0 is not None,  # the file's name for "started from λ0"
            "status": dict(zip(names, status)),
            "iterations_run": done_its, "timing_runs": runs,
            "timing": "median over timing_runs runs of the cumulative time of the iterations; "
                      "residual evaluation and compilation excluded",
            "compile_seconds": compile_seconds, "devices": devices,
            "params": {name: (params or {}).get(name, {}) for name in names},
            "solver_settings": {name: settings[name].params for name in names}}
    # Each solver's solve-time budget (s; None: none), a key of every comparison's file.
    meta["solver_budget_seconds"] = None if job is None else job.solver_budget
    for key, value in (("contact_states", states), ("pseudo_solutions", pseudos),
                       ("errors", errors),
                       ("nondeterministic", nondeterministic), ("out_of_time", out_of_time),
                       ("cancelled", cancelled)):
        if value:  # each only when it has something to say
            meta[key] = value
    shape = (len(names), width)
    return ComparisonTable(names, np.array(rows_r).reshape(shape),
                           np.array(rows_s).reshape(shape), status, meta)


def _followed(settings: SolveSettings, job: Job | None) -> SolveSettings:
    """`settings` with the job's time budget and its check after every iteration (the solve's
    observer, which raises Cancelled to abandon the solve)."""
    if job is None:
        return settings
    return dataclasses.replace(settings, observer=job.check, time_limit=job.solver_budget)


def reach(table: ComparisonTable, name: str, tol: float) -> tuple[int, float] | None:
    """(iterations, seconds) at which solver `name` first has a residual <= tol (m/s), or None
    if it never does within the table's iterations."""
    row = table.row(name)
    k = reach_curve(table.residual[row], tol)
    return None if k is None else (k, float(table.seconds[row, k]))


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


BENCHMARK_FILES = ("benchmark.npy", "benchmark.json", "benchmark.png")


def benchmark_title(table: ComparisonTable, meta: dict | None = None) -> str:
    """The figure's default title: 'scene: step K, m contacts' when `meta` names them."""
    meta = meta or {}
    if "scene" in meta and "step" in meta:
        return f"{meta['scene']}: step {meta['step']}, {table.meta.get('contacts', '?')} contacts"
    return ""


def write_benchmark(out_dir: str | Path, table: ComparisonTable, meta: dict | None = None,
                    title: str | None = None, stem: str = "benchmark") -> list[Path]:
    """Write DIR/benchmark.npy, DIR/benchmark.json and DIR/benchmark.png (the comparison figure,
    titled `title` or benchmark_title) as one unit (files.write_group): benchmark.json is the
    set's index, so a reader that finds it finds the other two from the same comparison. A
    folder that does not exist is created. `stem`: the files' name before the suffix. Returns
    the paths in BENCHMARK_FILES order (.npy, .json, .png)."""
    from .figures import comparison_figure  # matplotlib only when there is something to draw

    info = json_bytes(benchmark_info(table, meta))
    fig = comparison_figure(table, benchmark_title(table, meta) if title is None else title)
    parts = [(f"{stem}.npy", lambda f: np.save(f, table.structured(), allow_pickle=False)),
             (f"{stem}.png", lambda f: fig.savefig(f, format="png")),
             (f"{stem}.json", lambda f: f.write(info))]
    write_group(out_dir, parts)
    return [Path(out_dir) / f"{stem}{suffix}" for suffix in (".npy", ".json", ".png")]


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


def match_impulses(prev_keys: np.ndarray, prev_lam: np.ndarray, keys: np.ndarray,
                   rows: int = 1) -> np.ndarray:
    """Impulses for contacts `keys` (m,) taken from the previous step's (`prev_keys`,
    `prev_lam`: (k,), or (k, rows) with friction) where the same marble pair appears, zero
    elsewhere: the simulation's own warm start matching. Returns (m * rows,)."""
    out = np.zeros(keys.shape[0] * rows)
    if prev_keys is None or not prev_keys.size or not keys.size:
        return out
    prev_lam = np.asarray(prev_lam, dtype=np.float64)
    prev_rows = 1 if prev_lam.ndim == 1 else prev_lam.shape[1]
    if rows == 1 and prev_rows == 1:
        carry_over(prev_keys, prev_lam, keys, out)
    else:
        carry_over_rows(prev_keys, np.ascontiguousarray(prev_lam.ravel()), prev_rows, keys,
                        out, rows)
    return out


def settle(world: World, steps: int, settings: SolveSettings,
           warm_start: float = WARM_START.default,
           progress: Callable[[int, int], None] | None = None,
           impulses: tuple[np.ndarray, np.ndarray] | None = None,
           stabilise: float = STABILISE.default, threads: int = 1,
           push_speed: float = PUSH_SPEED.default) -> FrozenStep:
    """Step `world` (in place) `steps` times with the solver `settings` chose and freeze the
    last step's problem. impulses: (keys, lam) of the step before the first (a world loaded
    from a state snapshot), for the warm start; threads: of the simulation core (a pile of
    parallel.MIN_MARBLES or more then freezes a problem in blocks, solved in parallel);
    push_speed: m/s, the fastest an overlap is removed (PUSH_SPEED)."""
    steps = int(SETTLE.parse(steps))
    sim = Simulation(world, StepOptions(settings, warm_start, stabilise, threads,
                                        push_speed=push_speed))
    if impulses is not None:
        sim.set_impulses(*impulses)
    prev_keys, prev_lam = np.zeros(0, np.int64), np.zeros(0)
    report = None
    for k in range(steps):
        last = k == steps - 1
        if last:
            prev_keys, prev_lam = sim.impulses()
        report = sim.step(trace=last)
        if progress is not None:
            progress(k + 1, steps)
    problem = sim.problem.copy()
    keys = problem.key if problem.key is not None else np.zeros(0, np.int64)
    warm = match_impulses(prev_keys, prev_lam, keys, problem.rows)
    return FrozenStep(problem, warm, report, sim)


def parse_solver_list(text: str | None) -> list[str]:
    """'a,b,c' -> names, each registered and listed once; None -> every registered solver."""
    if text is None:
        return list(registry.METHODS)
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise ParamError(f"--solvers {text!r} has an empty name; give a,b,c (valid: "
                         f"{', '.join(registry.METHODS)})")
    for name in names:
        registry.get(name)
    if len(set(names)) != len(names):
        raise ParamError(f"--solvers {text!r} lists a solver twice")
    return names


@dataclass(frozen=True)
class ScenePlan:
    """A comparison of solvers on one scene: the scene (a name and its resolved parameters; or
    a world loaded from the state snapshot `state`, whose scene is named when the file says),
    `settle` steps driven by `settle_settings`, then `iterations`
    of every solver in `solvers` (with `solver_params` overrides) on the frozen problem, from
    zero or, with `from_previous`, from the previous step's impulses matched by pair."""

    scene: str
    scene_params: dict | None  # None: not known (a state snapshot that does not say)
    settle: int
    iterations: int
    solvers: list[str]
    settle_settings: SolveSettings
    warm_start: float = WARM_START.default
    solver_params: dict = field(default_factory=dict)
    from_previous: bool = False
    dt: float | None = None
    repeats: int = REPEATS.default
    budget: float = 2.0
    state: str | None = None
    stabilise: float = STABILISE.default
    threads: int = 1
    push_speed: float = PUSH_SPEED.default
    device: str = "cpu"  # where the compared solvers that run on the GPU solve (compare())
    source: str = "marbles-bench"  # the program that ran the comparison (benchmark.json)


def compare_scene(plan: ScenePlan, world: World | None = None, label: str | None = None,
                  quiet: bool = False, impulses: tuple[np.ndarray, np.ndarray] | None = None
                  ) -> tuple[ComparisonTable, dict]:
    """Build the scene (or take `world` and the `impulses` of its step before, as a state
    snapshot has them), settle it, compare the solvers on the frozen step; returns (table,
    benchmark.json meta). Shared by `compare` and `report`."""
    if world is None:
        world = scenes.build(plan.scene, plan.scene_params)
    if plan.dt is not None:
        world.dt = plan.dt
    label = label or plan.scene
    warmup_for(world, [plan.settle_settings.method], plan.threads)
    progress = None if quiet else Progress(f"{label}: settling", plan.settle)
    frozen = settle(world, plan.settle, plan.settle_settings, plan.warm_start, progress,
                    impulses, plan.stabilise, plan.threads, plan.push_speed)
    progress = None if quiet else Progress(f"{label}: comparing", len(plan.solvers), after=1.0)
    table = compare(frozen.problem, plan.iterations, plan.solvers,
                    frozen.warm if plan.from_previous else None, plan.solver_params, progress,
                    repeats=plan.repeats, budget=plan.budget, device=plan.device)
    meta = benchmark_meta(plan, world, frozen.step, frozen.problem,
                          float(frozen.report.result.residual))
    return table, meta


def benchmark_meta(plan: ScenePlan, world: World, step: int, problem: ContactProblem,
                   step_residual: float) -> dict:
    """benchmark.json's description of a comparison on the problem of step `step` of `world`
    (the world after that step) run as `plan` says: the one definition that `compare` and
    the window's benchmark share, so their files carry the same keys (docs/cli.md)."""
    settings = plan.settle_settings
    origin = {"scene": plan.scene, **({"state": str(plan.state)} if plan.state else {}),
              **({} if plan.scene_params is None else {"scene_params": plan.scene_params})}
    return {**origin, "n_marbles": world.n,
            "step": step, "time": world.time - world.dt, "dt": world.dt,
            "contact_count": problem.m,
            "settings": {"settle": plan.settle, "settle_solver": settings.method,
                         "settle_iterations": settings.iterations,
                         "settle_params": settings.params,
                         "simulation": {"warm_start": plan.warm_start,
                                        "stabilise": plan.stabilise,
                                        "push_speed": plan.push_speed},
                         "iterations": plan.iterations, "warm_start": plan.from_previous,
                         "threads": plan.threads, "device": plan.device,
                         "solver_params": plan.solver_params, "repeats": plan.repeats,
                         "repeat_budget_seconds": plan.budget},
            "settle_step_residual": step_residual, "source": plan.source}
