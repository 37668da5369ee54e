"""Proximal Jacobi: adaptation rescues undamped Jacobi on a pile (γ = 1, not the default); its
default γ keeps a settled pile settled where γ = 1 throws it apart; the global strategy's own ν and
growth; Erleben's merit tolerances stop the solve with their status."""
import copy

import numpy as np
import pytest

import scenes
from solver import metrics
from solver.methods import registry
from solver.options import StepOptions
from solver.step import Simulation
from tests.solver.methods.reference import solve


def _fastest_after(world, overrides: dict, steps: int) -> float:
    """The fastest marble's largest speed component (m/s) over `steps` steps of prox-jacobi at
    20 iterations a step, warm-started, from a copy of `world`."""
    sim = Simulation(copy.deepcopy(world), StepOptions(
        registry.settings("prox-jacobi", 20, False, overrides), 1.0, 1.0, 1, "cpu", "float64"))
    fastest = 0.0
    for _ in range(steps):
        sim.step()
        fastest = max(fastest, float(np.abs(sim.world.v).max()))
    return fastest


def test_the_default_gamma_keeps_a_settled_frictional_pile_settled():
    world = scenes.build("box", {"n": 200, "mu": 0.5, "mu_wall": 0.5})
    settle = Simulation(world, StepOptions(registry.settings("pgs", 20, False), 1.0, 1.0, 1,
                                           "cpu", "float64"))
    for _ in range(60):
        settle.step()
    settled = float(np.abs(world.v).max())
    assert settled < 2.0
    # γ = 1 accepts only iterates that lower the error, yet the pile flies apart within 20 steps.
    assert _fastest_after(world, {"gamma": 1.0}, 20) > 100.0
    assert _fastest_after(world, {}, 20) < 2.0


def test_prox_jacobi_adaptation_rescues_undamped_jacobi_on_a_pile(bowl500):
    p = bowl500
    plain = solve("prox-jacobi", p, 300, gamma=1.0, adapt=False)
    assert plain.status == metrics.DIVERGENCE  # projected Jacobi with r = 1/A_cc
    adaptive = solve("prox-jacobi", p, 300, gamma=1.0)
    assert adaptive.status != metrics.DIVERGENCE
    info = adaptive.info
    assert info["rejected"] > 0 and info["accepted"] + info["rejected"] == adaptive.iterations
    assert info["final_scale"] == pytest.approx(0.9 ** info["rejected"])
    assert adaptive.trace[-1] < 0.5 * adaptive.trace[0]
    # The objective test evaluates every attempted iterate (one product, which becomes the cached
    # A λ + b when it is accepted), plus the first.
    assert adaptive.products == adaptive.iterations + 1
    # Erleben's step merit needs no product to judge: a rejected iterate reuses the cached A λ,
    # so one product per accepted iterate plus the first, minus one if the last was accepted.
    step = solve("prox-jacobi", p, 300, gamma=1.0, merit="step")
    assert step.status != metrics.DIVERGENCE and step.info["rejected"] > 0
    accepted = step.info["accepted"]
    assert accepted <= step.products <= accepted + 1 < step.iterations
    nu = solve("prox-jacobi", p, 300, gamma=1.0, nu=0.5)
    assert nu.info["final_scale"] == pytest.approx(0.5 ** nu.info["rejected"])


def test_prox_global_strategy_uses_its_own_nu_and_grow(bowl500):
    result = solve("prox-jacobi", bowl500, 100, r="global", r_global=50.0, grow=1.0)
    assert result.info["rejected"] >= 1
    assert result.info["final_scale"] == pytest.approx(0.1 ** result.info["rejected"])
    # By default the global strategy grows R by 1.1 after each accepted iterate (capped at R0).
    grown = solve("prox-jacobi", bowl500, 100, r="global", r_global=50.0)
    i = grown.info
    assert i["rejected"] >= 1
    assert i["final_scale"] <= 1.0
    assert i["final_scale"] > 10 * 0.1 ** i["rejected"]
    local = solve("prox-jacobi", bowl500, 100, gamma=1.0)  # local: no growth by default
    assert local.info["final_scale"] == pytest.approx(0.9 ** local.info["rejected"])


def test_prox_merit_tolerances_stop_with_their_status(bowl500):
    # The budget only needs to exceed what the merit test takes (about 5000 sweeps here).
    for trace in (True, False):
        absolute = solve("prox-gs", bowl500, 20000, trace=trace, abs_tol=0.0, rho_abs_tol=1e-6)
        assert absolute.status == metrics.ABSOLUTE and absolute.iterations < 20000
        relative = solve("prox-gs", bowl500, 20000, trace=trace, abs_tol=0.0, rho_rel_tol=1e-2)
        assert relative.status == metrics.RELATIVE and relative.iterations < 20000
    traced = solve("prox-gs", bowl500, 20000, abs_tol=0.0, rho_abs_tol=1e-6)
    fast = solve("prox-gs", bowl500, 20000, trace=False, abs_tol=0.0, rho_abs_tol=1e-6)
    assert traced.iterations == fast.iterations
    np.testing.assert_array_equal(traced.lam, fast.lam)
