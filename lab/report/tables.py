"""What the report's tables share, with and without friction: the targets, the iteration at which
a residual curve first reaches one, the rows of a scene's table (RESULTS.md and results.json
alike), and the markdown of a table."""
from __future__ import annotations

import numpy as np

# m/s: the loose and the tight target of a scene's table, keyed by whether the problem has
# friction (the residual is then Coulomb's error rather than the natural map).
TOLS = {False: (1e-6, 1e-10), True: (1e-6, 1e-8)}
AFTER = 20  # iterations: "the state after ~20 iterations" of the article


def fmt(x: float | None) -> str:
    """A residual in a cell: '1.23e-07', 'inf', or 'n/a' for None and NaN."""
    if x is None or not np.isfinite(x):
        return "inf" if x is not None and np.isinf(x) else "n/a"
    return f"{x:.2e}"


def reach(curve: np.ndarray, tol: float) -> int | None:
    """The first iteration at which a residual curve (m/s, one value per iteration from the
    start) is <= tol (m/s), or None."""
    hit = np.flatnonzero(curve <= tol)
    return int(hit[0]) if hit.size else None


def target_header(frictional: bool) -> list[str]:
    """The header cells of the targets' columns of a scene table."""
    return [cell for tol in TOLS[frictional] for cell in (f"it to {tol:g}", f"ms to {tol:g}")]


def run_cells(name: str, status: str, residual: np.ndarray, seconds: np.ndarray,
              after: float | None, frictional: bool) -> list[str]:
    """A run's row of a scene table: its name, its status, the residual `after` a fixed number
    of iterations (None: the budget is shorter), the iterations and milliseconds to each target,
    and the best residual. residual (m/s) and seconds (s, cumulative) hold one value per
    iteration from the start, shape (iterations + 1,)."""
    cells = [f"`{name}`", status, "n/a" if after is None else fmt(after)]
    for tol in TOLS[frictional]:
        hit = reach(residual, tol)
        cells += (["not reached", "not reached"] if hit is None
                  else [str(hit), f"{1e3 * seconds[hit]:.3f}"])
    finite = residual[np.isfinite(residual)]
    cells.append(fmt(float(finite.min())) if finite.size else "n/a")
    return cells


def table_lines(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table: the header row, the rule, one line per row of cells."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def scene_rows(table) -> list[list[str]]:
    """The rows of a frictionless scene's table, one per solver of its ComparisonTable
    (lab.report.compare)."""
    return [run_cells(name, table.status[k], table.residual[k], table.seconds[k],
                      float(table.residual[k, AFTER]) if table.iterations >= AFTER else None,
                      False)
            for k, name in enumerate(table.solvers)]


def friction_rows(snap) -> list[list[str]]:
    """The rows of a frictional scene's table, one per run of a FrictionSnapshot
    (lab.report.friction_series): the cells of `run_cells`, then the best error of the cone
    complementarity relaxation and the iterates an adaptive solver rejected."""
    rows = []
    for label, run in snap.runs.items():
        after = float(run.residual[AFTER]) if snap.budget >= AFTER else None
        rows.append(run_cells(label, run.status, run.residual, run.seconds, after, True)
                    + ["n/a" if run.relaxation is None else fmt(float(np.min(run.relaxation))),
                       "n/a" if run.rejected is None else str(run.rejected)])
    return rows
