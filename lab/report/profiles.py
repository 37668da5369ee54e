"""Performance profiles of the frictional solvers (Dolan and Moré 2002), as Acary, Brémond and
Huber (2018) compare solvers over FCLIB's collections.

The collection (`COLLECTION`): frozen frictional steps of the project's scenes, each the problem
of one PGS-driven run (20 sweeps per step, all of the last step's impulses as warm start:
lab.report.friction_series.frozen_steps) at a listed step. Every frictional solver of the
registry starts from λ = 0 on each with the same budget of solve seconds (the driver's timed
region: sweeps only; compilation, the residual and FCLIB's error, evaluated after every
iteration, are not counted) and at most `ITERATION_CAP` iterations. t[p, s] is the solve time
after which solver s first has FCLIB's error ≤ tol on problem p (inf: not within the budget).
The profile ρ_s(τ) is the share of problems with t[p, s] ≤ τ min_s t[p, s]: ρ_s(1) the share
where s is fastest, ρ_s at large τ the share it solves at all. The measuring is here; the pure
parts (`ratios`, `profile`, `shares`, `verdict`) take numbers in and give numbers or text out.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import scenes
from solver.methods import registry
from solver.params import Param, resolve
from solver.warmup import warmup

from .friction_series import frozen_steps
from .sources import source_params

TOLERANCES = (1e-4, 1e-8)  # FCLIB's error, unitless
BUDGET = Param("profile-budget", 1.0, float, "solve seconds each solver gets on each problem of "
               "the performance profiles", "s", lo=0.0, lo_open=True, hi=3600.0)
# Iterations at most whatever the time left: a cheap sweep (a few µs on 170 contacts) would run
# hundreds of thousands of iterations in a second, each followed by a residual and FCLIB's error
# that cost ten times the sweep, for minutes of wall time on a pile that stalled long before.
ITERATION_CAP = 50_000
# Runs beside the registry's defaults, label -> (solver, parameters): newton's least-motion
# start (docs/solvers.md, Hybrids), measured wherever newton is.
VARIANTS = {"newton start=apgd": ("newton", {"start": "apgd", "start_iterations": 300})}
FOLDER = "friction-profiles"
FIGURE = "profile.png"


@dataclass(frozen=True)
class ProfileScene:
    """One run of `scene` with parameter overrides `params`, frozen at each of `steps`."""

    scene: str
    params: dict
    steps: tuple[int, ...]


COLLECTION = (
    ProfileScene("bowl", {"n": 60, "mu": 0.5, "mu_wall": 0.5}, (100, 300)),
    ProfileScene("box", {"n": 100, "mu": 0.5, "mu_wall": 0.5}, (100, 200)),
    ProfileScene("box", {"n": 100, "mu": 0.2, "mu_wall": 0.2}, (200,)),
    ProfileScene("heap", {"mu": 0.5}, (50, 200)),
    ProfileScene("heap", {"mu": 0.2}, (100,)),
    ProfileScene("heap", {"mu": 1.0}, (100,)),
    ProfileScene("pyramid", {"mu": 0.73}, (1, 25)),
    ProfileScene("pyramid", {}, (1,)),
    ProfileScene("incline", {"mu": 0.3}, (10,)),
    ProfileScene("incline", {"mu": 0.5}, (10,)),
    ProfileScene("disk", {"mu": 0.3, "mu_wall": 0.3}, (100,)),
    ProfileScene("column", {"mu": 0.5, "mu_wall": 0.5}, (50,)),
)


@dataclass
class FrozenProblem:
    """label: 'heap n=300 μ=0.5 step 50' (the scene's own size and μ named); contacts, marbles;
    problem: the frozen frictional problem."""

    label: str
    scene: str
    params: dict
    step: int
    contacts: int
    marbles: int
    problem: object


def _label(scene: str, params: dict, step: int) -> str:
    shown = {k: params[k] for k in ("n", "layers", "angle", "mu", "mu_wall") if k in params}
    if shown.get("mu_wall") == shown.get("mu"):
        shown.pop("mu_wall", None)
    words = " ".join(f"{'μ' if k == 'mu' else 'μ_wall' if k == 'mu_wall' else k}={v:g}"
                     for k, v in shown.items())
    return f"{scene} {words} step {step}"


def freeze(collection=None) -> list[FrozenProblem]:
    """The problems of `collection` (ProfileScene; None: COLLECTION), in its order."""
    out = []
    for entry in (COLLECTION if collection is None else collection):
        params = resolve(scenes.get(entry.scene).params, entry.params, f"scene {entry.scene}")
        for step, _, problem in frozen_steps(entry.scene, params, entry.steps):
            out.append(FrozenProblem(_label(entry.scene, params, step), entry.scene,
                                     dict(entry.params), step, problem.m, problem.n, problem))
    return out


@dataclass
class ProfileRun:
    """One solver on one problem: reach maps tol -> solve seconds to FCLIB's error ≤ tol (None:
    not within the budget); status (solver.metrics); iterations; seconds: solve seconds spent;
    final, best: FCLIB's error at the end and its smallest over the run (unitless)."""

    reach: dict[float, float | None]
    status: str
    iterations: int
    seconds: float
    final: float
    best: float
    # (k + 1,) each: cumulative solve seconds and FCLIB's error (inf: not observed), entry 0 at
    # λ = 0; what a campaign keeps as the run's trace
    trace_seconds: np.ndarray | None = field(default=None, repr=False)
    trace_errors: np.ndarray | None = field(default=None, repr=False)


def first_reach(errors: np.ndarray, seconds: np.ndarray, tol: float) -> float | None:
    """Solve seconds at the first entry of `errors` (k + 1,) ≤ tol, `seconds` (k + 1,) the
    cumulative solve time of the same entries; None when none is."""
    hit = np.flatnonzero(np.asarray(errors) <= tol)
    return float(seconds[hit[0]]) if hit.size else None


def variants(solvers: list[str]) -> list[str]:
    """The frictional ones of `solvers`, then the VARIANTS of those among them."""
    chosen = [s for s in solvers if registry.get(s).friction]
    return chosen + [label for label, (name, _) in VARIANTS.items() if name in chosen]


def run_solver(problem, solver: str, budget: float, cap: int = ITERATION_CAP,
               overrides: dict | None = None, tolerances=TOLERANCES) -> ProfileRun:
    """`solver` (a registered name or a label of VARIANTS) from λ = 0 on a copy of `problem`
    for `budget` solve seconds (at most `cap` iterations), FCLIB's error after every iteration
    (evaluated on another copy, outside the timed region). overrides: solver parameters over
    the source's and the variant's; reach has one entry per tolerance of `tolerances`."""
    name, params = VARIANTS.get(solver, (solver, {}))
    params = {**source_params(name), **params, **(overrides or {})}
    method = registry.get(name)
    # Compiled and warm before the timed run (the kernels of this problem's row count).
    method.solve(problem.copy(), np.zeros(problem.size),
                 registry.settings(name, 2, True, params))
    judge = problem.copy()
    errors = [judge.fclib_error(np.zeros(problem.size))]
    settings = dataclasses.replace(registry.settings(name, cap, True, params),
                                   observer=lambda lam: errors.append(judge.fclib_error(lam)),
                                   time_limit=budget)
    result = method.solve(problem.copy(), np.zeros(problem.size), settings)
    # A diverged last iterate has a time but no observation: it counts as not reached.
    seconds = np.asarray(result.seconds, dtype=np.float64)
    e = np.full(seconds.size, np.inf)
    e[:min(len(errors), e.size)] = errors[:e.size]
    return ProfileRun({tol: first_reach(e, seconds, tol) for tol in tolerances}, result.status,
                      result.iterations, float(seconds[-1]), judge.fclib_error(result.lam),
                      float(np.min(e)), seconds, e)


@dataclass
class Profiles:
    """problems: the frozen problems (their problem dropped once measured: None); solvers;
    runs[p][s]: ProfileRun of solvers[s] on problems[p]; budget: solve s per run; cap:
    iterations per run at most; seconds: wall s of the whole measurement, freezing included."""

    problems: list[FrozenProblem]
    solvers: list[str]
    runs: list[list[ProfileRun]] = field(default_factory=list)
    budget: float = BUDGET.default
    cap: int = ITERATION_CAP
    seconds: float = 0.0

    def times(self, tol: float) -> np.ndarray:
        """(problems, solvers) solve seconds to `tol`, inf where not reached."""
        return np.array([[np.inf if r.reach[tol] is None else r.reach[tol] for r in row]
                         for row in self.runs], dtype=np.float64).reshape(
            len(self.runs), len(self.solvers))


def measure_profiles(solvers: list[str], budget: float, collection=None,
                     progress: Callable[[int, int], None] | None = None,
                     cap: int = ITERATION_CAP) -> Profiles:
    """Freeze `collection` (None: COLLECTION) and run every solver of `solvers` that solves
    friction on each, and the VARIANTS of those."""
    start = time.perf_counter()
    chosen = variants(solvers)
    warmup(sorted({VARIANTS.get(s, (s, {}))[0] for s in chosen} | {"pgs"}))
    problems = freeze(collection)
    out = Profiles(problems, chosen, budget=budget, cap=cap)
    total = len(problems) * len(chosen)
    for p, frozen in enumerate(problems):
        out.runs.append([])
        for s, solver in enumerate(chosen):
            out.runs[-1].append(run_solver(frozen.problem, solver, budget, cap))
            if progress is not None:
                progress(p * len(chosen) + s + 1, total)
        frozen.problem = None  # the numbers are kept; the matrices are not needed any more
    out.seconds = time.perf_counter() - start
    return out


def ratios(times: np.ndarray) -> np.ndarray:
    """Dolan and Moré's performance ratios of `times` (problems, solvers), seconds, inf where
    not solved: t / the problem's best; inf where not solved (every entry of a problem no
    solver solved); 1 where t is the best, a best of 0 included (a problem solved at λ = 0)."""
    t = np.asarray(times, dtype=np.float64)
    best = np.min(t, axis=1, initial=np.inf, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = t / best
    r[t == best] = 1.0
    r[~np.isfinite(t)] = np.inf
    return r


def profile(r: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """ρ (solvers, len(taus)): the share of problems (rows of the ratios `r`) with r ≤ τ."""
    r = np.asarray(r, dtype=np.float64)
    taus = np.asarray(taus, dtype=np.float64)
    if r.shape[0] == 0:
        return np.zeros((r.shape[1], taus.size))
    return (r[:, :, None] <= taus[None, None, :]).mean(axis=0)


def profile_taus(r: np.ndarray) -> np.ndarray:
    """The τ where some ρ steps (1 and every finite ratio, sorted), and twice the largest, so
    a plot shows each profile flat at its share of solved problems."""
    finite = np.asarray(r, dtype=np.float64)[np.isfinite(r)]
    steps = np.unique(np.concatenate([[1.0], finite]))
    return np.append(steps, 2.0 * steps[-1])


def shares(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fastest, solved), each (solvers,) counts of problems: where the solver's time is the
    problem's best (ties count for each, unsolved problems for none), and where it is finite."""
    t = np.asarray(times, dtype=np.float64)
    solved = np.isfinite(t)
    return (solved & (ratios(t) == 1.0)).sum(axis=0), solved.sum(axis=0)


def _leaders(counts: np.ndarray, solvers: list[str]) -> str:
    top = int(counts.max(initial=0))
    return " and ".join(f"`{s}`" for s, c in zip(solvers, counts) if c == top)


def verdict(times: np.ndarray, solvers: list[str], tol: float) -> str:
    """The profile's verdict at `tol`, from `times` (problems, solvers; s, inf = not solved)
    alone: who is fastest on the most problems (ρ(1)) and who solves the most (ρ at large τ)."""
    fastest, solved = shares(times)
    n = np.asarray(times).shape[0]
    if n == 0 or not solved.any():
        return f"FCLIB's error {tol:g}: no solver reached it on any of the {n} problems."
    unsolved = int((~np.isfinite(times)).all(axis=1).sum())
    never = [f"`{s}`" for s, c in zip(solvers, solved) if c == 0]
    text = (f"FCLIB's error {tol:g}: fastest on the most problems: {_leaders(fastest, solvers)} "
            f"({int(fastest.max())} of {n}); solves the most within the budget: "
            f"{_leaders(solved, solvers)} ({int(solved.max())} of {n})")
    if unsolved:
        text += f"; {unsolved} problem{'s' if unsolved > 1 else ''} solved by none"
    if never:
        text += f"; never reached it: {', '.join(never)}"
    return text + "."


def profiles_json(p: Profiles | None) -> dict | None:
    """Every number of the profiles for results.json: the problems, each run, the verdicts,
    and each solver's ρ at the τ where some profile steps."""
    if p is None:
        return None
    out = {"budget_s": p.budget, "iteration_cap": p.cap, "seconds": p.seconds,
           "tolerances": list(TOLERANCES), "solvers": p.solvers, "problems": [], "profiles": {}}
    for frozen, row in zip(p.problems, p.runs):
        out["problems"].append({
            "label": frozen.label, "scene": frozen.scene, "params": frozen.params,
            "step": frozen.step, "contacts": frozen.contacts, "marbles": frozen.marbles,
            "runs": {s: {"status": r.status, "iterations": r.iterations,
                         "solve_seconds": r.seconds, "final_error": r.final,
                         "best_error": r.best,
                         **{f"seconds_to_{tol:g}": r.reach[tol] for tol in TOLERANCES}}
                     for s, r in zip(p.solvers, row)}})
    for tol in TOLERANCES:
        r = ratios(p.times(tol))
        taus = profile_taus(r)
        out["profiles"][f"{tol:g}"] = {
            "verdict": verdict(p.times(tol), p.solvers, tol), "tau": taus.tolist(),
            "rho": dict(zip(p.solvers, profile(r, taus).tolist()))}
    return out


def run_count(solvers: list[str], collection=None) -> int:
    """How many runs measure_profiles makes: problems × the frictional ones of `solvers`."""
    chosen = COLLECTION if collection is None else collection
    return sum(len(entry.steps) for entry in chosen) * len(variants(solvers))


def write_figure(out, p: Profiles):
    """DIR/friction-profiles/profile.png: one panel per tolerance (lab.report.figures)."""
    from .figures import profile_png

    panels = []
    for tol in TOLERANCES:
        r = ratios(p.times(tol))
        taus = profile_taus(r)
        panels.append((f"time to FCLIB's error {tol:g}", taus, profile(r, taus)))
    return profile_png(out / FOLDER / FIGURE, panels, p.solvers,
                       f"Performance profiles: {len(p.problems)} frozen frictional problems, "
                       f"{p.budget:g} s of solve time per run")
