"""Behaviour is pinned: every seed scene stepped 500 times by every solver ends in exactly the
state the code before the restructuring reached (tests/solver/data/reference_states.npz, made by
make_reference_states.py on commit 2444add; the pcg, ppcg and pgs-sm runs re-made when
their rounding-level tolerances changed their last bits). Every 25th step records its trace, so
both paths of the solve driver are covered; two runs add warm starting and drag."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import scenes
from solver.methods import registry
from solver.step import Simulation

DATA = Path(__file__).parent / "data" / "reference_states.npz"
STEPS, TRACE_EVERY = 500, 25


def _runs() -> list[tuple[str, str, str, float, dict]]:
    with np.load(DATA) as z:
        keys = sorted({k.rsplit("|", 1)[0] for k in z.files})
    out = []
    for key in keys:
        scene, solver, warm, extra = key.split("|")
        params = dict(item.split("=") for item in extra.split(",")) if extra else {}
        out.append((key, scene, solver, float(warm), params))
    return out


@pytest.fixture(scope="module")
def reference():
    with np.load(DATA) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("key, scene, solver, warm, params", _runs(), ids=[r[0] for r in _runs()])
def test_500_steps_are_bit_identical_to_the_code_before(reference, key, scene, solver, warm,
                                                         params):
    world = scenes.build(scene, params)
    sim = Simulation(world, registry.settings(solver, 20), warm_start=warm)
    for k in range(STEPS):
        sim.step(trace=(k % TRACE_EVERY == 0))
    assert np.array_equal(world.x, reference[key + "|x"]), "positions differ"
    assert np.array_equal(world.v, reference[key + "|v"]), "velocities differ"
