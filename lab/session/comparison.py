"""The solver comparison of a Session's current step, as the desktop program runs it (the B key,
the history bar's "Solve this step", the benchmark on quit): the step's frozen problem solved by
every solver (or those asked for) from zero impulses, followed and cancellable through a
lab.report.job.Job (each solver's time budget, progress, a cancel that keeps what finished),
written under a name of its own so that no comparison writes over another's files, and one line
that says what was compared and where it went. Qt-free.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from solver.methods import registry
from solver.params import ParamError

from ..report.compare import ComparisonTable, ScenePlan, benchmark_meta, compare, write_benchmark
from ..report.job import Cancelled, Job
from . import commands as cmd

SUFFIXES = (".npy", ".json", ".png")


def free_stem(folder: str | Path, stem: str) -> str:
    """`stem`, or stem-2, stem-3, ...: the first for which no folder/<name>.npy, .json or .png
    exists, so a new comparison never writes over an earlier one's files."""
    folder = Path(folder)
    k, name = 1, stem
    while any((folder / f"{name}{suffix}").exists() for suffix in SUFFIXES):
        k += 1
        name = f"{stem}-{k}"
    return name


def desktop_stem(folder: str | Path, now: float | None = None) -> str:
    """benchmark-YYYYmmdd-HHMMSS (the time of the comparison), made free (free_stem)."""
    return free_stem(folder, time.strftime("benchmark-%Y%m%d-%H%M%S", time.localtime(now)))


@dataclass
class Outcome:
    """What a comparison produced: `table` (its rows: the solvers that finished), `paths`
    written (none when nothing finished), the benchmark.json `meta`, and `text`: one line
    saying which step was compared, how it ended and where it was written."""

    table: ComparisonTable | None
    paths: list[Path] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    text: str = ""


def to_latest(session) -> str:
    """Show the newest step the history keeps (the run's latest) if a step of the past is shown;
    returns "" or what was done, for the outcome's line."""
    kept = session.history.kept
    if not len(kept) or session.sim.steps >= kept.last:
        return ""
    shown = session.sim.steps
    try:
        session.apply(cmd.Seek(kept.last))
    except ParamError:
        return ""
    return f" (the latest; step {shown} was shown in the history)"


def run(session, iterations: int, out: str | Path, source: str, solvers: tuple[str, ...] = (),
        job: Job | None = None, stem: str = "benchmark", latest: bool = False) -> Outcome:
    """`solvers`, or every solver that solves the current step's problem (with friction: the
    friction solvers), on that step's frozen problem from zero impulses, `iterations` each;
    writes out/<stem>.npy, .json and .png as one unit, described as `marbles-bench compare`
    describes its comparison. With a `job` whose cancel came, only the solvers that finished
    are written (none: nothing), and a job that says `discard` raises Cancelled. `latest`:
    the run's latest step rather than a step of the past the history shows (to_latest).
    ParamError when there is no problem yet; OutputError when the files cannot be written."""
    moved = to_latest(session) if latest else ""
    sim = session.sim
    if sim.problem is None:
        raise ParamError("no contact problem yet: run at least one step")
    wall = time.perf_counter()
    names = registry.friction_solvers() if sim.problem.frictional else list(registry.METHODS)
    for name in solvers:  # one line for a solver unknown or without friction
        registry.check_friction(registry.get(name).name, sim.problem.frictional)
    names = list(dict.fromkeys(solvers)) or names
    step = f"step {sim.steps}{moved}"
    try:
        session.ensure_compiled(*names)
    except Cancelled:
        if job is None or job.discard:
            raise
        return Outcome(None, text=f"benchmark of {step} cancelled while compiling: nothing "
                                  "written")
    s = session.spec
    # The run so far as a plan of `marbles-bench compare`: settled for the steps made, with
    # the solver of the frozen step, compared from zero impulses on the CPU.
    named = session.scene_named
    plan = ScenePlan(s.scene if named else "state", s.scene_params if named else None,
                     sim.steps, iterations, names, s.solve, s.options.warm_start,
                     stabilise=s.options.stabilise, threads=s.options.threads,
                     state=session.origin or None, source=source)
    table = compare(sim.problem, iterations, names, repeats=plan.repeats, budget=plan.budget,
                    job=job)
    if job is not None and job.discard:
        raise Cancelled("the program is ending")
    report = session.last_report
    residual = math.nan if report is None else report.result.residual
    meta = benchmark_meta(plan, sim.world, sim.steps, sim.problem, float(residual))
    meta["wall_seconds"] = time.perf_counter() - wall
    if not table.solvers:
        return Outcome(table, [], meta, f"benchmark of {step} cancelled before a solver "
                                        "finished: nothing written")
    paths = write_benchmark(out, table, meta, stem=stem)
    return Outcome(table, paths, meta, f"benchmark of {step}{ended(table)} written: "
                                       f"{', '.join(map(str, paths))}")


def ended(table: ComparisonTable) -> str:
    """' (cancelled: 6 of 15 solvers done; newton stopped at its 10 s budget)', or ''."""
    said = []
    cancelled = table.meta.get("cancelled")
    if cancelled:
        said.append(f"cancelled: {cancelled['finished']} of {cancelled['of']} solvers done")
    out = table.meta.get("out_of_time", {})
    if out:
        budget = table.meta.get("solver_budget_seconds")
        said.append(f"{', '.join(out)} stopped at {'their' if len(out) > 1 else 'its'} "
                    f"{budget:g} s budget")
    return f" ({'; '.join(said)})" if said else ""
