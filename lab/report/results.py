"""`marbles-bench report`: regenerate the results of the source comparisons from scratch.

For each scene: settle it, freeze one step's problem, compare every registered solver on it, and
tabulate the residual after 20 iterations and the iterations and milliseconds to reach 1e-6 and
1e-10 m/s. Then the snapshot series (lab.report.series: several frozen steps of each scene the sources
name, on which the claims are judged), Erleben's exit-status experiment (lab.report.exits), and a
verdict on every claim of the sources (lab.report.verdicts). With friction (issue 14, lab.report.friction_report)
the frictional solvers on snapshots of the frictional scenes, an exit-status experiment with
friction, and the frictional claims. `--part` runs one of the two. Writes, each file atomically:
DIR/<scene>/benchmark.{npy,json,png}, DIR/exit-status.png, DIR/<friction scene>/...,
DIR/exit-status-friction.png, DIR/results.json (every number the verdicts used) and, last,
DIR/RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

import scenes
from solver import metrics
from solver.methods import registry
from solver.params import Param, ParamError, resolve

from ..io.files import atomic_write, prepare_out_dir, write_json
from .compare import (COMPARE_ITERATIONS, REPEATS, SETTLE, ComparisonTable, ScenePlan,
                      compare_scene, parse_solver_list, reach, write_benchmark)
from .exits import (EXIT_ITERATIONS, EXIT_SCENE, EXIT_STEPS, ExitStats, exit_statuses, exits_json,
                    proximal_variants)
from .friction_report import (EXIT_FIGURE, FILES, FRICTION_EXIT_STEPS, FrictionPart, friction_json,
                              friction_method_lines, friction_scene_lines, friction_snapshot_lines,
                              parse_friction_scenes, run_friction_part)
from .friction_series import FRICTION_SCENES
from .progress import Progress
from .series import SERIES_STEPS, measure_series, series_json
from .verdicts import (AFTER, FAR_FEWER, NOT_REPRODUCED, ORDER, ORDER_LABELS, PARTLY, REPRODUCED,
                       SOLVED, STALL_ITERATIONS, TOLS, UNCHECKED, Verdict, broken_pairs, floor_race,
                       fmt, ordering, residual_at, subspace_race, verdicts, verdicts_json)


DEFAULT_SCENES = ("bowl", "disk", "column", "mass-ratio")
PARTS = ("all", "frictionless", "friction")
EXIT_STEPS_PARAM = Param("exit-steps", EXIT_STEPS, int, "consecutive steps of the exit-status "
                         f"experiments (default {EXIT_STEPS} without friction, "
                         f"{FRICTION_EXIT_STEPS} with)", lo=1, hi=10**6)
EXIT_ITERATIONS_PARAM = Param("exit-iterations", EXIT_ITERATIONS, int, "iteration limit per "
                              "solve there", lo=1, hi=10**6)


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


def scene_rows(t: ComparisonTable) -> list[list[str]]:
    rows = []
    for k, name in enumerate(t.solvers):
        cells = [f"`{name}`", t.status[k],
                 fmt(residual_at(t, name, AFTER)) if t.iterations >= AFTER else "n/a"]
        for tol in TOLS:
            hit = reach(t, name, tol)
            cells += ["not reached", "not reached"] if hit is None else [
                str(hit[0]), f"{1e3 * hit[1]:.3f}"]
        finite = t.residual[k][np.isfinite(t.residual[k])]
        cells.append(fmt(float(finite.min())) if finite.size else "n/a")
        rows.append(cells)
    return rows


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _relative_text(exits: ExitStats) -> str:
    kinds = set(exits.relative.values())
    merit = (f"the solver's merit test |ρ_{{k+1}} − ρ_k| < {exits.rel_tol:g} ρ_k on accepted "
             "iterates (Erleben's)")
    iterates = f"‖Δλ‖∞ ≤ {exits.rel_tol:g} ‖λ‖∞ between iterates"
    if kinds == {"merit"}:
        return merit
    if kinds == {"iterates"}:
        return iterates
    return f"{merit} where the solver has it, else {iterates}"


def _after_rows(series: dict) -> list[list[str]]:
    rows = []
    for scene in ("bowl", "disk"):
        for s in series.get(scene, []):
            if "pgs" not in s.residual or "pcg" not in s.residual or s.budget < AFTER:
                continue
            after = {n: float(r[AFTER]) for n, r in s.residual.items()}
            rows.append([scene, str(s.step), str(s.contacts), fmt(after["pgs"]), fmt(after["pcg"]),
                         fmt(after.get("ppcg")), "yes" if after["pgs"] < after["pcg"] else "no"])
    return rows


def _floor_rows(series: dict) -> list[list[str]]:
    rows = []
    for s in series.get("bowl", []):
        if "psor" not in s.residual or "pcg" not in s.residual:
            continue
        race = floor_race(s)
        its = race["iterations"]
        rows.append([str(s.step), str(s.contacts), f"{race['floor']:.1e}",
                     *(("not reached" if its.get(n) is None else str(its[n])) if n in its
                       else "n/a" for n in ("pcg", "ppcg", "psor")),
                     "yes" if race["holds"] else "no"])
    return rows


def _order_rows(series: dict) -> list[list[str]]:
    ours, sources = ordering(series, False), ordering(series, True)
    rows = []
    for scene, d in ours["scenes"].items():
        theirs = sources["scenes"].get(scene)
        rows.append([scene, str(d["snapshots"]), d["order"],
                     ", ".join(broken_pairs(d["pairs"], d["snapshots"])) or "none",
                     theirs["order"] if theirs else "n/a",
                     (", ".join(broken_pairs(theirs["pairs"], theirs["snapshots"])) or "none")
                     if theirs else "n/a"])
    return rows


def _subspace_rows(series: dict) -> list[list[str]]:
    rows = []
    for s in series.get("bowl", []):
        race = subspace_race(s)
        if race is None:
            continue
        pgs, sm = race["pgs"], race["pgs-sm"]
        rows.append([str(s.step), str(s.contacts),
                     "not reached" if pgs.iterations is None else str(pgs.iterations),
                     f"{1e3 * pgs.seconds:.2f}",
                     "not reached" if sm.iterations is None else str(sm.iterations),
                     f"{1e3 * sm.seconds:.2f}", f"{race['ratio']:.1f}",
                     f"{pgs.products / max(sm.products, 1):.1f}",
                     "yes" if race["holds"] else "no"])
    return rows


def snapshot_lines(series: dict) -> list[str]:
    """The 'Snapshots' section: every snapshot's numbers behind the pile verdicts."""
    lines = ["", "### Snapshots", ""]
    if not series:
        return lines + ["Not measured (`--series none`, or no scene with a series)."]
    steps = "; ".join(f"{scene}: steps {', '.join(str(s.step) for s in snaps)} "
                      f"({snaps[0].budget} iterations per run)" for scene, snaps in series.items())
    lines += [f"Frozen steps of one PGS-driven run of each scene ({steps}).", ""]
    sections = (
        (f"After {AFTER} iterations (m/s)", ["scene", "step", "contacts", "pgs", "pcg", "ppcg",
                                             "PGS ahead of PCG"], _after_rows(series)),
        ("Iterations to the precision floor (bowl)", ["step", "contacts", "floor (m/s)", "pcg",
                                                      "ppcg", "psor", "CG ≥ 2x fewer"],
         _floor_rows(series)),
        ("Ordering " + " < ".join(ORDER_LABELS[n] for n in ORDER) + " per scene",
         ["scene", "snapshots", "measured order, ours", "against the article, ours",
          "measured order, sources' PCG", "against the article, sources' PCG"],
         _order_rows(series)),
        (f"PGS and PGS+SM to {SOLVED:g} m/s (bowl)", ["step", "contacts", "pgs it", "pgs ms",
                                                      "pgs-sm it", "pgs-sm ms", "time ratio",
                                                      "products ratio", "≥ 2x faster"],
         _subspace_rows(series)))
    for title, header, rows in sections:
        if rows:
            lines += [f"**{title}**", ""] + _table(header, rows) + [""]
    return lines[:-1]


def _header_lines(header: dict) -> list[str]:
    return ["## Results", "",
            f"Generated by `{header['command']}` on {header['date']} ({header['machine']}) in "
            f"{header['seconds']:.0f} s. Solvers: {', '.join(f'`{s}`' for s in header['solvers'])}."
            " Residuals are the natural map ‖min(λ, Aλ+b)‖∞ in m/s without friction, Coulomb's "
            "error (FCLIB's natural map) with it; every solver starts from "
            "λ = 0 on the same frozen problem; times are medians of repeated runs of the "
            "iterations alone (residual evaluation and compilation excluded). Regenerate with "
            "`marbles-bench report`; nothing here is typed by hand."]


def _claim_lines(found: list[Verdict] | None, title: str = "Claims of the sources",
                 intro: str | None = None, note: str = "") -> list[str]:
    lines = ["", f"### {title}", ""]
    if found is None:
        return lines + [note]
    lines += [intro or "Each claim is judged on every scene the sources name and, for the "
              "piles, on several frozen steps of each ([snapshots](#snapshots)): reproduced "
              "where it holds on every one, partly reproduced where it holds on some, not "
              "reproduced on none.", ""]
    lines += _table(["claim", "verdict", "measured"],
                    [[v.claim, f"**{v.verdict}**", v.evidence] for v in found])
    short = [v.claim for v in found if v.verdict in (PARTLY, NOT_REPRODUCED)]
    counts = {k: sum(v.verdict == k for v in found)
              for k in (REPRODUCED, PARTLY, NOT_REPRODUCED, UNCHECKED)}
    lines += ["", f"{counts[REPRODUCED]} of {len(found)} reproduced, {counts[PARTLY]} partly, "
                  f"{counts[NOT_REPRODUCED]} not"
              + (f", {counts[UNCHECKED]} could not be checked" if counts[UNCHECKED] else "")
              + "." + (" Not fully reproduced: " + "; ".join(short) + "." if short else "")]
    return lines


def _scene_lines(tables: dict, metas: dict) -> list[str]:
    lines = []
    for scene, t in tables.items():
        m = metas[scene]
        lines += ["", f"### {scene}", "",
                  f"{m['why']}. Step {m['step']} (t = {m['time']:.2f} s), {m['n_marbles']} "
                  f"marbles, {t.meta['contacts']} contacts, ‖b‖∞ = {t.meta['rhs_norm']:.3g} m/s, "
                  f"{t.iterations} iterations per solver. Files: "
                  f"[`benchmark.npy`]({scene}/benchmark.npy), "
                  f"[`benchmark.json`]({scene}/benchmark.json).", ""]
        lines += _table(["solver", "status", f"residual after {AFTER} it",
                         f"it to {TOLS[0]:g}", f"ms to {TOLS[0]:g}", f"it to {TOLS[1]:g}",
                         f"ms to {TOLS[1]:g}", "best residual"], scene_rows(t))
        lines += ["", f"![{scene}: residual against iterations and milliseconds]"
                      f"({scene}/benchmark.png)"]
    return lines


def _exit_lines(exits: ExitStats | None, exit_note: str | None,
                title: str = "Exit statuses of the proximal methods (Erleben)",
                figure: str = "exit-status.png") -> list[str]:
    lines = ["", f"### {title}", ""]
    if exits is None:
        return lines + [exit_note or "Not run."]
    material = ", ".join(f"{k} = {v:g}" for k, v in exits.scene_params.items())
    lines.append(
        f"Every step of `{exits.scene}`" + (f" ({material})" if material else "")
        + f" (steps 1–{exits.steps}, driven by PGS with 20 iterations"
        + (f" and warm start {exits.warm_start:g}" if exits.warm_start else "")
        + f"; {exits.contacts[0]}–{exits.contacts[1]} contacts) solved from λ = 0 by "
        f"each variant, at most {exits.iterations} iterations. Absolute convergence: "
        f"natural-map residual below {exits.abs_tol:g} m/s. Relative convergence: "
        + _relative_text(exits) + f". Divergence: the driver's bound (a NaN/inf, or the "
        f"residual above `divergence` × its start). {exits.seconds:.0f} s.")
    lines.append("")
    info_keys = sorted({k for d in exits.info.values() for k in d})
    rows = []
    for v in exits.variants:
        c = exits.counts[v.label]
        rows.append([f"`{v.solver}`", v.form, v.r, "on" if v.adaptive else "off",
                     *(str(c[s]) for s in metrics.STATUSES), fmt(exits.residual[v.label]),
                     *(f"{exits.info[v.label].get(k, 0):.3g}" for k in info_keys)])
    lines += _table(["solver", "form", "r", "adaptive", "absolute", "relative",
                     "non-convergence", "divergence", "median residual",
                     *(f"{k} (mean)" for k in info_keys)], rows)
    return lines + ["", f"![exit statuses]({figure})"]


def _method_lines() -> list[str]:
    return ["", "### How the verdicts are computed", "",
            f"- Solved: natural-map residual ≤ {SOLVED:g} m/s.",
            "- Snapshots: each scene stepped once with PGS (20 iterations per step, from zero "
            "impulses); on the contact problem of each listed step every run starts from λ = 0 "
            "with the scene's budget. A claim is reproduced when it holds on every snapshot of "
            "every scene it names, partly reproduced on some, not reproduced on none.",
            f"- PGS stalls: more than {STALL_ITERATIONS} iterations to {TOLS[0]:g} m/s.",
            "- Precision floor: per snapshot, 10 × the smallest residual pcg, ppcg or psor "
            "reached (at least 64 ε ‖b‖∞); 'far fewer' means at least "
            f"{FAR_FEWER:g} × fewer iterations, or PSOR never reaching it.",
            "- Ordering: on each snapshot the six solvers are ranked by iterations to "
            f"{SOLVED:g} m/s (equal counts tie), and those that never get there by their final "
            "residual; each of the 15 pairs counts where it is strictly in the article's order. "
            "The order shown per scene is by mean rank over its snapshots. The sources' PCG is "
            "`pcg`/`ppcg` with `safeguard=0`.",
            "- Divergence and adaptivity: counts over the exit-status run; adaptive wins a "
            "(solver, r) pair with fewer divergences, then fewer non-converged solves, then a "
            "lower median final residual. A pair whose adaptive variant never rejected an "
            "iterate ran exactly as with a fixed r and is not comparable; the verdict counts "
            "the comparable pairs.",
            f"- Subspace minimization: per bowl snapshot, at least {FAR_FEWER:g} × less time "
            f"to reach {SOLVED:g} m/s (medians of repeated runs, alternated; timings on a "
            "shared machine vary by tens of percent, and the paper reports several times); a "
            "PGS run that ends first counts if it ran that much longer."]


FRICTION_INTRO = ("Issue 14: the frictional solvers on frozen frictional problems. Each claim "
                  "is judged on every problem measured: the [frictional snapshots]"
                  "(#frictional-snapshots) and each step of the [exit-status experiment with "
                  "friction](#exit-statuses-with-friction); reproduced where it holds in every "
                  "comparison, partly where in some, not reproduced in none ([how]"
                  "(#how-the-frictional-verdicts-are-computed)).")


def markdown(tables: dict, metas: dict, exits: ExitStats | None, found: list[Verdict] | None,
             header: dict, exit_note: str | None, series: dict | None = None,
             friction: FrictionPart | None = None, part: str = "all") -> str:
    """RESULTS.md. found None: the frictionless part was not run; friction None: nor was the
    frictional one (`part` says which was asked for)."""
    lines = _header_lines(header)
    lines += _claim_lines(found, note=f"Not run (`--part {part}`).")
    lines += _claim_lines(None if friction is None else friction.found,
                          "Claims of the sources, with friction", FRICTION_INTRO,
                          f"Not run (`--part {part}`).")
    if found is not None:
        lines += snapshot_lines(series or {})
    if friction is not None:
        lines += friction_snapshot_lines(friction.series)
    lines += _scene_lines(tables, metas)
    if friction is not None:
        lines += friction_scene_lines(friction.series)
    if found is not None:
        lines += _exit_lines(exits, exit_note)
    if friction is not None:
        lines += _exit_lines(friction.exits, friction.exit_note, "Exit statuses with friction",
                             EXIT_FIGURE)
    if found is not None:
        lines += _method_lines()
    if friction is not None:
        lines += friction_method_lines()
    return "\n".join(lines) + "\n"


SCENE_LIST_HELP = f"comma-separated scenes (default {','.join(DEFAULT_SCENES)})"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "report", help="regenerate results/RESULTS.md: tables, plots and verdicts",
        description="Compare every registered solver on a frozen step of each scene, run "
                    "Erleben's exit-status experiment, judge every claim of the sources from "
                    "the measurements, and write DIR/RESULTS.md with its plots.")
    p.add_argument("--out", default="results", metavar="DIR",
                   help="output folder, created if needed (default results)")
    p.add_argument("--scenes", default=",".join(DEFAULT_SCENES), metavar="a,b,...",
                   help=SCENE_LIST_HELP)
    p.add_argument("--solvers", metavar="a,b,...", help="solvers (default: all registered)")
    p.add_argument("--iterations", metavar="N",
                   help="iterations per solver for every scene (default: per scene, "
                        + ", ".join(f"{s} {p.iterations}" for s, p in BUDGETS.items()) + ")")
    p.add_argument("--settle", metavar="K",
                   help="steps before the frozen one for every scene (default: per scene, "
                        + ", ".join(f"{s} {p.settle}" for s, p in BUDGETS.items()) + ")")
    p.add_argument("--exit-scene", default=EXIT_SCENE, metavar="S",
                   help=f"scene of the exit-status experiment, or none (default {EXIT_SCENE})")
    p.add_argument("--exit-steps", metavar="K",  # its default depends on the part: said once
                   help=f"{EXIT_STEPS_PARAM.help}; {EXIT_STEPS_PARAM.range_text()}")
    p.add_argument("--exit-iterations", default=str(EXIT_ITERATIONS), metavar="N",
                   help=EXIT_ITERATIONS_PARAM.help_text())
    p.add_argument("--repeats", default=REPEATS.value_text(), metavar="R",
                   help=REPEATS.help_text())
    p.add_argument("--series", default="default", choices=("default", "none"),
                   help="judge the claims on several frozen steps of each scene that has a "
                        "series (" + "; ".join(f"{s}: steps {', '.join(map(str, steps))}"
                                               for s, steps in SERIES_STEPS.items())
                        + "), or none (default: default)")
    p.add_argument("--part", default="all", choices=PARTS,
                   help="run only the frictionless part (the article's scenes, their snapshots "
                        "and exit statuses) or only the frictional one (issue 14); default all")
    p.add_argument("--friction-scenes", default=",".join(FRICTION_SCENES), metavar="a,b,...",
                   help="frictional scenes of the frictional part, or none (default "
                        + ", ".join(f"{k}: steps {', '.join(map(str, f.steps))}"
                                    for k, f in FRICTION_SCENES.items()) + ")")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=main)


def _scene_list(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",")]
    if not all(names):
        raise ParamError(f"--scenes {text!r} has an empty name; valid: {', '.join(scenes.SCENES)}")
    for name in names:
        scenes.get(name)
    if len(set(names)) != len(names):
        raise ParamError(f"--scenes {text!r} lists a scene twice")
    return names


def _command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this report (options left at their default are omitted)."""
    words = ["marbles-bench report"]
    defaults = {"out": "results", "scenes": ",".join(DEFAULT_SCENES), "solvers": None,
                "iterations": None, "settle": None, "exit_scene": EXIT_SCENE,
                "exit_steps": None, "exit_iterations": str(EXIT_ITERATIONS),
                "repeats": "3", "series": "default", "part": "all",
                "friction_scenes": ",".join(FRICTION_SCENES)}
    for name, default in defaults.items():
        value = getattr(args, name)
        if value is not None and value != default:
            words.append(f"--{name.replace('_', '-')} {value}")
    return " ".join(words)


def _options(args: argparse.Namespace) -> dict:
    """Every option validated before any work (one-line ParamError)."""
    exit_scene = None if args.exit_scene == "none" else args.exit_scene
    if exit_scene is not None:
        scenes.get(exit_scene)
    return {"scenes": _scene_list(args.scenes), "solvers": parse_solver_list(args.solvers),
            "iterations": None if args.iterations is None
            else int(COMPARE_ITERATIONS.parse(args.iterations)),
            "settle": None if args.settle is None else int(SETTLE.parse(args.settle)),
            "repeats": int(REPEATS.parse(args.repeats)), "exit_scene": exit_scene,
            "exit_steps": None if args.exit_steps is None
            else int(EXIT_STEPS_PARAM.parse(args.exit_steps)),
            "exit_iterations": int(EXIT_ITERATIONS_PARAM.parse(args.exit_iterations)),
            "series": args.series == "default", "part": args.part,
            "friction_scenes": parse_friction_scenes(args.friction_scenes)}


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
                         repeats=o["repeats"], budget=REPEAT_BUDGET)
        table, meta = compare_scene(plan, quiet=quiet)
        overridden = o["settle"] is not None or o["iterations"] is not None
        meta["why"] = (f"{n_settle} settling steps, {n_it} iterations (overridden on the "
                       "command line)") if overridden else budget.why
        tables[scene], metas[scene] = table, meta
        comparison_png(out / scene / "benchmark.png", table,
                       f"{scene}: step {meta['step']}, {table.meta['contacts']} contacts")
        write_benchmark(out / scene, table, meta)
    return tables, metas


def _exit_experiment(o: dict, variants, out, say, quiet: bool, wall: float, stages: int):
    """(ExitStats or None, a note when it was not run); writes exit-status.png."""
    from .figures import exit_status_png

    if o["exit_scene"] is None or not variants:
        # Regenerated from scratch: a chart from an earlier run must not sit beside this text.
        (out / "exit-status.png").unlink(missing_ok=True)
    if o["exit_scene"] is None:
        return None, "Not run (`--exit-scene none`)."
    if not variants:
        note = ("Skipped: no proximal solver (a solver with an `r` parameter that has choices, "
                "e.g. `prox-gs`, `prox-jacobi`) is registered"
                + (" among the selected solvers." if len(o["solvers"]) < len(registry.METHODS)
                   else "."))
        say(note)
        return None, note
    steps, scene = o["exit_steps"] or EXIT_STEPS, o["exit_scene"]
    say(f"[{stages}/{stages}] exit statuses: {steps} steps of {scene} x {len(variants)} "
        f"proximal variants ({time.perf_counter() - wall:.0f} s so far)")
    progress = None if quiet else Progress("report: exit statuses", steps)
    exits = exit_statuses(scene, steps, o["exit_iterations"], variants, progress=progress)
    groups = []
    for adaptive in (True, False):
        labels = [v.label for v in exits.variants if v.adaptive == adaptive]
        if labels:
            groups.append((f"adaptive r {'on' if adaptive else 'off'}", labels))
    exit_status_png(out / "exit-status.png", exits.counts, groups,
                    f"Exit statuses over {steps} steps of {scene} "
                    f"(≤ {o['exit_iterations']} iterations per solve)")
    return exits, None


def _prepare(o: dict, path: str):
    """Every output folder and file checked (created) before any work."""
    out = prepare_out_dir(path, ("RESULTS.md", "results.json", "exit-status.png", EXIT_FIGURE))
    if o["part"] != "friction":
        for scene in o["scenes"]:
            prepare_out_dir(out / scene, ("benchmark.npy", "benchmark.json", "benchmark.png"))
    if o["part"] != "frictionless":
        for label in o["friction_scenes"]:
            prepare_out_dir(out / label, (*FILES, "apgd.png"))
    return out


def _frictionless_part(o: dict, out, say, quiet: bool, wall: float, stages: int):
    """(tables, metas, series, exits, exit_note, verdicts) of the article's scenes."""
    variants = [v for v in proximal_variants() if v.solver in o["solvers"]]
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
    exits, exit_note = _exit_experiment(o, variants, out, say, quiet, wall, stages)
    return tables, metas, series, exits, exit_note, verdicts(series, exits)


def _stage_counts(o: dict) -> tuple[int, int]:
    """(stages of the frictionless part, of the frictional part), for the progress lines."""
    plain = 0
    if o["part"] != "friction":
        with_series = o["series"] and any(s in SERIES_STEPS for s in o["scenes"])
        prox = any(v.solver in o["solvers"] for v in proximal_variants())
        plain = len(o["scenes"]) + with_series + bool(o["exit_scene"] and prox)
    rough = 0 if o["part"] == "frictionless" else bool(o["friction_scenes"]) + bool(
        o["exit_scene"])
    return plain, rough


def main(args: argparse.Namespace) -> int:
    wall = time.perf_counter()
    o = _options(args)
    out = _prepare(o, args.out)
    plain, rough = _stage_counts(o)
    stages = plain + rough
    done = [plain]

    def say(text: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"report: {text}\n")
            sys.stderr.flush()

    def stage(text: str) -> None:  # a stage of the frictional part
        done[0] += 1
        say(f"[{done[0]}/{stages}] {text} ({time.perf_counter() - wall:.0f} s so far)")

    tables, metas, series, exits, exit_note, found = {}, {}, {}, None, None, None
    if o["part"] != "friction":
        tables, metas, series, exits, exit_note, found = _frictionless_part(
            o, out, say, args.quiet, wall, stages)
    friction = (None if o["part"] == "frictionless"
                else run_friction_part(o, out, stage, args.quiet))
    seconds = time.perf_counter() - wall
    header = {"command": _command_line(args),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}, numpy {np.__version__}",
              "seconds": seconds, "solvers": o["solvers"], "part": o["part"],
              "friction_seconds": None if friction is None else friction.seconds}
    write_json(out / "results.json", _results_json(header, found or [], tables, metas, exits,
                                                    exit_note, series, friction))
    text = markdown(tables, metas, exits, found, header, exit_note, series, friction, o["part"])
    atomic_write(out / "RESULTS.md", lambda f: f.write(text.encode()))
    say(f"done in {seconds:.0f} s: {out / 'RESULTS.md'}")
    every = (found or []) + (friction.found if friction is not None else [])
    print(f"report: {len(tables)} scenes, {len(friction.series) if friction else 0} frictional "
          f"scenes, {len(o['solvers'])} solvers, "
          + ", ".join(f"{v.verdict}: {sum(w.verdict == v.verdict for w in every)}"
                      for v in {w.verdict: w for w in every}.values())
          + f"; {seconds:.0f} s; wrote {out / 'RESULTS.md'}")
    return 0


def _results_json(header, found, tables, metas, exits, exit_note, series,
                  friction: FrictionPart | None = None) -> dict:
    columns = ["solver", "status", "after20", "it_1e-6", "ms_1e-6", "it_1e-10", "ms_1e-10",
               "best"]
    return {
        "header": header,
        "verdicts": verdicts_json(found),
        "scenes": {s: {"meta": metas[s], "table": [dict(zip(columns, row))
                                                   for row in scene_rows(t)]}
                   for s, t in tables.items()},
        "exit_statuses": exits_json(exits), "exit_note": exit_note,
        "series": series_json(series), "friction": friction_json(friction)}
