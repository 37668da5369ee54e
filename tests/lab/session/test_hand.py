"""The hand that drags a marble: it holds only a marble of the world, pulls it towards the
target with its weight carried, keeps planar worlds planar, and says the work it did."""
from __future__ import annotations

import types

import numpy as np
import pytest

import scenes
from lab.session import commands as cmd
from lab.session.hand import DAMPING_TIME, DRAG_MAX_SPEED, SPRING_TIME, Hand


def hand(scene="column", **params):
    world = scenes.build(scene, params)
    return Hand(types.SimpleNamespace(world=world)), world


def test_it_holds_only_a_marble_of_the_world():
    h, w = hand()
    assert h.pull() is None and h.marble is None
    h.start(cmd.DragStart(w.n))
    assert h.held is None
    h.start(cmd.DragStart(2))
    assert h.marble == 2 and np.array_equal(h.held[1], w.x[2])
    h.move(cmd.DragMove(2, (np.nan, 0.0, 0.0)))  # not finite: the target stays
    assert np.array_equal(h.held[1], w.x[2])
    h.let_go()
    assert h.held is None and h.pull() is None


def test_the_pull_relaxes_the_velocity_towards_the_target_and_carries_the_weight():
    h, w = hand()
    i = 3
    target = w.x[i] + (0.0, 0.0, 0.01)
    h.move(cmd.DragMove(i, target))
    v0 = w.v[i].copy()
    work = h.pull()
    want = (target - w.x[i]) / SPRING_TIME
    alpha = w.dt / (w.dt + DAMPING_TIME)
    assert np.allclose(w.v[i], v0 + alpha * (want - v0) - w.dt * w.gravity)
    kinetic = 0.5 * (w.v[i] @ w.v[i] - v0 @ v0) / w.inv_mass[i]
    assert work == pytest.approx(kinetic)
    h.move(cmd.DragMove(i, w.x[i] + (0.0, 0.0, 100.0)))  # far: the speed asked is capped
    w.v[i] = 0.0
    h.pull()
    assert np.linalg.norm(w.v[i] + w.dt * w.gravity) <= alpha * DRAG_MAX_SPEED + 1e-12


def test_a_planar_world_stays_planar_and_a_fixed_marble_is_not_pulled():
    h, w = hand("disk", n=5)
    assert w.planar
    h.move(cmd.DragMove(1, (0.3, 0.7, 0.5)))
    assert h.held[1][1] == 0.0
    h.pull()
    assert w.v[1, 1] == 0.0
    w.inv_mass[1] = 0.0
    assert h.pull() is None
