"""Scenes of marbles with friction: a marble on an incline, a square pyramid, a heap poured
from a funnel. Glass marbles of radius 0.1 m, as in the seed scenes."""
from __future__ import annotations

import math

import numpy as np

from solver.params import Param
from solver.world import World, marble_mass

from .seed import MU, MU_ROLL, RADIUS, SEED, _colours

# A pyramid of 5 layers needs μ of about 0.15 (the statics test, tests/scenes/test_rolling.py);
# the default leaves a margin so it stands under any of the friction solvers.
PYRAMID_MU = 0.5
HEAP_MU = 0.5
# Without rolling resistance spheres roll off any slope and no heap forms; a tenth of the
# radius gives a cone.
HEAP_MU_ROLL = 0.01  # m


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
    """n marbles in a narrow jittered column, 7 abreast, falling from 1 m upwards onto a
    floor: they land one layer after another, as from a funnel, and build a cone."""
    rng = np.random.default_rng(p["seed"])
    n = p["n"]
    spacing = 2.2 * RADIUS
    ring = np.array([[0.0, 0.0]] + [[math.cos(a), math.sin(a)] for a in
                                     np.arange(6) * math.pi / 3.0]) * spacing
    k = np.arange(n)
    layer = k // len(ring)
    xy = ring[k % len(ring)] + rng.uniform(-0.05, 0.05, size=(n, 2)) * RADIUS
    z = 1.0 + layer * spacing + rng.uniform(0.0, 0.05, size=n) * RADIUS
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
    ("heap", "marbles poured onto a floor from a funnel, forming a cone", heap,
     (Param("n", 300, int, "number of marbles", lo=1, hi=100_000), SEED,
      MU.but(default=HEAP_MU, help="Coulomb friction coefficient, marbles and floor"),
      MU_ROLL.but(default=HEAP_MU_ROLL))),
)
