"""The verdicts on the sources' claims with friction, from measurements only.

Erleben's claims are judged on every solved problem the report has: each frozen snapshot of the
frictional scenes (lab.report.friction_series) and each step of the frictional exit-status
experiment (lab.report.exits). Two runs are compared by `versus`: a diverged run loses; else the
one that reached the target first (TOL m/s, in iterations); and when neither did, the one whose best
residual is lower by more than the factor TIE (closer is the same plateau: a tie). Most frictional
piles reach no tight target (the 350-marble bowl stalls near 5e-5 m/s in thousands of iterations),
so many comparisons are decided on the best residual, and the evidence says how many. A claim that
holds in every comparison is reproduced, in none not reproduced, otherwise partly reproduced.

APGD's claim (Mazhar, Heyn, Negrut, Tasora) is judged on the large granular problem, the box:
time to APGD_TOL, each run measured against the problem it solves (see claim_apgd).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver import metrics

from .exits import ExitStats, Solve
from .friction_series import FRICTION_RUNS, FrictionRun, FrictionSnapshot, form
from .tables import TOLS, fmt, reach
from .verdicts import (NOT_REPRODUCED, PARTLY, REPRODUCED, UNCHECKED, Verdict, adaptive_pairs,
                       graded)

TOL = TOLS[True][0]  # m/s: Erleben's comparisons, the loose target of the tables
TIE = 1.2         # best residuals within this factor of each other are the same plateau
APGD_TOL = 1e-3   # m/s: the large problem's target (no run reaches 1e-4 there within budget)
APGD_SCENES = ("friction-box",)
APGD_RIVALS = ("jacobi", "pgs", "pgs friction=ccp")  # projected Jacobi and Gauss-Seidel
BLOCKED_PAIRS = (("prox-gs r=blocked", "prox-gs"), ("prox-jacobi r=blocked", "prox-jacobi"))
ADAPTIVE_PAIRS = (("prox-gs", "prox-gs adapt=0"), ("prox-jacobi", "prox-jacobi adapt=0"))


@dataclass(frozen=True)
class Outcome:
    """What a comparison needs of a run: diverged; reached: iterations to the target (None: not
    reached); best: smallest residual reached (m/s); seconds: solve time to the target;
    rejected: iterates the adaptation rejected (None: not reported)."""

    diverged: bool
    reached: int | None
    best: float
    seconds: float | None = None
    rejected: int | None = None


def run_outcome(run: FrictionRun, tol: float = TOL, relaxation: bool = False) -> Outcome:
    """A snapshot run measured by Coulomb's error, or by the relaxation's (`relaxation`)."""
    curve = run.relaxation if relaxation and run.relaxation is not None else run.residual
    hit = reach(curve, tol)
    finite = curve[np.isfinite(curve)]
    return Outcome(run.diverged, hit, float(finite.min()) if finite.size else np.inf,
                   None if hit is None else float(run.seconds[hit]), run.rejected)


def solve_outcome(solve: Solve) -> Outcome:
    """A solve of the exit-status experiment: it reached the target when it converged
    absolutely (the experiment's abs_tol)."""
    return Outcome(solve.status == metrics.DIVERGENCE,
                   solve.iterations if solve.status == metrics.ABSOLUTE else None, solve.best,
                   None, solve.rejected)


def versus(a: Outcome, b: Outcome, by: str = "iterations", tie: float = TIE
           ) -> tuple[int, str]:
    """(+1 when a is better, -1 when b is, 0 for a tie; the measure that decided: 'divergence',
    `by` ('iterations' or 'seconds' to the target) or 'best residual')."""
    if a.diverged or b.diverged:
        return (0 if a.diverged and b.diverged else 1 if b.diverged else -1), "divergence"
    ka, kb = (a.reached, b.reached) if by == "iterations" else (a.seconds, b.seconds)
    if ka is not None or kb is not None:
        if ka is None or kb is None:
            return (1 if kb is None else -1), by
        return int(np.sign(kb - ka)), by
    if a.best * tie < b.best:
        return 1, "best residual"
    if b.best * tie < a.best:
        return -1, "best residual"
    return 0, "best residual"


@dataclass(frozen=True)
class Comparison:
    """One pair judged on one problem: where ('friction-bowl step 300' or 'exit step 12'),
    source ('snapshots' or 'exit-status steps'), the pair's name, the result of versus and the
    measure that decided."""

    where: str
    source: str
    pair: str
    result: int
    measure: str


SNAPSHOTS, EXIT_STEPS = "snapshots", "exit-status steps"


def _snapshot_pairs(series: dict, pairs) -> list[tuple[str, str, Outcome, Outcome]]:
    out = []
    for label, snaps in series.items():
        for s in snaps:
            for a, b in pairs:
                if a in s.runs and b in s.runs:
                    out.append((f"{label} step {s.step}", a.split()[0],
                                run_outcome(s.runs[a]), run_outcome(s.runs[b])))
    return out


def _exit_pairs(exits: ExitStats | None, pairs) -> list[tuple[str, str, Outcome, Outcome]]:
    if exits is None or not exits.solves:
        return []
    out = []
    for a, b in pairs:
        if a not in exits.solves or b not in exits.solves:
            continue
        for k, (sa, sb) in enumerate(zip(exits.solves[a], exits.solves[b])):
            out.append((f"exit step {k + 1}", a, solve_outcome(sa), solve_outcome(sb)))
    return out


def _tally(comps: list[Comparison]) -> str:
    """'better in W, worse in L, tied in T of N' per source and pair."""
    groups: dict[tuple[str, str], list[int]] = {}
    for c in comps:
        groups.setdefault((c.source, c.pair), []).append(c.result)
    parts = []
    for (source, pair), results in groups.items():
        parts.append(f"{pair} ({source}): {results.count(1)} of {len(results)}"
                     + (f", worse in {results.count(-1)}" if results.count(-1) else ""))
    return "; ".join(parts)


def _judged(comps: list[Comparison], what: str, claim: str, extra: str = "",
            numbers: dict | None = None) -> Verdict:
    if not comps:
        return Verdict(claim, UNCHECKED, extra or f"no {what} measured", numbers or {})
    wins = sum(c.result > 0 for c in comps)
    losses = sum(c.result < 0 for c in comps)
    by_best = sum(c.measure == "best residual" for c in comps)
    ev = (f"{what} better in {wins}, worse in {losses}, tied in {len(comps) - wins - losses} "
          f"of {len(comps)} comparisons ({by_best} decided on the best residual reached, "
          f"within {TIE:g}x a tie, because neither run reached {TOL:g} m/s): "
          + _tally(comps) + (f"; {extra}" if extra else ""))
    numbers = {**(numbers or {}), "wins": wins, "losses": losses, "compared": len(comps),
               "by_best_residual": by_best}
    return Verdict(claim, graded(wins, len(comps)), ev, numbers)


def _compare(pairs: list[tuple[str, str, Outcome, Outcome]], source: str) -> list[Comparison]:
    return [Comparison(where, source, pair, *versus(a, b)) for where, pair, a, b in pairs]


def claim_blocked(series: dict, exits: ExitStats | None) -> Verdict:
    claim = "Blocked r beats local r with friction (Erleben)"
    exit_pairs = [(f"{s} r=blocked{f}", f"{s} r=local{f}") for s in ("prox-gs", "prox-jacobi")
                  for f in ("", " fixed")]
    comps = (_compare(_snapshot_pairs(series, BLOCKED_PAIRS), SNAPSHOTS)
             + _compare(_exit_pairs(exits, exit_pairs), EXIT_STEPS))
    return _judged(comps, "blocked r", claim)


def _idle_text(idle: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{pair} in {n} of {total}" for pair, (n, total) in idle.items())


def claim_adaptive_friction(series: dict, exits: ExitStats | None) -> Verdict:
    """Adaptive r against a fixed r, counted where the adaptation fired (rejected an iterate):
    where it never did, the adaptive run is the fixed one and says nothing about the claim."""
    claim = "Adaptive r beats a fixed r, with friction (Erleben)"
    pairs = (_snapshot_pairs(series, ADAPTIVE_PAIRS), SNAPSHOTS), \
        (_exit_pairs(exits, adaptive_pairs(exits) if exits is not None else []), EXIT_STEPS)
    comps, idle = [], {}
    for found, source in pairs:
        for where, pair, a, b in found:
            key = f"{pair} ({source})"
            n, total = idle.get(key, (0, 0))
            fired = a.rejected is None or a.rejected > 0
            idle[key] = (n + (not fired), total + 1)
            if fired:
                comps.append(Comparison(where, source, pair, *versus(a, b)))
    never = {k: v for k, v in idle.items() if v[0]}
    extra = ("the adaptation never fired (no rejected iterate: the run is the fixed-r run, "
             "not counted) in " + _idle_text(never)) if never else ""
    return _judged(comps, "adaptive r", claim, extra,
                   {"never_fired": {k: list(v) for k, v in idle.items()}})


def _rate(runs: list) -> tuple[int, int]:
    return sum(r.diverged for r in runs), len(runs)


def divergence_problems(series: dict, exits: ExitStats | None) -> list[dict]:
    """Per problem (snapshot or exit step): divergences and runs of each form."""
    out = []
    for label, snaps in series.items():
        for s in snaps:
            by = {f: [run for r, run in s.runs.items() if form(r) == f]
                  for f in ("Gauss-Seidel", "Jacobi")}
            if by["Gauss-Seidel"] and by["Jacobi"]:
                out.append({"where": f"{label} step {s.step}", "source": SNAPSHOTS,
                            **{f: _rate(v) for f, v in by.items()}})
    if exits is not None and exits.solves:
        labels = {f: [v.label for v in exits.variants if v.form == f]
                  for f in ("Gauss-Seidel", "Jacobi")}
        if labels["Gauss-Seidel"] and labels["Jacobi"]:
            for k in range(exits.steps):
                out.append({"where": f"exit step {k + 1}", "source": EXIT_STEPS, **{
                    f: (sum(exits.solves[lb][k].status == metrics.DIVERGENCE for lb in lbs),
                        len(lbs)) for f, lbs in labels.items()}})
    return out


def claim_gs_diverges_less_friction(series: dict, exits: ExitStats | None) -> Verdict:
    """Reproduced when the Gauss-Seidel forms diverge less often over all problems and on no
    problem more often than the Jacobi forms; partly when some problem contradicts; not
    reproduced when they diverge as often or more (none diverging at all included)."""
    claim = "Gauss-Seidel forms diverge less often than Jacobi forms, with friction (Erleben)"
    problems = divergence_problems(series, exits)
    if not problems:
        return Verdict(claim, UNCHECKED, "needs runs of a Gauss-Seidel and a Jacobi form")
    parts, totals = [], {}
    for source in (SNAPSHOTS, EXIT_STEPS):
        mine = [p for p in problems if p["source"] == source]
        if not mine:
            continue
        gs = [p["Gauss-Seidel"][0] / p["Gauss-Seidel"][1] for p in mine]
        jac = [p["Jacobi"][0] / p["Jacobi"][1] for p in mine]
        less = sum(g < j for g, j in zip(gs, jac))
        more = sum(g > j for g, j in zip(gs, jac))
        neither = sum(p["Gauss-Seidel"][0] == 0 and p["Jacobi"][0] == 0 for p in mine)
        counts = {f: [sum(p[f][k] for p in mine) for k in (0, 1)]
                  for f in ("Gauss-Seidel", "Jacobi")}
        totals[source] = {"less": less, "more": more, "problems": len(mine),
                          "neither": neither, **counts}
        parts.append(f"{source} ({len(mine)}): Gauss-Seidel {counts['Gauss-Seidel'][0]} of "
                     f"{counts['Gauss-Seidel'][1]} runs diverged, Jacobi {counts['Jacobi'][0]} "
                     f"of {counts['Jacobi'][1]}; fewer divergences on {less} of "
                     f"{len(mine) - neither} problems where any diverged, more on {more}")
    gs_total = sum(t["Gauss-Seidel"][0] for t in totals.values()) / max(
        sum(t["Gauss-Seidel"][1] for t in totals.values()), 1)
    jac_total = sum(t["Jacobi"][0] for t in totals.values()) / max(
        sum(t["Jacobi"][1] for t in totals.values()), 1)
    more = sum(t["more"] for t in totals.values())
    verdict = (NOT_REPRODUCED if gs_total >= jac_total else PARTLY if more else REPRODUCED)
    runs = ("Gauss-Seidel: " + ", ".join(r for r in FRICTION_RUNS if form(r) == "Gauss-Seidel")
            + "; Jacobi: " + ", ".join(r for r in FRICTION_RUNS if form(r) == "Jacobi"))
    ev = ("; ".join(parts) + f" (snapshot runs {runs}; exit-status steps: the proximal "
          "variants of each form)")
    return Verdict(claim, verdict, ev, {"sources": totals, "rate_gauss_seidel": gs_total,
                                        "rate_jacobi": jac_total})


def apgd_race(snap: FrictionSnapshot, tol: float = APGD_TOL) -> dict | None:
    """apgd against each rival of APGD_RIVALS on a snapshot: time and iterations to `tol`,
    apgd and pgs friction=ccp by the relaxation's natural map, jacobi and pgs by Coulomb's.
    holds_time / holds_iterations: apgd strictly ahead of every rival there."""
    rivals = [r for r in APGD_RIVALS if r in snap.runs]
    if "apgd" not in snap.runs or snap.runs["apgd"].relaxation is None or not rivals:
        return None
    apgd = run_outcome(snap.runs["apgd"], tol, relaxation=True)
    outcomes = {r: run_outcome(snap.runs[r], tol, relaxation=True) for r in rivals}
    by_time = {r: versus(apgd, o, "seconds") for r, o in outcomes.items()}
    by_its = {r: versus(apgd, o, "iterations") for r, o in outcomes.items()}
    return {"apgd": apgd, "rivals": outcomes,
            "coulomb_best": float(np.min(snap.runs["apgd"].residual)),
            "holds_time": all(v[0] > 0 for v in by_time.values()),
            "holds_iterations": all(v[0] > 0 for v in by_its.values()),
            "measures": sorted({v[1] for v in (*by_time.values(), *by_its.values())})}


def _median_text(races: list[dict], who: str) -> str:
    found = [r["apgd"] if who == "apgd" else r["rivals"].get(who) for r in races]
    hits = [o for o in found if o is not None and o.reached is not None]
    if not hits:
        return f"{who} not reached"
    missed = sum(o is not None and o.reached is None for o in found)
    return (f"{who} {np.median([o.reached for o in hits]):.0f} it, "
            f"{1e3 * np.median([o.seconds for o in hits]):.0f} ms"
            + (f" ({missed} not reached)" if missed else ""))


def claim_apgd(series: dict) -> Verdict:
    """'Faster' = less solve time to APGD_TOL m/s from λ = 0 (residual evaluation excluded),
    ahead of every projected Jacobi and Gauss-Seidel run. apgd and pgs friction=ccp solve the
    cone complementarity relaxation and are measured by its natural map; jacobi and pgs solve
    Coulomb's problem and are measured by Coulomb's error. By Coulomb's error apgd cannot win:
    its sliding contacts separate, which is its problem's answer, not an error."""
    claim = ("APGD converges faster than projected Jacobi and Gauss-Seidel on large granular "
             "problems (Mazhar, Heyn, Negrut, Tasora)")
    snaps = [s for label in APGD_SCENES for s in series.get(label, [])]
    races = [r for r in (apgd_race(s) for s in snaps) if r is not None]
    if not races:
        return Verdict(claim, UNCHECKED, "apgd and a projected Jacobi or Gauss-Seidel run not "
                                         "measured on " + ", ".join(APGD_SCENES))
    in_time = sum(r["holds_time"] for r in races)
    in_its = sum(r["holds_iterations"] for r in races)
    rivals = [r for r in APGD_RIVALS if r in races[0]["rivals"]]
    by_best = sum("best residual" in r["measures"] for r in races)
    ev = (f"to {APGD_TOL:g} m/s from λ = 0 on {len(races)} snapshots of "
          f"{', '.join(APGD_SCENES)} ({snaps[0].contacts} contacts, budget {snaps[0].budget} "
          f"iterations), apgd and pgs friction=ccp measured against the relaxation they solve, "
          f"jacobi and pgs against Coulomb's problem; median "
          + "; ".join(_median_text(races, w) for w in ("apgd", *rivals))
          + f". apgd first in time on {in_time} of {len(races)}, in iterations on {in_its} of "
          f"{len(races)}" + (f" ({by_best} decided on the best residual: nobody reached it)"
                              if by_best else "")
          + f". By Coulomb's error apgd gets no lower than {fmt(min(r['coulomb_best'] for r in races))}"
          " m/s (the relaxation's sliding contacts separate), so it would lose on every snapshot")
    return Verdict(claim, graded(in_time, len(races)), ev,
                   {"holds_time": [r["holds_time"] for r in races],
                    "holds_iterations": [r["holds_iterations"] for r in races],
                    "steps": [s.step for s in snaps]})


def friction_verdicts(series: dict[str, list[FrictionSnapshot]], exits: ExitStats | None
                      ) -> list[Verdict]:
    """Every frictional claim of the sources, judged from the snapshots and the frictional
    exit-status experiment."""
    return [claim_gs_diverges_less_friction(series, exits),
            claim_adaptive_friction(series, exits), claim_blocked(series, exits),
            claim_apgd(series)]
