"""Campaign tasks: one solver with one setting on one problem of a collection, and the row of
the table it gives. Runs wherever Dask puts it; everything it needs travels in the Task.

Timings: `cpu_seconds` is the thread's CPU time over the solve (time.thread_time), which
concurrent tasks on other cores do not inflate; `wall_seconds` the wall time of the same span;
both include the per-iteration FCLIB error, which `solve_seconds` (the driver's timed region,
sweeps only) and the times to each tolerance leave out, as the profiles do. Numba runs one
thread per process and the kernels are compiled once per process (`prepare`), not per task.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from dataclasses import dataclass

import numpy as np

import scenes
from solver import metrics
from solver.methods import registry
from solver.params import ParamError, parse_assignments, resolve

from ..io.fclib import explicit
from .collect import read_problem
from ..report.friction_series import frozen_steps
from ..report.profiles import ITERATION_CAP, run_solver

TOLERANCES = (1e-4, 1e-6, 1e-8)  # FCLIB's error, unitless: the table's time_to_* columns
OK, ERROR, BUDGET = "ok", "error", "budget"
_prepared: set[str] = set()


@dataclass(frozen=True)
class Task:
    """problem: the file's name in the collection (the key's part); path: where the worker
    reads it; settings: the solver parameters given for this solver, text values; budget: solve
    seconds; cap: iterations at most."""

    problem: str
    path: str
    solver: str
    settings: tuple[tuple[str, str], ...]
    budget: float
    cap: int = ITERATION_CAP

    @property
    def key(self) -> str:
        """16 hex digits naming (problem, solver, settings, budget): a row's identity."""
        text = json.dumps([self.problem, self.solver, list(self.settings), self.budget])
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    def settings_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.settings)

    @property
    def label(self) -> str:
        """'psor', or 'psor omega=1.2' with settings: the run's name in the profiles."""
        return f"{self.solver} {self.settings_text()}".strip()


def solver_settings(solvers: list[str], assignments: list[str]) -> dict[str, dict[str, str]]:
    """Solver -> its given parameters (text) from --set NAME=VALUE (to every solver that has
    NAME) and SOLVER.NAME=VALUE (to that one); ParamError (one line) for a name no chosen solver
    has, a value out of range, or a solver that solves no friction."""
    for name in solvers:
        registry.check_friction(name, True)
    given = parse_assignments(assignments)
    out = {s: {} for s in solvers}
    for name, value in given.items():
        solver, _, param = name.rpartition(".")
        targets = [solver] if solver else [s for s in solvers if param in
                                           {p.name for p in registry.get(s).all_params}]
        if solver and solver not in out:
            raise ParamError(f"--set {name}: {solver} is not among the campaign's solvers")
        if not targets:
            raise ParamError(f"--set {name}: no solver of the campaign has a parameter {param}")
        for s in targets:
            out[s][param] = str(value)
    for s, params in out.items():
        resolve(registry.get(s).all_params, params, f"solver {s}")  # bad values fail here
    return out


def prepare(solvers: list[str]) -> None:
    """Once per process: Numba on one thread, and `solvers`' kernels for explicit (FCLIB)
    problems compiled on a one-contact problem, so no task's timing pays a compilation."""
    import numba

    numba.set_num_threads(1)
    todo = [s for s in solvers if s not in _prepared]
    if not todo:
        return
    params = resolve(scenes.get("incline").params, {}, "scene incline")
    tiny = explicit(frozen_steps("incline", params, (1,))[0][2])
    for s in todo:
        run_solver(tiny, s, 0.01, cap=3)
        _prepared.add(s)


def run_task(task: Task) -> dict:
    """The task's row (lab.campaign.table.COLUMNS) plus 'trace': {seconds, errors} arrays, or
    None. A solver that raises gives status 'error' and its message, not an exception."""
    row = {"key": task.key, "problem": task.problem, "solver": task.solver,
           "settings": task.settings_text(), "budget_s": task.budget, "device": "cpu",
           "worker": f"{socket.gethostname()}:{os.getpid()}", "contacts": None, "size": None,
           "mu": None, "cpu_seconds": None, "wall_seconds": None, "solve_seconds": None,
           "iterations": None, "status": ERROR, "message": "", "error": None,
           "best_error": None, **{column(t): None for t in TOLERANCES}, "trace": None}
    try:
        prepare([task.solver])
        problem, _ = read_problem(task.path)
        row.update(contacts=problem.m, size=problem.size,
                   mu=float(np.max(problem.mu, initial=0.0)))
        cpu, wall = time.thread_time(), time.perf_counter()
        run = run_solver(problem, task.solver, task.budget, task.cap, dict(task.settings),
                         TOLERANCES)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    except Exception as err:  # noqa: BLE001 - a crashing solver is a result, not the end
        row["message"] = f"{type(err).__name__}: {err}".splitlines()[0]
        return row
    over = run.status == metrics.MAX_ITERATIONS and run.seconds >= task.budget
    row.update(cpu_seconds=cpu, wall_seconds=wall, solve_seconds=run.seconds,
               iterations=run.iterations, status=BUDGET if over else OK,
               message=run.status, error=run.final, best_error=run.best,
               **{column(t): run.reach[t] for t in TOLERANCES},
               trace={"seconds": run.trace_seconds, "errors": run.trace_errors})
    return row


def column(tol: float) -> str:
    """'time_to_1e-06': the column of the solve seconds to FCLIB's error ≤ tol."""
    return f"time_to_{tol:g}"
