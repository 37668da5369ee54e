"""Every solver on the same frozen contact problem: the comparison engine (no Qt).

The problem is copied once and every method starts from the same λ0, runs exactly N iterations
(tolerances off, so curves have equal length) with its per-iteration trace, and contributes one
row: the natural-map residual after each iteration and the cumulative solve time. Kernels are
compiled before anything is timed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from . import registry
from .params import ParamError
from .problem import ContactProblem
from .snapshot import atomic_write, write_json
from .warmup import warmup

NO_STOP = {"abs_tol": 0.0, "rel_tol": 0.0}


@dataclass
class ComparisonTable:
    """solvers: k names; residual, seconds: (k, N + 1) float64, index 0 = before the first
    iteration; a solve that ended early (divergence) is padded with its last value;
    status: k exit statuses; meta: problem description (contacts, metric, ...)."""

    solvers: list[str]
    residual: np.ndarray
    seconds: np.ndarray
    status: list[str]
    meta: dict = field(default_factory=dict)

    def structured(self) -> np.ndarray:
        """The `benchmark.npy` array of DESIGN.md: fields solver, residual, seconds."""
        width = max(len(s) for s in self.solvers)
        n = self.residual.shape[1]
        dtype = np.dtype([("solver", f"<U{width}"), ("residual", "<f8", (n,)),
                          ("seconds", "<f8", (n,))])
        out = np.zeros(len(self.solvers), dtype=dtype)
        out["solver"] = self.solvers
        out["residual"] = self.residual
        out["seconds"] = self.seconds
        return out


def _pad(values: np.ndarray, length: int) -> np.ndarray:
    out = np.full(length, values[-1] if values.size else np.nan)
    out[:values.size] = values
    return out


def compare(problem: ContactProblem, iterations: int, solvers: Iterable[str] | None = None,
            lam0: np.ndarray | None = None, params: dict[str, dict] | None = None,
            progress: Callable[[int, int, str], None] | None = None) -> ComparisonTable:
    """Run `solvers` (default: every registered one) on a copy of `problem` for `iterations`
    iterations each. params: per-solver parameter overrides, e.g. {"psor": {"omega": 1.3}}."""
    names = list(solvers) if solvers is not None else list(registry.METHODS)
    for name in names:
        registry.get(name)
    if iterations < 1:
        raise ParamError(f"iterations={iterations} is not valid: must be at least 1")
    frozen = problem.copy()
    start = np.zeros(frozen.m) if lam0 is None else np.array(lam0, dtype=np.float64)
    warmup(names)
    rows_r, rows_s, status = [], [], []
    for k, name in enumerate(names):
        overrides = {**NO_STOP, **(params or {}).get(name, {})}
        settings = registry.settings(name, iterations, True, overrides)
        result = registry.METHODS[name].solve(frozen, start.copy(), settings)
        rows_r.append(_pad(result.trace, iterations + 1))
        rows_s.append(_pad(result.seconds, iterations + 1))
        status.append(result.status)
        if progress is not None:
            progress(k + 1, len(names), name)
    meta = {"contacts": frozen.m, "marbles": frozen.n, "iterations": iterations,
            "metric": "natural map ||min(lam, A lam + b)||_inf, m/s",
            "warm_start": lam0 is not None, "status": dict(zip(names, status)),
            "params": {name: (params or {}).get(name, {}) for name in names}}
    return ComparisonTable(names, np.array(rows_r), np.array(rows_s), status, meta)


def write_benchmark(out_dir: str | Path, table: ComparisonTable, meta: dict | None = None
                    ) -> list[Path]:
    """Write DIR/benchmark.npy and DIR/benchmark.json atomically; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    npy = atomic_write(out / "benchmark.npy", lambda f: np.save(f, table.structured(),
                                                                 allow_pickle=False))
    info = {**table.meta, **(meta or {}), "solvers": table.solvers,
            "final_residual": dict(zip(table.solvers, table.residual[:, -1].tolist())),
            "total_seconds": dict(zip(table.solvers, table.seconds[:, -1].tolist()))}
    jsn = write_json(out / "benchmark.json", json.loads(json.dumps(info, default=str)))
    return [npy, jsn]
