"""Scenes of marbles with friction: a marble on an incline, a square pyramid, a heap slumped
from a loose column. Glass marbles of radius 0.1 m, as in the seed scenes."""
from __future__ import annotations

import math

import numpy as np

from solver.params import Param
from solver.world import World, marble_mass

from .seed import MU, MU_ROLL, RADIUS, SEED, _colours

# Statics lets a 5-layer pyramid stand from μ = 0.61 (tests/scenes/test_pyramid.py), but 20
# sweeps a step leave errors that walk it apart below about μ = 5, even with a full warm start
# (docs/friction.md): the default is what the window's 20 iterations need.
PYRAMID_MU = 5.0
HEAP_MU = 0.5
# Without rolling resistance spheres roll off any slope and no heap forms; with 0.3 of the
# radius the heap's flanks settle at about 17 degrees (docs/friction.md).
HEAP_MU_ROLL = 0.03  # m
# The heap's column: marble spacing (loose, so it collapses) and height over diameter.
HEAP_SPACING = 2.2 * RADIUS
HEAP_ASPECT = 1.0


def incline(p: dict) -> World:
    """One marble at rest on a plane through the origin tilted by `angle` about y, downhill
    towards +x: normal (sin θ, 0, cos θ); the marble touches the plane at the origin."""
    theta = math.radians(p["angle"])
    normal = np.array([math.sin(theta), 0.0, math.cos(theta)])
    x = (RADIUS * normal)[None, :]
    colour = np.array([[0.85, 0.3, 0.2]], dtype=np.float32)
    return World(x, np.zeros((1, 3)), RADIUS, 1.0 / marble_mass(RADIUS),
                 {"kind": "plane", "point": [0.0, 0.0, 0.0], "normal": normal.tolist()}, colour)


def pyramid_positions(layers: int, radius: float = RADIUS) -> np.ndarray:
    """(n, 3) centres of a square pyramid on the floor z = 0: layer j (0 at the bottom) is a
    (layers - j)^2 square of touching marbles, each above the hollow of four below it (the
    layers sqrt(2) r apart), n = sum of k^2 for k = 1..layers."""
    out = []
    for j in range(layers):
        k = layers - j
        offsets = (np.arange(k) - (k - 1) / 2.0) * 2.0 * radius
        gx, gy = np.meshgrid(offsets, offsets, indexing="ij")
        z = radius + j * math.sqrt(2.0) * radius
        out.append(np.stack([gx.ravel(), gy.ravel(), np.full(k * k, z)], axis=1))
    return np.concatenate(out)


def pyramid(p: dict) -> World:
    x = pyramid_positions(p["layers"])
    n = len(x)
    return World(x, np.zeros((n, 3)), RADIUS, 1.0 / marble_mass(RADIUS),
                 {"kind": "floor", "height": 0.0}, _colours(n, np.random.default_rng(5)))


def heap(p: dict) -> World:
    """n marbles in a loose jittered cylinder on the floor, about as tall as wide, let go at once
    (a funnel full of marbles lifted away, the granular column collapse): the column slumps into
    a cone whose flanks stand at the angle of repose."""
    rng = np.random.default_rng(p["seed"])
    n = p["n"]
    s = HEAP_SPACING
    # n marbles in hexagonal layers of spacing s fill a cylinder of radius R and height 2 R a.
    outer = (n * s ** 3 * math.sqrt(3.0) / (4.0 * math.pi * HEAP_ASPECT)) ** (1.0 / 3.0)
    k = int(outer / s) + 2
    grid = np.array([[(i + 0.5 * (j % 2)) * s, j * s * math.sqrt(3.0) / 2.0]
                     for i in range(-k, k + 1) for j in range(-k, k + 1)])
    layer = grid[np.hypot(grid[:, 0], grid[:, 1]) <= max(outer - RADIUS, 0.0)]
    per_layer = len(layer)
    idx = np.arange(n)
    xy = layer[idx % per_layer] + rng.uniform(-0.05, 0.05, size=(n, 2)) * RADIUS
    z = RADIUS + 0.01 + (idx // per_layer) * s
    x = np.column_stack([xy, z])
    return World(x, np.zeros((n, 3)), RADIUS, 1.0 / marble_mass(RADIUS),
                 {"kind": "floor", "height": 0.0}, _colours(n, rng))


SPECS = (
    ("incline", "one marble on a plane tilted by `angle` (rolls or slides by μ)", incline,
     (Param("angle", 20.0, float, "tilt of the plane", "deg", lo=0.0, hi=89.0),
      MU.but(default=0.3, help="Coulomb friction coefficient between the marble and the plane"))),
    ("pyramid", "a square pyramid of touching marbles on a floor", pyramid,
     (Param("layers", 5, int, "layers (n = 1 + 4 + 9 + ...)", lo=1, hi=30),
      MU.but(default=PYRAMID_MU, help="Coulomb friction coefficient, marbles and floor"))),
    ("heap", "a loose column of marbles let go on a floor slumps into a cone", heap,
     (Param("n", 300, int, "number of marbles", lo=1, hi=100_000), SEED,
      MU.but(default=HEAP_MU, help="Coulomb friction coefficient, marbles and floor"),
      MU_ROLL.but(default=HEAP_MU_ROLL))),
)
