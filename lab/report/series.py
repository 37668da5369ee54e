"""The sources' claims measured on every scene they name, over several frozen steps each.

One frozen step can contradict the scene next to it (PGS ahead of CG after 20 iterations on
the bowl's step 500, behind on the disk's step 300), so the claims are judged on a series of
snapshots: each scene is stepped once with PGS (20 iterations, as `compare` settles) and the
contact problems of the listed steps are kept; on each, the solvers of the claims run from
λ = 0 for the scene's budget with their per-iteration residual, and on the bowl PGS and PGS+SM
are also timed to SOLVED m/s. lab.report.verdicts counts in how many snapshots each claim holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import scenes
from solver.methods import registry
from solver.problem import ContactProblem
from solver.step import Simulation
from solver.warmup import warmup

from .tables import reach

# Steps of each scene: the bowl's pile has landed by step 50 and rocks from then on (10 steps,
# 3 s to 12 s, including the article's 10 s); the disk's 5 from 2 s to 10 s; the column at rest
# and later (the claim is about a column at rest); the mass-ratio pair only at rest (later steps
# of a PGS-driven run crush the light marble).
SERIES_STEPS = {"bowl": tuple(range(150, 601, 50)), "disk": (100, 200, 300, 400, 500),
                "column": (1, 10, 150), "mass-ratio": (1,)}
# Iterations of every run on a snapshot: PSOR reaches the precision floor on the bowl in 5000.
SERIES_BUDGET = {"bowl": 5000, "disk": 2000, "column": 200, "mass-ratio": 3000}
# Run label -> (solver, parameters): the article's six, and its PCG as the sources wrote it.
RUNS = {"jacobi": ("jacobi", {}), "naive": ("naive", {}), "pgs": ("pgs", {}),
        "psor": ("psor", {}), "pcg": ("pcg", {}), "ppcg": ("ppcg", {}),
        "pcg safeguard=0": ("pcg", {"safeguard": False}),
        "ppcg safeguard=0": ("ppcg", {"safeguard": False})}
SOURCES_PCG = {"pcg": "pcg safeguard=0", "ppcg": "ppcg safeguard=0"}
SOLVED = 1e-10                    # m/s: the tolerance PGS and PGS+SM are timed to
SUBSPACE_SCENES = ("bowl",)       # the paper's regime: problems with a thousand contacts and more
SUBSPACE_BUDGET = {"pgs": 40000, "pgs-sm": 2000}  # iterations


@dataclass(frozen=True)
class TimeTo:
    """A solve timed to SOLVED m/s: iterations (None: not reached within its budget), seconds
    (median over runs; the whole run's when not reached), products with A spent, runs."""

    iterations: int | None
    seconds: float
    products: int
    runs: int


@dataclass
class Snapshot:
    """One frozen step of a scene: residual maps run label -> (budget + 1,) natural-map residual
    after each iteration (m/s, index 0 before the first); subspace maps 'pgs'/'pgs-sm' -> TimeTo
    (bowl only). rhs_norm: ‖b‖∞, m/s."""

    scene: str
    step: int
    marbles: int
    contacts: int
    rhs_norm: float
    residual: dict[str, np.ndarray]
    subspace: dict[str, TimeTo] = field(default_factory=dict)

    @property
    def budget(self) -> int:
        return max((len(r) - 1 for r in self.residual.values()), default=0)


def frozen_steps(scene: str, steps: tuple[int, ...]) -> list[tuple[int, ContactProblem]]:
    """(step, copy of its contact problem) for each of `steps` of one PGS-driven run of
    `scene` (20 iterations per step, from zero impulses)."""
    sim = Simulation(scenes.build(scene), registry.settings("pgs", 20, False))
    out = []
    for k in range(1, max(steps) + 1):
        sim.step(trace=False)
        if k in steps:
            out.append((k, sim.problem.copy()))
    return out


def residual_curve(problem: ContactProblem, label: str, iterations: int) -> np.ndarray:
    """The residual after each of `iterations` iterations of run `label` from λ = 0 (m/s)."""
    solver, params = RUNS[label]
    settings = registry.settings(solver, iterations, True,
                                 {"abs_tol": 0.0, "rel_tol": 0.0, **params})
    result = registry.METHODS[solver].solve(problem.copy(), np.zeros(problem.m), settings)
    return result.trace


def time_to_solved(problem: ContactProblem, names: tuple[str, ...],
                   repeats: int) -> dict[str, TimeTo]:
    """Each solver of `names` to SOLVED m/s from λ = 0, `repeats` times, alternating so that
    load from other jobs hits them alike; the median of the iteration times (residual evaluation
    excluded, as in `compare`)."""
    seconds: dict[str, list[float]] = {n: [] for n in names}
    last = {}
    for _ in range(repeats):
        for name in names:
            settings = registry.settings(name, SUBSPACE_BUDGET.get(name, 10000), True,
                                         {"abs_tol": SOLVED, "rel_tol": 0.0})
            result = registry.METHODS[name].solve(problem.copy(), np.zeros(problem.m), settings)
            seconds[name].append(float(result.seconds[-1]))
            last[name] = result
    return {n: TimeTo(last[n].iterations if last[n].residual <= SOLVED else None,
                      float(np.median(seconds[n])), int(last[n].products), repeats)
            for n in names}


def measure_snapshot(scene: str, step: int, problem: ContactProblem, labels: list[str],
                     budget: int, subspace: tuple[str, ...], repeats: int) -> Snapshot:
    residual = {label: residual_curve(problem, label, budget) for label in labels}
    snap = Snapshot(scene, step, problem.n, problem.m,
                    float(np.max(np.abs(problem.rhs), initial=0.0)), residual)
    if subspace:
        snap.subspace = time_to_solved(problem, subspace, repeats)
    return snap


def series_labels(solvers: list[str]) -> list[str]:
    """The run labels whose solver is among `solvers`."""
    return [label for label, (solver, _) in RUNS.items() if solver in solvers]


def measure_series(scene_names: list[str], solvers: list[str], repeats: int = 3,
                   steps: dict[str, tuple[int, ...]] | None = None,
                   progress: Callable[[int, int], None] | None = None
                   ) -> dict[str, list[Snapshot]]:
    """Scene -> its snapshots, for the scenes of `scene_names` that have a series."""
    steps = SERIES_STEPS if steps is None else steps
    chosen = [s for s in scene_names if s in steps]
    labels = series_labels(solvers)
    timed = tuple(n for n in ("pgs", "pgs-sm") if n in solvers)
    warmup(sorted({RUNS[label][0] for label in labels} | set(timed)))
    total = sum(len(steps[s]) for s in chosen)
    done, out = 0, {}
    for scene in chosen:
        out[scene] = []
        for step, problem in frozen_steps(scene, steps[scene]):
            sub = timed if scene in SUBSPACE_SCENES and len(timed) == 2 else ()
            out[scene].append(measure_snapshot(scene, step, problem, labels,
                                               SERIES_BUDGET.get(scene, 1000), sub, repeats))
            done += 1
            if progress is not None:
                progress(done, total)
    return out


def series_json(series: dict[str, list[Snapshot]]) -> dict:
    """Every snapshot's numbers the verdicts use, for results.json (curves left out)."""
    out = {}
    for scene, snaps in series.items():
        out[scene] = [{"step": s.step, "contacts": s.contacts, "rhs_norm": s.rhs_norm,
                       "budget": s.budget,
                       "after_20": {k: float(r[min(20, len(r) - 1)])
                                    for k, r in s.residual.items()},
                       "iterations_to_1e-10": {k: reach(r, 1e-10)
                                               for k, r in s.residual.items()},
                       "best": {k: float(np.min(r)) for k, r in s.residual.items()},
                       "final": {k: float(r[-1]) for k, r in s.residual.items()},
                       "subspace": {k: vars(t) for k, t in s.subspace.items()}}
                      for s in snaps]
    return out
