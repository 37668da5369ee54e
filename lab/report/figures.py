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
from .palette import PLOT_BACKGROUND, SolverStyle, residual_range, series_style, solver_styles

# Residuals at or below this are drawn on it: a log axis cannot show an exact zero.
PLOT_FLOOR = 1e-17  # m/s
LINE_WIDTH = 1.6  # points
TEXT, GRID = "#d0d0d8", "#50505c"  # on the dark background of the plots
_LINESTYLES = {"solid": "-", "dash": "--", "dot": ":", "dashdot": "-."}
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
    """The k-th series of a figure whose series are not a comparison's solvers: the program's
    palette in order, then again with another dash pattern (palette.series_style)."""
    colour, style = series_style(k)
    return {"color": colour, "linestyle": _LINESTYLES[style]}


def _line(style: SolverStyle) -> dict:
    """matplotlib's keywords for a comparison's line (lab.report.palette)."""
    if style.dashes is None:
        return {"color": style.colour, "linestyle": "-"}
    return {"color": style.colour, "linestyle": (style.offset, style.dashes)}


def _dark(fig, axes) -> None:
    """The plots' background of the program (the comparison window's) and light text, so the
    palette's colours, chosen for it, read the same in the PNG as on the screen."""
    fig.set_facecolor(PLOT_BACKGROUND)
    for ax in axes:
        ax.set_facecolor(PLOT_BACKGROUND)
        ax.tick_params(colors=TEXT, which="both")
        for spine in ax.spines.values():
            spine.set_color(GRID)
        ax.xaxis.label.set_color(TEXT)
        ax.yaxis.label.set_color(TEXT)
        ax.title.set_color(TEXT)
        ax.grid(True, which="major", color=GRID, alpha=0.6)


def comparison_png(path: str | Path, table: "lab.report.compare.ComparisonTable",
                   title: str = "") -> Path:
    """comparison_figure written to `path` (PNG, atomically)."""
    return _save(comparison_figure(table, title), path)


def comparison_figure(table: "lab.report.compare.ComparisonTable", title: str = ""):
    """Two panels, residual (m/s, log) against iterations and against milliseconds (log), each
    solver in its colour and dashes of lab.report.palette (the comparison window's), on the
    window's dark background; the residual axis clipped as palette.residual_range says (what
    is cut is named under the panels); a diverged solver's curve ends with an x, a solver
    that raised is left out. Returns the matplotlib Figure (Agg canvas)."""
    fig = _figure(13.0, 6.0)
    by_it, by_ms = fig.subplots(1, 2)
    its = np.arange(table.residual.shape[1])
    styles = solver_styles(list(table.solvers), table.residual)
    drawn, positive = [], []
    for k, name in enumerate(table.solvers):
        r = table.residual[k]
        finite = np.isfinite(r)
        if not finite.any():
            continue
        shown = np.maximum(np.where(finite, r, np.nan), PLOT_FLOOR)
        ms = 1e3 * np.asarray(table.seconds[k], dtype=np.float64)
        timed = ms > 0  # a log axis has no place for t = 0 (the start)
        label = name if table.status[k] != DIVERGENCE else f"{name} (diverged)"
        line = _line(styles[k])
        by_it.plot(its, shown, label=label, linewidth=LINE_WIDTH, **line)
        by_ms.plot(ms[timed], shown[timed], linewidth=LINE_WIDTH, **line)
        drawn.append((name, shown))
        positive.append(ms[timed & np.isfinite(ms)])
        if table.status[k] == DIVERGENCE:
            last = int(np.flatnonzero(finite)[-1])
            for ax, x in ((by_it, its[last]), (by_ms, ms[last])):
                ax.plot([x], [shown[last]], marker="x", markersize=9, color=styles[k].colour)
    cut, low = _clip_residual_axes((by_it, by_ms), drawn)
    xlabel_ms = "solve time (ms, cumulative, log)"
    times = np.concatenate(positive) if positive else np.zeros(0)
    if times.size:
        right = time_axis_end(table, low)
        if right is not None:
            xlabel_ms += "; cut 15% after the last solver's best residual"
        by_ms.set_xscale("log")
        by_ms.set_xlim(float(times.min()) / 1.2, 1.2 * (1e3 * right if right is not None
                                                        else float(times.max())))
    ylabel = (FRICTIONAL_YLABEL if table.meta.get("rows", 1) > 1
              else "natural-map residual ‖min(λ, Aλ+b)‖∞ (m/s)")
    for ax, xlabel in ((by_it, "iterations"), (by_ms, xlabel_ms)):
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    _dark(fig, (by_it, by_ms))
    # The legend in a row of its own under the panels (as in the window): on a panel it hid
    # the curves of one.
    handles, labels = by_it.get_legend_handles_labels()
    legend = fig.legend(handles, labels, loc="lower center", ncol=min(7, max(1, len(labels))),
                        fontsize=9, frameon=False, labelcolor=TEXT)
    rows = -(-len(labels) // 7)
    if cut:
        fig.text(0.5, 0.005, cut, ha="center", va="bottom", color=TEXT, fontsize=8)
        legend.set_bbox_to_anchor((0.5, 0.025), transform=fig.transFigure)
    meta = table.meta
    fig.suptitle(title or f"{meta.get('contacts', '?')} contacts, {meta.get('marbles', '?')} "
                          f"marbles, {table.iterations} iterations", color=TEXT)
    fig.tight_layout(rect=(0.0, 0.01 + 0.04 * rows + (0.025 if cut else 0.0), 1.0, 1.0))
    return fig


def _clip_residual_axes(axes, drawn: list[tuple[str, np.ndarray]]) -> tuple[str, float]:
    """Give `axes` the clipped residual range of the curves `drawn` ((name, values m/s)) with
    a margin; returns a line naming what lies outside it ('' when nothing does) and the
    range's bottom (m/s; 0 when there is none)."""
    clipped = residual_range([v for _, v in drawn], clip=True)
    if clipped is None:
        return "", 0.0
    low, high = clipped
    for ax in axes:
        ax.set_ylim(low / 1.5, 1.5 * high)
    out = [f"{name} reaches {float(np.nanmin(v)):.1e}" for name, v in drawn
           if np.nanmin(v) < low / 1.5] + [f"{name} reaches {float(np.nanmax(v)):.1e}"
                                            for name, v in drawn if np.nanmax(v) > 1.5 * high]
    if not out:
        return "", low
    return ("residual axis cut where a single curve goes on alone (the comparison window's "
            f"'all residuals' shows everything): {'; '.join(out)} m/s"), low


def time_axis_end(table: "lab.report.compare.ComparisonTable", floor: float = 0.0,
                  rows: list[int] | None = None) -> float | None:
    """Seconds where the time panel should end, or None to show everything: 15% after the
    latest moment any solver (of `rows`, default all) first came within 2x of its best
    residual, residuals below `floor` (m/s; the bottom of a clipped residual axis) counting as
    `floor`. One slow solver that keeps iterating at its floor (seconds of flat line) would
    otherwise squeeze every other curve against the axis."""
    latest, total = 0.0, 0.0
    for k in range(len(table.solvers)) if rows is None else rows:
        r, t = np.maximum(table.residual[k], floor), table.seconds[k]
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
                linewidth=LINE_WIDTH, **solver_style(k))
    if target is not None:
        ax.axhline(target, color=TEXT, linestyle=":", linewidth=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("solve time (ms, cumulative)")
    ax.set_ylabel(ylabel)
    _dark(fig, (ax,))
    ax.legend(fontsize=8, facecolor=PLOT_BACKGROUND, edgecolor=GRID, labelcolor=TEXT)
    fig.suptitle(title, color=TEXT)
    fig.tight_layout()
    return _save(fig, path)


def profile_png(path: str | Path, panels: list[tuple[str, np.ndarray, np.ndarray]],
                solvers: list[str], title: str) -> Path:
    """Dolan and Moré's performance profiles, one panel per tolerance: panels are (panel title,
    τ (k,) ascending from 1, ρ (solvers, k) shares of problems in [0, 1]); each solver's ρ a
    step function of τ (log axis), in its comparison colour. Written atomically as PNG."""
    from .palette import solver_colours

    fig = _figure(13.0, 5.5)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    colours = solver_colours(solvers)
    for ax, (panel, taus, rho) in zip(axes, panels):
        for k, name in enumerate(solvers):
            # Dashes alternate so that two solvers with the same profile both show.
            ax.step(taus, rho[k], where="post", label=name, color=colours[k],
                    linewidth=LINE_WIDTH, linestyle="-" if k % 2 == 0 else "--")
        ax.set_xscale("log", base=2)
        ax.set_xlim(1.0, float(taus[-1]) if taus[-1] > 1.0 else 2.0)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("τ: time within this factor of the fastest solver (log)")
        ax.set_ylabel("ρ(τ): share of problems")
        ax.set_title(panel, fontsize=10)
    _dark(fig, axes)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, max(1, len(labels))),
               fontsize=9, frameon=False, labelcolor=TEXT)
    fig.suptitle(title, color=TEXT)
    fig.tight_layout(rect=(0.0, 0.02 + 0.05 * -(-len(labels) // 6), 1.0, 1.0))
    return _save(fig, path)
