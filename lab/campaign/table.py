"""The campaign's table: a Parquet dataset, one file per finished task in DIR/rows/, named by
the task's key and written atomically (a temporary dot-name, then a rename). A task retried
after its worker died writes the same name, so it is never counted twice; an interrupted
campaign leaves only whole files, which pandas (`read_parquet`), Polars and DuckDB
(`'DIR/rows/*.parquet'`) read as they are. Traces go to DIR/traces/KEY.npz.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..io.files import atomic_write, write_npz
from .tasks import TOLERANCES, column

ROWS, TRACES = "rows", "traces"
# name -> (Arrow type name, meaning); docs/campaigns.md lists these
COLUMNS = {
    "key": ("string", "16 hex digits naming (problem, solver, settings, budget)"),
    "problem": ("string", "the problem's file in the collection"),
    "contacts": ("int64", "contacts of the problem (rows of W / 3)"),
    "size": ("int64", "rows of W"),
    "mu": ("float64", "largest friction coefficient of its contacts"),
    "solver": ("string", "the solver's registry name"),
    "settings": ("string", "solver parameters given, 'name=value' separated by spaces"),
    "budget_s": ("float64", "solve seconds the task was given"),
    "device": ("string", "where the solve ran (cpu)"),
    "worker": ("string", "host:pid of the process that ran it"),
    "cpu_seconds": ("float64", "thread CPU time of the solve, FCLIB's error after each "
                               "iteration included"),
    "wall_seconds": ("float64", "wall time of the same span"),
    "solve_seconds": ("float64", "the driver's timed region: sweeps only"),
    "iterations": ("int64", "iterations done"),
    "status": ("string", "ok, budget (stopped by the budget) or error (the solver raised)"),
    "message": ("string", "the solver's exit status, or the error's message"),
    "error": ("float64", "FCLIB's error at the end"),
    "best_error": ("float64", "smallest FCLIB error over the run"),
    **{column(t): ("float64", f"solve seconds to FCLIB's error <= {t:g} (null: not reached)")
       for t in TOLERANCES},
    "trace": ("string", "traces/KEY.npz relative to the campaign folder: cumulative solve "
                        "seconds and FCLIB's error per iteration"),
}


def _schema():
    import pyarrow as pa

    return pa.schema([(name, getattr(pa, kind)()) for name, (kind, _) in COLUMNS.items()])


def done_keys(folder: Path) -> set[str]:
    """Keys of the rows already written (names only: no file is opened)."""
    rows = folder / ROWS
    if not rows.is_dir():
        return set()
    return {p.stem for p in rows.iterdir() if p.suffix == ".parquet" and not
            p.name.startswith(".")}


def write_row(folder: Path, row: dict) -> Path:
    """Write one task's row (and its trace) atomically; returns the row's file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = dict(row)
    trace = row.pop("trace", None)
    row["trace"] = None
    if trace is not None:
        name = f"{TRACES}/{row['key']}.npz"
        (folder / TRACES).mkdir(exist_ok=True)
        write_npz(folder / name, seconds=np.asarray(trace["seconds"], dtype=np.float64),
                  errors=np.asarray(trace["errors"], dtype=np.float64))
        row["trace"] = name
    (folder / ROWS).mkdir(exist_ok=True)
    table = pa.Table.from_pylist([{name: row.get(name) for name in COLUMNS}], schema=_schema())
    return atomic_write(folder / ROWS / f"{row['key']}.parquet",
                        lambda f: pq.write_table(table, f))


def read_rows(folder: str | os.PathLike) -> list[dict]:
    """Every row of the table, one per key, sorted by (problem, solver, settings)."""
    import pyarrow.parquet as pq

    rows = Path(folder) / ROWS
    files = sorted(p for p in rows.iterdir() if p.suffix == ".parquet"
                   and not p.name.startswith(".")) if rows.is_dir() else []
    out = {}
    for path in files:
        for row in pq.read_table(path, schema=_schema()).to_pylist():
            out[row["key"]] = row
    return sorted(out.values(), key=lambda r: (r["problem"], r["solver"], r["settings"]))


def columns_markdown() -> str:
    """The table of COLUMNS that docs/campaigns.md carries (a test keeps the two the same)."""
    lines = ["| column | type | meaning |", "|---|---|---|"]
    return "\n".join(lines + [f"| `{k}` | {t} | {m} |" for k, (t, m) in COLUMNS.items()])
