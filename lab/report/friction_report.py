"""The frictional part of `marbles-bench report` (issue 14): measure, write the files, and the
markdown of the frictional claims, snapshots and tables.

Measures the frictional snapshots (lab.report.friction_series), writes DIR/<label>/benchmark.{npy,json,
png} for the last snapshot of each frictional scene (and DIR/friction-box/apgd.png, the race
behind the APGD claim), runs the exit-status experiment on a frictional scene (lab.report.exits, the
scene with μ = μ_wall = 0.5 unless it has friction of its own) into DIR/exit-status-friction.png,
and judges the claims (lab.report.friction_verdicts). lab.report.results puts it into RESULTS.md.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import scenes
from solver.methods import registry
from solver.params import ParamError, resolve

from ..session.spec import default_warm_start
from .compare import write_benchmark
from .exits import EXIT_ABS_TOL, ExitStats, exit_statuses, exits_json, proximal_variants
from .friction_series import (FRICTION, FRICTION_RUNS, FRICTION_SCENES, RELAXED, TOLS,
                              FrictionSnapshot, friction_series_json, measure_friction, reach,
                              run_labels, scene_params, snapshot_table)
from .friction_verdicts import (ADAPTIVE_PAIRS, APGD_RIVALS, APGD_SCENES, APGD_TOL, BLOCKED_PAIRS,
                                TIE, TOL, Outcome, apgd_race, divergence_problems,
                                friction_verdicts, run_outcome, versus)
from .progress import Progress
from .verdicts import AFTER, Verdict, fmt, verdicts_json

FRICTION_EXIT_STEPS = 100  # consecutive steps of the frictional exit-status experiment
REPEAT_BUDGET = 3.0  # wall seconds per run after which no further timing repeat starts
FILES = ("benchmark.npy", "benchmark.json", "benchmark.png")
APGD_FIGURE = "apgd.png"
EXIT_FIGURE = "exit-status-friction.png"


@dataclass
class FrictionPart:
    """What the frictional part measured: series (label -> snapshots), exits (or None, with
    exit_note saying why), the verdicts, the seconds it took."""

    series: dict[str, list[FrictionSnapshot]] = field(default_factory=dict)
    exits: ExitStats | None = None
    exit_note: str | None = None
    found: list[Verdict] = field(default_factory=list)
    seconds: float = 0.0


def frictional_params(scene: str) -> dict:
    """The scene's parameters with friction: its own where it has some, else μ = μ_wall = 0.5
    (those of the two it declares)."""
    params = resolve(scenes.get(scene).params, {}, f"scene {scene}")
    if scenes.has_friction(params):
        return {}
    return {k: v for k, v in FRICTION.items() if k in params}


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
                         "runs": {r: {"solver": FRICTION_RUNS[r][0],
                                      "params": FRICTION_RUNS[r][1]} for r in snap.runs}}}
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


def _exit_experiment(o: dict, out: Path, say, quiet: bool) -> tuple[ExitStats | None, str | None]:
    from .figures import exit_status_png

    variants = [v for v in proximal_variants() if v.solver in o["solvers"]]
    if o["exit_scene"] is None or not variants:
        (out / EXIT_FIGURE).unlink(missing_ok=True)
        return None, ("Not run (`--exit-scene none`)." if o["exit_scene"] is None else
                      "Skipped: no proximal solver among the selected solvers.")
    scene, steps = o["exit_scene"], o["exit_steps"] or FRICTION_EXIT_STEPS
    params = frictional_params(scene)
    warm = default_warm_start(resolve(scenes.get(scene).params, params, f"scene {scene}"))
    say(f"exit statuses with friction: {steps} steps of {scene} "
        f"({', '.join(f'{k}={v:g}' for k, v in params.items()) or 'its own μ'}) x "
        f"{len(variants)} proximal variants")
    progress = None if quiet else Progress("report: exit statuses with friction", steps)
    exits = exit_statuses(scene, steps, o["exit_iterations"], variants, progress=progress,
                          scene_params=params, warm_start=warm)
    groups = [(f"adaptive r {'on' if a else 'off'}", [v.label for v in variants
                                                     if v.adaptive == a]) for a in (True, False)]
    exit_status_png(out / EXIT_FIGURE, exits.counts, [g for g in groups if g[1]],
                    f"Exit statuses with friction over {steps} steps of {scene} "
                    f"(≤ {o['exit_iterations']} iterations per solve)")
    return exits, None


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
    part.exits, part.exit_note = _exit_experiment({**o, "solvers": solvers}, out, say, quiet)
    part.found = friction_verdicts(part.series, part.exits)
    part.seconds = time.perf_counter() - start
    return part


def parse_friction_scenes(text: str) -> list[str]:
    """'a,b' -> labels of FRICTION_SCENES, or [] for 'none'; ParamError (one line) else."""
    if text.strip() == "none":
        return []
    names = [s.strip() for s in text.split(",")]
    for name in names:
        if name not in FRICTION_SCENES:
            raise ParamError(f"--friction-scenes: unknown frictional scene {name!r}; valid: "
                             f"{', '.join(FRICTION_SCENES)}, or none")
    if len(set(names)) != len(names):
        raise ParamError(f"--friction-scenes {text!r} lists a scene twice")
    return names


def friction_json(friction: FrictionPart | None) -> dict | None:
    """The frictional part as results.json has it: verdicts, each scene's table, every
    snapshot's numbers, the exit statistics."""
    if friction is None:
        return None
    columns = ["run", "status", "after20", "it_1e-6", "ms_1e-6", "it_1e-8", "ms_1e-8", "best",
               "relaxation_best", "rejected"]
    return {"verdicts": verdicts_json(friction.found), "seconds": friction.seconds,
            "scenes": {label: [dict(zip(columns, row)) for row in scene_rows(snaps[-1])]
                       for label, snaps in friction.series.items()},
            "series": friction_series_json(friction.series),
            "exit_statuses": exits_json(friction.exits), "exit_note": friction.exit_note}


# ------------------------------------------------------------------------------- markdown

def table_lines(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def outcome_cell(o: Outcome) -> str:
    """'412 it' when the target was reached, else 'best 4.7e-05', or 'diverged'."""
    if o.diverged:
        return "diverged"
    return f"{o.reached} it" if o.reached is not None else f"best {fmt(o.best)}"


WORD = {1: "yes", 0: "tie", -1: "no"}


def _pair_rows(series: dict, pairs, extra=None) -> list[list[str]]:
    rows = []
    for label, snaps in series.items():
        for s in snaps:
            for a, b in pairs:
                if a not in s.runs or b not in s.runs:
                    continue
                oa, ob = run_outcome(s.runs[a]), run_outcome(s.runs[b])
                result, _ = versus(oa, ob)
                rows.append([label, str(s.step), a.split()[0], *(extra(s.runs[a]) if extra
                                                                else []),
                             outcome_cell(ob), outcome_cell(oa), WORD[result]])
    return rows


def _apgd_rows(series: dict) -> list[list[str]]:
    rows = []
    for label in APGD_SCENES:
        for s in series.get(label, []):
            race = apgd_race(s)
            if race is None:
                continue

            def cell(o: Outcome) -> str:
                return ("not reached" if o.reached is None
                        else f"{o.reached}, {1e3 * o.seconds:.0f} ms")
            rows.append([str(s.step), str(s.contacts), cell(race["apgd"]),
                         *(cell(race["rivals"][r]) if r in race["rivals"] else "n/a"
                           for r in APGD_RIVALS),
                         "yes" if race["holds_time"] else "no",
                         "yes" if race["holds_iterations"] else "no"])
    return rows


def _divergence_rows(series: dict) -> list[list[str]]:
    return [[p["where"].rsplit(" step ", 1)[0], p["where"].rsplit(" step ", 1)[1],
             f"{p['Gauss-Seidel'][0]} of {p['Gauss-Seidel'][1]}",
             f"{p['Jacobi'][0]} of {p['Jacobi'][1]}"]
            for p in divergence_problems(series, None)]


def friction_snapshot_lines(series: dict) -> list[str]:
    """The 'Frictional snapshots' section: every snapshot's numbers behind the verdicts."""
    lines = ["", "### Frictional snapshots", ""]
    if not series:
        return lines + ["Not measured (`--part frictionless`, `--friction-scenes none`, or "
                        "no frictional solver selected)."]
    steps = "; ".join(f"{label}: steps {', '.join(str(s.step) for s in snaps)} "
                      f"({snaps[0].budget} iterations per run)"
                      for label, snaps in series.items())
    lines += [f"Frozen steps of one PGS-driven run of each frictional scene ({steps}); every "
              f"run from λ = 0. Cells: iterations to {TOL:g} m/s (Coulomb's error), else the "
              "best residual reached.", ""]
    sections = (
        ("Blocked against local r (adaptive, the default)",
         ["scene", "step", "solver", "local", "blocked", "blocked better"],
         _pair_rows(series, BLOCKED_PAIRS)),
        ("Adaptive against fixed r (local r)",
         ["scene", "step", "solver", "rejected (adaptive)", "fixed", "adaptive",
          "adaptive better"],
         _pair_rows(series, ADAPTIVE_PAIRS, lambda run: [str(run.rejected)])),
        (f"APGD to {APGD_TOL:g} m/s: iterations, ms (apgd and pgs friction=ccp: the "
         "relaxation's error; jacobi, pgs: Coulomb's)",
         ["step", "contacts", "apgd", *APGD_RIVALS, "apgd first in time",
          "apgd first in iterations"], _apgd_rows(series)),
        ("Divergences per snapshot", ["scene", "step", "Gauss-Seidel runs", "Jacobi runs"],
         _divergence_rows(series)))
    for title, header, rows in sections:
        if rows:
            lines += [f"**{title}**", ""] + table_lines(header, rows) + [""]
    return lines[:-1]


def scene_rows(snap: FrictionSnapshot) -> list[list[str]]:
    rows = []
    for label, run in snap.runs.items():
        cells = [f"`{label}`", run.status,
                 fmt(float(run.residual[AFTER])) if snap.budget >= AFTER else "n/a"]
        for tol in TOLS:
            hit = reach(run.residual, tol)
            cells += (["not reached", "not reached"] if hit is None
                      else [str(hit), f"{1e3 * run.seconds[hit]:.3f}"])
        finite = run.residual[np.isfinite(run.residual)]
        cells.append(fmt(float(finite.min())) if finite.size else "n/a")
        cells.append("n/a" if run.relaxation is None else fmt(float(np.min(run.relaxation))))
        cells.append("n/a" if run.rejected is None else str(run.rejected))
        rows.append(cells)
    return rows


def friction_scene_lines(series: dict) -> list[str]:
    lines = []
    for label, snaps in series.items():
        s = snaps[-1]
        fs = FRICTION_SCENES[label]
        lines += ["", f"### {label}", "",
                  f"{fs.why}. `{fs.scene}`"
                  + "".join(f" `{k}`={v:g}" for k, v in fs.params.items())
                  + f", step {s.step} (t = {s.time:.2f} s), {s.marbles} marbles, {s.contacts} "
                  f"contacts, ‖b‖∞ = {s.rhs_norm:.3g} m/s, {s.budget} iterations per run from "
                  "λ = 0. Residual: Coulomb's error (FCLIB's natural map with De Saxcé's change "
                  "of variable, max over contacts, m/s). Files: "
                  f"[`benchmark.npy`]({label}/benchmark.npy), "
                  f"[`benchmark.json`]({label}/benchmark.json).", ""]
        lines += table_lines(["run", "status", f"residual after {AFTER} it",
                              f"it to {TOLS[0]:g}", f"ms to {TOLS[0]:g}", f"it to {TOLS[1]:g}",
                              f"ms to {TOLS[1]:g}", "best residual",
                              "best relaxation error", "rejected"], scene_rows(s))
        lines += ["", f"![{label}: Coulomb error against iterations and milliseconds]"
                      f"({label}/benchmark.png)"]
        if label in APGD_SCENES and "apgd" in s.runs:
            lines += ["", f"![{label}: apgd against projected Jacobi and Gauss-Seidel]"
                          f"({label}/{APGD_FIGURE})"]
    return lines


def friction_method_lines() -> list[str]:
    return ["", "### How the frictional verdicts are computed", "",
            "- Problems: the frozen snapshots of the frictional scenes and every step of the "
            f"exit-status experiment with friction (solves stop at {EXIT_ABS_TOL:g} m/s, as "
            "without friction). Each run starts from λ = 0; the scenes were settled with the "
            "frictional warm start (all of the last step's impulses).",
            f"- Two runs are compared by iterations to {TOL:g} m/s (Coulomb's error); a "
            "diverged run loses; where neither reached it (most of the frictional piles: the "
            "350-marble bowl stalls near 5e-5 m/s, docs/friction-lab.md) by the best residual "
            f"reached, within a factor {TIE:g} a tie. A tie does not confirm a claim.",
            "- Adaptive r: only where the adaptive run rejected at least one iterate; where it "
            "never did it ran exactly as with a fixed r and is listed as not comparable.",
            "- Divergence: per problem, the fraction of Gauss-Seidel runs that diverged against "
            "that of the Jacobi runs; reproduced when the Gauss-Seidel forms diverge less often "
            "over all problems and more often on none.",
            f"- APGD: time to {APGD_TOL:g} m/s from λ = 0 (the residual evaluation not timed), "
            "ahead of every projected Jacobi and Gauss-Seidel run. apgd and pgs with the ccp "
            "law solve the cone complementarity relaxation and are measured by its natural "
            "map; jacobi and pgs by Coulomb's error. The tolerance is loose because no run "
            "reaches 1e-4 m/s on the box within the budget."]
