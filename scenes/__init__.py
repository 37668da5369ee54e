"""Scene definitions and their registry (DESIGN.md: scene names are part of the public contract).

A scene is a name, its parameters and a `build(params) -> World`; every build is deterministic
for given parameters (random placement and colours come from the `seed` parameter).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from solver.params import Param, ParamError, resolve
from solver.world import World

from . import seed


@dataclass(frozen=True)
class Scene:
    name: str
    description: str
    build_world: Callable[[dict], World]
    params: tuple[Param, ...] = ()

    def build(self, overrides: dict | None = None) -> World:
        """World for the defaults updated by `overrides` (text or values); ParamError on bad input."""
        params = resolve(self.params, overrides or {}, f"scene {self.name}")
        world = self.build_world(params)
        world.damping = params["damping"]
        return world


# Every scene also takes `damping`, which no builder reads: `build` puts it on the world.
SCENES: dict[str, Scene] = {s.name: s for s in (Scene(name, text, world, params + (seed.DAMPING,))
                                               for name, text, world, params in seed.SPECS)}


def get(name: str) -> Scene:
    try:
        return SCENES[name]
    except KeyError:
        raise ParamError(f"unknown scene '{name}'; valid: {', '.join(SCENES)}") from None


def build(name: str, overrides: dict | None = None) -> World:
    return get(name).build(overrides)
