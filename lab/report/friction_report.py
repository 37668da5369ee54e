"""The frictional part of `marbles-bench report`: measure, write the files, judge the claims.

Measures the frictional snapshots (lab.report.friction_series), writes
DIR/<label>/benchmark.{npy,json,png} for the last snapshot of each frictional scene (and
DIR/friction-box/apgd.png, the race behind the APGD claim), runs the exit-status experiment on a
frictional scene (lab.report.exits, the scene with μ = μ_wall = 0.5 unless it has friction of its
own) into DIR/exit-status-friction.png, judges the claims (lab.report.friction_verdicts), and
measures the performance profiles (lab.report.profiles) into DIR/friction-profiles/profile.png.
lab.report.results puts it into results.json and, by lab.report.markdown, RESULTS.md.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from scenes import default_warm_start
from solver.methods import registry

from .compare import write_benchmark
from .exits import ExitStats, exit_experiment, exits_json
from .friction_series import (FRICTION_SCENES, RELAXED,
                              FrictionSnapshot, friction_series_json, measure_friction,
                              run_labels, run_of, scene_params, snapshot_table)
from .friction_verdicts import APGD_RIVALS, APGD_SCENES, APGD_TOL, friction_verdicts
from .profiles import Profiles, measure_profiles, profiles_json, run_count, write_figure
from .progress import Progress
from .tables import friction_rows
from .verdicts import Verdict, verdicts_json

REPEAT_BUDGET = 3.0  # wall seconds per run after which no further timing repeat starts
FILES = ("benchmark.npy", "benchmark.json", "benchmark.png")
APGD_FIGURE = "apgd.png"


@dataclass
class FrictionPart:
    """What the frictional part measured: series (label -> snapshots), exits (or None, with
    exit_note saying why), the verdicts, the seconds it took, the performance profiles (None:
    not measured)."""

    series: dict[str, list[FrictionSnapshot]] = field(default_factory=dict)
    exits: ExitStats | None = None
    exit_note: str | None = None
    found: list[Verdict] = field(default_factory=list)
    seconds: float = 0.0
    profiles: Profiles | None = None


def write_scene_files(out: Path, snap: FrictionSnapshot) -> None:
    """DIR/<label>/benchmark.* of the scene's table snapshot (and apgd.png on the box)."""
    from .figures import curves_png

    fs = FRICTION_SCENES[snap.label]
    table = snapshot_table(snap)
    meta = {"scene": fs.scene, "scene_params": scene_params(snap.label), "label": snap.label,
            "n_marbles": snap.marbles, "step": snap.step, "time": snap.time,
            "contact_count": snap.contacts,
            "settings": {"settle": snap.step, "settle_solver": "pgs", "settle_iterations": 20,
                         "simulation": {"warm_start": default_warm_start(
                             scene_params(snap.label))},
                         "iterations": snap.budget, "start": "zero impulses",
                         "runs": {r: dict(zip(("solver", "params"), run_of(r)))
                                  for r in snap.runs}}}
    write_benchmark(out / snap.label, table, meta,
                    f"{snap.label}: step {snap.step}, {snap.contacts} contacts (Coulomb error)")
    if snap.label in APGD_SCENES and "apgd" in snap.runs:
        curves = {}
        for r in ("apgd", *APGD_RIVALS):
            run = snap.runs.get(r)
            if run is None:
                continue
            relaxed = r in RELAXED and run.relaxation is not None
            curves[f"{r} ({'relaxation' if relaxed else 'Coulomb'})"] = (
                run.seconds, run.relaxation if relaxed else run.residual)
        curves_png(out / snap.label / APGD_FIGURE, curves,
                   f"{snap.label}: step {snap.step}, {snap.contacts} contacts",
                   "error against the problem each solves (m/s)", APGD_TOL)


def run_friction_part(o: dict, out: Path, say, quiet: bool) -> FrictionPart:
    """Measure the frictional scenes of o['friction_scenes'] with o['solvers'], write their
    files, run the frictional exit-status experiment, judge the claims."""
    start = time.perf_counter()
    part = FrictionPart()
    solvers = [s for s in o["solvers"] if registry.get(s).friction]
    labels = o["friction_scenes"]
    if labels and run_labels(solvers):
        say("frictional snapshots: " + ", ".join(
            f"{lb} x {len(FRICTION_SCENES[lb].steps)}" for lb in labels)
            + f", {len(run_labels(solvers))} runs each")
        total = sum(len(FRICTION_SCENES[lb].steps) for lb in labels) * len(run_labels(solvers))
        progress = None if quiet else Progress("report: frictional snapshots", total)
        part.series = measure_friction(labels, solvers, o["repeats"], o["iterations"],
                                       REPEAT_BUDGET, progress)
        for label, snaps in part.series.items():
            write_scene_files(out, snaps[-1])
    part.exits, part.exit_note = exit_experiment({**o, "solvers": solvers}, out, True, say, say,
                                                 quiet)
    part.found = friction_verdicts(part.series, part.exits)
    if o["profiles"]:
        part.profiles = run_profiles(o, out, say, quiet)
    part.seconds = time.perf_counter() - start
    return part


def run_profiles(o: dict, out: Path, say, quiet: bool) -> Profiles:
    """The performance profiles of o['solvers'] with o['profile_budget'] solve seconds per run,
    their figure written."""
    runs = run_count(o["solvers"])
    say(f"performance profiles: {runs} runs of {o['profile_budget']:g} s of solve time at most "
        "(compiling and freezing the problems first)")
    progress = None if quiet else Progress("report: performance profiles", max(runs, 1))
    profiles = measure_profiles(o["solvers"], o["profile_budget"], progress=progress)
    write_figure(out, profiles)
    return profiles


def friction_json(friction: FrictionPart | None) -> dict | None:
    """The frictional part as results.json has it: verdicts, each scene's table, every
    snapshot's numbers, the exit statistics."""
    if friction is None:
        return None
    columns = ["run", "status", "after20", "it_1e-6", "ms_1e-6", "it_1e-8", "ms_1e-8", "best",
               "relaxation_best", "rejected"]
    return {"verdicts": verdicts_json(friction.found), "seconds": friction.seconds,
            "scenes": {label: [dict(zip(columns, row)) for row in friction_rows(snaps[-1])]
                       for label, snaps in friction.series.items()},
            "series": friction_series_json(friction.series),
            "exit_statuses": exits_json(friction.exits), "exit_note": friction.exit_note,
            "profiles": profiles_json(friction.profiles)}
