"""The report: regenerate the results of the source comparisons from scratch, into
results/RESULTS.md (lab.cli.report reads the options of `marbles-bench report`).

For each scene: settle it, freeze one step's problem, compare every registered solver on it, and
tabulate the residual after 20 iterations and the iterations and milliseconds to reach 1e-6 and
1e-10 m/s. Then the snapshot series (lab.report.series: several frozen steps of each scene the
sources name, on which the claims are judged), Erleben's exit-status experiment
(lab.report.exits), and a verdict on every claim of the sources (lab.report.verdicts). With
friction (lab.report.friction_report) the frictional solvers on snapshots of the frictional
scenes, an exit-status experiment with friction, the frictional claims and the performance
profiles of the frictional solvers (lab.report.profiles). The part option runs one of the two,
or the profiles alone, put into an existing RESULTS.md and results.json in place of their old
section and numbers. Writes, each file atomically: DIR/<scene>/benchmark.{npy,json,png},
DIR/exit-status.png, DIR/<friction scene>/..., DIR/exit-status-friction.png,
DIR/friction-profiles/profile.png, DIR/results.json
(every number the verdicts used) and, last, DIR/RESULTS.md (lab.report.markdown).
"""
from __future__ import annotations

import datetime
import os
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

import scenes
from solver.methods import registry
from solver.params import resolve

from ..io.files import atomic_write, destination, prepare_out_dir, write_json
from .compare import ScenePlan, compare_scene, write_benchmark
from .exits import EXIT_FIGURES, exit_experiment, exits_json, proximal_variants
from .friction_report import FILES, FrictionPart, friction_json, run_friction_part, run_profiles
from .markdown import FrictionlessPart, markdown, profile_lines, splice_section
from .profiles import FIGURE, FOLDER, profiles_json
from .progress import Progress
from .series import SERIES_STEPS, measure_series, series_json
from .sources import with_sources
from .tables import scene_rows
from .verdicts import verdicts, verdicts_json

PARTS = ("all", "frictionless", "friction", "profiles")


@dataclass(frozen=True)
class Budget:
    """settle: steps before the frozen one; iterations: budget of every solver; why: text."""

    settle: int
    iterations: int
    why: str


BUDGETS = {
    "bowl": Budget(500, 5000, "The pile after 10 s of pouring (the article's 350-marble "
                              "benchmark); the budget lets PSOR reach the precision floor"),
    "disk": Budget(300, 2000, "The planar pile after 6 s"),
    "column": Budget(1, 200, "The column at rest: first step, marbles touching, v = 0"),
    "mass-ratio": Budget(1, 3000, "The pair at rest: first step (later steps of a "
                                  "PGS-driven run crush the light marble)"),
}
DEFAULT_BUDGET = Budget(200, 1000, "after 4 s")

# Wall seconds per solver after which no further timing repeat starts: generous here, because
# the verdict on subspace minimization compares times, and on a shared 2-core machine a single
# run can be off by a factor of two.
REPEAT_BUDGET = 15.0


def _compare_scenes(o: dict, out, say, quiet: bool, wall: float, stages: int):
    """Tables and metas of every scene, their files written."""
    from .figures import comparison_png

    tables, metas = {}, {}
    for k, scene in enumerate(o["scenes"]):
        budget = BUDGETS.get(scene, DEFAULT_BUDGET)
        n_it = o["iterations"] or budget.iterations
        n_settle = o["settle"] or budget.settle
        say(f"[{k + 1}/{stages}] {scene}: {n_settle} settling steps, {len(o['solvers'])} solvers"
            f" x {n_it} iterations ({time.perf_counter() - wall:.0f} s so far)")
        plan = ScenePlan(scene, resolve(scenes.get(scene).params, {}, f"scene {scene}"),
                         n_settle, n_it, o["solvers"], registry.settings("pgs", 20, False),
                         solver_params=with_sources(o["solvers"]),
                         repeats=o["repeats"], budget=REPEAT_BUDGET,
                         source="marbles-bench report")
        table, meta = compare_scene(plan, quiet=quiet)
        overridden = o["settle"] is not None or o["iterations"] is not None
        meta["why"] = (f"{n_settle} settling steps, {n_it} iterations (overridden on the "
                       "command line)") if overridden else budget.why
        tables[scene], metas[scene] = table, meta
        comparison_png(out / scene / "benchmark.png", table,
                       f"{scene}: step {meta['step']}, {table.meta['contacts']} contacts")
        write_benchmark(out / scene, table, meta)
    return tables, metas


def _prepare(o: dict, path: str):
    """Every output folder and file checked (created) before any work."""
    out = prepare_out_dir(path, ("RESULTS.md", "results.json", *EXIT_FIGURES.values()))
    if o["part"] != "friction":
        for scene in o["scenes"]:
            prepare_out_dir(out / scene, ("benchmark.npy", "benchmark.json", "benchmark.png"))
    if o["part"] in ("all", "friction"):
        for label in o["friction_scenes"]:
            prepare_out_dir(out / label, (*FILES, "apgd.png"))
    if o["part"] != "frictionless" and o["profiles"]:
        prepare_out_dir(out / FOLDER, (FIGURE,))
    return out


def _frictionless_part(o: dict, out, say, quiet: bool, wall: float,
                       stages: int) -> FrictionlessPart:
    """What the frictionless part measures on the article's scenes, and its verdicts."""
    tables, metas = _compare_scenes(o, out, say, quiet, wall, stages)
    series = {}
    if o["series"] and any(s in SERIES_STEPS for s in o["scenes"]):
        chosen = [s for s in o["scenes"] if s in SERIES_STEPS]
        say(f"[{len(o['scenes']) + 1}/{stages}] snapshots: "
            + ", ".join(f"{s} x {len(SERIES_STEPS[s])}" for s in chosen)
            + f" ({time.perf_counter() - wall:.0f} s so far)")
        progress = None if quiet else Progress("report: snapshots",
                                               sum(len(SERIES_STEPS[s]) for s in chosen))
        series = measure_series(chosen, o["solvers"], o["repeats"], progress=progress)
    exits, exit_note = exit_experiment(
        o, out, False, say,
        lambda text: say(f"[{stages}/{stages}] {text} ({time.perf_counter() - wall:.0f} s so far)"),
        quiet)
    return FrictionlessPart(verdicts(series, exits), tables, metas, series, exits, exit_note)


def _stage_counts(o: dict) -> tuple[int, int]:
    """(stages of the frictionless part, of the frictional part), for the progress lines."""
    plain = 0
    if o["part"] == "profiles":
        return 0, 1
    if o["part"] != "friction":
        with_series = o["series"] and any(s in SERIES_STEPS for s in o["scenes"])
        prox = any(v.solver in o["solvers"] for v in proximal_variants())
        plain = len(o["scenes"]) + with_series + bool(o["exit_scene"] and prox)
    rough = 0 if o["part"] == "frictionless" else bool(o["friction_scenes"]) + bool(
        o["exit_scene"]) + bool(o["profiles"])
    return plain, rough


def run(o: dict, path: str, command: str, quiet: bool) -> int:
    """Measure and write the report of the validated options `o` (lab.cli.report) into folder
    `path`; `command` reproduces it. Prints a one-line summary; returns the exit code, 0."""
    wall = time.perf_counter()
    out = _prepare(o, path)
    plain, rough = _stage_counts(o)
    stages = plain + rough
    done = [plain]

    def say(text: str) -> None:
        if not quiet:
            sys.stderr.write(f"report: {text}\n")
            sys.stderr.flush()

    def stage(text: str) -> None:  # a stage of the frictional part
        done[0] += 1
        say(f"[{done[0]}/{stages}] {text} ({time.perf_counter() - wall:.0f} s so far)")

    if o["part"] == "profiles":
        return _profiles_part(o, out, command, stage, quiet, wall)
    frictionless = (None if o["part"] == "friction"
                    else _frictionless_part(o, out, say, quiet, wall, stages))
    friction = (None if o["part"] == "frictionless"
                else run_friction_part(o, out, stage, quiet))
    seconds = time.perf_counter() - wall
    header = _header(o, command, seconds, None if friction is None else friction.seconds)
    # The frictional part alone: results.json has no frictionless verdicts, tables or snapshots.
    measured = frictionless or FrictionlessPart([])
    write_json(out / "results.json", _results_json(header, measured, friction))
    text = markdown(header, frictionless, friction, o["part"])
    atomic_write(out / "RESULTS.md", lambda f: f.write(text.encode()))
    say(f"done in {seconds:.0f} s: {out / 'RESULTS.md'}")
    every = measured.found + (friction.found if friction is not None else [])
    print(f"report: {len(measured.tables)} scenes, "
          f"{len(friction.series) if friction else 0} frictional scenes, "
          f"{len(o['solvers'])} solvers, "
          + ", ".join(f"{v.verdict}: {sum(w.verdict == v.verdict for w in every)}"
                      for v in {w.verdict: w for w in every}.values())
          + f"; {seconds:.0f} s; wrote {out / 'RESULTS.md'}")
    return 0


def _header(o: dict, command: str, seconds: float, friction_seconds: float | None) -> dict:
    return {"command": command,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                       f"{platform.python_version()}, numpy {np.__version__}",
            "seconds": seconds, "solvers": o["solvers"], "part": o["part"],
            "friction_seconds": friction_seconds, "source_params": with_sources(o["solvers"])}


def _profiles_part(o: dict, out, command: str, stage, quiet: bool, wall: float) -> int:
    """`--part profiles`: the performance profiles alone, their section put into DIR/RESULTS.md
    and their numbers into DIR/results.json in place of the old ones, the rest of both kept (a
    report with the other parts is minutes more)."""
    import json

    profiles = run_profiles(o, out, stage, quiet)
    header = _header(o, command, time.perf_counter() - wall, None)
    md, js = destination(out / "RESULTS.md"), destination(out / "results.json")
    text = md.read_text() if md.exists() else markdown(header, None, None, o["part"])
    text = splice_section(text, profile_lines(profiles, header))
    atomic_write(md, lambda f: f.write(text.encode()))
    data = json.loads(js.read_text()) if js.exists() else {"header": header}
    data["friction"] = {**(data.get("friction") or {}), "profiles": profiles_json(profiles)}
    write_json(js, data)
    print(f"report: performance profiles of {len(profiles.solvers)} solvers on "
          f"{len(profiles.problems)} problems; {header['seconds']:.0f} s; wrote {md}")
    return 0


def _results_json(header: dict, frictionless: FrictionlessPart,
                  friction: FrictionPart | None = None) -> dict:
    columns = ["solver", "status", "after20", "it_1e-6", "ms_1e-6", "it_1e-10", "ms_1e-10",
               "best"]
    return {
        "header": header,
        "verdicts": verdicts_json(frictionless.found),
        "scenes": {s: {"meta": frictionless.metas[s],
                       "table": [dict(zip(columns, row)) for row in scene_rows(t)]}
                   for s, t in frictionless.tables.items()},
        "exit_statuses": exits_json(frictionless.exits), "exit_note": frictionless.exit_note,
        "series": series_json(frictionless.series), "friction": friction_json(friction)}
