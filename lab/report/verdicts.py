"""The verdict on every claim of the sources (docs/solvers.md names them), from measurements
only.

The solver claims are judged on every scene the sources name, over several frozen steps each
(lab.report.series): a claim that holds on every snapshot is reproduced, on none not
reproduced, and otherwise partly reproduced, with the count ("holds in 7 of 15 snapshots").
Erleben's claims come from the exit-status experiment (lab.report.exits). Nothing here measures:
synthetic series and statistics give known verdicts in the tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver import metrics

from .exits import ExitStats
from .series import SOURCES_PCG, Snapshot
from .tables import AFTER, TOLS, fmt, reach

SOLVED = 1e-10             # m/s: a problem counts as solved at this natural-map residual
STALL_ITERATIONS = 100     # PGS "stalls" when it needs more than this to reach TOLS[False][0]
FAR_FEWER = 2.0            # "far fewer iterations", "several times faster": at least this factor
EPS = np.finfo(np.float64).eps

REPRODUCED, PARTLY, NOT_REPRODUCED = "reproduced", "partly reproduced", "not reproduced"
UNCHECKED = "cannot be checked"


@dataclass(frozen=True)
class Verdict:
    claim: str
    verdict: str
    evidence: str
    numbers: dict = field(default_factory=dict)


def graded(holds: int, total: int) -> str:
    """Reproduced when the claim holds in every check, not reproduced in none, else partly."""
    if total <= 0:
        return UNCHECKED
    return REPRODUCED if holds == total else NOT_REPRODUCED if holds == 0 else PARTLY


def _its(k: int | None) -> str:
    return "not reached" if k is None else str(k)


def _usable(series: dict, scenes: tuple[str, ...], labels: tuple[str, ...]
            ) -> tuple[list[Snapshot], str | None]:
    """The snapshots of `scenes` that have every run of `labels`, or a reason why none do."""
    snaps = [s for scene in scenes for s in series.get(scene, [])]
    if not snaps:
        return [], f"no snapshot of {' or '.join(scenes)} in this report"
    absent = sorted({n for s in snaps for n in labels if n not in s.residual})
    if absent:
        return [], f"{', '.join(absent)} not measured"
    return snaps, None


def _count(holds: int, total: int) -> str:
    return f"holds in {holds} of {total} snapshot{'s' if total != 1 else ''}"


def claim_column(series: dict) -> Verdict:
    claim = "PCG solves the 7-marble column in 7 iterations"
    snaps, why = _usable(series, ("column",), ("pcg",))
    if why:
        return Verdict(claim, UNCHECKED, why)
    its = [reach(s.residual["pcg"], SOLVED) for s in snaps]
    ok = [k is not None and k <= s.marbles for k, s in zip(its, snaps)]
    extra = ""
    if all("ppcg" in s.residual for s in snaps):
        extra = "; ppcg " + ", ".join(_its(reach(s.residual["ppcg"], SOLVED)) for s in snaps)
    ev = (f"pcg reaches {SOLVED:g} m/s after {', '.join(_its(k) for k in its)} iterations at "
          f"steps {', '.join(str(s.step) for s in snaps)} of the {snaps[0].marbles}-marble "
          f"column (claim: {snaps[0].marbles}{extra}); {_count(sum(ok), len(ok))}")
    return Verdict(claim, graded(sum(ok), len(ok)), ev,
                   {"steps": [s.step for s in snaps], "pcg_iterations": its, "holds": ok})


def claim_mass_ratio(series: dict) -> Verdict:
    claim = "PCG solves the 1000:1 mass-ratio pair in 2 iterations while PGS stalls"
    snaps, why = _usable(series, ("mass-ratio",), ("pcg", "pgs"))
    if why:
        return Verdict(claim, UNCHECKED, why)
    parts, ok = [], []
    for s in snaps:
        pcg, pgs = reach(s.residual["pcg"], SOLVED), reach(s.residual["pgs"], TOLS[False][0])
        ok.append(pcg is not None and pcg <= 2 and (pgs is None or pgs > STALL_ITERATIONS))
        pgs_text = (f"does not reach {TOLS[False][0]:g} m/s within {s.budget} iterations (residual "
                    f"{fmt(float(s.residual['pgs'][-1]))} m/s)" if pgs is None
                    else f"needs {pgs} iterations to reach {TOLS[False][0]:g} m/s")
        parts.append(f"step {s.step}: pcg reaches {SOLVED:g} m/s after {_its(pcg)} iterations, "
                     f"pgs {pgs_text}")
    ev = ("; ".join(parts) + f" (claim: 2; stalling means more than {STALL_ITERATIONS}); "
          + _count(sum(ok), len(ok)))
    return Verdict(claim, graded(sum(ok), len(ok)), ev, {"holds": ok})


def precision_floor(snap: Snapshot, labels: tuple[str, ...]) -> float:
    """m/s: ten times the smallest residual any of `labels` reached on the snapshot, but never
    below 64 ε ‖b‖∞ (round-off of the residual itself)."""
    best = min(float(np.min(snap.residual[n])) for n in labels)
    return max(10.0 * best, 64.0 * EPS * snap.rhs_norm)


def floor_race(snap: Snapshot) -> dict:
    """Iterations of pcg, ppcg and psor to the snapshot's precision floor, and whether the
    better conjugate gradient needs at least FAR_FEWER times fewer (or PSOR never gets there)."""
    cgs = tuple(n for n in ("pcg", "ppcg") if n in snap.residual)
    floor = precision_floor(snap, (*cgs, "psor"))
    its = {n: reach(snap.residual[n], floor) for n in (*cgs, "psor")}
    best = min((its[n] for n in cgs if its[n] is not None), default=None)
    holds = best is not None and (its["psor"] is None or FAR_FEWER * best <= its["psor"])
    return {"floor": floor, "iterations": its, "holds": holds}


def claim_bowl_floor(series: dict) -> Verdict:
    claim = ("On the 350-marble bowl the conjugate gradients reach the precision floor in far "
             "fewer iterations than PSOR (article: ~1300 against ~4000)")
    snaps, why = _usable(series, ("bowl",), ("psor", "pcg"))
    if why:
        return Verdict(claim, UNCHECKED, why)
    races = [floor_race(s) for s in snaps]
    holds = sum(r["holds"] for r in races)

    def median(name: str) -> str:
        its = [r["iterations"].get(name) for r in races]
        known = [k for k in its if k is not None]
        missed = len(its) - len(known)
        text = f"{np.median(known):.0f}" if known else "not reached"
        return text + (f" ({missed} not reached)" if known and missed else "")

    names = [n for n in ("pcg", "ppcg", "psor") if n in races[0]["iterations"]]
    ev = (f"iterations to each snapshot's floor (10 × the best residual of {', '.join(names)}; "
          f"budget {snaps[0].budget}), median over steps "
          f"{snaps[0].step}–{snaps[-1].step}: " + ", ".join(f"{n} {median(n)}" for n in names)
          + f"; 'far fewer' = at least {FAR_FEWER:g}x: {_count(holds, len(races))}")
    return Verdict(claim, graded(holds, len(races)), ev,
                   {"steps": [s.step for s in snaps], "races": races})


def claim_pgs_first(series: dict, scenes: tuple[str, ...] = ("bowl", "disk")) -> Verdict:
    claim = f"After {AFTER} iterations PGS is ahead of CG (the article's bowl and disk)"
    snaps, why = _usable(series, scenes, ("pgs", "pcg"))
    if why:
        return Verdict(claim, UNCHECKED, why)
    if any(s.budget < AFTER for s in snaps):
        return Verdict(claim, UNCHECKED, f"fewer than {AFTER} iterations were run")
    parts, numbers, total = [], {}, 0
    for scene in scenes:
        mine = [s for s in snaps if s.scene == scene]
        if not mine:
            continue
        pgs = np.array([s.residual["pgs"][AFTER] for s in mine])
        pcg = np.array([s.residual["pcg"][AFTER] for s in mine])
        ahead = [s.step for s, a, b in zip(mine, pgs, pcg) if a < b]
        total += len(ahead)
        parts.append(f"{scene}: {_count(len(ahead), len(mine))} (median pgs {fmt(np.median(pgs))}"
                     f", pcg {fmt(np.median(pcg))} m/s)")
        numbers[scene] = {"steps": [s.step for s in mine], "pgs": pgs.tolist(),
                          "pcg": pcg.tolist(), "pgs_ahead_at": ahead}
    ev = f"natural-map residual after {AFTER} iterations, pgs < pcg: " + "; ".join(parts)
    return Verdict(claim, graded(total, len(snaps)), ev, numbers)


ORDER = ("jacobi", "naive", "pgs", "psor", "pcg", "ppcg")  # worst to best, as the article
ORDER_LABELS = {"jacobi": "PJ", "naive": "NAIV", "pgs": "PGS", "psor": "PSOR", "pcg": "PCG",
                "ppcg": "PPCG"}


def order_runs(sources: bool) -> dict[str, str]:
    """Article name -> run label: our pcg and ppcg, or the sources' (safeguard=0)."""
    return {n: SOURCES_PCG.get(n, n) if sources else n for n in ORDER}


def quality_key(snap: Snapshot, label: str) -> tuple[float, float]:
    """Smaller is better: iterations to SOLVED, or for a run that never gets there (inf) its
    final residual. Two runs that reach SOLVED in as many iterations tie: their residuals after
    that are rounding."""
    curve = snap.residual[label]
    hit = reach(curve, SOLVED)
    if hit is not None:
        return (float(hit), 0.0)
    final = float(curve[-1])
    return (np.inf, final if np.isfinite(final) else np.inf)


def pair_outcomes(snap: Snapshot, runs: dict[str, str]) -> dict[tuple[str, str], str]:
    """For each pair (a, b) of ORDER with a claimed worse than b: 'holds' when a is strictly
    worse on this snapshot, 'tie' when equal (naive and PGS coincide where no impulse has to
    shrink), 'flips' when a is better."""
    keys = {n: quality_key(snap, runs[n]) for n in ORDER}
    out = {}
    for i, a in enumerate(ORDER):
        for b in ORDER[i + 1:]:
            out[(a, b)] = ("holds" if keys[a] > keys[b] else "tie" if keys[a] == keys[b]
                           else "flips")
    return out


def scene_order(snaps: list[Snapshot], runs: dict[str, str]) -> tuple[str, dict[str, float]]:
    """The measured order on a scene, worst first, by mean rank over its snapshots (rank 0 the
    worst; equal keys share the mean of their positions), as text 'PJ < NAIV = PGS < ...'."""
    ranks = {n: [] for n in ORDER}
    for s in snaps:
        keys = {n: quality_key(s, runs[n]) for n in ORDER}
        for n in ORDER:
            worse = sum(keys[o] > keys[n] for o in ORDER)
            equal = sum(keys[o] == keys[n] for o in ORDER)
            ranks[n].append(worse + (equal - 1) / 2.0)
    mean = {n: float(np.mean(r)) for n, r in ranks.items()}
    order = sorted(ORDER, key=lambda n: (mean[n], ORDER.index(n)))
    text = ORDER_LABELS[order[0]]
    for prev, n in zip(order, order[1:]):
        text += (" = " if mean[prev] == mean[n] else " < ") + ORDER_LABELS[n]
    return text, mean


def ordering(series: dict, sources: bool) -> dict:
    """Per scene: snapshots, measured order, and per pair of ORDER the snapshots where it holds,
    ties and flips; totals over every snapshot."""
    runs = order_runs(sources)
    scenes, held, checks, whole, count = {}, 0, 0, 0, 0
    for scene, snaps in series.items():
        snaps = [s for s in snaps if all(r in s.residual for r in runs.values())]
        if not snaps:
            continue
        outcomes = [pair_outcomes(s, runs) for s in snaps]
        pairs = {p: {k: sum(o[p] == k for o in outcomes) for k in ("holds", "tie", "flips")}
                 for p in outcomes[0]}
        text, mean = scene_order(snaps, runs)
        scenes[scene] = {"snapshots": len(snaps), "order": text, "mean_rank": mean,
                         "pairs": pairs}
        held += sum(c["holds"] for c in pairs.values())
        checks += len(pairs) * len(snaps)
        whole += sum(all(v == "holds" for v in o.values()) for o in outcomes)
        count += len(snaps)
    return {"scenes": scenes, "held": held, "checks": checks, "whole": whole,
            "snapshots": count}


def broken_pairs(pairs: dict, snapshots: int) -> list[str]:
    """'NAIV < PJ in 10 of 10' for each pair that does not hold on every snapshot."""
    out = []
    for (a, b), c in pairs.items():
        if c["holds"] == snapshots:
            continue
        words = [f"{ORDER_LABELS[b]} < {ORDER_LABELS[a]} in {c['flips']}" if c["flips"] else "",
                 f"{ORDER_LABELS[a]} = {ORDER_LABELS[b]} in {c['tie']}" if c["tie"] else ""]
        out.append(" and ".join(w for w in words if w) + f" of {snapshots}")
    return out


def claim_order(series: dict, sources: bool = False) -> Verdict:
    who = ("the sources' PCG and PPCG (safeguard=0)" if sources
           else "our PCG and PPCG (safeguard on)")
    claim = f"Overall ordering PJ < NAIV < PGS < PSOR < PCG < PPCG, with {who}"
    found = ordering(series, sources)
    if not found["scenes"]:
        absent = sorted({r for r in order_runs(sources).values()
                         for snaps in series.values() for s in snaps if r not in s.residual})
        return Verdict(claim, UNCHECKED, f"{', '.join(absent) or 'no snapshot'} not measured")
    parts = []
    for scene, d in found["scenes"].items():
        broken = broken_pairs(d["pairs"], d["snapshots"])
        parts.append(f"{scene} ({d['snapshots']}): {d['order']}"
                     + (f" — against the article: {', '.join(broken)}" if broken else ""))
    ev = (f"ranked by iterations to {SOLVED:g} m/s (equal counts tie), else by final residual; "
          "measured order per scene (mean rank over its snapshots): " + "; ".join(parts)
          + f". Pairs in the article's order: {found['held']} of {found['checks']} (15 per "
          f"snapshot); the whole order holds in {found['whole']} of {found['snapshots']} "
          "snapshots")
    numbers = {**found, "scenes": {
        scene: {**d, "pairs": {f"{ORDER_LABELS[a]} < {ORDER_LABELS[b]}": c
                               for (a, b), c in d["pairs"].items()}}
        for scene, d in found["scenes"].items()}}
    return Verdict(claim, graded(found["held"], found["checks"]), ev, numbers)


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


def adaptive_pairs(exits: ExitStats) -> list[tuple[str, str]]:
    """(adaptive label, fixed label) for every (solver, r) that has both."""
    pairs = []
    for v in exits.variants:
        fixed = next((w for w in exits.variants if v.adaptive and not w.adaptive
                      and w.solver == v.solver and w.r == v.r), None)
        if fixed is not None:
            pairs.append((v.label, fixed.label))
    return pairs


def claim_adaptive(exits: ExitStats | None) -> Verdict:
    claim = "Adaptive r beats a fixed r (Erleben)"
    if exits is None:
        return Verdict(claim, UNCHECKED, "no proximal solver registered")
    pairs = adaptive_pairs(exits)
    if not pairs:
        return Verdict(claim, UNCHECKED, "no proximal solver can switch adaptation off")

    def key(label: str) -> tuple[int, int, float]:
        # A divergence throws the solve away, so it weighs more than any number of solves that
        # merely ran out of iterations; the median residual breaks ties.
        return (exits.total([label], (metrics.DIVERGENCE,)),
                exits.total([label], (metrics.MAX_ITERATIONS,)), exits.residual[label])

    # Where the adaptation never rejected an iterate the adaptive run is the fixed-r run: equal
    # counts there say nothing about the claim.
    idle = [(a, f) for a, f in pairs if exits.rejections(a) == 0 and not exits.rejections(f)]
    compared = [p for p in pairs if p not in idle]
    wins = [a for a, f in compared if key(a) < key(f)]
    losses = [a for a, f in compared if key(f) < key(a)]
    details = [f"{a}: {key(a)[0]} diverged, {key(a)[1]} not converged, median residual "
               f"{fmt(key(a)[2])} vs fixed {key(f)[0]}, {key(f)[1]}, {fmt(key(f)[2])}"
               for a, f in compared]
    numbers = {"wins": len(wins), "losses": len(losses), "compared": len(compared),
               "not_comparable": [a for a, _ in idle]}
    idle_text = (f"not comparable: the adaptation never fired in {', '.join(a for a, _ in idle)}"
                 if idle else "")
    if not compared:
        return Verdict(claim, UNCHECKED, idle_text, numbers)
    ev = (f"adaptive better in {len(wins)}, worse in {len(losses)}, equal in "
          f"{len(compared) - len(wins) - len(losses)} of {len(compared)} comparable (solver, r) "
          "pairs (fewer divergences, then fewer non-converged solves, then lower median final "
          "residual): " + "; ".join(details) + (f"; {idle_text}" if idle_text else ""))
    return Verdict(claim, graded(len(wins), len(compared)), ev, numbers)


def subspace_race(snap: Snapshot) -> dict | None:
    """PGS against PGS+SM to SOLVED on a snapshot: their times, and whether PGS+SM is at least
    FAR_FEWER times faster (a PGS run that ended first counts when it ran that much longer)."""
    pgs, sm = snap.subspace.get("pgs"), snap.subspace.get("pgs-sm")
    if pgs is None or sm is None:
        return None
    holds = sm.iterations is not None and pgs.seconds >= FAR_FEWER * sm.seconds
    return {"pgs": pgs, "pgs-sm": sm, "ratio": pgs.seconds / sm.seconds if sm.seconds > 0
            else np.inf, "holds": holds}


def claim_subspace(series: dict) -> Verdict:
    claim = "Subspace minimization accelerates PGS to high accuracy (PGS+SM vs PGS, bowl)"
    snaps = series.get("bowl", [])
    races = [r for r in (subspace_race(s) for s in snaps) if r is not None]
    if not races:
        return Verdict(claim, UNCHECKED, "pgs and pgs-sm not timed on the bowl")
    holds = sum(r["holds"] for r in races)
    ratio = np.array([r["ratio"] for r in races])
    products = np.array([r["pgs"].products / max(r["pgs-sm"].products, 1) for r in races])
    missed = sum(r["pgs"].iterations is None for r in races)
    ev = (f"time to {SOLVED:g} m/s from λ = 0, pgs / pgs-sm, over {len(races)} bowl snapshots: "
          f"median {np.median(ratio):.1f}x (range {ratio.min():.1f}–{ratio.max():.1f}x; "
          f"median of {races[0]['pgs'].runs} runs each); products with A: median "
          f"{np.median(products):.1f}x fewer"
          + (f"; pgs did not reach it within its budget in {missed}" if missed else "")
          + f"; 'accelerates' = at least {FAR_FEWER:g}x faster: {_count(holds, len(races))}")
    return Verdict(claim, graded(holds, len(races)), ev,
                   {"ratio": ratio.tolist(), "products_ratio": products.tolist(),
                    "holds": [r["holds"] for r in races]})


def verdicts(series: dict[str, list[Snapshot]], exits: ExitStats | None) -> list[Verdict]:
    """Every claim of the sources judged from the snapshot series and exit statistics."""
    return [claim_column(series), claim_mass_ratio(series), claim_bowl_floor(series),
            claim_pgs_first(series), claim_order(series), claim_order(series, sources=True),
            claim_gs_diverges_less(exits), claim_adaptive(exits), claim_subspace(series)]


def verdicts_json(found: list[Verdict]) -> list[dict]:
    """The verdicts as results.json has them."""
    return [{"claim": v.claim, "verdict": v.verdict, "evidence": v.evidence,
             "numbers": v.numbers} for v in found]
