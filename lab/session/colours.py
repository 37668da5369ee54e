"""What the colour modes of the Session show, per marble: a heat scale, the contact impulses
and the slip speeds of the last step, with the scale each mode's colour bar shows; and the one
palette of the program's plots. Qt-free; arrays in, arrays out."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solver.world import World

COLOUR_MODES = ("marble", "speed", "impulse", "slip")
SPEED_SCALE = 2.0  # m/s shown as the hottest colour
IMPULSE_SCALE = 6.0  # contact impulse per step, in units of the marble's weight times dt
# Slip speeds are shown on a log scale: SLIP_RANGE[0] (creep) and less coldest, SLIP_RANGE[1]
# (a marble skidding) and more hottest.
SLIP_RANGE = (1e-3, 1.0)  # m/s

# The plots' background (the live plots, the comparison window and benchmark.png alike) and
# their one palette, one colour per registered solver: Okabe & Ito's colour-blind-safe set
# without its black, then near-white, spring green, a deep blue, violet, olive, mint, brown,
# rose, magenta and lavender, the last ten chosen (from a grid of colours) to keep every pair at least 26 CIELAB units
# apart in normal vision and 15 as protanopes, deuteranopes and tritanopes see it, every colour
# at least 45 from the background (a test simulates each vision). Each solver has the colour of
# its place in the registry (lab.report.palette); the closest pair in normal vision is pgs / pcg,
# sky blue against blue. A series beyond the palette also changes its dash (LINE_STYLES).
PLOT_BACKGROUND = "#15151c"
PALETTE = ("#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7",
           "#f4f4f4", "#00ee66", "#0044ee", "#aa55ee", "#779955", "#88dd99", "#885522",
           "#ccaaaa", "#cc00aa", "#eeccff")
LINE_STYLES = ("solid", "dash", "dot", "dashdot")


def series_style(k: int) -> tuple[str, str]:
    """(colour, line style) of the k-th series of a plot (a solver, a phase)."""
    return PALETTE[k % len(PALETTE)], LINE_STYLES[(k // len(PALETTE)) % len(LINE_STYLES)]


@dataclass(frozen=True)
class ColourScale:
    """What a colour mode's heat colours mean, for its colour bar: title (with unit) and ticks
    as (position in [0, 1] along heat(), label)."""

    title: str
    ticks: tuple[tuple[float, str], ...]


def colour_scale(mode: str) -> ColourScale | None:
    """The scale of colour mode `mode`, None for "marble" (each marble its own colour)."""
    if mode == "speed":
        return ColourScale("speed (m/s)", tuple((v / SPEED_SCALE, f"{v:g}")
                                                for v in np.linspace(0.0, SPEED_SCALE, 5)))
    if mode == "impulse":
        return ColourScale("normal impulse per step (weight × dt)",
                           tuple((v / IMPULSE_SCALE, f"{v:g}")
                                 for v in np.linspace(0.0, IMPULSE_SCALE, 4)))
    if mode == "slip":
        lo, hi = SLIP_RANGE
        decades = np.arange(round(math.log10(lo)), round(math.log10(hi)) + 1)
        return ColourScale("slip speed (m/s, log)",
                           tuple((float(slip_heat(np.array([10.0 ** d]))[0]), f"{10.0 ** d:g}")
                                 for d in decades))
    return None


def heat(values: np.ndarray) -> np.ndarray:
    """Map values in [0, 1] to RGB (n, 3) float32: dark blue -> teal -> yellow -> red."""
    stops = np.array([0.0, 0.35, 0.7, 1.0])
    rgb = np.array([[0.15, 0.2, 0.6], [0.1, 0.65, 0.6], [0.95, 0.85, 0.2], [0.9, 0.2, 0.1]])
    t = np.clip(np.nan_to_num(values, nan=1.0, posinf=1.0), 0.0, 1.0)
    return np.stack([np.interp(t, stops, rgb[:, k]) for k in range(3)], axis=1).astype(np.float32)


def contact_slip(problem, lam: np.ndarray, world: World) -> np.ndarray:
    """(m,) m/s: the speed at which the two surfaces of each contact of `problem` slide over
    each other after the step that solved it with impulses `lam`. With friction that is the
    norm of the tangent rows of e = A λ + b (the rows the Coulomb disk acts on); without, the
    tangential part of the contact points' relative velocity in `world` after the step,
    u = v_b - v_a - (r_b ω_b + r_a ω_a) x n (n from a to b; a wall has none)."""
    if problem.frictional:
        e = problem.error(lam).reshape(problem.m, problem.rows)
        return np.hypot(e[:, 1], e[:, 2])
    a, b, n = problem.body_a, problem.body_b, problem.normal
    wall = a < 0
    a = np.maximum(a, 0)
    keep = np.where(wall, 0.0, 1.0)[:, None]
    lever = world.radius[b, None] * world.omega[b] + (
        keep * world.radius[a, None] * world.omega[a])
    u = world.v[b] - keep * world.v[a] - np.cross(lever, n)
    u -= np.einsum("ij,ij->i", u, n)[:, None] * n
    return np.linalg.norm(u, axis=1)


def marble_maximum(problem, per_contact: np.ndarray, n: int) -> np.ndarray:
    """(n,): per marble, the largest of `per_contact` (m,) over its contacts (0 if none)."""
    out = np.zeros(n)
    for ends in (problem.body_a, problem.body_b):
        hit = ends >= 0
        np.maximum.at(out, ends[hit], per_contact[hit])
    return out


def slip_heat(speed: np.ndarray) -> np.ndarray:
    """Slip speeds (n,) m/s -> heat values in [0, 1] on the log scale of SLIP_RANGE."""
    lo, hi = SLIP_RANGE
    return np.log10(np.maximum(speed, lo) / lo) / math.log10(hi / lo)


def marble_colours(mode: str, world: World, problem, lam: np.ndarray) -> np.ndarray:
    """(n, 3) float32 RGB of every marble in colour mode `mode` (COLOUR_MODES): its own colour,
    its speed, the normal contact impulse on it in units of its weight per step, or the
    fastest slip at its contacts after the last step (contact_slip, log scale SLIP_RANGE).
    problem, lam: the last step's contact problem (None before the first) and impulses."""
    w = world
    if mode == "speed":
        return heat(np.linalg.norm(w.v, axis=1) / SPEED_SCALE)
    rows = problem.rows if problem is not None else 1
    solved = problem is not None and problem.m > 0 and lam.size == problem.m * rows
    if mode == "impulse":
        total = np.zeros(w.n)
        if solved:
            normal = lam[0::rows]  # with friction: normal, tangents, ... per contact
            for ends in (problem.body_a, problem.body_b):
                hit = ends >= 0
                np.add.at(total, ends[hit], normal[hit])
        weight = np.abs(w.gravity[2]) * w.dt * w.mass
        return heat(total / (IMPULSE_SCALE * weight))
    if mode == "slip":
        slip = (marble_maximum(problem, contact_slip(problem, lam, w), w.n) if solved
                else np.zeros(w.n))
        return heat(slip_heat(slip))
    return w.colour
