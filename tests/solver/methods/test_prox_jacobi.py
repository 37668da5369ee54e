"""Proximal Jacobi: adaptation rescues undamped Jacobi on a pile; the global strategy's own ν and
growth; Erleben's merit tolerances stop the solve with their status."""
import numpy as np
import pytest

from solver import metrics
from tests.solver.methods.reference import solve

def test_prox_jacobi_adaptation_rescues_undamped_jacobi_on_a_pile(bowl500):
    p = bowl500
    plain = solve("prox-jacobi", p, 300, adapt=False)
    assert plain.status == metrics.DIVERGENCE  # projected Jacobi with r = 1/A_cc
    adaptive = solve("prox-jacobi", p, 300)
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
    step = solve("prox-jacobi", p, 300, merit="step")
    assert step.status != metrics.DIVERGENCE and step.info["rejected"] > 0
    accepted = step.info["accepted"]
    assert accepted <= step.products <= accepted + 1 < step.iterations
    nu = solve("prox-jacobi", p, 300, nu=0.5)
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
    local = solve("prox-jacobi", bowl500, 100)  # local: no growth by default
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
