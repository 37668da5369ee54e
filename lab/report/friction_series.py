"""The frictional solvers on frozen frictional problems, over several snapshots of each scene.

The comparisons with friction: every frictional solver, and the variants the claims need (pgs
with the ccp law, Erleben's r strategies, adaptive r off), on the same frozen problem from
λ = 0, on a few settled steps of each frictional scene (`FRICTION_SCENES`). Each scene is stepped
once with PGS (20 iterations per step, from the frictional default warm start,
lab.session.spec); on each listed step every run goes for the scene's budget with its
per-iteration Coulomb error (FCLIB's natural map with De Saxcé's change of variable, what every
frictional trace shows) and its cumulative solve time. The runs of the relaxation (`apgd`,
`pgs friction=ccp`) also record the relaxation's natural map (apgd.relaxation_error), the
problem they solve; the proximal runs record how many iterates their adaptation rejected.
lab.report.friction_verdicts judges the claims.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import scenes
from scenes import default_warm_start
from solver import metrics
from solver.methods import registry
from solver.methods.apgd import relaxation_error
from solver.params import resolve
from solver.step import Simulation
from solver.warmup import warmup

from .compare import NO_STOP, ComparisonTable, FRICTIONAL_METRIC
from .sources import source_params
from .tables import TOLS, reach

FRICTION = {"mu": 0.5, "mu_wall": 0.5}


@dataclass(frozen=True)
class FrictionScene:
    """A frictional scene of the report: `scene` with parameter overrides `params`, frozen at
    `steps` (the last one is the table's problem), `budget` iterations per run; `why` says
    what it is for; `timed`: runs timed with repeats on every snapshot, not only the last (a
    verdict compares their times)."""

    scene: str
    params: dict
    steps: tuple[int, ...]
    budget: int
    why: str
    timed: tuple[str, ...] = ()


# Results go to DIR/<label>/; the frictionless scenes keep DIR/<scene>/.
FRICTION_SCENES = {
    "friction-bowl": FrictionScene(
        "bowl", FRICTION, (300, 400, 500), 3000,
        "The article's 350-marble bowl with μ = μ_wall = 0.5, at rest (friction-lab.md's "
        "frozen bowl is step 500)"),
    "friction-bowl-60": FrictionScene(
        "bowl", {"n": 60, **FRICTION}, (200, 250, 300), 5000,
        "60 marbles in the bowl, μ = μ_wall = 0.5, at rest: a pile every Coulomb solver "
        "converges on"),
    "friction-box": FrictionScene(
        "box", {"n": 2000, **FRICTION}, (200, 300, 400), 2000,
        "2000 marbles dropped into the box, μ = μ_wall = 0.5, settling: the large granular "
        "problem", ("apgd", "jacobi", "pgs", "pgs friction=ccp")),
    "friction-pyramid": FrictionScene(
        "pyramid", {}, (1, 25, 50), 5000,
        "The 5-layer pyramid with the scene's μ = 5, standing"),
}
# Run label -> (solver, parameters).
FRICTION_RUNS = {
    "naive": ("naive", {}), "pgs": ("pgs", {}), "pgs friction=ccp": ("pgs", {"friction": "ccp"}),
    "psor": ("psor", {}), "nsgs": ("nsgs", {}), "jacobi": ("jacobi", {}),
    "prox-gs": ("prox-gs", {}), "prox-gs r=blocked": ("prox-gs", {"r": "blocked"}),
    "prox-gs r=global": ("prox-gs", {"r": "global"}), "prox-gs adapt=0": ("prox-gs", {"adapt": False}),
    "prox-jacobi": ("prox-jacobi", {}), "prox-jacobi r=blocked": ("prox-jacobi", {"r": "blocked"}),
    "prox-jacobi r=global": ("prox-jacobi", {"r": "global"}),
    "prox-jacobi adapt=0": ("prox-jacobi", {"adapt": False}),
    "apgd": ("apgd", {}),
}
RELAXED = ("apgd", "pgs friction=ccp")  # runs that solve the cone complementarity relaxation
JACOBI_SOLVERS = ("jacobi", "prox-jacobi")  # the all-at-once forms; apgd is neither form
GRADIENT_SOLVERS = ("apgd",)


def run_of(label: str) -> tuple[str, dict]:
    """(solver, parameters) of run `label` of FRICTION_RUNS, the sources' settings included
    (lab/report/sources.py)."""
    solver, params = FRICTION_RUNS[label]
    return solver, {**source_params(solver), **params}


def form(label: str) -> str | None:
    """'Jacobi' or 'Gauss-Seidel' for a run of FRICTION_RUNS, None for a gradient method."""
    solver = FRICTION_RUNS[label][0]
    if solver in GRADIENT_SOLVERS:
        return None
    return "Jacobi" if solver in JACOBI_SOLVERS else "Gauss-Seidel"


@dataclass
class FrictionRun:
    """One run on a snapshot: residual, seconds (budget + 1,) Coulomb error (m/s; +inf after a
    divergence) and cumulative solve time (s; median over the timing runs), index 0 before the
    first iteration; status; relaxation (budget + 1,) the relaxation's natural map (m/s) or
    None; rejected: iterates the adaptation rolled back (None: the solver has none)."""

    residual: np.ndarray
    seconds: np.ndarray
    status: str
    relaxation: np.ndarray | None = None
    rejected: int | None = None
    runs: int = 1

    @property
    def diverged(self) -> bool:
        return self.status == metrics.DIVERGENCE


@dataclass
class FrictionSnapshot:
    """One frozen step of a frictional scene (label of FRICTION_SCENES): runs maps run label
    -> FrictionRun. rhs_norm: ‖b‖∞, m/s; time: simulated s at the start of the step."""

    label: str
    scene: str
    step: int
    marbles: int
    contacts: int
    rhs_norm: float
    time: float
    runs: dict[str, FrictionRun] = field(default_factory=dict)

    @property
    def budget(self) -> int:
        return max((len(r.residual) - 1 for r in self.runs.values()), default=0)


def _pad(values: np.ndarray, length: int, fill: float | None = None) -> np.ndarray:
    out = np.full(length, values[-1] if fill is None else fill, dtype=np.float64)
    out[:min(values.size, length)] = values[:length]
    return out


def frictional_params(scene: str) -> dict:
    """The scene's parameters with friction: its own where it has some, else μ = μ_wall = 0.5
    (those of the two it declares)."""
    params = resolve(scenes.get(scene).params, {}, f"scene {scene}")
    if scenes.has_friction(params):
        return {}
    return {k: v for k, v in FRICTION.items() if k in params}


def run_label(problem, label: str, iterations: int, repeats: int = 1,
              budget: float = 2.0) -> FrictionRun:
    """Run `label` on `problem` from λ = 0 for exactly `iterations` iterations (tolerances
    off), traced; the relaxation's error after each iteration for RELAXED runs (outside the
    timed region); up to `repeats` timing runs while they stay within `budget` wall seconds."""
    solver, params = run_of(label)
    method = registry.METHODS[solver]
    settings = registry.settings(solver, iterations, True, {**NO_STOP, **params})
    method.solve(problem.copy(), np.zeros(problem.size),
                 registry.settings(solver, 2, True, {**NO_STOP, **params}))  # compile, warm
    relaxed: list[float] = []
    observed = settings
    if label in RELAXED:
        relaxed.append(relaxation_error(problem, np.zeros(problem.size)))
        observed = dataclasses.replace(settings, observer=lambda lam: relaxed.append(
            relaxation_error(problem, lam)))
    wall = time.perf_counter()
    first = method.solve(problem.copy(), np.zeros(problem.size), observed)
    width = iterations + 1
    curves = [_pad(first.seconds, width)]
    while len(curves) < repeats and time.perf_counter() - wall < budget:
        curves.append(_pad(method.solve(problem.copy(), np.zeros(problem.size),
                                        settings).seconds, width))
    diverged = first.status == metrics.DIVERGENCE
    rejected = (first.info or {}).get("rejected")
    return FrictionRun(_pad(first.trace, width, np.inf if diverged else None),
                       np.median(np.array(curves), axis=0), first.status,
                       _pad(np.array(relaxed), width, np.inf if diverged else None)
                       if relaxed else None,
                       None if rejected is None else int(rejected), len(curves))


def scene_params(label: str) -> dict:
    """The resolved parameters of a frictional scene of the report."""
    fs = FRICTION_SCENES[label]
    return resolve(scenes.get(fs.scene).params, fs.params, f"scene {fs.scene}")


def frozen_frictional_steps(label: str, steps: tuple[int, ...]):
    """(step, simulated time at its start, copy of its problem) for each of `steps` of one
    PGS-driven run (20 iterations per step, the frictional default warm start)."""
    return frozen_steps(FRICTION_SCENES[label].scene, scene_params(label), steps)


def frozen_steps(scene: str, params: dict, steps: tuple[int, ...]):
    """(step, simulated time at its start, copy of its problem) for each of `steps` of one
    PGS-driven run of `scene` with resolved `params` (20 iterations per step, the default warm
    start of those parameters: all of the last step's impulses with friction)."""
    world = scenes.get(scene).build(params)
    sim = Simulation(world, registry.settings("pgs", 20, False), default_warm_start(params))
    out = []
    for k in range(1, max(steps) + 1):
        sim.step(trace=False)
        if k in steps:
            out.append((k, world.time - world.dt, sim.problem.copy()))
    return out


def run_labels(solvers: list[str]) -> list[str]:
    """The run labels whose solver is among `solvers`."""
    return [label for label, (solver, _) in FRICTION_RUNS.items() if solver in solvers]


def measure_friction(labels: list[str], solvers: list[str], repeats: int = 3,
                     iterations: int | None = None, budget: float = 2.0,
                     progress: Callable[[int, int], None] | None = None
                     ) -> dict[str, list[FrictionSnapshot]]:
    """Scene label -> its snapshots, each with every run of `solvers`. The last snapshot of a
    scene (its table) gets up to `repeats` timing runs per run, the others one except the
    scene's `timed` runs. iterations: every run's budget instead of the scene's."""
    runs = run_labels(solvers)
    warmup(sorted({FRICTION_RUNS[r][0] for r in runs} | {"pgs"}))
    total = sum(len(FRICTION_SCENES[s].steps) * len(runs) for s in labels)
    done, out = 0, {}
    for label in labels:
        fs = FRICTION_SCENES[label]
        out[label] = []
        n = iterations or fs.budget
        for step, t, problem in frozen_frictional_steps(label, fs.steps):
            snap = FrictionSnapshot(label, fs.scene, step, problem.n, problem.m,
                                    float(np.max(np.abs(problem.rhs), initial=0.0)), t)
            for run in runs:
                timed = step == fs.steps[-1] or run in fs.timed
                snap.runs[run] = run_label(problem, run, n, repeats if timed else 1, budget)
                done += 1
                if progress is not None:
                    progress(done, total)
            out[label].append(snap)
    return out


def snapshot_table(snap: FrictionSnapshot) -> ComparisonTable:
    """The snapshot as a ComparisonTable (rows: run labels), for benchmark.{npy,json,png}."""
    labels = list(snap.runs)
    return ComparisonTable(labels, np.array([snap.runs[r].residual for r in labels]),
                           np.array([snap.runs[r].seconds for r in labels]),
                           [snap.runs[r].status for r in labels],
                           {"contacts": snap.contacts, "marbles": snap.marbles,
                            "iterations": snap.budget, "metric": FRICTIONAL_METRIC,
                            "rows": 3, "rhs_norm": snap.rhs_norm, "warm_start": False,
                            "status": {r: snap.runs[r].status for r in labels},
                            "timing_runs": {r: snap.runs[r].runs for r in labels},
                            "timing": "median over timing_runs runs of the cumulative time of "
                                      "the iterations; residual evaluation excluded",
                            "params": {r: run_of(r)[1] for r in labels},
                            "relaxation_best": {r: float(np.min(snap.runs[r].relaxation))
                                                for r in labels
                                                if snap.runs[r].relaxation is not None},
                            "rejected": {r: snap.runs[r].rejected for r in labels
                                         if snap.runs[r].rejected is not None}})


def friction_series_json(series: dict[str, list[FrictionSnapshot]]) -> dict:
    """Every snapshot's numbers the verdicts use, for results.json (curves left out)."""
    out = {}
    for label, snaps in series.items():
        out[label] = [{"step": s.step, "contacts": s.contacts, "marbles": s.marbles,
                       "rhs_norm": s.rhs_norm, "budget": s.budget,
                       "runs": {r: {"status": run.status,
                                    **{f"iterations_to_{t:g}": reach(run.residual, t)
                                       for t in TOLS[True]},
                                    "best": float(np.min(run.residual)),
                                    "relaxation_best": None if run.relaxation is None
                                    else float(np.min(run.relaxation)),
                                    "rejected": run.rejected}
                                for r, run in s.runs.items()}}
                      for s in snaps]
    return out
