"""Shared by the tests of the parallel core: a box of marbles packed so tight that most touch
(the scene's jittered grid, pulled together), and its contacts serial and in blocks."""
from __future__ import annotations

import numpy as np

import scenes
from solver.collide import Collider, Contacts
from solver.friction import FrictionalProblem, contact_coefficients
from solver.problem import ContactProblem
from solver.rotation import predict_spin
from solver.world import World, container_geometry

# Spacing 2.5 r times this: neighbours about 2.05 r apart, so that about half of them touch
# (1.7 contacts per marble with the margin for the coming step).
SQUEEZE = 0.82


def packed_box(n: int = 5000, mu: float = 0.0, seed: int = 1) -> World:
    """The box scene's n marbles, pulled together about the box's floor centre, at rest."""
    world = scenes.build("box", {"n": n, "seed": seed, "mu": mu})
    world.x[:] = world.x * SQUEEZE
    return world


def contacts_of(world: World, blocks: int) -> Contacts:
    """The world's contacts for a step of v* = v + h g, serial (1) or in `blocks` blocks."""
    v_pred = world.v + world.dt * world.gravity
    collider = Collider(container_geometry(world.container))
    return collider.collide(world.x, v_pred, world.radius, world.dt, blocks)


def problem_of(world: World, blocks: int, rows: int = 3):
    """The frozen contact problem of the world's next step: frictionless, or with friction
    (`rows` per contact) when the world has it; with its partition when blocks > 1."""
    c = contacts_of(world, blocks)
    v_pred = world.v + world.dt * world.gravity
    if not world.frictional:
        return ContactProblem(c.body_a, c.body_b, c.normal, c.gap, world.inv_mass, v_pred,
                              world.dt, c.key, c.partition)
    V_pred = np.empty((world.n, 6))
    predict_spin(v_pred, world.omega, 1.0, False, np.zeros(world.n, dtype=bool), V_pred, 1)
    mu, roll, spin = contact_coefficients(c.body_a, world.mu, world.mu_wall, world.mu_roll,
                                          world.mu_spin)
    return FrictionalProblem(c.body_a, c.body_b, c.normal, c.gap, world.radius, world.inv_mass,
                             V_pred, world.dt, mu, roll, spin, rows, c.key, c.partition)
