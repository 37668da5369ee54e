"""`marbles-bench report`: regenerate the README's results section from scratch (no Qt).

For each scene: settle it, freeze one step's problem, compare every registered solver on it
(solver.compare), and tabulate the residual after 20 iterations and the iterations and
milliseconds to reach 1e-6 and 1e-10 m/s. Then Erleben's exit-status experiment: over consecutive
steps of a scene, every step's problem is solved by each proximal variant (Gauss-Seidel and Jacobi
forms × r strategy × adaptive r on/off) and the exit statuses are counted. Last, every claim of the
sources (SOLVERS.md §3-§5) gets a verdict computed from these measurements — reproduced, not
reproduced, or cannot be checked (a solver or scene missing) — with the numbers behind it.

Writes, each file atomically: DIR/<scene>/benchmark.{npy,json,png}, DIR/exit-status.png,
DIR/results.json (every number the verdicts used) and, last, DIR/RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import scenes
from solver import metrics, registry
from solver.compare import ComparisonTable, reach, write_benchmark
from solver.params import Param, ParamError, resolve
from solver.runner import Progress
from solver.snapshot import atomic_write, write_json
from solver.step import Simulation
from solver.warmup import warmup

AFTER = 20                 # iterations: "the state after ~20 iterations" of the article
TOLS = (1e-6, 1e-10)       # m/s: the loose and the tight target of the tables
SOLVED = 1e-10             # m/s: a problem counts as solved at this natural-map residual
STALL_ITERATIONS = 100     # PGS "stalls" when it needs more than this to reach TOLS[0]
FAR_FEWER = 2.0            # "far fewer iterations": at least this factor
EPS = np.finfo(np.float64).eps

DEFAULT_SCENES = ("bowl", "disk", "column", "mass-ratio")


@dataclass(frozen=True)
class ScenePlan:
    """settle: steps before the frozen one; iterations: budget of every solver; why: text."""

    settle: int
    iterations: int
    why: str


PLANS = {
    "bowl": ScenePlan(500, 5000, "The pile after 10 s of pouring (the article's 350-marble "
                                 "benchmark); the budget lets PSOR reach the precision floor"),
    "disk": ScenePlan(300, 2000, "The planar pile after 6 s"),
    "column": ScenePlan(1, 200, "The column at rest: first step, marbles touching, v = 0"),
    "mass-ratio": ScenePlan(1, 3000, "The pair at rest: first step (later steps of a "
                                     "PGS-driven run crush the light marble)"),
}
DEFAULT_PLAN = ScenePlan(200, 1000, "after 4 s")

# Wall seconds per solver after which no further timing repeat starts: generous here, because
# the verdict on subspace minimization compares times, and on a shared 2-core machine a single
# run can be off by a factor of two.
REPEAT_BUDGET = 15.0
EXIT_SCENE, EXIT_STEPS, EXIT_ITERATIONS = "bowl", 300, 200
EXIT_ABS_TOL, EXIT_REL_TOL = 1e-6, 1e-4  # m/s; ‖Δλ‖∞/‖λ‖∞


# ------------------------------------------------------------------ proximal variants (Erleben)

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


@dataclass
class ExitStats:
    """counts: variant label -> {status: solves}; residual: label -> median final residual
    (m/s); info: label -> numeric SolveResult.info entries averaged over the solves that
    reported them;
    relative: label -> which relative test applied ('merit' or 'iterates')."""

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

    def total(self, labels, statuses) -> int:
        return sum(self.counts[label].get(s, 0) for label in labels for s in statuses)


def exit_statuses(scene: str, steps: int, iterations: int, variants: list[Variant],
                  abs_tol: float = EXIT_ABS_TOL, rel_tol: float = EXIT_REL_TOL,
                  progress: Callable[[int, int], None] | None = None) -> ExitStats:
    """Step `scene` `steps` times with PGS (20 iterations, as an interactive engine would) and
    solve every step's problem from zero with each variant; count the exit statuses."""
    start = time.perf_counter()
    warmup(sorted({"pgs", *(v.solver for v in variants)}))
    sim = Simulation(scenes.build(scene), "pgs", 20, trace=False)
    settings, relative = {}, {}
    for v in variants:
        tolerances, relative[v.label] = exit_tolerances(registry.METHODS[v.solver], abs_tol,
                                                        rel_tol)
        settings[v.label] = registry.settings(v.solver, iterations, True,
                                              {**v.params, **tolerances})
    counts = {v.label: {s: 0 for s in metrics.STATUSES} for v in variants}
    finals = {v.label: [] for v in variants}
    info: dict[str, dict[str, float]] = {v.label: {} for v in variants}
    lo, hi = None, 0
    for k in range(steps):
        sim.step(trace=False)
        problem = sim.problem
        lo = problem.m if lo is None else min(lo, problem.m)
        hi = max(hi, problem.m)
        for v in variants:
            result = registry.METHODS[v.solver].solve(problem.copy(), np.zeros(problem.m),
                                                      settings[v.label])
            status = result.status if result.status in metrics.STATUSES else metrics.DIVERGENCE
            counts[v.label][status] += 1
            finals[v.label].append(result.residual)
            for key, value in (result.info or {}).items():
                if isinstance(value, (int, float, np.integer, np.floating)):
                    total, count = info[v.label].get(key, (0.0, 0))
                    info[v.label][key] = (total + float(value), count + 1)
        if progress is not None:
            progress(k + 1, steps)
    residual = {label: float(np.median(r)) if r else float("nan") for label, r in finals.items()}
    # Means over the solves that reported the entry (a solve with nothing to do reports none).
    info = {label: {k: total / count for k, (total, count) in d.items()}
            for label, d in info.items()}
    return ExitStats(scene, steps, iterations, abs_tol, rel_tol, variants, counts, residual,
                     info, relative, (lo or 0, hi), time.perf_counter() - start)


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


# ------------------------------------------------------------------------------------ verdicts

REPRODUCED, NOT_REPRODUCED, UNCHECKED = "reproduced", "not reproduced", "cannot be checked"


@dataclass(frozen=True)
class Verdict:
    claim: str
    verdict: str
    evidence: str
    numbers: dict = field(default_factory=dict)


def _fmt(x: float | None) -> str:
    if x is None or not np.isfinite(x):
        return "inf" if x is not None and np.isinf(x) else "n/a"
    return f"{x:.2e}"


def _its(hit) -> str:
    return "not reached" if hit is None else str(hit[0])


def _missing(tables: dict, scene: str, solvers: tuple[str, ...]) -> str | None:
    if scene not in tables:
        return f"scene {scene} is not in this report"
    absent = [s for s in solvers if s not in tables[scene].solvers]
    if absent:
        return f"{', '.join(absent)} not registered"
    return None


def _at(table: ComparisonTable, name: str, k: int) -> float:
    return float(table.residual[table.row(name), min(k, table.iterations)])


def claim_column(tables: dict) -> Verdict:
    claim = "PCG solves the 7-marble column in 7 iterations"
    why = _missing(tables, "column", ("pcg",))
    if why:
        return Verdict(claim, UNCHECKED, why)
    t = tables["column"]
    n = int(t.meta.get("marbles", 7))
    hit = reach(t, "pcg", SOLVED)
    ok = hit is not None and hit[0] <= n
    ev = (f"pcg reaches {SOLVED:g} m/s after {_its(hit)} iterations on the {n}-marble column "
          f"({t.meta.get('contacts', '?')} contacts; claim: {n})")
    return Verdict(claim, REPRODUCED if ok else NOT_REPRODUCED, ev,
                   {"pcg_iterations": None if hit is None else hit[0], "marbles": n})


def claim_mass_ratio(tables: dict) -> Verdict:
    claim = "PCG solves the 1000:1 mass-ratio pair in 2 iterations while PGS stalls"
    why = _missing(tables, "mass-ratio", ("pcg", "pgs"))
    if why:
        return Verdict(claim, UNCHECKED, why)
    t = tables["mass-ratio"]
    pcg = reach(t, "pcg", SOLVED)
    pgs = reach(t, "pgs", TOLS[0])
    pcg_ok = pcg is not None and pcg[0] <= 2
    pgs_stalls = pgs is None or pgs[0] > STALL_ITERATIONS
    pgs_text = (f"does not reach {TOLS[0]:g} m/s within {t.iterations} iterations"
                if pgs is None else f"needs {pgs[0]} iterations to reach {TOLS[0]:g} m/s")
    ev = (f"pcg reaches {SOLVED:g} m/s after {_its(pcg)} iterations (claim: 2); pgs {pgs_text} "
          f"(residual {_fmt(_at(t, 'pgs', t.iterations))} m/s after {t.iterations}; stalling "
          f"means more than {STALL_ITERATIONS})")
    return Verdict(claim, REPRODUCED if pcg_ok and pgs_stalls else NOT_REPRODUCED, ev,
                   {"pcg_iterations": None if pcg is None else pcg[0],
                    "pgs_iterations_to_1e-6": None if pgs is None else pgs[0]})


def precision_floor(t: ComparisonTable) -> float:
    """m/s: ten times the smallest residual any solver reached on this problem, but never below
    64 ε ‖b‖∞ (round-off of the residual itself)."""
    finite = t.residual[np.isfinite(t.residual)]
    best = float(finite.min()) if finite.size else np.inf
    return max(10.0 * best, 64.0 * EPS * float(t.meta.get("rhs_norm", 1.0)))


def claim_bowl_floor(tables: dict) -> Verdict:
    claim = ("On the 350-marble bowl the conjugate gradients reach the precision floor in far "
             "fewer iterations than PSOR (article: ~1300 against ~4000)")
    why = _missing(tables, "bowl", ("psor",))
    cgs = [s for s in ("pcg", "ppcg") if "bowl" in tables and s in tables["bowl"].solvers]
    if why or not cgs:
        return Verdict(claim, UNCHECKED, why or "pcg, ppcg not registered")
    t = tables["bowl"]
    floor = precision_floor(t)
    hits = {s: reach(t, s, floor) for s in (*cgs, "psor")}
    cg_best = min((hits[s][0] for s in cgs if hits[s] is not None), default=None)
    psor = hits["psor"]
    if cg_best is None:
        ok = False
    elif psor is None:
        ok = True  # PSOR never gets there within the budget, which is more than cg_best
    else:
        ok = FAR_FEWER * cg_best <= psor[0]
    ev = (f"iterations to the floor {floor:.1e} m/s: "
          + ", ".join(f"{s} {_its(hits[s])}" for s in hits)
          + f" (budget {t.iterations}; 'far fewer' = at least {FAR_FEWER:g}x)")
    return Verdict(claim, REPRODUCED if ok else NOT_REPRODUCED, ev,
                   {"floor": floor, **{s: None if h is None else h[0] for s, h in hits.items()}})


def claim_pgs_first(tables: dict) -> Verdict:
    claim = f"After {AFTER} iterations PGS is ahead of CG (bowl)"
    why = _missing(tables, "bowl", ("pgs", "pcg"))
    if why:
        return Verdict(claim, UNCHECKED, why)
    t = tables["bowl"]
    if t.iterations < AFTER:
        return Verdict(claim, UNCHECKED, f"only {t.iterations} iterations were run")
    pgs, pcg = _at(t, "pgs", AFTER), _at(t, "pcg", AFTER)
    extra = f", ppcg {_fmt(_at(t, 'ppcg', AFTER))}" if "ppcg" in t.solvers else ""
    ev = f"residual after {AFTER} iterations: pgs {_fmt(pgs)}, pcg {_fmt(pcg)}{extra} m/s"
    return Verdict(claim, REPRODUCED if pgs < pcg else NOT_REPRODUCED, ev,
                   {"pgs": pgs, "pcg": pcg})


ORDER = ("jacobi", "naive", "pgs", "psor", "pcg", "ppcg")  # worst to best, as the article
ORDER_LABELS = {"jacobi": "PJ", "naive": "NAIV", "pgs": "PGS", "psor": "PSOR", "pcg": "PCG",
                "ppcg": "PPCG"}


def _quality_key(t: ComparisonTable, name: str) -> tuple[float, float]:
    """Smaller is better: iterations to SOLVED (inf if never), then the final residual."""
    hit = reach(t, name, SOLVED)
    final = float(t.residual[t.row(name), -1])
    return (np.inf if hit is None else hit[0], final if np.isfinite(final) else np.inf)


def measured_order(tables: dict, names: tuple[str, ...] = ORDER) -> tuple[list[str], dict]:
    """`names` from worst to best by mean rank over the scenes, each scene ranking by
    iterations to SOLVED then final residual. Returns (order, mean rank per solver)."""
    ranks = {n: [] for n in names}
    for t in tables.values():
        if not all(n in t.solvers for n in names):
            continue
        keys = {n: _quality_key(t, n) for n in names}
        for n in names:
            # Rank 0 is the worst; equal keys share the mean of their positions, so a tie (naive
            # and PGS coincide where no impulse has to shrink) favours neither side of a claim.
            worse = sum(keys[o] > keys[n] for o in names)
            equal = sum(keys[o] == keys[n] for o in names)
            ranks[n].append(worse + (equal - 1) / 2.0)
    mean = {n: float(np.mean(r)) if r else np.nan for n, r in ranks.items()}
    order = sorted(names, key=lambda n: (mean[n], ORDER.index(n) if n in ORDER else 0))
    return order, mean


def claim_order(tables: dict) -> Verdict:
    claim = "Overall ordering PJ < NAIV < PGS < PSOR < PCG < PPCG"
    usable = {s: t for s, t in tables.items() if all(n in t.solvers for n in ORDER)}
    if not usable:
        absent = sorted({n for t in tables.values() for n in ORDER if n not in t.solvers})
        return Verdict(claim, UNCHECKED, f"{', '.join(absent) or 'no scene'} not registered")
    order, mean = measured_order(usable)
    # A pair agrees only when strictly ordered: a tie does not show that one is better.
    agree = sum(mean[a] < mean[b] for i, a in enumerate(ORDER) for b in ORDER[i + 1:])
    pairs = len(ORDER) * (len(ORDER) - 1) // 2
    text = ORDER_LABELS[order[0]]
    for prev, n in zip(order, order[1:]):
        text += (" = " if mean[prev] == mean[n] else " < ") + ORDER_LABELS[n]
    ev = (f"measured over {', '.join(usable)} (rank by iterations to {SOLVED:g} m/s, then final "
          f"residual; mean rank): {text}; {agree} of {pairs} pairs strictly in the article's "
          "order")
    return Verdict(claim, REPRODUCED if agree == pairs else NOT_REPRODUCED, ev,
                   {"order": order, "mean_rank": mean, "pairs_agreeing": agree})


def claim_gs_diverges_less(exits: ExitStats | None) -> Verdict:
    claim = "Gauss-Seidel forms diverge less often than Jacobi forms (Erleben)"
    if exits is None:
        return Verdict(claim, UNCHECKED, "no proximal solver registered")
    forms = {f: [v.label for v in exits.variants if v.form == f]
             for f in ("Gauss-Seidel", "Jacobi")}
    if not forms["Gauss-Seidel"] or not forms["Jacobi"]:
        return Verdict(claim, UNCHECKED, "needs a Gauss-Seidel and a Jacobi proximal solver")
    div = {f: exits.total(labels, (metrics.DIVERGENCE,)) for f, labels in forms.items()}
    solves = {f: exits.steps * len(labels) for f, labels in forms.items()}
    ev = (f"divergences over {exits.steps} steps of {exits.scene}: Gauss-Seidel "
          f"{div['Gauss-Seidel']} of {solves['Gauss-Seidel']} solves, Jacobi {div['Jacobi']} of "
          f"{solves['Jacobi']} (all r strategies, adaptive and fixed r)")
    rate = {f: div[f] / max(solves[f], 1) for f in div}
    return Verdict(claim, REPRODUCED if rate["Gauss-Seidel"] < rate["Jacobi"] else NOT_REPRODUCED,
                   ev, {"divergences": div, "solves": solves})


def claim_adaptive(exits: ExitStats | None) -> Verdict:
    claim = "Adaptive r beats a fixed r (Erleben)"
    if exits is None:
        return Verdict(claim, UNCHECKED, "no proximal solver registered")
    pairs = []
    for v in exits.variants:
        if not v.adaptive:
            continue
        fixed = next((w for w in exits.variants if not w.adaptive and w.solver == v.solver
                      and w.r == v.r), None)
        if fixed is not None:
            pairs.append((v.label, fixed.label))
    if not pairs:
        return Verdict(claim, UNCHECKED, "no proximal solver can switch adaptation off")
    wins = losses = 0
    details = []

    def key(label: str) -> tuple[int, int, float]:
        # A divergence throws the solve away, so it weighs more than any number of solves that
        # merely ran out of iterations; the median residual breaks ties.
        return (exits.total([label], (metrics.DIVERGENCE,)),
                exits.total([label], (metrics.MAX_ITERATIONS,)), exits.residual[label])

    for a, f in pairs:
        key_a, key_f = key(a), key(f)
        wins += key_a < key_f
        losses += key_f < key_a
        details.append(f"{a}: {key_a[0]} diverged, {key_a[1]} not converged, median residual "
                       f"{_fmt(key_a[2])} vs fixed {key_f[0]}, {key_f[1]}, {_fmt(key_f[2])}")
    ev = (f"adaptive better in {wins}, worse in {losses}, equal in {len(pairs) - wins - losses} "
          f"of {len(pairs)} (solver, r) pairs (fewer divergences, then fewer non-converged "
          f"solves, then lower median final residual): " + "; ".join(details))
    return Verdict(claim, REPRODUCED if wins > losses else NOT_REPRODUCED, ev,
                   {"wins": wins, "losses": losses, "pairs": len(pairs)})


def time_to(t: ComparisonTable, name: str, tol: float) -> tuple[float, str] | None:
    """Seconds for solver `name` to reach `tol` (m/s) and how that is known: 'measured', or
    'extrapolated' when its run ended first but its last quarter still converged linearly (the
    remaining iterations at that rate, at its mean cost per iteration). None when neither."""
    hit = reach(t, name, tol)
    if hit is not None:
        return hit[1], "measured"
    row = t.residual[t.row(name)]
    n = t.iterations
    k0 = (3 * n) // 4
    if n < 8 or not np.isfinite(row[n]) or not np.isfinite(row[k0]) or not 0 < row[n] < row[k0]:
        return None
    rate = (row[n] / row[k0]) ** (1.0 / (n - k0))  # per iteration, < 1
    more = np.log(tol / row[n]) / np.log(rate)
    seconds = float(t.seconds[t.row(name), n])
    return seconds * (n + more) / n, "extrapolated"


def _show_time(x: tuple[float, str] | None) -> str:
    if x is None:
        return "not reached"
    return f"{1e3 * x[0]:.2f} ms" + (" (extrapolated)" if x[1] == "extrapolated" else "")


def claim_subspace(tables: dict) -> Verdict:
    claim = "Subspace minimization accelerates PGS to high accuracy (PGS+SM vs PGS, bowl)"
    why = _missing(tables, "bowl", ("pgs", "pgs-sm"))
    if why:
        return Verdict(claim, UNCHECKED, why)
    parts, numbers = [], {}
    verdict = NOT_REPRODUCED
    for scene, t in tables.items():
        if not all(n in t.solvers for n in ("pgs", "pgs-sm")):
            continue
        sm, pgs = time_to(t, "pgs-sm", SOLVED), time_to(t, "pgs", SOLVED)
        measured_sm = sm is not None and sm[1] == "measured"
        # Faster needs pgs-sm's own measured time, and a pgs time that is measured, extrapolated,
        # or at least known to exceed it (pgs ran longer without getting there).
        pgs_run = float(t.seconds[t.row("pgs"), -1])
        if not measured_sm:
            faster = False
        elif pgs is not None:
            faster = FAR_FEWER * sm[0] <= pgs[0]
        else:
            faster = pgs_run >= FAR_FEWER * sm[0]
        speed = ("" if not measured_sm or pgs is None or sm[0] <= 0
                 else f", {pgs[0] / sm[0]:.1f}x")
        runs = t.meta.get("timing_runs", {})
        parts.append(f"{scene}: pgs-sm {_show_time(sm)}, pgs {_show_time(pgs)}{speed}"
                     + ("" if pgs is not None else f" (ran {1e3 * pgs_run:.2f} ms)")
                     + (f" [medians of {runs['pgs-sm']} and {runs['pgs']} runs]"
                        if "pgs-sm" in runs and "pgs" in runs else ""))
        numbers[scene] = {"pgs-sm_ms": None if sm is None else 1e3 * sm[0],
                          "pgs_ms": None if pgs is None else 1e3 * pgs[0],
                          "pgs_how": None if pgs is None else pgs[1]}
        if scene == "bowl" and faster:
            verdict = REPRODUCED
    ev = (f"milliseconds to reach {SOLVED:g} m/s (a run that ended first is extrapolated at the "
          f"rate of its last quarter; 'accelerates' = at least {FAR_FEWER:g}x faster, as the paper"
          " reports several times): " + "; ".join(parts))
    return Verdict(claim, verdict, ev, numbers)


def verdicts(tables: dict[str, ComparisonTable], exits: ExitStats | None) -> list[Verdict]:
    """Every claim of SOLVERS.md §3-§5 judged from the measured tables and exit statistics."""
    return [claim_column(tables), claim_mass_ratio(tables), claim_bowl_floor(tables),
            claim_pgs_first(tables), claim_order(tables), claim_gs_diverges_less(exits),
            claim_adaptive(exits), claim_subspace(tables)]


# ------------------------------------------------------------------------------------ markdown

def scene_rows(t: ComparisonTable) -> list[list[str]]:
    rows = []
    for k, name in enumerate(t.solvers):
        cells = [f"`{name}`", t.status[k],
                 _fmt(_at(t, name, AFTER)) if t.iterations >= AFTER else "n/a"]
        for tol in TOLS:
            hit = reach(t, name, tol)
            cells += ["not reached", "not reached"] if hit is None else [
                str(hit[0]), f"{1e3 * hit[1]:.3f}"]
        finite = t.residual[k][np.isfinite(t.residual[k])]
        cells.append(_fmt(float(finite.min())) if finite.size else "n/a")
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


def markdown(tables: dict, metas: dict, exits: ExitStats | None, found: list[Verdict],
             header: dict, exit_note: str | None) -> str:
    lines = ["## Results", "",
             f"Generated by `{header['command']}` on {header['date']} ({header['machine']}) in "
             f"{header['seconds']:.0f} s. Solvers: {', '.join(f'`{s}`' for s in header['solvers'])}."
             " Residuals are the natural map ‖min(λ, Aλ+b)‖∞ in m/s; every solver starts from "
             "λ = 0 on the same frozen problem; times are medians of repeated runs of the "
             "iterations alone (residual evaluation and compilation excluded). Regenerate with "
             "`marbles-bench report`; nothing here is typed by hand.", "",
             "### Claims of the sources", ""]
    lines += _table(["claim", "verdict", "measured"],
                    [[v.claim, f"**{v.verdict}**", v.evidence] for v in found])
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
    lines += ["", "### Exit statuses of the proximal methods (Erleben)", ""]
    if exits is None:
        lines.append(exit_note or "Not run.")
    else:
        lines.append(
            f"Every step of `{exits.scene}` (steps 1–{exits.steps}, driven by PGS with 20 "
            f"iterations; {exits.contacts[0]}–{exits.contacts[1]} contacts) solved from λ = 0 by "
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
                         *(str(c[s]) for s in metrics.STATUSES), _fmt(exits.residual[v.label]),
                         *(f"{exits.info[v.label].get(k, 0):.3g}" for k in info_keys)])
        lines += _table(["solver", "form", "r", "adaptive", "absolute", "relative",
                         "non-convergence", "divergence", "median residual",
                         *(f"{k} (mean)" for k in info_keys)], rows)
        lines += ["", "![exit statuses](exit-status.png)"]
    lines += ["", "### How the verdicts are computed", "",
              f"- Solved: natural-map residual ≤ {SOLVED:g} m/s.",
              f"- PGS stalls: more than {STALL_ITERATIONS} iterations to {TOLS[0]:g} m/s.",
              "- Precision floor: 10 × the smallest residual any solver reached on that problem "
              "(at least 64 ε ‖b‖∞); 'far fewer' means at least "
              f"{FAR_FEWER:g} × fewer iterations, or PSOR never reaching it.",
              "- Ordering: on each scene the six solvers are ranked by iterations to "
              f"{SOLVED:g} m/s, then by final residual; the overall order is by mean rank.",
              "- Divergence and adaptivity: counts over the exit-status run; adaptive wins a "
              "(solver, r) pair with fewer divergences, then fewer non-converged solves, then a "
              "lower median final residual, and the claim holds if it wins more pairs than it "
              "loses.",
              f"- Subspace minimization: at least {FAR_FEWER:g} × fewer milliseconds to reach "
              "the solved tolerance on the bowl (timings on a shared machine vary by tens of "
              "percent, and the paper reports several times); "
              "when PGS's run ends first, its time is extrapolated at the linear rate of the "
              "last quarter of its curve (marked), since a budget of equal iterations is not "
              "one of equal time."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------- command

SCENE_LIST_HELP = f"comma-separated scenes (default {','.join(DEFAULT_SCENES)})"


def add_parser(sub, func) -> None:
    p = sub.add_parser(
        "report", help="regenerate the README's results section (tables, plots, verdicts)",
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
                        + ", ".join(f"{s} {p.iterations}" for s, p in PLANS.items()) + ")")
    p.add_argument("--settle", metavar="K",
                   help="steps before the frozen one for every scene (default: per scene, "
                        + ", ".join(f"{s} {p.settle}" for s, p in PLANS.items()) + ")")
    p.add_argument("--exit-scene", default=EXIT_SCENE, metavar="S",
                   help=f"scene of the exit-status experiment, or none (default {EXIT_SCENE})")
    p.add_argument("--exit-steps", default=str(EXIT_STEPS), metavar="K",
                   help=f"consecutive steps of the exit-status experiment (default {EXIT_STEPS})")
    p.add_argument("--exit-iterations", default=str(EXIT_ITERATIONS), metavar="N",
                   help=f"iteration limit per solve there (default {EXIT_ITERATIONS})")
    p.add_argument("--repeats", default="3", metavar="R",
                   help="timing runs per solver (default 3)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=func)


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
                "exit_steps": str(EXIT_STEPS), "exit_iterations": str(EXIT_ITERATIONS),
                "repeats": "3"}
    for name, default in defaults.items():
        value = getattr(args, name)
        if value is not None and value != default:
            words.append(f"--{name.replace('_', '-')} {value}")
    return " ".join(words)


def main(args: argparse.Namespace) -> int:
    from . import bench
    from .figures import comparison_png, exit_status_png

    wall = time.perf_counter()
    scene_names = _scene_list(args.scenes)
    solvers = bench.parse_solver_list(args.solvers)
    iterations = None if args.iterations is None else int(
        bench.COMPARE_ITERATIONS.parse(args.iterations))
    settle = None if args.settle is None else int(bench.SETTLE.parse(args.settle))
    repeats = int(bench.REPEATS.parse(args.repeats))
    exit_scene = None if args.exit_scene == "none" else args.exit_scene
    if exit_scene is not None:
        scenes.get(exit_scene)
    exit_steps = int(Param("exit-steps", 1, int, "", lo=1, hi=10**6).parse(args.exit_steps))
    exit_its = int(Param("exit-iterations", 1, int, "", lo=1, hi=10**6).parse(
        args.exit_iterations))
    out = bench.prepare_out_dir(args.out, ("RESULTS.md", "results.json", "exit-status.png"))
    for scene in scene_names:
        bench.prepare_out_dir(str(out / scene), ("benchmark.npy", "benchmark.json",
                                                 "benchmark.png"))
    variants = [v for v in proximal_variants() if v.solver in solvers]
    stages = len(scene_names) + (1 if exit_scene and variants else 0)

    def say(text: str) -> None:
        if not args.quiet:
            sys.stderr.write(f"report: {text}\n")
            sys.stderr.flush()

    tables, metas = {}, {}
    for k, scene in enumerate(scene_names):
        plan = PLANS.get(scene, DEFAULT_PLAN)
        n_it = iterations or plan.iterations
        n_settle = settle or plan.settle
        say(f"[{k + 1}/{stages}] {scene}: {n_settle} settling steps, {len(solvers)} solvers x "
            f"{n_it} iterations ({time.perf_counter() - wall:.0f} s so far)")
        scene_params = resolve(scenes.get(scene).params, {}, f"scene {scene}")
        table, meta = bench.run_compare(scene, scene_params, n_settle, n_it, solvers,
                                        repeats=repeats, quiet=args.quiet,
                                        budget=REPEAT_BUDGET)
        meta["why"] = plan.why if settle is None and iterations is None else \
            f"{n_settle} settling steps, {n_it} iterations (overridden on the command line)"
        tables[scene], metas[scene] = table, meta
        comparison_png(out / scene / "benchmark.png", table,
                       f"{scene}: step {meta['step']}, {table.meta['contacts']} contacts")
        write_benchmark(out / scene, table, meta)

    exits, exit_note = None, None
    if exit_scene is None or not variants:
        # Regenerated from scratch: a chart from an earlier run must not sit beside this text.
        (out / "exit-status.png").unlink(missing_ok=True)
    if exit_scene is None:
        exit_note = "Not run (`--exit-scene none`)."
    elif not variants:
        exit_note = ("Skipped: no proximal solver (a solver with an `r` parameter that has "
                     "choices, e.g. `prox-gs`, `prox-jacobi`) is registered"
                     + (" among the selected solvers." if args.solvers else "."))
        say(exit_note)
    else:
        say(f"[{stages}/{stages}] exit statuses: {exit_steps} steps of {exit_scene} x "
            f"{len(variants)} proximal variants ({time.perf_counter() - wall:.0f} s so far)")
        progress = None if args.quiet else Progress("report: exit statuses", exit_steps)
        exits = exit_statuses(exit_scene, exit_steps, exit_its, variants, progress=progress)
        groups = []
        for adaptive in (True, False):
            labels = [v.label for v in exits.variants if v.adaptive == adaptive]
            if labels:
                groups.append((f"adaptive r {'on' if adaptive else 'off'}", labels))
        exit_status_png(out / "exit-status.png", exits.counts, groups,
                        f"Exit statuses over {exit_steps} steps of {exit_scene} "
                        f"(≤ {exit_its} iterations per solve)")

    found = verdicts(tables, exits)
    seconds = time.perf_counter() - wall
    header = {"command": _command_line(args),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                         f"{platform.python_version()}, numpy {np.__version__}",
              "seconds": seconds, "solvers": solvers}
    write_json(out / "results.json", {
        "header": header,
        "verdicts": [{"claim": v.claim, "verdict": v.verdict, "evidence": v.evidence,
                      "numbers": v.numbers} for v in found],
        "scenes": {s: {"meta": metas[s], "table": [dict(zip(
            ["solver", "status", "after20", "it_1e-6", "ms_1e-6", "it_1e-10", "ms_1e-10",
             "best"], row)) for row in scene_rows(t)]} for s, t in tables.items()},
        "exit_statuses": None if exits is None else {
            "scene": exits.scene, "steps": exits.steps, "iterations": exits.iterations,
            "counts": exits.counts, "median_residual": exits.residual, "info": exits.info},
        "exit_note": exit_note})
    text = markdown(tables, metas, exits, found, header, exit_note)
    atomic_write(out / "RESULTS.md", lambda f: f.write(text.encode()))
    say(f"done in {seconds:.0f} s: {out / 'RESULTS.md'}")
    print(f"report: {len(tables)} scenes, {len(solvers)} solvers, "
          + ", ".join(f"{v.verdict}: {sum(w.verdict == v.verdict for w in found)}"
                      for v in {w.verdict: w for w in found}.values())
          + f"; {seconds:.0f} s; wrote {out / 'RESULTS.md'}")
    return 0

