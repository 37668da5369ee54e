"""RESULTS.md, from measurements only: the claims and their verdicts, the snapshots behind them,
a table per scene, the exit statuses and how the verdicts are computed, for the frictionless
part and the frictional one alike. Text in, text out: nothing here measures or writes."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver import metrics

from .exits import EXIT_ABS_TOL, EXIT_FIGURES, ExitStats
from .friction_report import APGD_FIGURE, FrictionPart
from .friction_series import FRICTION_SCENES
from .sources import SOURCE_WHY
from .profiles import FIGURE, FOLDER, TOLERANCES, Profiles, shares, verdict
from .friction_verdicts import (ADAPTIVE_PAIRS, APGD_RIVALS, APGD_SCENES, APGD_TOL, BLOCKED_PAIRS,
                                TIE, TOL, Outcome, apgd_race, divergence_problems, run_outcome,
                                versus)
from .tables import AFTER, TOLS, fmt, friction_rows, scene_rows, table_lines, target_header
from .verdicts import (FAR_FEWER, NOT_REPRODUCED, ORDER, ORDER_LABELS, PARTLY, REPRODUCED, SOLVED,
                       STALL_ITERATIONS, UNCHECKED, Verdict, broken_pairs, floor_race, ordering,
                       subspace_race)


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
            lines += [f"**{title}**", ""] + table_lines(header, rows) + [""]
    return lines[:-1]


def _header_lines(header: dict) -> list[str]:
    return ["## Results", "",
            f"Generated by `{header['command']}` on {header['date']} ({header['machine']}) in "
            f"{header['seconds']:.0f} s. Solvers: {', '.join(f'`{s}`' for s in header['solvers'])}."
            " Residuals are the natural map ‖min(λ, Aλ+b)‖∞ in m/s without friction, Coulomb's "
            "error (FCLIB's natural map) with it; every solver starts from "
            "λ = 0 on the same frozen problem; times are medians of repeated runs of the "
            "iterations alone (residual evaluation and compilation excluded). "
            f"{_sources_sentence(header.get('source_params', {}))}Regenerate with "
            "`marbles-bench report`; nothing here is typed by hand."]


def _said(value) -> str:
    """A parameter's value as `--set` takes it: false/true, 1 for 1.0."""
    return str(value).lower() if isinstance(value, bool) else f"{value:g}"


def _sources_sentence(source_params: dict) -> str:
    """The sources' settings the report ran with where they are not the defaults
    ({solver: {name: value}}, lab/report/sources.py's for the solvers run)."""
    if not source_params:
        return ""
    said = "; ".join(f"`{solver}` " + ", ".join(f"{k} = {_said(v)}" for k, v in params.items())
                     + (f", {SOURCE_WHY[solver]}" if solver in SOURCE_WHY else "")
                     for solver, params in source_params.items())
    return (f"Where the sources' settings differ from the program's defaults the runs use the "
            f"sources' ({said}; lab/report/sources.py). ")


def _claim_lines(found: list[Verdict] | None, title: str = "Claims of the sources",
                 intro: str | None = None, note: str = "") -> list[str]:
    lines = ["", f"### {title}", ""]
    if found is None:
        return lines + [note]
    lines += [intro or "Each claim is judged on every scene the sources name and, for the "
              "piles, on several frozen steps of each ([snapshots](#snapshots)): reproduced "
              "where it holds on every one, partly reproduced where it holds on some, not "
              "reproduced on none.", ""]
    lines += table_lines(["claim", "verdict", "measured"],
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
        lines += table_lines(["solver", "status", f"residual after {AFTER} it",
                              *target_header(False), "best residual"], scene_rows(t))
        lines += ["", f"![{scene}: residual against iterations and milliseconds]"
                      f"({scene}/benchmark.png)"]
    return lines


def _exit_lines(exits: ExitStats | None, exit_note: str | None,
                title: str = "Exit statuses of the proximal methods (Erleben)",
                figure: str = EXIT_FIGURES[False]) -> list[str]:
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
    lines += table_lines(["solver", "form", "r", "adaptive", "absolute", "relative",
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
            f"- PGS stalls: more than {STALL_ITERATIONS} iterations to {TOLS[False][0]:g} m/s.",
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


FRICTION_INTRO = ("The frictional solvers on frozen frictional problems. Each claim "
                  "is judged on every problem measured: the [frictional snapshots]"
                  "(#frictional-snapshots) and each step of the [exit-status experiment with "
                  "friction](#exit-statuses-with-friction); reproduced where it holds in every "
                  "comparison, partly where in some, not reproduced in none ([how]"
                  "(#how-the-frictional-verdicts-are-computed)).")


@dataclass(frozen=True)
class FrictionlessPart:
    """What the frictionless part measured: the verdicts on the sources' claims (found), the
    comparison table and its meta of each scene (tables, metas: scene -> ...), the snapshots
    (series: scene -> snapshots) and the exit statuses (exits, or None with exit_note saying
    why)."""

    found: list[Verdict]
    tables: dict = field(default_factory=dict)
    metas: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)
    exits: ExitStats | None = None
    exit_note: str | None = None


def markdown(header: dict, frictionless: FrictionlessPart | None,
             friction: FrictionPart | None = None, part: str = "all") -> str:
    """RESULTS.md. frictionless None: that part was not run; friction None: nor was the
    frictional one (`part` says which was asked for)."""
    lines = _header_lines(header)
    lines += _claim_lines(None if frictionless is None else frictionless.found,
                          note=f"Not run (`--part {part}`).")
    lines += _claim_lines(None if friction is None else friction.found,
                          "Claims of the sources, with friction", FRICTION_INTRO,
                          f"Not run (`--part {part}`).")
    if frictionless is not None:
        lines += snapshot_lines(frictionless.series)
    if friction is not None:
        lines += friction_snapshot_lines(friction.series)
    if frictionless is not None:
        lines += _scene_lines(frictionless.tables, frictionless.metas)
    if friction is not None:
        lines += friction_scene_lines(friction.series)
    if frictionless is not None:
        lines += _exit_lines(frictionless.exits, frictionless.exit_note)
    if friction is not None:
        lines += _exit_lines(friction.exits, friction.exit_note, "Exit statuses with friction",
                             EXIT_FIGURES[True])
    if friction is not None:
        lines += profile_lines(friction.profiles, header)
    if frictionless is not None:
        lines += _method_lines()
    if friction is not None:
        lines += friction_method_lines()
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- friction

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
                              *target_header(True), "best residual", "best relaxation error",
                              "rejected"], friction_rows(s))
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


# ------------------------------------------------------------------------------- profiles

PROFILE_HEADING = "### Performance profiles with friction"
# Two rows named after apgd run different methods; the reader must not take one for the other.
APGD_ROWS = ("The `apgd` row is the unpreconditioned method (the sources' settings: precondition "
             "= false, Chrono's one step 1/L); `newton start=apgd` starts from the preconditioned "
             "apgd (its default).")
# Where `splice_section` puts the profiles into a RESULTS.md that has none: where `markdown`
# does, before the first of these headings, else at the end.
_AFTER_PROFILES = ("### How the verdicts are computed", "### How the frictional verdicts are "
                   "computed")


def ms_cell(t: float | None) -> str:
    """Seconds as milliseconds to three significant digits, never in exponent form; None: —."""
    if t is None:
        return "—"
    ms = 1e3 * t
    digits = 2 - int(np.floor(np.log10(ms))) if ms > 0 else 0
    return f"{ms:.{max(0, digits)}f}"


def profile_lines(p: Profiles | None, header: dict) -> list[str]:
    """The performance profiles' section: how they were measured (`header`: command, date,
    machine), the verdict at each tolerance, the figure, each solver's shares and the
    milliseconds to 1e-8 of every run."""
    lines = ["", PROFILE_HEADING, ""]
    if p is None:
        return lines + ["Not measured (`--profiles none`)."]
    tight = min(TOLERANCES)
    lines += [f"Dolan and Moré's performance profiles, as Acary, Brémond and Huber (2018) compare "
              f"solvers over FCLIB's collections: {len(p.problems)} frozen frictional steps of "
              "the program's scenes (each scene run with `pgs`, 20 sweeps a step and all of the "
              "last step's impulses as warm start, frozen at the step named), every frictional "
              f"solver from λ = 0 with {p.budget:g} s of solve time (at most {p.cap} "
              "iterations). t = solve seconds until FCLIB's error ‖λ − P_K(λ − ũ)‖₂ / (1 + ‖q‖₂) "
              "first falls to the tolerance (iterations alone: the residual and FCLIB's error, "
              "evaluated after every iteration, and compilation excluded); ρ(τ) = share of the "
              "problems a solver solves within τ times the fastest solver's time; ρ(1): share "
              "where it is the fastest (ties count for each); ρ at the right: share it solves "
              f"within the budget. Measured by `{header['command']}` on {header['date']} "
              f"({header['machine']}) in {p.seconds:.0f} s, on one thread; one run each, so "
              "close times swap with the machine's load.", ""]
    lines += [f"- **{verdict(p.times(tol), p.solvers, tol)}**" for tol in TOLERANCES]
    lines += ["", f"![performance profiles]({FOLDER}/{FIGURE})", "",
              f"**Problems each solver is fastest on and solves, of {len(p.problems)}**", ""]
    counts = [shares(p.times(tol)) for tol in TOLERANCES]
    lines += table_lines(["solver", *(f"{w} to {tol:g}" for tol in TOLERANCES
                                      for w in ("fastest", "solves"))],
                         [[f"`{s}`", *(str(int(c[w][k])) for c in counts for w in (0, 1))]
                          for k, s in enumerate(p.solvers)])
    if "apgd" in p.solvers and any(s.startswith("newton start=apgd") for s in p.solvers):
        lines += ["", APGD_ROWS]
    lines += ["", f"**Milliseconds of solve time to FCLIB's error {tight:g} (—: not within the "
              "budget)**", ""]
    rows = [[f.label, str(f.contacts), *(ms_cell(r.reach[tight]) for r in row)]
            for f, row in zip(p.problems, p.runs)]
    return lines + table_lines(["problem", "contacts", *p.solvers], rows)


def splice_section(text: str, section: list[str]) -> str:
    """RESULTS.md `text` with its profiles' section replaced by `section` (lines, as
    profile_lines gives them), or, where it has none, `section` put where `markdown` puts it;
    everything else kept as it was."""
    lines = text.rstrip("\n").split("\n")
    body = section[1:] if section and section[0] == "" else section
    if PROFILE_HEADING in lines:
        start = lines.index(PROFILE_HEADING)
        end = next((k for k in range(start + 1, len(lines)) if lines[k].startswith("### ")),
                   len(lines))
        while end > start + 1 and lines[end - 1] == "":
            end -= 1
    else:
        start = next((k for k, line in enumerate(lines) if line in _AFTER_PROFILES), None)
        if start is None:
            return "\n".join(lines + [""] + body) + "\n"
        while start > 0 and lines[start - 1] == "":
            start -= 1
        end = start
    head = lines[:start]
    while head and head[-1] == "":
        head.pop()
    return "\n".join(head + ([""] if head else []) + body + lines[end:]) + "\n"
