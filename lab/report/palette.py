"""How a comparison's solvers look in every plot that shows them (the comparison window,
benchmark.png): each solver's colour, the dashes that keep coinciding curves visible, and the
residual range a plot shows. Qt-free and matplotlib-free, so the window and the PNG agree.

Colours: a solver has the colour of its place in the registry (solver.methods.registry), from
the program's palette (PALETTE below, one colour per registered solver), whatever
else a table holds; a name the registry does not know takes the first colour no solver of the
table uses.

Dashes: solvers whose iterates are the same (pgs, prox-gs and nsgs on a frictionless problem)
draw one curve. The first of such a group, in table order (the drawing order), is solid; the
p-th of n after it is dashed so that its dashes cover only the p-th of n equal parts of each
period, leaving the parts of the others, the solid one's included, uncovered: every colour of
the group shows along the curve.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.methods.registry import METHODS

# The plots' background (the live plots, the comparison window and benchmark.png alike) and
# their one palette, one colour per registered solver: Okabe & Ito's colour-blind-safe set
# without its black, then near-white, spring green, a deep blue, violet, olive, mint, brown,
# rose, magenta, lavender and red, the last eleven chosen (from a grid of colours) to keep
# every pair at least 26 CIELAB units apart in normal vision and 15 as protanopes, deuteranopes and
# tritanopes see it, every colour at least 45 from the background (a test simulates each
# vision). Each solver has the colour of
# its place in the registry (solver_colours); the closest pair in normal vision is pgs / pcg,
# sky blue against blue. A series beyond the palette also changes its dash (LINE_STYLES).
PLOT_BACKGROUND = "#15151c"
PALETTE = ("#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7",
           "#f4f4f4", "#00ee66", "#0044ee", "#aa55ee", "#779955", "#88dd99", "#885522",
           "#ccaaaa", "#cc00aa", "#eeccff", "#fa3246")
LINE_STYLES = ("solid", "dash", "dot", "dashdot")


def series_style(k: int) -> tuple[str, str]:
    """(colour, line style) of the k-th series of a plot (a solver, a phase)."""
    return PALETTE[k % len(PALETTE)], LINE_STYLES[(k // len(PALETTE)) % len(LINE_STYLES)]


DASH = 4.0  # line widths: the length of one solver's part of a shared curve's dash period
# Two curves coincide when their residuals agree to this relative tolerance at COINCIDE of the
# iterations after the start (every solver starts from the same residual).
SAME = 1e-9
COINCIDE = 0.5
MARGIN = 10.0  # a clipped range reaches one decade past the curve that bounds it
_ORDER = {name: k for k, name in enumerate(METHODS)}


@dataclass(frozen=True)
class SolverStyle:
    """colour: #rrggbb; dashes: None (solid) or (on, off) in line widths; offset: where in
    the (on, off) period the line starts, in line widths (Qt's dashOffset, matplotlib's
    linestyle offset in units of the line width)."""

    colour: str
    dashes: tuple[float, float] | None = None
    offset: float = 0.0


def solver_colours(names: list[str]) -> list[str]:
    """#rrggbb of each solver in `names`: its registry place's palette colour; unknown names
    the palette's colours that no registered name of `names` takes, in order (then the
    palette again)."""
    taken = {_ORDER[n] for n in names if n in _ORDER}
    free = [k for k in range(len(PALETTE)) if k not in taken] or list(range(len(PALETTE)))
    out, extra = [], 0
    for name in names:
        if name in _ORDER:
            out.append(series_style(_ORDER[name])[0])
        else:
            out.append(PALETTE[free[extra % len(free)]])
            extra += 1
    return out


def coincident_groups(residual: np.ndarray) -> list[tuple[int, int]]:
    """Per row of `residual` (solvers, iterations + 1): (place, size) of its group of
    coinciding curves. A row joins the group of the first earlier row it coincides with (equal
    to relative SAME at COINCIDE or more of the iterations after the start where both are
    finite); place 0 starts a group."""
    r = np.asarray(residual, dtype=np.float64)[:, 1:]
    root = list(range(r.shape[0]))
    for k in range(r.shape[0]):
        for j in range(k):
            if root[j] != j:
                continue
            both = np.isfinite(r[k]) & np.isfinite(r[j])
            same = both & np.isclose(r[k], r[j], rtol=SAME, atol=0.0)
            if r.shape[1] and same.sum() >= COINCIDE * r.shape[1]:
                root[k] = j
                break
    place = [root[:k].count(root[k]) for k in range(len(root))]
    return [(place[k], root.count(root[k])) for k in range(len(root))]


def solver_styles(names: list[str], residual: np.ndarray) -> list[SolverStyle]:
    """The style of each solver of a comparison, drawn in the order of `names` (rows of
    `residual`, (solvers, iterations + 1) m/s)."""
    styles = []
    for colour, (place, size) in zip(solver_colours(names), coincident_groups(residual)):
        if place == 0:
            styles.append(SolverStyle(colour))
        else:
            styles.append(SolverStyle(colour, (DASH, DASH * (size - 1)),
                                      DASH * ((size - place) % size)))
    return styles


def residual_range(curves: list[np.ndarray], clip: bool = True) -> tuple[float, float] | None:
    """(low, high) m/s a plot of the residual `curves` (each (k,), positive where drawn) shows,
    None when no value is finite and positive. Unclipped: every value. Clipped: the range
    where two curves or more still are, so one curve alone far beyond the others does not take
    the axis (pgs-sm's 1e-14 against the others' 1e-4 left the rest squeezed into a third of the
    plot): with the lowest floor f1 and the next f2 (the floors being each curve's smallest
    value), the bottom is f1 if f1 >= f2 / MARGIN, else f2 / MARGIN; the top likewise from the
    two highest peaks (a diverging solver alone). Nothing is cut with fewer than two curves, or
    where the cut range would be empty (two curves that never meet)."""
    floors, peaks = [], []
    for curve in curves:
        c = np.asarray(curve, dtype=np.float64)
        c = c[np.isfinite(c) & (c > 0)]
        if c.size:
            floors.append(float(c.min()))
            peaks.append(float(c.max()))
    if not floors:
        return None
    floors.sort()
    peaks.sort()
    if not clip or len(floors) < 2:
        return floors[0], peaks[-1]
    low, high = max(floors[0], floors[1] / MARGIN), min(peaks[-1], peaks[-2] * MARGIN)
    return (low, high) if low < high else (floors[0], peaks[-1])
