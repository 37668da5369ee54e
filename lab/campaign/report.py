"""`report --campaign DIR`: Dolan and Moré's profiles and a table read from a campaign's table
alone. The profiles are lab.report.profiles' own (its Profiles, verdicts, figure and JSON), so
a campaign over the same runs gives the same profiles as `report --part profiles`; a solver
with settings is its own profile row ('psor omega=1.2')."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from solver.params import ParamError

from ..io.files import atomic_write, write_json
from ..report.tables import table_lines
from ..report.profiles import (FIGURE, FOLDER, TOLERANCES, FrozenProblem, ProfileRun, Profiles,
                               profiles_json, shares, verdict, write_figure)
from .run import CAMPAIGN
from .table import read_rows
from .tasks import BUDGET, ERROR, column

REPORT = "REPORT.md"
PROFILES_JSON = "profiles.json"


def run_label(row: dict) -> str:
    """'psor', or 'psor omega=1.2' for a run with settings: one profile each."""
    return f"{row['solver']} {row['settings']}".strip()


def profiles_from_rows(rows: list[dict], order: list[str] | None = None) -> Profiles:
    """The Profiles of a campaign's rows: problems in the order first seen, runs in `order`
    (labels, as the campaign listed them) then as first seen; a run missing from the table or
    ended by an error reaches no tolerance."""
    problems, runs = {}, {}
    labels = dict.fromkeys(order or [])
    for row in rows:
        problems.setdefault(row["problem"], row)
        labels.setdefault(run_label(row), None)
        runs[row["problem"], run_label(row)] = row
    out = Profiles([FrozenProblem(name, "", {}, 0, int(row["contacts"] or 0), 0, None)
                    for name, row in problems.items()], list(labels),
                   budget=max((r["budget_s"] for r in rows), default=0.0))
    for name in problems:
        out.runs.append([_run(runs.get((name, label))) for label in labels])
    return out


def _run(row: dict | None) -> ProfileRun:
    if row is None or row["status"] == ERROR:
        return ProfileRun({tol: None for tol in TOLERANCES}, "missing" if row is None else ERROR,
                          0, 0.0, np.inf, np.inf)
    return ProfileRun({tol: row[column(tol)] for tol in TOLERANCES}, row["message"],
                      int(row["iterations"]), float(row["solve_seconds"]), float(row["error"]),
                      float(row["best_error"]))


def _order(folder: Path) -> list[str] | None:
    """The runs in the order the campaign named them (campaign.json), None without it."""
    try:
        return list(json.loads((folder / CAMPAIGN).read_text())["runs"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def counts(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Run label -> {tasks, ok, budget, error, cpu (median CPU seconds of a task)}."""
    out: dict[str, dict] = {}
    for row in rows:
        c = out.setdefault(run_label(row), {"tasks": 0, "ok": 0, BUDGET: 0, ERROR: 0, "cpu": []})
        c["tasks"] += 1
        c[row["status"]] += 1
        if row["cpu_seconds"] is not None:
            c["cpu"].append(row["cpu_seconds"])
    for c in out.values():
        c["cpu"] = float(np.median(c["cpu"])) if c["cpu"] else float("nan")
    return out


def report(folder: str | os.PathLike) -> tuple[Profiles, Path]:
    """Write DIR/REPORT.md, DIR/profiles.json and DIR/friction-profiles/profile.png from the
    table in DIR; ParamError (one line) where there is no table."""
    folder = Path(folder)
    rows = read_rows(folder)
    if not rows:
        raise ParamError(f"--campaign {str(folder)!r}: no campaign table (rows/*.parquet) there")
    p = profiles_from_rows(rows, _order(folder))
    (folder / FOLDER).mkdir(exist_ok=True)
    write_figure(folder, p)
    write_json(folder / PROFILES_JSON, profiles_json(p))
    lines = [f"# Campaign: {len(p.problems)} problems × {len(p.solvers)} runs", "",
             *(f"- **{verdict(p.times(tol), p.solvers, tol)}**" for tol in TOLERANCES), "",
             f"![performance profiles]({FOLDER}/{FIGURE})", ""]
    got = counts(rows)
    fast = [shares(p.times(tol)) for tol in TOLERANCES]
    lines += table_lines(
        ["run", "tasks", "ok", "budget", "error", "median CPU ms",
         *(f"{w} to {tol:g}" for tol in TOLERANCES for w in ("fastest", "solves"))],
        [[f"`{s}`", *(str(got[s][k]) for k in ("tasks", "ok", BUDGET, ERROR)),
          f"{1e3 * got[s]['cpu']:.2f}", *(str(int(f[w][k])) for f in fast for w in (0, 1))]
         for k, s in enumerate(p.solvers)])
    text = "\n".join(lines) + "\n"
    path = atomic_write(folder / REPORT, lambda f: f.write(text.encode()))
    return p, path
