"""Scene definitions and their registry (scene names are part of the public contract:
docs/formats.md).

A scene is a name, its parameters and a `build(params) -> World`; every build is deterministic
for given parameters (random placement and colours come from the `seed` parameter).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from solver.params import Param, ParamError, resolve
from solver.step import WARM_START
from solver.world import World

from . import rolling, seed


@dataclass(frozen=True)
class Scene:
    name: str
    description: str
    build_world: Callable[[dict], World]
    params: tuple[Param, ...] = ()

    def build(self, overrides: dict | None = None) -> World:
        """World for the defaults updated by `overrides` (text or values); ParamError on bad input."""
        return self.world_of(resolve(self.params, overrides or {}, f"scene {self.name}"))

    def world_of(self, params: dict) -> World:
        """The world of already resolved parameters, material included."""
        world = self.build_world(params)
        put_material(world, params)
        return world

    @property
    def frictional(self) -> bool:
        """Whether the scene has friction by default."""
        return any(p.default for p in self.params if p.name in FRICTION_NAMES)


# The material: parameters every scene has (seed.MATERIAL) that no builder reads; a world carries
# them as they are, so they change without a rebuild.
MATERIAL_NAMES = tuple(p.name for p in seed.MATERIAL)
FRICTION_NAMES = tuple(name for name in MATERIAL_NAMES if name != "damping")


def friction_of(params: dict) -> tuple[float, float, float, float]:
    """(mu, mu_wall, mu_roll, mu_spin) of resolved scene parameters: a scene without mu_wall
    has mu at every contact."""
    return (params["mu"], params.get("mu_wall", params["mu"]), params["mu_roll"],
            params["mu_spin"])


def put_material(world: World, params: dict) -> None:
    """The material of resolved scene parameters (damping, friction) onto `world`: the one
    writer of those fields, for a new world, --set, the dock and the friction key alike; read
    from the next step on, no rebuild."""
    world.damping = float(params["damping"])
    world.mu, world.mu_wall, world.mu_roll, world.mu_spin = map(float, friction_of(params))


def has_friction(params: dict) -> bool:
    """Whether resolved scene parameters give any contact friction."""
    return any(params.get(name, 0.0) > 0.0 for name in FRICTION_NAMES)


# With friction a pile needs every impulse of the step before: with 0 or 0.5, 20 sweeps never
# let it come to rest (docs/friction.md). So warm_start not given is 1 there, 0 without.
FRICTION_WARM_START = 1.0


def default_warm_start(params: dict) -> float:
    """The warm start a run of these scene parameters gets unless one is given."""
    return FRICTION_WARM_START if has_friction(params) else WARM_START.default


def _with_material(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """A scene's own parameters, then the material ones it does not declare itself (damping and
    friction, which no builder reads: `world_of` puts them on the world). A scene that declares
    `mu` but not `mu_wall` has one coefficient for every contact."""
    own = {p.name for p in params}
    skip = own | ({"mu_wall"} if "mu" in own and "mu_wall" not in own else set())
    return params + tuple(p for p in seed.MATERIAL if p.name not in skip)


SCENES: dict[str, Scene] = {s.name: s for s in (Scene(name, text, world, _with_material(params))
                                               for name, text, world, params
                                               in seed.SPECS + rolling.SPECS)}


def get(name: str) -> Scene:
    try:
        return SCENES[name]
    except KeyError:
        raise ParamError(f"unknown scene '{name}'; valid: {', '.join(SCENES)}") from None


def build(name: str, overrides: dict | None = None) -> World:
    return get(name).build(overrides)
