"""The solver-laboratory benchmark behind docs/solver-lab.md.

    python -m benchmarks.solvers [--runs R] [--json FILE]
    python -m benchmarks.solvers --survey N      (failure rates on random small LCPs)
    python -m benchmarks.solvers --versus R      (pgs-sm against pgs to 1e-10, R rounds)

1. Settled bowl (350 marbles, 500 steps of 20 PGS iterations, h = 0.02 s, from λ = 0): for every
   registered solver, iterations and products with A to reach 1e-8 and 1e-10 m/s, the residual
   after 20 iterations, the precision floor (smallest residual within the budget) and the
   iterations to come within 2× of it, and the solve time to 1e-10 (median over R runs; traced
   solves, the residual measurement excluded from the time). Then four measures after 20
   iterations, to explain the article's "PGS ahead of CG after 20 iterations".
2. Cost per iteration in ns per contact on the fast path (no trace), median over max(R, 15) runs
   (bowl, 200 iterations) and max(R, 9) runs (`box` with n = 10000 after 150 steps, 20
   iterations).

3. `--versus R`: time to 1e-10 on the settled bowl of pgs and of pgs-sm (defaults, and the
   VERSUS variants), each on the fast path for exactly the iterations a traced solve needed, the
   methods alternated within each of R rounds so that load from other jobs hits them alike;
   medians, and products with A (noise-free).

Numbers depend on the machine; ratios within one run are what to compare.
"""
from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

import scenes
# prox-jacobi at Erleben's γ = 1, where the lab pages' figures were measured
from lab.report.sources import source_settings
from solver.methods import registry
from solver.step import Simulation
from solver.warmup import warmup


# Variants beyond the defaults that docs/solver-lab.md discusses.
VARIANTS = {
    "pcg restart=active": ("pcg", {"restart": "active"}),
    "pcg safeguard=0": ("pcg", {"safeguard": False}),
    "ppcg restart=active": ("ppcg", {"restart": "active"}),
    "prox-gs γ=1.5": ("prox-gs", {"gamma": 1.5}),
    "prox-gs r=global": ("prox-gs", {"r": "global"}),
    "prox-jacobi r=global": ("prox-jacobi", {"r": "global"}),
    "prox-jacobi merit=step": ("prox-jacobi", {"merit": "step"}),
    "pgs-sm k_gs=20": ("pgs-sm", {"k_gs": 20}),
    "pgs-sm dense": ("pgs-sm", {"dense_max": 20000}),
}
VERSUS = [("pgs", {}), ("pgs-sm", {}), ("pgs-sm", {"k_sm": 1}), ("pgs-sm", {"k_gs": 20})]
BUDGET = {"pgs-sm": 2000}  # iterations; others 20000
DEFAULT_BUDGET = 20000


def settled(scene: str, steps: int, overrides: dict | None = None):
    sim = Simulation(scenes.build(scene, overrides), registry.settings("pgs", 20))
    for _ in range(steps):
        sim.step()
    return sim.problem.copy()


def first_below(trace: np.ndarray, level: float):
    hits = np.flatnonzero(trace <= level)
    return int(hits[0]) if hits.size else None


def convergence_row(problem, method: str, params: dict, runs: int) -> dict:
    budget = BUDGET.get(method, DEFAULT_BUDGET)
    settings = source_settings(method, budget, True, {"abs_tol": 0.0, **params})
    times, result = [], None
    for _ in range(runs):
        result = registry.METHODS[method].solve(problem, np.zeros(problem.m), settings)
        k10 = first_below(result.trace, 1e-10)
        times.append(result.seconds[k10] if k10 is not None else np.nan)
    trace = result.trace
    floor = float(np.min(trace))
    k8, k10 = first_below(trace, 1e-8), first_below(trace, 1e-10)
    # Products are cumulative and (for pcg/mprgp/prox-jacobi) vary per iteration, so re-solve to
    # the tolerance to count them.
    def products_to(tol):
        s = source_settings(method, budget, True, {"abs_tol": tol, **params})
        r = registry.METHODS[method].solve(problem, np.zeros(problem.m), s)
        return r.products if r.status == "absolute" else None
    return {"iterations_1e-8": k8, "iterations_1e-10": k10, "products_1e-8": products_to(1e-8),
            "products_1e-10": products_to(1e-10), "residual_after_20": float(trace[20]),
            "floor": floor, "iterations_to_floor": first_below(trace, 2 * floor),
            "budget": budget, "seconds_to_1e-10_median": float(np.nanmedian(times))
            if np.isfinite(times).any() else None, "status": result.status}


def cost_row(problem, method: str, params: dict, runs: int, iterations: int) -> float:
    """Median fast-path solve time per iteration per contact, ns."""
    settings = source_settings(method, iterations, False, {"abs_tol": 0.0, **params})
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        registry.METHODS[method].solve(problem, np.zeros(problem.m), settings)
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples)) / iterations / problem.m * 1e9


# The defaults, then the rules they replaced: pcg/ppcg without the safeguard, and Erleben's step
# merit (with the global strategy's growth off, as in his code).
SURVEY = [("pcg", {}), ("ppcg", {}), ("pcg", {"restart": "active"}), ("mprgp", {}),
          ("pgs-sm", {}), ("prox-gs", {}), ("prox-jacobi", {}), ("prox-gs", {"r": "global"}),
          ("prox-jacobi", {"r": "global"}), ("pgs", {}),
          ("pcg", {"safeguard": 0}), ("ppcg", {"safeguard": 0}),
          ("pcg", {"restart": "active", "safeguard": 0}),
          ("prox-gs", {"merit": "step"}), ("prox-jacobi", {"merit": "step"}),
          ("prox-gs", {"r": "global", "merit": "step", "grow": 1}),
          ("prox-jacobi", {"r": "global", "merit": "step", "grow": 1})]


def survey(count: int) -> dict:
    """How often each method fails to reach 1e-10 m/s within 20000 iterations on random small
    feasible LCPs (tests/solver/reference.random_problem, 1-4 bodies, 1-9 contacts, seeds
    0..count-1), split into SPD and singular A."""
    from tests.solver.methods.reference import enumerate_lcp, random_problem
    fails: dict = {}
    totals = {"spd": 0, "singular": 0}
    for seed in range(count):
        rng = np.random.default_rng(seed)
        problem = random_problem(rng, int(rng.integers(1, 5)), int(rng.integers(1, 10)))
        A = problem.dense()
        try:
            enumerate_lcp(A, problem.rhs)
        except AssertionError:
            continue  # infeasible draw
        kind = "spd" if np.linalg.eigvalsh(A).min() > 1e-8 else "singular"
        totals[kind] += 1
        for name, params in SURVEY:
            label = name + "".join(f" {k}={v}" for k, v in params.items())
            settings = source_settings(name, 20000, True, {"abs_tol": 1e-10, **params})
            result = registry.METHODS[name].solve(problem, np.zeros(problem.m), settings)
            entry = fails.setdefault(label, {"spd": 0, "singular": 0})
            entry[kind] += int(result.residual >= 1e-10)
    print(f"\nrandom feasible LCPs: {totals['spd']} SPD, {totals['singular']} singular")
    print("\n| solver | fails, SPD | fails, singular |\n|---|---|---|")
    for label, entry in fails.items():
        print(f"| `{label}` | {entry['spd']} | {entry['singular']} |")
    return {"totals": totals, "fails": fails}


def versus(problem, rounds: int) -> dict:
    """pgs-sm against pgs on `problem`, time to 1e-10 m/s (see the module docstring, 3)."""
    rows = []
    for name, params in VERSUS:
        traced = registry.METHODS[name].solve(
            problem, np.zeros(problem.m),
            source_settings(name, 50000, True, {"abs_tol": 1e-10, **params}))
        assert traced.status == "absolute", (name, params, traced.status)
        label = name + "".join(f" {k}={v}" for k, v in params.items())
        rows.append((label, name, params, traced))
    samples: dict = {label: [] for label, *_ in rows}
    for _ in range(rounds):
        for label, name, params, traced in rows:
            settings = source_settings(name, traced.iterations, False, {"abs_tol": 0.0, **params})
            t0 = time.perf_counter()
            result = registry.METHODS[name].solve(problem, np.zeros(problem.m), settings)
            samples[label].append(time.perf_counter() - t0)
            assert result.residual < 1e-10  # the fast path reproduces the traced iterate
    base = float(np.median(samples[rows[0][0]]))
    out = {}
    print(f"\n{rounds} rounds, alternated\n")
    print("| solver | iterations | products | accepted / rejected | median (ms) | pgs / this |")
    print("|---|---|---|---|---|---|")
    for label, name, params, traced in rows:
        median = float(np.median(samples[label]))
        info = traced.info
        kept = f"{info['accepted']} / {info['rejected']}" if "accepted" in info else "—"
        out[label] = {"iterations": traced.iterations, "products": traced.products,
                      "median_seconds": median, "ratio": base / median, "info": dict(info)}
        print(f"| `{label}` | {traced.iterations} | {traced.products} | {kept} | "
              f"{1e3 * median:.1f} | {base / median:.2f} |", flush=True)
    return out


def fmt(x, pattern="{:.2e}"):
    return "—" if x is None else pattern.format(x)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.solvers",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--survey", type=int, default=0, metavar="N",
                        help="only the failure survey on N random seeds")
    parser.add_argument("--versus", type=int, default=0, metavar="R",
                        help="only pgs-sm against pgs to 1e-10 on the settled bowl, R rounds")
    args = parser.parse_args(argv)
    warmup()
    if args.survey:
        result = survey(args.survey)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=2)
        return 0
    if args.versus:
        bowl = settled("bowl", 500)
        print(f"settled bowl: {bowl.m} contacts, {bowl.n} marbles")
        result = versus(bowl, args.versus)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=2)
        return 0
    rows = [(name, name, {}) for name in registry.METHODS]
    rows += [(label, method, params) for label, (method, params) in VARIANTS.items()]
    bowl = settled("bowl", 500)
    out = {"machine": platform.processor() or platform.machine(), "runs": args.runs,
           "bowl_contacts": bowl.m, "convergence": {}, "cost_ns_per_contact": {}}
    print(f"settled bowl: {bowl.m} contacts, {bowl.n} marbles")
    print("\n| solver | it. to 1e-8 | it. to 1e-10 | products to 1e-10 | residual after 20 | "
          "floor | it. to floor | time to 1e-10 (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, method, params in rows:
        # One run of the dense variant: each LAPACK factorisation of the ~1000² A_SS is slow.
        row = convergence_row(bowl, method, params, 1 if label == "pgs-sm dense" else args.runs)
        out["convergence"][label] = row
        print(f"| `{label}` | {fmt(row['iterations_1e-8'], '{}')} | "
              f"{fmt(row['iterations_1e-10'], '{}')} | {fmt(row['products_1e-10'], '{}')} | "
              f"{row['residual_after_20']:.2e} | {row['floor']:.1e} | "
              f"{fmt(row['iterations_to_floor'], '{}')} | "
              f"{fmt(None if row['seconds_to_1e-10_median'] is None else 1e3 * row['seconds_to_1e-10_median'], '{:.1f}')} |",
              flush=True)
    print("\n| after 20 iterations | ‖min(λ,e)‖∞ | ‖min(λ,e)‖₂/√m | penetration ‖min(e,0)‖∞ | "
          "‖min(e,0)‖₂/√m | products |")
    print("|---|---|---|---|---|---|")
    out["after_20"] = {}
    for name in ("pgs", "psor", "pcg", "ppcg", "mprgp", "pgs-sm"):
        settings = source_settings(name, 20, True, {"abs_tol": 0.0})
        result = registry.METHODS[name].solve(bowl, np.zeros(bowl.m), settings)
        e = bowl.error(result.lam)
        nat = np.minimum(result.lam, e)
        pen = np.minimum(e, 0.0)
        row = {"natural_inf": float(np.abs(nat).max()),
               "natural_rms": float(np.sqrt(np.mean(nat ** 2))),
               "penetration_inf": float(np.abs(pen).max()),
               "penetration_rms": float(np.sqrt(np.mean(pen ** 2))), "products": result.products}
        out["after_20"][name] = row
        print(f"| `{name}` | {row['natural_inf']:.2e} | {row['natural_rms']:.2e} | "
              f"{row['penetration_inf']:.2e} | {row['penetration_rms']:.2e} | {row['products']} |")
    box = settled("box", 150, {"n": 10000})
    out["box_contacts"] = box.m
    print(f"\nbox n=10000 after 150 steps: {box.m} contacts")
    print("\n| solver | bowl ns/contact/iteration | box 10000 ns/contact/iteration |")
    print("|---|---|---|")
    for label, method, params in rows:
        if label == "pgs-sm dense":
            continue  # a dense |S|² matrix of the box does not fit the point of the table
        # The machine is shared: more samples for the cheap rows than for the convergence ones.
        a = cost_row(bowl, method, params, max(args.runs, 15), 200)
        b = cost_row(box, method, params, max(args.runs, 9), 20)
        out["cost_ns_per_contact"][label] = {"bowl": a, "box": b}
        print(f"| `{label}` | {a:.0f} | {b:.0f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
