"""Headless PNG figures of comparisons and exit statuses (matplotlib, Agg canvas; no Qt).

The figures are built on a bare `matplotlib.figure.Figure` with the Agg canvas, never through
pyplot, so nothing selects a GUI backend or touches global state, and `marbles-bench` stays free
of Qt. Files are written atomically like every other output. This module does not import
lab.report.compare (which draws with it when it writes a benchmark): a table is read through its
fields `solvers`, `residual`, `seconds`, `status`, `meta` and `iterations` only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from solver.metrics import DIVERGENCE, STATUSES

from ..io.files import atomic_write

# Residuals at or below this are drawn on it: a log axis cannot show an exact zero.
PLOT_FLOOR = 1e-17  # m/s
STATUS_COLOURS = {"absolute": "#2ca02c", "relative": "#98df8a", "max_iterations": "#ff7f0e",
                  "divergence": "#d62728"}
# With friction (a problem of 3 or 6 rows per contact) every trace is Coulomb's error.
FRICTIONAL_YLABEL = "Coulomb error: FCLIB's natural map, max over contacts (m/s)"
STATUS_LABELS = {"absolute": "absolute convergence", "relative": "relative convergence",
                 "max_iterations": "non-convergence", "divergence": "divergence"}


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: str | Path) -> Path:
    return atomic_write(path, lambda f: fig.savefig(f, format="png"))


def solver_style(k: int) -> dict:
    """One colour per solver (tab10, then tab20's light shades) and a dash pattern that changes
    every ten, so up to forty solvers stay distinguishable."""
    from matplotlib import colormaps

    colour = colormaps["tab10"](k % 10) if k < 10 else colormaps["tab20"]((2 * k + 1) % 20)
    return {"color": colour, "linestyle": ("-", "--", ":", "-.")[(k // 10) % 4]}


def comparison_png(path: str | Path, table: "lab.report.compare.ComparisonTable",
                   title: str = "") -> Path:
    """comparison_figure written to `path` (PNG, atomically)."""
    return _save(comparison_figure(table, title), path)


def comparison_figure(table: "lab.report.compare.ComparisonTable", title: str = ""):
    """Two panels, residual (m/s, log) against iterations and against milliseconds, one colour
    per solver; a diverged solver's curve ends with an x, a solver that raised is left out.
    Returns the matplotlib Figure (Agg canvas)."""
    fig = _figure(13.0, 5.2)
    by_it, by_ms = fig.subplots(1, 2)
    its = np.arange(table.residual.shape[1])
    for k, name in enumerate(table.solvers):
        r = table.residual[k]
        finite = np.isfinite(r)
        if not finite.any():
            continue
        shown = np.maximum(np.where(finite, r, np.nan), PLOT_FLOOR)
        label = name if table.status[k] != DIVERGENCE else f"{name} (diverged)"
        style = solver_style(k)
        by_it.plot(its, shown, label=label, linewidth=1.4, **style)
        by_ms.plot(1e3 * table.seconds[k], shown, label=label, linewidth=1.4, **style)
        if table.status[k] == DIVERGENCE:
            last = int(np.flatnonzero(finite)[-1])
            for ax, x in ((by_it, its[last]), (by_ms, 1e3 * table.seconds[k, last])):
                ax.plot([x], [shown[last]], marker="x", markersize=9, color=style["color"])
    right = time_axis_end(table)
    xlabel_ms = "solve time (ms, cumulative)"
    if right is not None:
        by_ms.set_xlim(0.0, 1e3 * right)
        xlabel_ms += "; axis cut 15% after the last solver's best residual"
    ylabel = (FRICTIONAL_YLABEL if table.meta.get("rows", 1) > 1
              else "natural-map residual ‖min(λ, Aλ+b)‖∞ (m/s)")
    for ax, xlabel in ((by_it, "iterations"), (by_ms, xlabel_ms)):
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
    by_it.legend(fontsize=8, ncol=2 if len(table.solvers) > 6 else 1)
    meta = table.meta
    fig.suptitle(title or f"{meta.get('contacts', '?')} contacts, {meta.get('marbles', '?')} "
                          f"marbles, {table.iterations} iterations")
    fig.tight_layout()
    return fig


def time_axis_end(table: "lab.report.compare.ComparisonTable") -> float | None:
    """Seconds where the time panel should end, or None to show everything: 15% after the
    latest moment any solver first came within 2x of its best residual. One slow solver that
    keeps iterating at its floor (seconds of flat line) would otherwise squeeze every other curve
    against the axis."""
    latest, total = 0.0, 0.0
    for k in range(len(table.solvers)):
        r, t = table.residual[k], table.seconds[k]
        finite = np.isfinite(r) & np.isfinite(t)
        if not finite.any():
            continue
        best = float(np.min(r[finite]))
        first = int(np.flatnonzero(finite & (r <= 2.0 * best))[0])
        latest = max(latest, float(t[first]))
        total = max(total, float(np.max(t[finite])))
    end = 1.15 * latest
    return end if 0.0 < end < total else None


def exit_status_png(path: str | Path, counts: dict[str, dict[str, int]],
                    groups: list[tuple[str, list[str]]], title: str) -> Path:
    """Stacked bars of exit statuses. counts: variant label -> {status: solves}; groups: panels,
    each (panel title, variant labels in bar order)."""
    fig = _figure(min(16.0, max(6.0, 1.1 * max(len(v) for _, v in groups) * len(groups))), 5.0)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    for ax, (panel, labels) in zip(axes, groups):
        bottom = np.zeros(len(labels))
        for status in STATUSES:
            values = np.array([counts[label].get(status, 0) for label in labels], dtype=float)
            ax.bar(range(len(labels)), values, bottom=bottom, color=STATUS_COLOURS[status],
                   label=STATUS_LABELS[status])
            bottom += values
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("solves")
        ax.set_title(panel, fontsize=10)
    # One legend for all panels, between the title and the bars, so it never hides a bar.
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.93), ncol=4,
               fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 0.88))
    return _save(fig, path)


def curves_png(path: str | Path, curves: dict[str, tuple[np.ndarray, np.ndarray]], title: str,
               ylabel: str, target: float | None = None) -> Path:
    """One panel: each curve (label -> (seconds, residual), both (N + 1,)) as residual (log)
    against milliseconds; `target` a horizontal dotted line. Written atomically as PNG."""
    fig = _figure(8.0, 5.0)
    ax = fig.subplots()
    for k, (label, (seconds, residual)) in enumerate(curves.items()):
        finite = np.isfinite(residual) & np.isfinite(seconds)
        ax.plot(1e3 * seconds[finite], np.maximum(residual[finite], PLOT_FLOOR), label=label,
                linewidth=1.4, **solver_style(k))
    if target is not None:
        ax.axhline(target, color="0.4", linestyle=":", linewidth=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("solve time (ms, cumulative)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)
