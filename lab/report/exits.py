"""Erleben's exit-status experiment: over consecutive steps of a scene, every step's problem is
solved from zero by each proximal variant (Gauss-Seidel and Jacobi forms × r strategy ×
adaptive r on or off, read from the solvers' declared parameters) and the exit statuses are
counted; the report runs it without friction and with it (`exit_experiment`)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

import scenes
from scenes import default_warm_start
from solver import metrics
from solver.methods import registry
from solver.params import ParamError, resolve
from solver.step import Simulation
from solver.warmup import warmup

from .friction_series import frictional_params
from .progress import Progress
from .sources import source_settings

EXIT_SCENE, EXIT_STEPS, EXIT_ITERATIONS = "bowl", 300, 200
FRICTION_EXIT_STEPS = 100  # consecutive steps of the frictional exit-status experiment
EXIT_FIGURES = {False: "exit-status.png", True: "exit-status-friction.png"}  # by friction
EXIT_ABS_TOL, EXIT_REL_TOL = 1e-6, 1e-4  # m/s; ‖Δλ‖∞/‖λ‖∞
REJECTED = "rejected"  # the info entry of an adaptive solver: iterates rolled back (r shrunk)


@dataclass(frozen=True)
class Variant:
    """One proximal configuration: solver (registry name), form ('Gauss-Seidel'|'Jacobi'),
    r strategy, adaptive r or not, and the parameter overrides that select them."""

    solver: str
    form: str
    r: str
    adaptive: bool
    params: dict

    @property
    def label(self) -> str:
        return f"{self.solver} r={self.r}{'' if self.adaptive else ' fixed'}"


OFF_WORDS = ("off", "none", "fixed", "no", "constant", "0", "false")
ADAPT_NAMES = ("adaptation", "adaptive", "adapt")


def _adaptive_switch(method) -> tuple[dict, dict | None]:
    """(params for adaptive r, params for a fixed r or None if the method cannot fix it), read
    from the method's declared parameters so that new proximal solvers need no code here."""
    table = {p.name: p for p in method.params}
    for name in ADAPT_NAMES:
        p = table.get(name)
        if p is None:
            continue
        if p.kind is bool:
            return {name: True}, {name: False}
        if p.choices:
            off = next((c for c in p.choices if c.lower() in OFF_WORDS), None)
            on = p.default if p.default != off else next(c for c in p.choices if c != off)
            return {name: on}, (None if off is None else {name: off})
    nu = table.get("nu")
    if nu is not None:  # shrink factor 1 never shrinks: a fixed r, if the range allows it
        try:
            nu.parse(1.0)
            return {}, {"nu": 1.0}
        except ParamError:
            return {}, None
    return {}, None


def proximal_variants(methods: dict | None = None) -> list[Variant]:
    """Every (form, r, adaptive) configuration of the registered proximal solvers: those with a
    parameter `r` that has choices. The form is Jacobi when the name says so, else Gauss-Seidel."""
    methods = registry.METHODS if methods is None else methods
    out = []
    for name, method in methods.items():
        r = next((p for p in method.params if p.name == "r" and p.choices), None)
        if r is None:
            continue
        form = "Jacobi" if "jacobi" in name.lower() else "Gauss-Seidel"
        on, off = _adaptive_switch(method)
        for choice in r.choices:
            out.append(Variant(name, form, choice, True, {"r": choice, **on}))
            if off is not None:
                out.append(Variant(name, form, choice, False, {"r": choice, **off}))
    return out


@dataclass(frozen=True)
class Solve:
    """One solve of the experiment: exit status, iterations, final and best residual (m/s;
    the best over its trace), and the iterates its adaptation rejected (None: not reported)."""

    status: str
    iterations: int
    residual: float
    best: float
    rejected: int | None


@dataclass
class ExitStats:
    """counts: variant label -> {status: solves}; residual: label -> median final residual
    (m/s); info: label -> numeric SolveResult.info entries averaged over the solves that
    reported them;
    relative: label -> which relative test applied ('merit' or 'iterates'); solves: label ->
    one Solve per step (step k at index k - 1); scene_params: the scene's overrides (friction);
    warm_start: of the PGS-driven run."""

    scene: str
    steps: int
    iterations: int
    abs_tol: float
    rel_tol: float
    variants: list[Variant]
    counts: dict[str, dict[str, int]]
    residual: dict[str, float]
    info: dict[str, dict[str, float]] = field(default_factory=dict)
    relative: dict[str, str] = field(default_factory=dict)
    contacts: tuple[int, int] = (0, 0)
    seconds: float = 0.0
    solves: dict[str, list[Solve]] = field(default_factory=dict)
    scene_params: dict = field(default_factory=dict)
    warm_start: float = 0.0

    def total(self, labels, statuses) -> int:
        return sum(self.counts[label].get(s, 0) for label in labels for s in statuses)

    def rejections(self, label: str) -> float | None:
        """Mean rejected iterates per solve of a variant (info `rejected`): 0 means the
        adaptation of r never fired, so the variant ran exactly as with a fixed r. None when the
        solver does not report it."""
        value = self.info.get(label, {}).get(REJECTED)
        return None if value is None else float(value)


@dataclass(frozen=True)
class ExitRun:
    """What the experiment steps and how each solve stops: `scene` with `scene_params`
    overrides (e.g. friction), stepped `steps` times by PGS (20 iterations, as an interactive
    engine would, from `warm_start` of the last step's impulses); every step's problem solved
    from zero for at most `iterations`, converged at a residual below abs_tol (m/s) or by the
    relative test at rel_tol (`exit_tolerances`)."""

    scene: str
    steps: int
    iterations: int
    scene_params: dict | None = None
    warm_start: float = 0.0
    abs_tol: float = EXIT_ABS_TOL
    rel_tol: float = EXIT_REL_TOL


def exit_statuses(run: ExitRun, variants: list[Variant],
                  progress: Callable[[int, int], None] | None = None) -> ExitStats:
    """Step run.scene and solve every step's problem from zero with each variant; count the
    exit statuses."""
    start = time.perf_counter()
    warmup(sorted({"pgs", *(v.solver for v in variants)}))
    sim = Simulation(scenes.build(run.scene, run.scene_params), registry.settings("pgs", 20),
                     warm_start=run.warm_start)
    settings, relative = {}, {}
    for v in variants:
        tolerances, relative[v.label] = exit_tolerances(registry.METHODS[v.solver], run.abs_tol,
                                                        run.rel_tol)
        settings[v.label] = source_settings(v.solver, run.iterations, True,
                                            {**v.params, **tolerances})
    counts = {v.label: {s: 0 for s in metrics.STATUSES} for v in variants}
    finals = {v.label: [] for v in variants}
    solves: dict[str, list[Solve]] = {v.label: [] for v in variants}
    info: dict[str, dict[str, float]] = {v.label: {} for v in variants}
    lo, hi = None, 0
    for k in range(run.steps):
        sim.step(trace=False)
        problem = sim.problem
        lo = problem.m if lo is None else min(lo, problem.m)
        hi = max(hi, problem.m)
        size = problem.size
        for v in variants:
            result = registry.METHODS[v.solver].solve(problem.copy(), np.zeros(size),
                                                      settings[v.label])
            status = result.status if result.status in metrics.STATUSES else metrics.DIVERGENCE
            counts[v.label][status] += 1
            finals[v.label].append(result.residual)
            solves[v.label].append(_solve_record(result, status))
            for key, value in (result.info or {}).items():
                if isinstance(value, (int, float, np.integer, np.floating)):
                    total, count = info[v.label].get(key, (0.0, 0))
                    info[v.label][key] = (total + float(value), count + 1)
        if progress is not None:
            progress(k + 1, run.steps)
    residual = {label: float(np.median(r)) if r else float("nan") for label, r in finals.items()}
    # Means over the solves that reported the entry (a solve with nothing to do reports none).
    info = {label: {k: total / count for k, (total, count) in d.items()}
            for label, d in info.items()}
    return ExitStats(run.scene, run.steps, run.iterations, run.abs_tol, run.rel_tol, variants,
                     counts, residual, info, relative, (lo or 0, hi),
                     time.perf_counter() - start, solves, dict(run.scene_params or {}),
                     float(run.warm_start))


def _solve_record(result, status: str) -> Solve:
    trace = result.trace if result.trace is not None else np.array([result.residual])
    finite = trace[np.isfinite(trace)]
    rejected = (result.info or {}).get(REJECTED)
    return Solve(status, int(result.iterations), float(result.residual),
                 float(finite.min()) if finite.size else float("inf"),
                 None if rejected is None else int(rejected))


MERIT_REL = "rho_rel_tol"  # a proximal solver's own relative test on its merit (Erleben's)


def exit_tolerances(method, abs_tol: float, rel_tol: float) -> tuple[dict, str]:
    """Stopping parameters for the exit-status experiment and which relative test they use.
    Absolute convergence is the natural-map residual below `abs_tol` for every method. Relative
    convergence is Erleben's test on the merit, |ρ_{k+1} - ρ_k| < rel_tol ρ_k over accepted
    iterates, when the method declares it; the driver's ‖Δλ‖∞ <= rel_tol ‖λ‖∞ would otherwise
    stop an adaptive method at its first rejected iterate (λ unchanged) and call that
    convergence. Methods without the merit test get the driver's test."""
    if MERIT_REL in {p.name for p in method.params}:
        return {"abs_tol": abs_tol, "rel_tol": 0.0, MERIT_REL: rel_tol}, "merit"
    return {"abs_tol": abs_tol, "rel_tol": rel_tol}, "iterates"


def exits_json(exits: ExitStats | None) -> dict | None:
    """The statistics as results.json has them (per-solve records left out)."""
    return None if exits is None else {
        "scene": exits.scene, "scene_params": exits.scene_params, "warm_start": exits.warm_start,
        "steps": exits.steps, "iterations": exits.iterations, "counts": exits.counts,
        "median_residual": exits.residual, "info": exits.info}


def exit_experiment(o: dict, out: Path, frictional: bool, say: Callable[[str], None],
                    stage: Callable[[str], None], quiet: bool
                    ) -> tuple[ExitStats | None, str | None]:
    """The report's exit-status experiment on o["exit_scene"] with the proximal variants of
    o["solvers"], without friction or with it (the scene's own μ, else μ = μ_wall = 0.5, and the
    frictional warm start); its chart written to out/EXIT_FIGURES[frictional]. say: a plain
    line of progress; stage: the line that opens a stage. Returns (the statistics, None), or
    (None, the note that says why it did not run)."""
    from .figures import exit_status_png

    variants = [v for v in proximal_variants() if v.solver in o["solvers"]]
    figure = out / EXIT_FIGURES[frictional]
    if o["exit_scene"] is None or not variants:
        # Regenerated from scratch: a chart from an earlier run must not sit beside this text.
        figure.unlink(missing_ok=True)
    if o["exit_scene"] is None:
        return None, "Not run (`--exit-scene none`)."
    if not variants:
        return None, _skipped(o, frictional, say)
    scene = o["exit_scene"]
    steps = o["exit_steps"] or (FRICTION_EXIT_STEPS if frictional else EXIT_STEPS)
    params = frictional_params(scene) if frictional else None
    with_friction = " with friction" if frictional else ""
    given = (f" ({', '.join(f'{k}={v:g}' for k, v in params.items()) or 'its own μ'})"
             if frictional else "")
    stage(f"exit statuses{with_friction}: {steps} steps of {scene}{given} x {len(variants)} "
          "proximal variants")
    progress = None if quiet else Progress(f"report: exit statuses{with_friction}", steps)
    warm = (default_warm_start(resolve(scenes.get(scene).params, params, f"scene {scene}"))
            if frictional else 0.0)
    exits = exit_statuses(ExitRun(scene, steps, o["exit_iterations"], params, warm), variants,
                          progress)
    groups = [(f"adaptive r {'on' if a else 'off'}", [v.label for v in exits.variants
                                                     if v.adaptive == a]) for a in (True, False)]
    exit_status_png(figure, exits.counts, [g for g in groups if g[1]],
                    f"Exit statuses{with_friction} over {steps} steps of {scene} "
                    f"(≤ {o['exit_iterations']} iterations per solve)")
    return exits, None


def _skipped(o: dict, frictional: bool, say: Callable[[str], None]) -> str:
    """The note of an experiment without a proximal variant to run (said without friction)."""
    if frictional:
        return "Skipped: no proximal solver among the selected solvers."
    note = ("Skipped: no proximal solver (a solver with an `r` parameter that has choices, "
            "e.g. `prox-gs`, `prox-jacobi`) is registered"
            + (" among the selected solvers." if len(o["solvers"]) < len(registry.METHODS)
               else "."))
    say(note)
    return note
