"""The seed scenes of the public contract (docs/formats.md): bowl, disk, column, mass-ratio,
box.

Marbles are glass (2500 kg/m^3) of radius 0.1 m unless a scene says otherwise. Initial positions
never overlap, so what a solver does is never masked by a violent first step.
"""
from __future__ import annotations

import colorsys
import math

import numpy as np

from solver.params import Param, ParamError
from solver.world import World, marble_mass

RADIUS = 0.1  # m
CLEARANCE = 0.002  # m between neighbours and from walls at the start


def _colours(n: int, rng: np.random.Generator) -> np.ndarray:
    """Saturated glassy colours, one per marble."""
    hue = rng.random(n)
    sat = 0.55 + 0.35 * rng.random(n)
    val = 0.75 + 0.25 * rng.random(n)
    return np.array([colorsys.hsv_to_rgb(*hsv) for hsv in zip(hue, sat, val)], dtype=np.float32)


def _fcc_points(limit: float, spacing: float) -> np.ndarray:
    """Face-centred cubic lattice points with nearest-neighbour distance `spacing`, within
    distance `limit` of the origin: the densest way to start marbles without overlap."""
    a = spacing * math.sqrt(2.0)
    k = int(math.ceil(limit / a)) + 1
    g = np.arange(-k, k + 1)
    cube = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3).astype(float)
    basis = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    pts = (cube[:, None, :] + basis[None, :, :]).reshape(-1, 3) * a
    return pts[np.linalg.norm(pts, axis=1) <= limit]


def _pick(points: np.ndarray, n: int, rng: np.random.Generator, what: str) -> np.ndarray:
    if n > len(points):
        raise ParamError(f"n={n} is not valid: at most {len(points)} marbles fit in the {what}")
    return points[np.sort(rng.choice(len(points), size=n, replace=False))]


def bowl(p: dict) -> World:
    rng = np.random.default_rng(p["seed"])
    center = np.array([0.0, 0.0, 1.0])
    big = 1.0
    pts = _fcc_points(big - RADIUS - CLEARANCE, 2 * RADIUS + CLEARANCE)
    if p["pour"]:
        # The highest sites, the bottom empty: the marbles fall in, roll and come to rest.
        # The same random draw as without, so the colours are the bowl's own.
        if p["n"] > len(pts):
            _pick(pts, p["n"], rng, "bowl")  # refuses, naming how many fit
        rng.choice(len(pts), size=p["n"], replace=False)
        highest = np.argsort(-pts[:, 2], kind="stable")[:p["n"]]
        x = pts[np.sort(highest)] + center
    else:
        x = _pick(pts, p["n"], rng, "bowl") + center
    n = len(x)
    return World(x, np.zeros((n, 3)), RADIUS, 1.0 / marble_mass(RADIUS),
                 {"kind": "sphere", "center": center.tolist(), "radius": big}, _colours(n, rng))


def disk(p: dict) -> World:
    rng = np.random.default_rng(p["seed"])
    center = np.array([0.0, 0.0, 1.0])
    big = 1.0
    limit = big - RADIUS - CLEARANCE
    spacing = 2 * RADIUS + CLEARANCE
    # Hexagonal packing in the x-z plane.
    k = int(limit / spacing) + 2
    pts = np.array([[(i + 0.5 * (j % 2)) * spacing, 0.0, j * spacing * math.sqrt(3) / 2]
                    for i in range(-k, k + 1) for j in range(-k, k + 1)])
    pts = pts[np.linalg.norm(pts, axis=1) <= limit]
    x = _pick(pts, p["n"], rng, "disk") + center
    n = len(x)
    return World(x, np.zeros((n, 3)), RADIUS, 1.0 / marble_mass(RADIUS),
                 {"kind": "sphere", "center": center.tolist(), "radius": big, "planar": True},
                 _colours(n, rng))


def column(p: dict) -> World:
    """n marbles exactly touching, resting on the floor inside a tube 5% wider than a marble."""
    n = p["n"]
    z = RADIUS + 2 * RADIUS * np.arange(n)
    x = np.stack([np.zeros(n), np.zeros(n), z], axis=1)
    colour = _colours(n, np.random.default_rng(7))
    return World(x, np.zeros((n, 3)), RADIUS, 1.0 / marble_mass(RADIUS),
                 {"kind": "tube", "center": [0.0, 0.0], "radius": 1.05 * RADIUS, "floor": 0.0,
                  "height": 2 * RADIUS * n + 0.2}, colour)


def mass_ratio(p: dict) -> World:
    """Two touching marbles on the floor; the top one `ratio` times heavier."""
    m = marble_mass(RADIUS)
    x = np.array([[0.0, 0.0, RADIUS], [0.0, 0.0, 3 * RADIUS]])
    inv_mass = np.array([1.0 / m, 1.0 / (p["ratio"] * m)])
    colour = np.array([[0.9, 0.75, 0.2], [0.2, 0.35, 0.85]], dtype=np.float32)
    return World(x, np.zeros((2, 3)), RADIUS, inv_mass, {"kind": "floor", "height": 0.0}, colour)


def box(p: dict) -> World:
    """n marbles on a jittered grid, about ten layers deep, above an open square box."""
    rng = np.random.default_rng(p["seed"])
    n = p["n"]
    spacing = 2.5 * RADIUS
    side = max(2, int(math.ceil(math.sqrt(n / 10.0))))
    half = side * spacing / 2
    idx = np.arange(n)
    ix, iy, iz = idx % side, (idx // side) % side, idx // (side * side)
    jitter = rng.uniform(-0.2, 0.2, size=(n, 3)) * RADIUS
    x = np.stack([-half + spacing * (ix + 0.5), -half + spacing * (iy + 0.5),
                  RADIUS + 0.05 + spacing * iz], axis=1) + jitter
    settled = n * (4 / 3 * math.pi * RADIUS ** 3) / 0.6 / (2 * half) ** 2
    container = {"kind": "box", "center": [0.0, 0.0], "half_width": half, "floor": 0.0,
                 "height": round(max(0.5, 1.3 * settled), 3)}
    return World(x, np.zeros((n, 3)), RADIUS, 1.0 / marble_mass(RADIUS), container,
                 _colours(n, rng))


SEED = Param("seed", 1, int, "random seed for placement and colours", lo=0, hi=10**9)
# Every scene takes it (scenes/__init__.py adds it): frictionless marbles in a frictionless bowl
# have no other way to lose the pile's rigid rocking about the bowl's centre (docs/settling.md).
DAMPING = Param("damping", 0.0, float, "linear drag c: velocities decay as e^(-c t) (0: none, "
                "the article's marbles)", "1/s", lo=0.0, hi=1e3)

# Friction, every scene (scenes/__init__.py adds them); the article's marbles have none.
MU = Param("mu", 0.0, float, "Coulomb friction coefficient between marbles", lo=0.0, hi=10.0)
MU_WALL = Param("mu_wall", 0.0, float, "Coulomb friction coefficient between a marble and the "
                "container (a scene without it uses mu)", lo=0.0, hi=10.0)
MU_ROLL = Param("mu_roll", 0.0, float, "rolling resistance: the largest rolling torque per unit "
                "of normal force", "m", lo=0.0, hi=1.0)
MU_SPIN = Param("mu_spin", 0.0, float, "spinning resistance: the largest torque about the "
                "normal per unit of normal force", "m", lo=0.0, hi=1.0)
MATERIAL = (DAMPING, MU, MU_WALL, MU_ROLL, MU_SPIN)

SPECS = (
    ("bowl", "350 marbles poured into a glass sphere of radius 1 m", bowl,
     (Param("n", 350, int, "number of marbles (the build says how many fit)", lo=1,
            hi=1_000_000), SEED,
      Param("pour", False, bool, "start on the highest sites, the bowl's bottom empty: the "
            "marbles fall in, roll and come to rest (0: sites anywhere in the bowl)"))),
    ("disk", "50 marbles in a vertical disk of radius 1 m (planar, x-z)", disk,
     (Param("n", 50, int, "number of marbles (the build says how many fit)", lo=1,
            hi=1_000_000), SEED)),
    ("column", "marbles stacked in a tube on a floor", column,
     (Param("n", 7, int, "number of marbles", lo=1, hi=1000),)),
    ("mass-ratio", "2 stacked marbles, the top one heavier", mass_ratio,
     (Param("ratio", 1000.0, float, "top mass / bottom mass", lo=0.0, hi=1e9, lo_open=True),)),
    ("box", "marbles dropped from a jittered grid into an open square box", box,
     (Param("n", 1000, int, "number of marbles", lo=1, hi=10_000_000), SEED)),
)
