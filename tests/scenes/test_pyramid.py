"""Can a pyramid of marbles stand? A statics question answered here by linear programs over the
contact forces, independently of the simulation; then the simulation against those answers
(docs/friction.md, "Pyramid")."""
import math

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

import scenes
from scenes.rolling import pyramid_positions
from solver.methods import registry
from solver.step import Simulation

R = 0.1
SIDES = 24  # the friction disk as a regular 24-gon, outside it or inside it


def touching(x, r, same_layer=True):
    """(a, b, unit normal from a to b) of every contact of the pyramid at rest: marble pairs
    2 r apart (a < b) and marbles on the floor (a = -1, normal +z)."""
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    a, b = np.nonzero(np.triu(np.isclose(d, 2 * r, rtol=1e-9), 1))
    if not same_layer:
        keep = ~np.isclose(x[a, 2], x[b, 2])
        a, b = a[keep], b[keep]
    normals = (x[b] - x[a]) / (2 * r)
    floor = np.flatnonzero(np.isclose(x[:, 2], r))
    return (np.concatenate([np.full(len(floor), -1), a]), np.concatenate([floor, b]),
            np.concatenate([np.tile([0.0, 0.0, 1.0], (len(floor), 1)), normals]))


def frames(normals):
    """Any orthonormal tangents (the cones are polygons centred on the normal: their
    orientation is the only thing the frame decides)."""
    helper = np.where(np.abs(normals[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    t1 = np.cross(normals, helper)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return t1, np.cross(normals, t1)


def statics_feasible(x, r, mu, inner, same_layer=True):
    """Whether contact forces f_c = f_n n + f_1 t1 + f_2 t2 exist, inside polygonal friction
    cones of coefficient μ, that hold every marble (unit weight) in equilibrium: the forces on
    each marble sum to its weight upwards and their torques about its centre to zero. The
    polygon's sides are tangent to the disk (outer: admits a little more than Coulomb) or its
    corners on it (inner: a little less)."""
    a, b, n = touching(x, r, same_layer)
    t1, t2 = frames(n)
    m, bodies = len(a), len(x)
    rows, cols, vals = [], [], []
    for j, axis in enumerate((n, t1, t2)):  # force component j of contact c on b, minus on a
        for body, sign, lever in ((b, 1.0, -r * n), (a, -1.0, r * n)):
            ok = body >= 0
            torque = np.cross(lever, axis)
            for k in range(3):
                rows += [6 * body[ok] + k, 6 * body[ok] + 3 + k]
                cols += [3 * np.flatnonzero(ok) + j] * 2
                vals += [sign * axis[ok, k], sign * torque[ok, k]]
    A_eq = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(6 * bodies, 3 * m))
    b_eq = np.zeros(6 * bodies)
    b_eq[2::6] = 1.0
    phi = 2 * np.pi * np.arange(SIDES) / SIDES
    bound = mu * (math.cos(math.pi / SIDES) if inner else 1.0)
    # cos φ f_1 + sin φ f_2 <= bound f_n for every side φ of every contact
    c = np.repeat(np.arange(m), SIDES)
    side = np.tile(np.arange(SIDES), m)
    A_ub = coo_matrix((np.concatenate([np.full(m * SIDES, -bound), np.cos(phi)[side],
                                       np.sin(phi)[side]]),
                       (np.tile(np.arange(m * SIDES), 3),
                        np.concatenate([3 * c, 3 * c + 1, 3 * c + 2]))),
                      shape=(m * SIDES, 3 * m))
    bounds = [(0, None), (None, None), (None, None)] * m
    for method in ("highs-ipm", "highs-ds"):  # the simplex can stall near the threshold
        result = linprog(np.zeros(3 * m), A_ub=A_ub.tocsr(), b_ub=np.zeros(m * SIDES),
                         A_eq=A_eq.tocsr(), b_eq=b_eq, bounds=bounds, method=method)
        if result.status in (0, 2):  # solved, or proven infeasible
            return result.status == 0
    raise AssertionError(result.message)


def smallest_mu(layers, inner, same_layer=True, tol=2e-4):
    """The least μ at which the pyramid's statics are feasible, by bisection."""
    x = pyramid_positions(layers, R)
    lo, hi = 0.0, 2.0
    assert statics_feasible(x, R, hi, inner, same_layer)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if statics_feasible(x, R, mid, inner, same_layer) else (mid, hi)
    return hi


@pytest.fixture(scope="module")
def thresholds():
    """layers -> (outer, inner): the exact Coulomb threshold lies between them."""
    return {layers: (smallest_mu(layers, False), smallest_mu(layers, True))
            for layers in (2, 3, 5)}


def test_statics_brackets_the_two_layer_answer(thresholds):
    """Two layers by hand: a base marble touches the top marble at 45 degrees and the floor;
    its torques balance only with equal friction t at both contacts, and its horizontal forces
    give t = N s / (1 + c) with s = c = sin 45°: the top contact needs μ = tan 22.5° = √2 − 1."""
    outer, inner = thresholds[2]
    assert outer <= math.sqrt(2.0) - 1.0 <= inner
    assert inner / outer < 1.0 / math.cos(math.pi / SIDES) + 1e-3


def test_statics_needs_more_friction_for_taller_pyramids(thresholds):
    outer = [thresholds[k][0] for k in (2, 3, 5)]
    assert outer[0] < outer[1] < outer[2] < 1.0
    for layers in (2, 3, 5):
        assert thresholds[layers][0] < thresholds[layers][1]
    assert not statics_feasible(pyramid_positions(5, R), R, 0.0, False)


def test_arches_within_a_layer_carry_part_of_a_tall_pyramid(thresholds):
    """Without the contacts within a layer (marbles a hair apart) five layers need more
    friction: the base pushes against its neighbours."""
    assert smallest_mu(5, False, same_layer=False) > 1.05 * thresholds[5][0]


# The simulation: apgd, which solves the cone complementarity relaxation (whose velocities are
# unique, and static wherever statics allows: docs/friction.md) by projected gradients, to its
# 1e-12 m/s tolerance within 300 iterations, with a full warm start, 10 s at dt = 0.02 s. pgs's
# ccp sweeps reach the same relaxation but settle on impulses under which five layers creep
# (test_ccp_sweeps_let_five_layers_creep).
STATICS_SOLVER = ("apgd", 300, {})
# The least motion under Coulomb's law itself: newton polishing apgd's answer (a ccp answer
# without slip is a Coulomb answer; where none is static the polish finds a sliding one nearby).
LEAST_MOTION = ("newton", 20, {"start": "apgd", "start_iterations": 300})


def simulate_pyramid(layers, mu, solver=STATICS_SOLVER, seconds=10.0, stop_beyond=None):
    """Largest displacement of any marble (m) over `seconds`, stopping early once it exceeds
    `stop_beyond`."""
    name, iterations, params = solver
    world = scenes.build("pyramid", {"layers": layers, "mu": mu})
    sim = Simulation(world, registry.settings(name, iterations, False, params), 1.0)
    start = world.x.copy()
    moved = 0.0
    for _ in range(int(round(seconds / world.dt))):
        sim.step()
        moved = max(moved, np.linalg.norm(world.x - start, axis=1).max())
        if stop_beyond is not None and moved > stop_beyond:
            break
    return moved


@pytest.mark.parametrize("solver", [STATICS_SOLVER, LEAST_MOTION], ids=["apgd", "newton"])
@pytest.mark.parametrize("layers", [2, 3, 5])
def test_a_pyramid_with_enough_friction_stands(thresholds, layers, solver):
    """20% above the statics threshold no marble moves 1% of its radius in 10 s."""
    assert simulate_pyramid(layers, 1.2 * thresholds[layers][1], solver) < 0.01 * R


@pytest.mark.parametrize("layers", [2, 3, 5])
@pytest.mark.parametrize("factor", [0.8, 0.0])
def test_a_pyramid_without_enough_friction_collapses(thresholds, layers, factor):
    """20% below the threshold, or without friction, some marble moves a radius and more."""
    assert simulate_pyramid(layers, factor * thresholds[layers][0], stop_beyond=R) > R


@pytest.mark.parametrize("layers", [2, 3, 5])
def test_the_least_motion_still_lets_a_weak_pyramid_fall(thresholds, layers):
    """The static answer is found only where one exists: 20% below the threshold the polished
    Coulomb answer slides, and the pyramid collapses."""
    assert simulate_pyramid(layers, 0.8 * thresholds[layers][0], LEAST_MOTION,
                            stop_beyond=R) > R


def test_newton_from_the_warm_start_lets_five_layers_fall(thresholds):
    """Coulomb's law has a sliding solution too, and Newton from the last step's impulses finds
    it: the least motion is a choice of solution, not an accuracy."""
    assert simulate_pyramid(5, 1.2 * thresholds[5][1], ("newton", 20, {}), stop_beyond=R) > R


def test_ccp_sweeps_let_five_layers_creep(thresholds):
    """The same relaxation by pgs's ccp sweeps (200 a step): the impulses they settle on let a
    growing mode through, and five layers 20% above the threshold move a hundredth of a radius
    within 10 s (docs/friction.md, Pyramid)."""
    assert simulate_pyramid(5, 1.2 * thresholds[5][1], solver=("pgs", 200, {"friction": "ccp"}),
                            stop_beyond=0.01 * R) > 0.01 * R


def first_step_problem(layers, mu):
    world = scenes.build("pyramid", {"layers": layers, "mu": mu})
    sim = Simulation(world, registry.settings("pgs", 1, False))
    sim.step()
    return sim.problem.copy()


def test_coulombs_problem_has_a_static_and_a_sliding_solution(thresholds):
    """Non-uniqueness of frictional contact: the first step of a three-layer pyramid 20% above
    its threshold has a static solution (the ccp sweeps find it: no marble moves, and the
    impulses satisfy Coulomb's law) and a sliding one (the Coulomb sweeps converge to it), both
    with an FCLIB error at rounding level."""
    p = first_step_problem(3, 1.2 * thresholds[3][1])
    found = {}
    for law in ("ccp", "cone"):
        settings = registry.settings("pgs", 3000, False, {"friction": law})
        lam = registry.get("pgs").solve(p, np.zeros(p.size), settings).lam
        assert p.fclib_error(lam) < 1e-12
        found[law] = np.abs(p.velocity(lam)[:, :3]).max()
    assert found["ccp"] < 1e-12
    assert found["cone"] > 1e-3
