"""Settings that hold a scene, chosen from its problem, and the words of an alarm that say what
happened: the recover key (cmd.Recover, X) switches to `holding_settings`, and the alarm names
them. Qt-free.

Why the mass ratio decides: a Gauss-Seidel sweep, or a Jacobi one, moves each contact's impulse
by what that contact alone can see, so on two stacked marbles of masses m and M the heavy one's
weight reaches the floor at a rate of about m/M per sweep. At 1000:1 a step's 20 sweeps carry a
fiftieth of it: the light marble is crushed into the floor, and the overlap the next step
removes (the stabilisation) comes back as energy (the mass-ratio scene: pgs, nsgs, prox-gs,
coloured-gs and apgd gain 1e4 J within 14 steps with friction; without it the light marble ends
through the floor). Pgs, apgd and nsgs hold the stack at 2000 sweeps; Newton's method and
conjugate gradients see the whole coupling at once and hold it at 20 iterations
(benchmarks/alarm_sweep.py).
"""
from __future__ import annotations

import math

import numpy as np

from solver.methods import registry
from solver.options import ITERATIONS, SolveSettings
from solver.metrics import DIVERGENCE
from solver.world import World

from .state import STABLE_SOLVER

# Above this ratio of the heaviest marble's mass to the lightest's, sweeps of one contact at a
# time cannot carry the load in a step's iterations: X goes to a method that couples every
# contact. The seed scenes other than mass-ratio have equal marbles (ratio 1).
SWEEPS_HOLD_RATIO = 10.0
COUPLED_FRICTIONAL = "newton"  # Coulomb's law solved by Newton's method on all contacts at once
COUPLED_FRICTIONLESS = "ppcg"  # the LCP by preconditioned projected conjugate gradients
# The fewest iterations X gives; more when the run had more.
HOLDING_ITERATIONS = ITERATIONS.default
# A step whose solve ends above this residual left the contacts unresolved (m/s): a marble
# sinks into another or the floor at about that speed, and the next step's removal of the
# overlap is the energy that came from nowhere.
UNDER_CONVERGED = 1e-3  # m/s


def mass_ratio(world: World) -> float:
    """The heaviest marble's mass over the lightest's, among the marbles of finite mass (1 when
    fewer than two)."""
    inv = np.asarray(world.inv_mass)
    inv = inv[inv > 0.0]
    if inv.size < 2:
        return 1.0
    return float(inv.max() / inv.min())


def holding_settings(world: World, spec) -> SolveSettings:
    """The solver settings that hold `world` run under `spec` (lab.session.spec.RunSpec): at a
    mass ratio over SWEEPS_HOLD_RATIO a coupled method (newton with friction, ppcg without),
    else STABLE_SOLVER; at least HOLDING_ITERATIONS iterations, the spec's when more. A solver
    keeps the parameters the spec gives it when it is the spec's own."""
    if mass_ratio(world) > SWEEPS_HOLD_RATIO:
        name = COUPLED_FRICTIONAL if world.frictional else COUPLED_FRICTIONLESS
    else:
        name = STABLE_SOLVER
    params = spec.solver_params if name == spec.solver else {}
    return registry.settings(name, max(spec.iterations, HOLDING_ITERATIONS), False, params)


def settings_text(settings: SolveSettings) -> str:
    """'newton at 20 iterations'."""
    return f"{settings.method} at {settings.iterations} iterations"


def alarm_cause(world: World, spec, result) -> tuple[str, str]:
    """(cause, holding): what the step of an alarm did, its solve having given `result`
    (driver.SolveResult), in words (a divergence, or a solve under-converged or converged,
    with its residual, and the mass ratio when over SWEEPS_HOLD_RATIO) ending with the settings
    that hold the scene; and those settings ('newton at 20 iterations'), what X switches to."""
    holding = settings_text(holding_settings(world, spec))
    ratio = mass_ratio(world)
    on = f" on a {ratio:.4g}:1 mass ratio" if ratio > SWEEPS_HOLD_RATIO else ""
    residual = float(result.residual)
    if result.status == DIVERGENCE:
        cause = f"{spec.solver}'s iterates grew past its divergence bound{on}"
    elif not math.isfinite(residual) or residual > UNDER_CONVERGED:
        cause = (f"the step's solve was under-converged ({spec.solver} at {spec.iterations} "
                 f"iterations left a residual of {residual:.3g} m/s){on}")
    else:
        cause = f"the step's solve converged (residual {residual:.3g} m/s){on}"
    return f"{cause}; {holding} holds it", holding


def recovered_text(before: SolveSettings, after: SolveSettings) -> str:
    """What X says it did: 'switched from pgs at 20 iterations to newton at 20 iterations and
    reset', or 'pgs at 20 iterations: reset' when they are the same."""
    if (before.method, before.iterations) == (after.method, after.iterations):
        return f"{settings_text(after)}: reset"
    return f"switched from {settings_text(before)} to {settings_text(after)} and reset"
