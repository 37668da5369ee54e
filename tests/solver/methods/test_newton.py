"""newton: the nonsmooth Newton solver against answers found another way: the LCP's unique
velocities (pgs run to rounding), Coulomb's law to rounding on the pyramid where the Coulomb
sweeps stall, and a start that is already the answer."""
import dataclasses

import numpy as np
import pytest

import scenes
from solver import metrics
from solver.methods import registry
from solver.step import Simulation
from tests.solver.methods.conftest import settled


def newton(problem, lam0=None, iterations=400, **params):
    lam0 = np.zeros(problem.size) if lam0 is None else lam0
    return registry.get("newton").solve(problem.copy(), lam0, registry.settings(
        "newton", iterations, False, {"abs_tol": 1e-13, **params}))


@pytest.fixture(scope="module")
def pyramid():
    """The first step's problem of the five-layer pyramid at μ = 0.73, 1.2 times its statics
    threshold: a solution where nothing moves exists."""
    sim = Simulation(scenes.build("pyramid", {"mu": 0.73}), registry.settings("pgs", 20),
                     warm_start=1.0)
    sim.step()
    return sim.problem.copy()


def test_frictionless_velocities_are_the_lcps():
    problem = settled("bowl", 60, overrides={"n": 40})
    result = newton(problem)
    assert result.status == metrics.ABSOLUTE and result.residual < 1e-13
    reference = registry.get("pgs").solve(problem.copy(), np.zeros(problem.size),
                                          registry.settings("pgs", 20000, False,
                                                            {"abs_tol": 1e-14}))
    assert reference.residual < 1e-11
    # A pile's λ is not unique (W is singular); the velocities it gives are.
    u = problem.apply(result.lam) + problem.rhs
    u_ref = problem.apply(reference.lam) + problem.rhs
    assert np.max(np.abs(u - u_ref)) < 1e-9


def test_the_pyramid_is_solved_to_rounding(pyramid):
    result = newton(pyramid)
    assert result.status == metrics.ABSOLUTE
    assert pyramid.fclib_error(result.lam) < 1e-12
    u = (pyramid.apply(result.lam) + pyramid.rhs).reshape(pyramid.m, pyramid.rows)
    lam = result.lam.reshape(pyramid.m, pyramid.rows)
    loaded = lam[:, 0] > 1e-9
    assert loaded.sum() >= pyramid.n  # every marble's weight goes down through its contacts
    # Coulomb's law checked directly: a loaded contact does not approach, and where it slides
    # its friction is on the disk's edge, against the slip.
    assert np.max(np.abs(u[loaded, 0])) < 1e-12
    slip = np.linalg.norm(u[loaded, 1:], axis=1)
    sliding = slip > 1e-10
    friction = lam[loaded, 1:][sliding]
    mu = np.asarray(pyramid.mu)[loaded][sliding]
    assert np.allclose(np.linalg.norm(friction, axis=1), mu * lam[loaded, 0][sliding],
                       rtol=1e-9)
    along = np.einsum("ij,ij->i", friction, u[loaded, 1:][sliding])
    assert np.all(along <= 0.0)
    assert result.info["newton_steps"] > 0


def test_pgs_stalls_where_newton_converges(pyramid):
    pgs = registry.get("pgs").solve(pyramid.copy(), np.zeros(pyramid.size),
                                    registry.settings("pgs", 2000, False))
    assert pyramid.fclib_error(pgs.lam) > 1e3 * pyramid.fclib_error(newton(pyramid).lam)


def test_a_solution_as_start_needs_no_step(pyramid):
    solved = newton(pyramid).lam
    again = newton(pyramid, lam0=solved)
    assert again.status == metrics.ABSOLUTE
    assert again.iterations <= 1
    assert np.max(np.abs(again.lam - solved)) <= 1e-12 * np.max(np.abs(solved))


def test_without_the_proximal_term_a_resting_pile_is_still_solved(pyramid):
    """prox 0 makes H singular where rows stick: the solve must fall back to a regular
    proximal problem rather than fail."""
    result = newton(pyramid, prox=0.0)
    assert result.status in (metrics.ABSOLUTE, metrics.MAX_ITERATIONS)
    assert np.all(np.isfinite(result.lam))
    assert result.info["alpha"] > 0.0  # the safeguard took over
    # Progress, not convergence: from where plain Newton's first steps leave it, the pyramid's
    # iterates wander (its proximal merit falls, the true residual not monotonically).
    assert result.residual < 0.1 * result.residual_initial


def loaded_slip(problem, lam):
    """The fastest slip (m/s) of any contact that carries a normal impulse."""
    u = (problem.apply(lam) + problem.rhs).reshape(problem.m, problem.rows)
    loaded = lam.reshape(problem.m, problem.rows)[:, 0] > 1e-9
    return np.linalg.norm(u[loaded, 1:3], axis=1).max()


def test_an_apgd_start_polishes_the_static_solution(pyramid):
    """From zero Newton finds a sliding solution of the pyramid's first step; started from
    apgd's cone complementarity answer (static where statics allows) it ends on the static one,
    which satisfies Coulomb's law to rounding too."""
    plain = newton(pyramid)
    assert loaded_slip(pyramid, plain.lam) > 1e-3
    least = newton(pyramid, iterations=20, start="apgd", start_iterations=300)
    assert pyramid.fclib_error(least.lam) < 1e-12
    assert loaded_slip(pyramid, least.lam) < 1e-12
    assert 0 < least.info["sweeps"] <= 300


def test_a_pgs_start_is_pgs_then_newton(pyramid):
    """The first iteration is the start's whole run: its iterate is pgs's own after those
    sweeps, bit for bit."""
    seen = []
    settings = registry.settings("newton", 3, True, {"start": "pgs", "start_iterations": 50})
    settings = dataclasses.replace(settings, observer=lambda lam: seen.append(lam.copy()))
    result = registry.get("newton").solve(pyramid.copy(), np.zeros(pyramid.size), settings)
    pgs = registry.get("pgs").solve(pyramid.copy(), np.zeros(pyramid.size),
                                    registry.settings("pgs", 50, False))
    assert np.array_equal(seen[0], pgs.lam)
    assert result.info["sweeps"] == 50 and result.info["newton_steps"] == 2
    assert result.residual < pgs.residual


def test_start_zero_ignores_the_given_impulses(pyramid):
    garbage = np.random.default_rng(3).uniform(0.0, 1.0, pyramid.size)
    a = newton(pyramid, lam0=garbage, iterations=30, start="zero")
    b = newton(pyramid, iterations=30)
    assert np.array_equal(a.lam, b.lam)


def test_mu_continuation_from_zero_solves_the_frictionless_stage_first(pyramid):
    """mu_from 0: the first stage has no friction, so Newton's iterates carry no tangential
    impulse until that stage ends; the last stage is the problem itself, solved to rounding."""
    seen = []
    settings = registry.settings("newton", 400, True,
                                 {"mu_from": 0.0, "mu_stages": 2, "abs_tol": 1e-13})
    settings = dataclasses.replace(settings, observer=lambda lam: seen.append(lam.copy()))
    result = registry.get("newton").solve(pyramid.copy(), np.zeros(pyramid.size), settings)
    tangential = [np.abs(lam.reshape(pyramid.m, pyramid.rows)[:, 1:]).max() for lam in seen]
    assert tangential[0] == 0.0 and max(tangential) > 0.0
    assert result.status == metrics.ABSOLUTE and pyramid.fclib_error(result.lam) < 1e-12


def test_restarts_run_sweeps_once_newton_stalls(pyramid):
    """With no tolerance to stop it Newton stalls at rounding; each restart then runs the
    start's iterations of pgs."""
    result = newton(pyramid, iterations=260, abs_tol=0.0, restarts=2, start_iterations=10)
    assert result.info["restarts"] >= 1
    assert result.info["sweeps"] == 10 * result.info["restarts"]
    assert pyramid.fclib_error(result.lam) < 1e-12


def test_fischer_burmeister_solves_the_pyramid_to_rounding(pyramid):
    """function=fb seeks the zero of another function with the same zeros: Coulomb's law."""
    result = newton(pyramid, function="fb")
    assert result.status == metrics.ABSOLUTE
    assert pyramid.fclib_error(result.lam) < 1e-12


def test_fischer_burmeister_without_friction_gives_the_lcps_velocities():
    problem = settled("bowl", 60, overrides={"n": 40})
    ac, fb = newton(problem), newton(problem, function="fb")
    assert fb.status == metrics.ABSOLUTE
    u_ac = problem.apply(ac.lam) + problem.rhs
    u_fb = problem.apply(fb.lam) + problem.rhs
    assert np.max(np.abs(u_ac - u_fb)) < 1e-9


@pytest.mark.parametrize("stack", ["tetrahedron", "square-pyramid"])
def test_a_file_this_project_did_not_write(tmp_path, stack):
    """A stack of spheres built by hand (W = H M⁻¹ Hᵀ from the sphere centres) and written in
    FCLIB's triplet layout without the project's writer: read back and solved to 1e-12, with
    Coulomb's law checked on the hand-built W and q, not the reader's."""
    from benchmarks.handmade_fclib import STACKS, local_problem, write_by_hand
    from lab.io.fclib import read_fclib

    W, q, mu = local_problem(STACKS[stack]())
    path = tmp_path / "stack.hdf5"
    write_by_hand(path, W, q, mu, stack)
    problem, _ = read_fclib(path)
    result = newton(problem, iterations=50)
    assert problem.fclib_error(result.lam) < 1e-12
    r = result.lam.reshape(-1, 3)
    u = (W @ result.lam + q).reshape(-1, 3)
    scale = np.abs(q).max()
    assert np.all(r[:, 0] >= 0.0) and np.all(u[:, 0] >= -1e-12 * scale)
    assert np.all(np.abs(r[:, 0] * u[:, 0]) <= 1e-12 * scale * r[:, 0].max())
    friction = np.linalg.norm(r[:, 1:], axis=1)
    assert np.all(friction <= mu * r[:, 0] * (1 + 1e-12) + 1e-15)
    assert r[:, 0].sum() > 0.0  # the stack's weight is carried


def test_newtons_answer_is_in_the_cone_and_its_state_reads_back(tmp_path):
    """Newton's steps leave the cone (λ + tΔ): from 300 apgd iterations on the pyramid of five
    layers (μ 0.48), 20 Newton iterations left normal impulses of -1.6e-16 and -0.0143 N s,
    and a state file that could not be opened. Every step's answer is now in the cone (up to
    rounding), and the file reads back."""
    from lab.io import snapshot
    from solver.methods.feasible import ROUNDING

    world = scenes.build("pyramid", {"layers": 5, "mu": 0.48})
    settings = registry.settings("newton", 20, False, {"start": "apgd",
                                                        "start_iterations": 300})
    sim = Simulation(world, settings, warm_start=1.0)
    for _ in range(3):
        report = sim.step()
        lam = sim.lam.reshape(-1, 3)
        mu = sim.problem.laws[0]
        assert lam[:, 0].min() >= 0.0
        assert np.all(np.hypot(lam[:, 1], lam[:, 2]) <= mu * lam[:, 0] * (1 + ROUNDING))
        assert report.result.residual == pytest.approx(sim.problem.residual(sim.lam),
                                                       rel=1e-12)
        path = snapshot.save_state(tmp_path / "pyramid.npz", world, sim.impulses())
        back = snapshot.read_state(path)
        assert np.array_equal(back.contact_impulse, sim.impulses()[1])
