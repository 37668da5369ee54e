"""Solvers side by side, without Qt: each copy is the run of its solver alone from the same
start, bit for bit; the copies share nothing; the Session's commands start and end it, and it
follows the Session's iterations, friction and new worlds."""
from __future__ import annotations

import numpy as np
import pytest

from lab.session import commands as cmd
from lab.session.session import Session
from lab.session.side_by_side import (COPY_COLOURS, MAX_COPIES, SideBySide, cores, label,
                                      parse_copies)
from lab.session.spec import RunSpec
from solver.methods import registry
from solver.locality import MIN_MARBLES
from solver.params import ParamError
from solver.step import Simulation

STEPS = 40


def session(scene="bowl", solver="pgs", iterations=10, **assignments) -> Session:
    s = Session(RunSpec.create(scene, solver, iterations, speed=0, threads=1,
                               assignments={"n": 60, **assignments}))
    s.start()
    return s


def alone(spec: RunSpec, world, settings, steps: int, impulses=None) -> Simulation:
    """A plain single-solver run of `settings` from `world` (a copy), `steps` steps."""
    sim = Simulation(world.copy(), spec.options.but(solve=settings))
    if impulses is not None and impulses[0].size:
        sim.set_impulses(*impulses)
    for _ in range(steps):
        sim.step()
    return sim


@pytest.mark.parametrize("parallel", [False, True])
def test_each_copy_is_its_solver_alone_from_the_same_start(parallel):
    spec = RunSpec.create("bowl", "pgs", 10, threads=1, assignments={"n": 60})
    start = spec.build_world()
    names = ("pgs", "jacobi", "psor:omega=1.2")
    settings = [c.settings(10) for c in parse_copies(",".join(names))]
    options = [spec.options.but(solve=s) for s in settings]
    pair = SideBySide.start(Simulation(start.copy(), options[0]), options, parallel=parallel)
    assert pair.parallel == parallel
    for _ in range(STEPS):
        reports = pair.step(trace=True)
    pair.close()
    assert [r.method for r in reports] == ["pgs", "jacobi", "psor"]
    for sim, s in zip(pair.sims, settings):
        ref = alone(spec, start, s, STEPS)
        assert np.array_equal(sim.world.x, ref.world.x) and np.array_equal(sim.world.v, ref.world.v)
    # Different solvers really went different ways: the copies are not one run shown thrice.
    x = [sim.world.x for sim in pair.sims]
    assert not np.array_equal(x[0], x[1]) and not np.array_equal(x[1], x[2])
    residuals = pair.take_residuals()
    assert [r.shape for r in residuals] == [(STEPS,)] * 3
    assert all(t is not None and t.size == 11 for t in pair.traces)
    assert pair.take_residuals()[0].size == 0  # taken: empty until the next step


def test_copies_step_in_threads_only_where_numbas_pool_stays_out_of_it():
    """A small pile steps serially: its copies go in threads (on two cores or more). A pile
    that is renumbered (from locality's MIN_MARBLES) runs parallel kernels even on one thread:
    its copies step in turn."""
    for n, threaded in ((60, cores() >= 2), (MIN_MARBLES, False)):
        spec = RunSpec.create("box", "pgs", 10, threads=1, assignments={"n": n})
        options = [spec.options] * 2
        pair = SideBySide.start(Simulation(spec.build_world(), options[0]), options)
        assert pair.parallel == threaded, n
        assert pair.threads == (2 if threaded else 1)


def test_copies_share_no_array_an_edit_of_one_leaves_the_others():
    spec = RunSpec.create("bowl", "pgs", 10, threads=1, assignments={"n": 60})
    options = [spec.options] * 2
    pair = SideBySide.start(Simulation(spec.build_world(), options[0]), options,
                            parallel=False)
    a, b = pair.worlds
    assert not np.shares_memory(a.x, b.x) and not np.shares_memory(a.v, b.v)
    for _ in range(5):
        pair.step()
    assert np.array_equal(a.x, b.x)  # one solver twice: one trajectory
    b.v[0] += 1.0
    for _ in range(5):
        pair.step()
    assert not np.array_equal(a.x[0], b.x[0])


def test_the_session_starts_side_by_side_where_it_is_and_matches_plain_runs():
    s = session()
    for _ in range(10):  # a run under way: the copies start from its world and impulses
        s.step()
    start, impulses, before = s.world.copy(), s.sim.impulses(), s.sim.steps
    s.apply(cmd.SideBySide(("jacobi", "pgs")))
    assert s.spec.solver == "jacobi" and s.state().side_by_side == ("jacobi", "pgs")
    assert "jacobi (sky blue), pgs (orange)" in s.message
    for _ in range(STEPS):
        s.step()
    views = s.copies.views()
    assert [v.label for v in views] == ["jacobi", "pgs"]
    assert [v.colour for v in views] == list(COPY_COLOURS[:2])
    assert [v.residuals.size for v in views] == [STEPS, STEPS]
    for view, name in zip(views, ("jacobi", "pgs")):
        ref = alone(s.spec, start, s._settings_of(name), STEPS, impulses)
        assert np.array_equal(view.x, ref.world.x.astype(np.float32))
    assert s.sim.steps == before + STEPS
    # The Session's own log is copy 0's: the same residuals as its view.
    assert np.array_equal(s.log.take().residual[-STEPS:], views[0].residuals)
    s.apply(cmd.SideBySide(()))
    assert s.copies.running is None and s.state().side_by_side == ()
    assert "jacobi goes on" in s.message
    s.step()


def test_the_key_takes_the_current_solver_and_the_next_and_ends_it_again():
    s = session(solver="psor", omega=1.3)
    s.apply(cmd.ToggleSideBySide(3))
    names = list(registry.METHODS)
    at = names.index("psor")
    assert s.state().side_by_side == ("psor omega=1.3", names[at + 1], names[at + 2])
    s.apply(cmd.ToggleSideBySide())
    assert s.copies.running is None


def test_side_by_side_says_it_keeps_no_history_and_the_history_starts_again_after():
    s = session(scene="column")
    for _ in range(3):
        s.step()
    s.apply(cmd.ToggleSideBySide())
    assert "no history while side by side" in s.message
    s.step()
    assert s.state().history is None
    s.apply(cmd.HistoryStep(-1))  # refused, saying why
    assert "no history while solvers run side by side" in s.message and s.sim.steps == 4
    s.apply(cmd.ToggleSideBySide())
    s.step()
    s.step()
    span = s.state().history
    assert span is not None and span.last == s.sim.steps and span.last - span.first >= 1


def test_the_key_pairs_the_solver_with_the_one_used_before_it():
    """M from pgs to jacobi, then T: jacobi (the Session's own, copy 0) beside pgs."""
    s = session(solver="pgs")
    s.apply(cmd.SetSolver("jacobi"))
    s.apply(cmd.ToggleSideBySide())
    assert s.state().side_by_side[0].startswith("jacobi")
    assert s.state().side_by_side[1] == "pgs"


def test_copies_follow_iterations_friction_and_a_reset():
    s = session()
    s.apply(cmd.SideBySide(("pgs", "jacobi")))
    s.apply(cmd.SetIterations(5))
    s.apply(cmd.ToggleFriction())
    s.step()
    jacobi = s.copies.running.sims[1]
    assert jacobi.settings.iterations == 5 and jacobi.settings.method == "jacobi"
    assert jacobi.world.mu == s.world.mu > 0
    assert jacobi.steps == s.sim.steps == 1
    s.apply(cmd.Reset())
    assert s.copies.running is not None and s.copies.running.sims[0] is s.sim
    assert all(w.time == 0.0 for w in s.copies.running.worlds)
    assert s.copies.running.sims[1].steps == 0


def test_friction_ends_side_by_side_with_a_solver_that_cannot_solve_it():
    s = session()
    s.apply(cmd.SideBySide(("pgs", "pcg")))
    assert s.copies.running is not None
    s.apply(cmd.ToggleFriction())
    s.step()
    assert s.copies.running is None and "pcg solves frictionless contacts only" in s.message


def test_a_diverging_copy_pauses_the_session():
    s = session(iterations=50)
    s.apply(cmd.SideBySide(("pgs", "jacobi:beta=1")))
    for _ in range(300):
        s.step()
        if s.paused:
            break
    assert s.paused and s.diverged and "jacobi (side by side)" in s.alarm


@pytest.mark.parametrize("text, words", [
    ("pgs", "2 to 4 solvers, not 1"),
    ("pgs,jacobi,psor,pcg,apgd", f"2 to {MAX_COPIES} solvers, not 5"),
    ("pgs,nosuch", "unknown solver 'nosuch'"),
    ("pgs,,jacobi", "empty solver name"),
    ("pgs,psor:omega", "'omega' is not name=value"),
    ("pgs,psor:omega=3", "omega=3"),
])
def test_bad_choices_are_refused_in_one_line(text, words):
    with pytest.raises(ParamError, match=words) as err:
        parse_copies(text)
    assert "\n" not in str(err.value)


def test_a_refused_command_changes_nothing():
    s = session()
    s.apply(cmd.SideBySide(("pgs", "nosuch")))
    assert s.copies.running is None and "unknown solver 'nosuch'" in s.message
    s.apply(cmd.ToggleFriction())
    s.apply(cmd.SideBySide(("pgs", "pcg")))
    assert s.copies.running is None and "frictionless contacts only" in s.message


def test_labels_name_the_parameters_that_differ_from_the_defaults():
    assert label(registry.settings("psor", 20, False, {"omega": "1.2"})) == "psor omega=1.2"
    assert label(registry.settings("pgs", 20, False, {})) == "pgs"
