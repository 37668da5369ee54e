"""The Session's history: a step of the past shown exactly as it was (the world, the problem it
solved, which exports as it did then), the run going on from it bit for bit as the first time,
the comparison of the solvers on it, and the history emptied when its steps no longer belong to
the world."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lab.io.snapshot import load_lcp
from lab.session import commands as cmd
from lab.session.history import KEYFRAME_EVERY
from lab.session.session import Session
from lab.session.spec import RunSpec

MOVING = ("x", "v", "omega", "orientation")


def session(scene="bowl", solver="pgs", **assignments) -> Session:
    s = Session(RunSpec.create(scene, solver, assignments=assignments))
    s.start()
    return s


def run(s: Session, k: int, now=None) -> dict[int, dict]:
    """k steps; the world after each, by step number."""
    out = {}
    for _ in range(k):
        s.step(now)
        out[s.sim.steps] = {f: getattr(s.world, f).copy() for f in MOVING}
        out[s.sim.steps]["time"] = s.world.time
    return out


def same_world(s: Session, saved: dict) -> bool:
    return all(np.array_equal(getattr(s.world, f), saved[f]) for f in MOVING) and \
        s.world.time == saved["time"]


@pytest.mark.parametrize("scene, assignments", [
    ("bowl", {"mu": 0.5, "mu_wall": 0.5, "warm_start": 0.5}),  # the window's default
    ("box", {"n": 200, "warm_start": 1.0}),
])
def test_going_back_and_stepping_again_repeats_the_run_bit_for_bit(scene, assignments):
    s = session(scene, **assignments)
    first = run(s, 60)
    s.apply(cmd.HistoryStep(-50))
    assert s.paused and s.sim.steps == 10 and same_world(s, first[10])
    assert s.message == "history: step 10 of 0–60 shown"
    span = s.state().history
    assert (span.first, span.last, span.shown, span.back) == (0, 60, 10, 50)
    again = run(s, 50)  # the same solver: the steps it made the first time
    for k in range(11, 61):
        for f in MOVING:
            assert np.array_equal(again[k][f], first[k][f]), (k, f)
    assert s.message == "went on from step 10 of the history: the 50 later steps dropped"
    s.apply(cmd.Seek(0))  # the state before the first step is kept too
    assert s.sim.steps == 0 and s.world.time == 0.0 and s.last_report is None


def test_a_shown_step_exports_the_problem_it_solved(tmp_path):
    s = session("bowl", mu=0.5, mu_wall=0.5, warm_start=0.5)
    run(s, 30)
    s.apply(cmd.ExportProblem(str(tmp_path / "then.npz")))
    residual = s.last_report.result.residual
    run(s, 20)
    s.apply(cmd.Seek(30))
    assert s.last_report.result.residual == residual
    s.apply(cmd.ExportProblem(str(tmp_path / "shown.npz")))
    assert "contact problem of step 30" in s.message
    with np.load(tmp_path / "then.npz") as then, np.load(tmp_path / "shown.npz") as shown:
        assert sorted(then.files) == sorted(shown.files)
        for name in then.files:
            assert np.array_equal(then[name], shown[name]), name
    problem, extras = load_lcp(tmp_path / "shown.npz")
    assert problem.frictional and extras["lam"] is not None


def test_the_comparison_solves_the_step_shown_with_the_solvers_asked(tmp_path):
    s = session("bowl", n=60, warm_start=0.5)
    run(s, 12)
    frozen = s.sim.problem  # step 12's, kept by reference: nothing changes a step's problem
    run(s, 8)
    s.apply(cmd.Seek(12))
    table, paths, meta = s.benchmark(30, tmp_path, "test", solvers=("jacobi", "pgs"))
    assert table.solvers == ["jacobi", "pgs"] and meta["step"] == 12
    assert meta["contact_count"] == frozen.m
    assert json.loads(paths[1].read_text())["step"] == 12
    fresh = session("bowl", n=60, warm_start=0.5)
    run(fresh, 12)  # the same step, made again: the same problem, solved the same way
    redo, _, _ = fresh.benchmark(30, tmp_path / "fresh", "test", solvers=("jacobi", "pgs"))
    assert np.array_equal(table.residual, redo.residual)
    with pytest.raises(Exception, match="unknown solver 'nope'"):
        s.benchmark(30, tmp_path, "test", solvers=("nope",))


def test_a_frictional_step_refuses_a_solver_without_friction(tmp_path):
    s = session("bowl", n=40, mu=0.5)
    run(s, 3)
    s.apply(cmd.Seek(1))
    with pytest.raises(Exception, match="solver pcg solves frictionless contacts only"):
        s.benchmark(10, tmp_path, "test", solvers=("pcg",))


def test_the_shown_step_carries_its_solves_trace():
    """Step 14 traced as it went, and the same step untraced (the steps before are the same:
    traced alike), whose solve is done again with the trace on when it is shown."""
    every, skipped = session("bowl", n=60), session("bowl", n=60)
    for k in range(20):
        every.step(now=float(k))  # a second apart: every step traced
        skipped.step(now=13.01 if k == 14 else float(k))  # step 15 is 10 ms after step 14's
    kept = every.history.kept.get(15).report.result.trace
    assert skipped.history.kept.get(15).report.result.trace is None and kept is not None
    for s in (every, skipped):
        s.apply(cmd.Seek(15))
        assert s.trace_step == 15 and np.array_equal(s.trace, kept)


def test_the_budget_bounds_the_steps_kept_and_zero_keeps_none():
    s = session("bowl", n=60)
    run(s, 31)
    h = s.history.kept
    sizes = {k: h.get(k).nbytes for k in range(32)}
    assert h.nbytes == sum(sizes.values())
    h.budget = sum(sizes[k] for k in range(22, 32))  # ten steps' worth
    run(s, 1)
    sizes[32] = h.get(32).nbytes
    # The oldest step kept must be a keyframe (a checkpoint: every KEYFRAME_EVERY-th step).
    first = min(f for f in range(33) if f % KEYFRAME_EVERY == 0
                and sum(sizes[k] for k in range(f, 33)) <= h.budget)
    assert (h.first, h.last) == (first, 32) and h.get(first).checkpoint is not None
    s.apply(cmd.Seek(h.first - 1))
    assert s.message == f"step {h.first - 1} is not in the history (it holds steps {h.first} " \
                        f"to 32)" and s.sim.steps == 32
    s.apply(cmd.HistoryStep(-100))
    assert s.sim.steps == h.first
    s.apply(cmd.HistoryStep(-1))
    assert s.message.startswith(f"history: step {h.first} is the oldest step kept")
    s.apply(cmd.Reset())  # a new world: none of its steps are kept
    assert len(s.history.kept) == 0 and s.state().history is None
    s.history.kept.budget = 0
    run(s, 3)
    assert len(s.history.kept) == 0
    s.apply(cmd.HistoryStep(-1))
    assert s.message == "no history yet: run at least one step"


def test_a_change_of_friction_starts_the_history_at_that_step():
    s = session("bowl", n=60, mu=0.5)
    run(s, 10)
    s.apply(cmd.ToggleFriction())
    run(s, 5)
    assert (s.history.kept.first, s.history.kept.last) == (10, 15)
    s.apply(cmd.Seek(12))
    assert s.world.mu == 0.0  # the steps kept were all made without friction
    generation = s.generation
    s.apply(cmd.ToggleFriction())  # back on, at a step of the past
    s.apply(cmd.Step())
    assert (s.history.kept.first, s.history.kept.last) == (12, 13)
    assert s.generation == generation + 1 and "the 3 later steps dropped" in s.message


def test_going_on_from_the_past_is_a_new_stretch_without_the_dropped_alarm():
    s = session("bowl", n=60)
    run(s, 10)
    s.diverged, s.alarm = True, "jacobi diverged at step 10 (t = 0.20 s)"
    generation = s.generation
    s.apply(cmd.HistoryStep(-3))
    assert s.diverged and s.generation == generation  # only shown: the alarm's step is kept
    s.apply(cmd.Step())
    assert not s.diverged and s.alarm == "" and s.generation == generation + 1
    assert (s.history.kept.first, s.history.kept.last) == (0, 8)


def test_the_step_where_a_solver_went_wrong_is_reached_and_run_again_with_another():
    s = session("bowl", "jacobi", beta=1.0)  # β = 1 diverges within a few steps
    while s.last_report is None or s.last_report.result.status != "divergence":
        s.step()
    bad = s.sim.steps
    s.apply(cmd.HistoryStep(-bad))  # the start
    s.apply(cmd.Seek(bad))  # and back to the step that diverged: its trace says so
    assert s.trace_step == bad and s.trace_alarm == "jacobi diverged"
    assert s.last_report.result.status == "divergence"
    s.apply(cmd.Seek(1))
    s.apply(cmd.SetSolver("pgs"))
    s.apply(cmd.Step())  # a new future from step 1, with pgs
    assert not s.diverged and s.alarm == "" and s.last_report.method == "pgs"
    assert s.history.kept.last == 2 and s.last_report.result.status != "divergence"


def test_side_by_side_keeps_no_history_and_it_starts_again_after():
    """The history keeps copy 0 alone: while solvers run side by side it is refused (going
    back would part copy 0 from the others); once side by side ends it fills again and goes
    back exactly."""
    s = session("column")
    run(s, 5)
    s.apply(cmd.SideBySide(("pgs", "jacobi")))
    run(s, 5)
    s.apply(cmd.HistoryStep(-2))
    assert "side by side" in s.message and s.sim.steps == 10 and not len(s.history.kept)
    s.apply(cmd.SideBySide(()))
    after = run(s, 6)
    s.apply(cmd.HistoryStep(-3))
    assert s.sim.steps == 13 and same_world(s, after[13])


def test_a_step_shown_after_a_change_of_solver_is_the_one_made_then():
    """Steps made with jacobi, then pgs chosen: a jacobi step shown is jacobi's (its problem is
    made again with the options of then), and its export equals the one made at the time."""
    s = session("bowl", solver="jacobi")
    run(s, 20)
    at_ten = None
    s.apply(cmd.HistoryStep(-10))
    at_ten = {f: getattr(s.world, f).copy() for f in MOVING}
    lam_then = s.sim.lam.copy()
    s.apply(cmd.HistoryStep(10))
    s.apply(cmd.SetSolver("pgs"))
    s.apply(cmd.HistoryStep(-10))
    assert s.sim.steps == 10 and s.spec.solver == "pgs"
    assert all(np.array_equal(getattr(s.world, f), at_ten[f]) for f in MOVING)
    assert np.array_equal(s.sim.lam, lam_then)
