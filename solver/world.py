"""World state: a struct of arrays of marbles plus the fixed container they live in. Units SI,
``z`` up. A container is a small JSON-able dict (written verbatim into state snapshots, read by
the renderer): ``sphere`` (center, radius; marbles inside), ``floor`` (height), ``plane`` (point,
normal: marbles on the side the normal points to), ``box`` (center, half_width, floor, height:
four walls treated as unbounded planes, height only drawn), ``tube`` (center, radius, floor,
height); any may carry ``"planar": true`` (marbles stay at y = 0).
`container_geometry` turns it into the plain arrays the collision kernel reads.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .params import Param

GRAVITY = np.array([0.0, 0.0, -9.81])
DT = Param("dt", 0.02, float, "time step", "s", lo=0.0, hi=1.0,
           lo_open=True)
GLASS_DENSITY = 2500.0  # kg/m^3


def marble_mass(radius: np.ndarray | float, density: float = GLASS_DENSITY) -> np.ndarray:
    """Mass in kg of solid spheres of the given radius in metres."""
    return density * 4.0 / 3.0 * np.pi * np.asarray(radius, dtype=np.float64) ** 3


@dataclass
class World:
    """x, v: (n, 3) float64, metres and m/s; radius: (n,) metres; inv_mass: (n,) 1/kg (0: a
    fixed marble); colour: (n, 3) float32 RGB in [0, 1]; dt: seconds; gravity: (3,) m/s^2;
    time: seconds; damping: 1/s, linear drag (velocities and spins decay as e^(-damping t)
    between contacts; 0 = none); omega: (n, 3) angular velocity, rad/s; orientation: (n, 4)
    unit quaternions (w, x, y, z), body to world; mu: Coulomb friction between marbles, mu_wall:
    between a marble and the container; mu_roll, mu_spin: rolling and spinning resistance, m
    (the torque a contact can resist per unit of normal force). A solid sphere's inertia is
    2/5 m r^2."""

    x: np.ndarray
    v: np.ndarray
    radius: np.ndarray
    inv_mass: np.ndarray
    container: dict
    colour: np.ndarray | None = None
    dt: float = DT.default
    gravity: np.ndarray = field(default_factory=lambda: GRAVITY.copy())
    time: float = 0.0
    damping: float = 0.0
    omega: np.ndarray | None = None
    orientation: np.ndarray | None = None
    mu: float = 0.0
    mu_wall: float = 0.0
    mu_roll: float = 0.0
    mu_spin: float = 0.0

    def __post_init__(self) -> None:
        self.x = np.ascontiguousarray(self.x, dtype=np.float64).reshape(-1, 3)
        n = self.x.shape[0]
        self.v = np.ascontiguousarray(self.v, dtype=np.float64).reshape(n, 3)
        self.radius = np.ascontiguousarray(np.broadcast_to(self.radius, (n,)), dtype=np.float64)
        self.inv_mass = np.ascontiguousarray(np.broadcast_to(self.inv_mass, (n,)), dtype=np.float64)
        self.gravity = np.ascontiguousarray(self.gravity, dtype=np.float64).reshape(3)
        if self.colour is None:
            self.colour = np.full((n, 3), 0.7, dtype=np.float32)
        self.colour = np.ascontiguousarray(self.colour, dtype=np.float32).reshape(n, 3)
        if self.omega is None:
            self.omega = np.zeros((n, 3))
        self.omega = np.ascontiguousarray(self.omega, dtype=np.float64).reshape(n, 3)
        if self.orientation is None:
            self.orientation = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
        self.orientation = np.ascontiguousarray(self.orientation, dtype=np.float64).reshape(n, 4)
        container_geometry(self.container)  # refuse a malformed container early

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def planar(self) -> bool:
        return bool(self.container.get("planar", False))

    @property
    def frictional(self) -> bool:
        """Whether any contact can carry a tangential or rolling impulse."""
        return max(self.mu, self.mu_wall, self.mu_roll, self.mu_spin) > 0.0

    @property
    def mass(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.where(self.inv_mass > 0, 1.0 / self.inv_mass, np.inf)

    def copy(self) -> "World":
        return World(self.x.copy(), self.v.copy(), self.radius.copy(), self.inv_mass.copy(),
                     json.loads(json.dumps(self.container)), self.colour.copy(), self.dt,
                     self.gravity.copy(), self.time, self.damping, self.omega.copy(),
                     self.orientation.copy(), self.mu, self.mu_wall, self.mu_roll, self.mu_spin)

    def kinetic_energy(self) -> float:
        """Joules, translation and rotation; static bodies (inv_mass 0) carry none."""
        m = np.where(self.inv_mass > 0, self.mass, 0.0)
        spin = 0.4 * m * self.radius ** 2 * np.einsum("ij,ij->i", self.omega, self.omega)
        return float(0.5 * np.sum(m * np.einsum("ij,ij->i", self.v, self.v) + spin))

    def potential_energy(self) -> float:
        """Joules, relative to the origin: -sum m g.x."""
        m = np.where(self.inv_mass > 0, self.mass, 0.0)
        return float(-np.sum(m * (self.x @ self.gravity)))


@dataclass(frozen=True)
class ContainerGeometry:
    """Walls as plain arrays for the collision kernel. planes: (P, 6) point then unit inward
    normal; spheres: (S, 4) centre then radius (marbles inside); tubes: (T, 3) axis x, y then
    radius (vertical cylinders, marbles inside). Wall feature ids number planes, then spheres,
    then tubes, in that order."""

    planes: np.ndarray
    spheres: np.ndarray
    tubes: np.ndarray

    @property
    def n_features(self) -> int:
        return len(self.planes) + len(self.spheres) + len(self.tubes)


# The keys of each container kind: required, then optional; any kind may add "planar".
CONTAINER_KEYS = {"sphere": (("center", "radius"), ()), "floor": (("height",), ()),
                  "plane": (("point", "normal"), ()),
                  "box": (("center", "half_width", "floor"), ("height",)),
                  "tube": (("center", "radius", "floor"), ("height",))}


def _is_number(value: object) -> bool:
    """A real number and not a bool (JSON's true is no length in metres)."""
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)))


def _vec(container: dict, key: str, size: int) -> list[float]:
    value = container.get(key)
    if not (isinstance(value, (list, tuple)) and len(value) == size
            and all(_is_number(c) and np.isfinite(c) for c in value)):
        raise ValueError(f"container {container.get('kind')!r}: '{key}' must be {size} finite "
                         f"numbers, got {value!r}")
    return [float(c) for c in value]


def _num(container: dict, key: str, positive: bool = False) -> float:
    value = container.get(key)
    if not _is_number(value) or not np.isfinite(value) or (positive and value <= 0):
        raise ValueError(f"container {container.get('kind')!r}: '{key}' must be a "
                         f"{'positive ' if positive else ''}finite number, got {value!r}")
    return float(value)


def _check_keys(container: object) -> str:
    """The container's kind, after checking it names a known kind with exactly its keys."""
    if not isinstance(container, dict):
        raise ValueError(f"a container must be an object with a 'kind', got "
                         f"{type(container).__name__}")
    kind = container.get("kind")
    if not isinstance(kind, str) or kind not in CONTAINER_KEYS:
        raise ValueError(f"unknown container kind {kind!r}; valid: "
                         f"{', '.join(sorted(CONTAINER_KEYS))}")
    required, optional = CONTAINER_KEYS[kind]
    valid = ("kind", *required, *optional, "planar")
    for key in container:
        if key not in valid:
            raise ValueError(f"container {kind!r}: unknown key {key!r}; valid: "
                             f"{', '.join(valid)}")
    for key in required:
        if key not in container:
            raise ValueError(f"container {kind!r}: '{key}' is missing")
    if "planar" in container and not isinstance(container["planar"], (bool, np.bool_)):
        raise ValueError(f"container {kind!r}: 'planar' must be true or false, got "
                         f"{container['planar']!r}")
    if "height" in optional and "height" in container:
        _num(container, "height", positive=True)
    return kind


def container_geometry(container: dict) -> ContainerGeometry:
    """The walls of `container`; ValueError (one line) for anything but a known kind with
    exactly its keys, finite numbers and a positive radius or width."""
    kind = _check_keys(container)
    planes: list[list[float]] = []
    spheres: list[list[float]] = []
    tubes: list[list[float]] = []
    if kind == "sphere":
        spheres.append(_vec(container, "center", 3) + [_num(container, "radius", True)])
    elif kind == "floor":
        planes.append([0.0, 0.0, _num(container, "height"), 0.0, 0.0, 1.0])
    elif kind == "plane":
        point, normal = _vec(container, "point", 3), np.array(_vec(container, "normal", 3))
        length = float(np.linalg.norm(normal))
        if not np.isfinite(length) or length == 0.0:
            raise ValueError("container 'plane': 'normal' must be a non-zero vector")
        planes.append(point + (normal / length).tolist())
    elif kind == "box":
        cx, cy = _vec(container, "center", 2)
        a = _num(container, "half_width", True)
        z0 = _num(container, "floor")
        planes += [[cx, cy, z0, 0, 0, 1],
                   [cx - a, cy, z0, 1, 0, 0], [cx + a, cy, z0, -1, 0, 0],
                   [cx, cy - a, z0, 0, 1, 0], [cx, cy + a, z0, 0, -1, 0]]
    else:  # tube
        cx, cy = _vec(container, "center", 2)
        planes.append([cx, cy, _num(container, "floor"), 0, 0, 1])
        tubes.append([cx, cy, _num(container, "radius", True)])

    def arr(rows: list, width: int) -> np.ndarray:
        return np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(-1, width))

    return ContainerGeometry(arr(planes, 6), arr(spheres, 4), arr(tubes, 3))


def outside_container(world: World) -> np.ndarray:
    """(n,) bool: marbles whose centre has left the container (through a wall, or below a
    floor); a marble above an open box or tube is still inside. Non-finite positions count as
    outside."""
    x = world.x
    c = world.container
    kind = c.get("kind")
    if kind == "sphere":
        out = np.linalg.norm(x - np.asarray(c["center"], dtype=np.float64), axis=1) > c["radius"]
    elif kind == "floor":
        out = x[:, 2] < c["height"]
    elif kind == "plane":
        normal = np.asarray(c["normal"], dtype=np.float64)
        out = (x - np.asarray(c["point"], dtype=np.float64)) @ normal < 0.0
    elif kind == "box":
        cx, cy = c["center"]
        a = c["half_width"]
        out = (x[:, 2] < c["floor"]) | (np.abs(x[:, 0] - cx) > a) | (np.abs(x[:, 1] - cy) > a)
    else:  # tube
        cx, cy = c["center"]
        out = (x[:, 2] < c["floor"]) | (np.hypot(x[:, 0] - cx, x[:, 1] - cy) > c["radius"])
    return out | ~np.all(np.isfinite(x), axis=1)


def largest_resolved_dt(world: World) -> float:
    """s: the largest step in which a marble falling from rest moves less than the smallest
    radius (|g| h^2 < r_min). Above it a step jumps over contacts and marbles tunnel through
    each other and the walls: the speculative margin cannot follow them."""
    g = float(np.linalg.norm(world.gravity))
    if world.n == 0 or g == 0.0:
        return np.inf
    return float(np.sqrt(np.min(world.radius) / g))
