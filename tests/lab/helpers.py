"""Shared by the lab tests: `marbles-bench` as a real process, synthetic comparison tables and
exit statistics with known verdicts, and stand-ins for the proximal solvers whose r choices give
different (real) solves."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np

from lab.report.compare import ComparisonTable
from lab.report.exits import ExitStats, Variant
from lab.report.series import Snapshot, TimeTo
from solver import metrics
from solver.methods import jacobi, pgs
from solver.params import Param

R_CHOICES = ("local", "global", "blocked")
PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(*args, cwd=None):
    """`marbles-bench ARGS` in a fresh interpreter: (exit code, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "lab.cli.bench", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def curve(n, start=1.0, rate=0.5, solved_at=None, floor=1e-14):
    """A residual curve of n + 1 values: geometric decay, dropping to `floor` at `solved_at`."""
    r = start * rate ** np.arange(n + 1)
    if solved_at is not None:
        r[solved_at:] = floor
    return np.maximum(r, floor)


def table(rows: dict, marbles=7, iterations=50):
    """A ComparisonTable of the curves `rows` (name -> curve), 0.1 ms per iteration."""
    names = list(rows)
    res = np.array([rows[n] for n in names])
    secs = np.tile(np.arange(iterations + 1) * 1e-4, (len(names), 1))
    return ComparisonTable(names, res, secs, ["max_iterations"] * len(names),
                           {"marbles": marbles, "contacts": marbles, "rhs_norm": 0.2})


def snapshot(scene: str, step: int, curves: dict, marbles: int = 7, subspace=None):
    """A Snapshot of `scene` at `step` with the residual curves `curves` (run label -> curve);
    subspace: {'pgs': (iterations or None, seconds, products), 'pgs-sm': ...}."""
    timed = {k: TimeTo(v[0], v[1], v[2], 3) for k, v in (subspace or {}).items()}
    return Snapshot(scene, step, marbles, marbles, 0.2, dict(curves), timed)


def exit_stats(counts: dict, residual: dict | None = None, rejected: dict | None = None):
    """ExitStats of 10 steps of the bowl: counts is label -> {status: solves}, a label being
    'solver r=R' (adaptive) or 'solver r=R fixed'; rejected: label -> mean rejected iterates
    per solve (the solvers' info), absent where not given."""
    variants = []
    for label in counts:
        solver, r, *fixed = label.split()
        variants.append(Variant(solver, "Jacobi" if "jacobi" in solver else "Gauss-Seidel",
                                r[2:], not fixed, {}))
    full = {k: {s: c.get(s, 0) for s in metrics.STATUSES} for k, c in counts.items()}
    info = {k: ({} if rejected is None or k not in rejected else {"rejected": rejected[k]})
            for k in counts}
    return ExitStats("bowl", 10, 50, 1e-6, 1e-4, variants, full,
                     residual or {k: 1e-3 for k in counts}, info)


def prox_gs(problem, lam0, settings):
    # Stands in for prox-gs: PSOR with ω set by the strategy, so the r choices give different
    # (real) solves; without adaptation the 'global' ω = 1.9 stays as is.
    omega = {"local": 1.0, "global": 1.9, "blocked": 1.0}[settings["r"]]
    if settings["adaptation"]:
        omega = min(omega, 1.5)
    return pgs.solve_relaxed(problem, lam0, settings, omega)


def prox_jacobi(problem, lam0, settings):
    beta = {"local": 0.3, "global": 1.0, "blocked": 0.3}[settings["r"]]
    if settings["adaptation"]:
        beta = min(beta, 0.5)
    return jacobi.solve(problem, lam0,
                        dataclasses.replace(settings, params={**settings.params, "beta": beta}))


PROX_PARAMS = (Param("r", "local", str, "r strategy", choices=R_CHOICES),
               Param("adaptation", True, bool, "adaptive r"))


def frun(residual, per_iteration=1e-4, status="max_iterations", relaxation=None,
         rejected=None):
    """A FrictionRun of the curve `residual` (N + 1 values), `per_iteration` seconds each;
    relaxation: the relaxation's curve, or None."""
    from lab.report.friction_series import FrictionRun

    residual = np.asarray(residual, dtype=np.float64)
    seconds = per_iteration * np.arange(residual.size)
    return FrictionRun(residual, seconds, status,
                       None if relaxation is None else np.asarray(relaxation, np.float64),
                       rejected)


def fsnap(label: str, step: int, runs: dict, contacts: int = 100):
    """A FrictionSnapshot of frictional scene `label` at `step` with `runs` (label -> run)."""
    from lab.report.friction_series import FRICTION_SCENES, FrictionSnapshot

    return FrictionSnapshot(label, FRICTION_SCENES[label].scene, step, 50, contacts, 0.4,
                            0.02 * step, dict(runs))


def diverged(n=50):
    """A run that diverged after 5 iterations: its residual is inf from there on."""
    r = np.r_[curve(5, rate=2.0), np.full(n - 5, np.inf)]
    return frun(r, status="divergence")
