"""The GPU's contact generation against the CPU collider: the same contacts (pairs, normals,
gaps, keys) for the same marbles, and the same again on a second run."""
import numpy as np
import pytest

import scenes
from solver.collide import Collider
from solver.world import container_geometry
from tests.solver.cuda.conftest import copy_of, cpu_settled, gpu_options

from solver.step import Simulation


def gpu_contacts(world):
    """The GPU's contacts of the world's next step, in the world's numbering, sorted by key."""
    sim = Simulation(world, gpu_options("jacobi"))
    backend = sim.backend
    backend.begin(world, 1)
    prediction = backend.predict(world, 1, 1)
    contacts = backend.collide(world, prediction, 1, 1.0)
    order = contacts.order.copy_to_host()
    a = contacts.body_a.copy_to_host()
    body_a = np.where(a >= 0, order[np.maximum(a, 0)], -1)
    body_b = order[contacts.body_b.copy_to_host()]
    key = contacts.key.copy_to_host()
    by_key = np.argsort(key)
    return (body_a[by_key], body_b[by_key], contacts.normal.copy_to_host()[by_key],
            contacts.gap.copy_to_host()[by_key], key[by_key], prediction.v.copy_to_host())


@pytest.mark.parametrize("scene, params", [("box", {"n": 30}), ("bowl", {"n": 24}),
                                           ("disk", {"n": 16}), ("column", {})])
def test_the_gpu_finds_the_cpus_contacts(scene, params):
    world = copy_of(cpu_settled(scene, params, 15), scene, params)
    rng = np.random.default_rng(1)
    world.v += rng.normal(scale=0.05, size=world.v.shape)  # margins that differ per marble
    body_a, body_b, normal, gap, key, v_pred = gpu_contacts(world)
    cpu = Collider(container_geometry(world.container)).collide(world.x, v_pred, world.radius,
                                                                 world.dt)
    by_key = np.argsort(cpu.key)
    assert key.size == cpu.m and key.size > world.n // 2
    assert np.array_equal(key, cpu.key[by_key])
    assert np.array_equal(body_a, cpu.body_a[by_key]) and np.array_equal(body_b,
                                                                         cpu.body_b[by_key])
    # The same arithmetic in the same order: the same bits, and again on a second run.
    assert np.array_equal(normal, cpu.normal[by_key]) and np.array_equal(gap, cpu.gap[by_key])
    again = gpu_contacts(copy_of(world, scene, params))
    assert all(np.array_equal(x, y) for x, y in zip(again, (body_a, body_b, normal, gap, key)))


def test_a_full_buffer_grows_and_the_contacts_come_out_whole():
    """The first launch's buffers hold 8 contacts per marble; a pile packed tighter than that
    (every marble at one point) overflows them, and the launch is made again, larger."""
    world = scenes.build("box", {"n": 12})
    world.x[:] = world.x[0]
    body_a, body_b, *_ = gpu_contacts(world)
    marbles = body_a >= 0
    assert np.count_nonzero(marbles) == 12 * 11 // 2  # every pair, each once
