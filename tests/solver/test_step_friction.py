"""The frictional step as a mechanical system: where its energy goes, the stabilisation that can
add energy, and a frictional pile coming to rest (docs/friction.md)."""
import numpy as np
import pytest

import scenes
from solver.collide import Contacts
from solver.methods import registry
from solver.backend import stabilised
from solver.step import STABILISE, Simulation
from solver.world import World, marble_mass

PILE = {"n": 30, "mu": 0.5, "mu_wall": 0.5, "mu_roll": 0.001}


def energy(world):
    """E = 1/2 m v^2 + 1/2 I ω^2 - m g·x, joules."""
    return world.kinetic_energy() + world.potential_energy()


def step_with_balance(sim):
    """One step; returns (E before, E after, the work λ·J V⁺ of the impulses, and
    1/2 ‖V⁺ − V‖² in the mass metric, the energy symplectic Euler loses by construction)."""
    w = sim.world
    before = energy(w)
    v, omega = w.v.copy(), w.omega.copy()
    sim.step()
    p = sim.problem
    u = p.error(sim.lam).reshape(p.m, p.rows)
    u[:, 0] -= p.gap / p.dt  # J V⁺: the normal rows without their bias
    work = float(sim.lam @ u.ravel())
    mass = w.mass
    inertia = 0.4 * mass * w.radius ** 2
    jump = 0.5 * float(np.sum(mass * np.sum((w.v - v) ** 2, axis=1)
                              + inertia * np.sum((w.omega - omega) ** 2, axis=1)))
    return before, energy(w), work, jump


@pytest.mark.parametrize("stabilise", [1.0, 0.0])
def test_a_steps_energy_change_is_the_work_of_its_impulses(stabilise):
    """Symplectic Euler (v⁺ = v + h g + M^-1 J^T λ, x⁺ = x + h v⁺) changes E by exactly
    λ·J V⁺ − 1/2 ‖V⁺ − V‖²_M, whatever the solver left: so energy can only enter through
    λ·J V⁺ > 0, a contact pushing while its marbles separate (λ_n u_n > 0: an unconverged
    normal, or the bias -gap/h of an overlap) or friction pushing along the slip."""
    sim = Simulation(scenes.build("bowl", PILE), registry.settings("pgs", 20, False), 1.0,
                     stabilise)
    for _ in range(100):
        before, after, work, jump = step_with_balance(sim)
        assert after - before == pytest.approx(work - jump, abs=1e-12 * abs(before))


@pytest.mark.parametrize("friction", ["cone", "ccp"])
def test_energy_never_rises_when_the_solves_converge_without_stabilisation(friction):
    """With stabilise = 0 the bias is max(gap, 0)/h, so at a solution every contact's work is
    λ_n u_n = −λ_n gap⁺/h <= 0 and λ_t·u_t = −μ λ_n ‖u_t‖ <= 0 (cone) or 0 (ccp, whose sliding
    contacts separate instead): E never rises from one step to the next, through the fall
    and the settling of a frictional pile, beyond the rounding of E itself."""
    sim = Simulation(scenes.build("bowl", PILE),
                     registry.settings("pgs", 2000, False, {"friction": friction,
                                                            "abs_tol": 1e-13}), 1.0, 0.0)
    rounding = 64 * np.finfo(float).eps * sim.world.n
    rises = []
    for _ in range(150):
        before = energy(sim.world)
        sim.step()
        rises.append((energy(sim.world) - before) / abs(before))
    assert max(rises) <= rounding
    assert min(rises) < -1e-3  # the pile did fall and collide: energy was lost


def two_overlapping_marbles(overlap):
    """Two marbles at rest, without gravity, overlapping by `overlap` metres."""
    x = np.array([[0.0, 0.0, 0.0], [2 * 0.1 - overlap, 0.0, 0.0]])
    return World(x, np.zeros((2, 3)), 0.1, 1.0 / marble_mass(0.1), {"kind": "floor",
                 "height": -1.0}, gravity=np.zeros(3))


@pytest.mark.parametrize("fraction", [1.0, 0.5, 0.0])
def test_stabilise_is_the_fraction_of_an_overlap_one_step_removes(fraction):
    """Pushing an overlap apart sets two resting marbles moving: energy enters, unless the
    stabilisation is off."""
    assert STABILISE.default == 1.0
    world = two_overlapping_marbles(0.004)
    sim = Simulation(world, registry.settings("pgs", 50, False), 0.0, fraction)
    sim.step()
    overlap = 0.2 - np.linalg.norm(world.x[1] - world.x[0])
    assert overlap == pytest.approx((1.0 - fraction) * 0.004, abs=1e-12)
    assert (world.kinetic_energy() > 0.0) == (fraction > 0.0)


def test_stabilised_scales_only_overlaps():
    contacts = Contacts(np.array([-1, 0, 0]), np.array([0, 1, 2]), np.eye(3),
                        np.array([-0.02, 0.0, 0.03]), np.arange(3))
    assert stabilised(contacts, 1.0) is contacts
    np.testing.assert_array_equal(stabilised(contacts, 0.25).gap, [-0.005, 0.0, 0.03])
    np.testing.assert_array_equal(stabilised(contacts, 0.0).gap, [0.0, 0.0, 0.03])


def test_the_bowl_with_friction_comes_to_rest():
    """μ = 0.5 between marbles and on the glass, no drag, pgs with 20 iterations and a full
    warm start, a rolling resistance of 1% of the radius: after 10 s no marble moves faster
    than 1 cm/s, over the whole last second. (The frictionless pile rocks in the bowl for
    ever; without rolling resistance a marble can roll to and fro in a hollow: both measured
    in docs/friction.md.)"""
    world = scenes.build("bowl", {"mu": 0.5, "mu_wall": 0.5, "mu_roll": 0.001})
    sim = Simulation(world, registry.settings("pgs", 20, False), 1.0)
    fastest = 0.0
    for step in range(500):
        sim.step()
        if step >= 450:
            fastest = max(fastest, np.linalg.norm(world.v, axis=1).max())
    assert world.damping == 0.0
    assert fastest < 0.01
