"""The Session's files: a saved state opens bit for bit (and a warm-started run from it goes on
as the saved one would have), a reset of an opened state goes back to it, the contact problem
of the current step exports for `marbles-bench solve`, and bad files are one-line messages
that change nothing."""
from __future__ import annotations

import numpy as np
import pytest

import scenes
from lab.io.fclib import read_fclib
from lab.io.snapshot import load_lcp, read_state
from lab.session import commands as cmd
from lab.session.session import Session
from lab.session.spec import RunSpec
from solver.explicit import MatrixProblem
from solver.params import resolve

WORLD_FIELDS = ("x", "v", "omega", "orientation", "radius", "mass", "colour", "gravity")


def session(scene="bowl", solver="pgs", **assignments) -> Session:
    s = Session(RunSpec.create(scene, solver, assignments=assignments))
    s.start()
    return s


def steps(s: Session, k: int) -> list[np.ndarray]:
    out = []
    for _ in range(k):
        s.step()
        out.append(np.concatenate([s.world.x.ravel(), s.world.v.ravel(), s.world.omega.ravel()]))
    return out


@pytest.mark.parametrize("scene, assignments", [
    ("bowl", {"mu": 0.5, "mu_wall": 0.5, "warm_start": 0.5}),  # the window's default
    ("box", {"n": 200, "warm_start": 1.0}),
])
def test_a_saved_state_opens_bit_for_bit_and_runs_on_as_the_saved_run(tmp_path, scene,
                                                                     assignments):
    s = session(scene, **assignments)
    steps(s, 40)
    path = tmp_path / "state.npz"
    s.apply(cmd.SaveState(str(path)))
    assert s.message.startswith(f"state saved: {path} (step 40, t = 0.80 s)")
    saved = {f: np.copy(getattr(s.world, f)) for f in WORLD_FIELDS}
    uninterrupted = steps(s, 5)
    generation = s.generation
    s.apply(cmd.OpenState(str(path)))
    assert s.message.startswith(f"state opened: {path}") and s.generation == generation + 1
    assert s.state().origin == str(path) and s.state().scene == scene
    for f in WORLD_FIELDS:
        assert np.array_equal(getattr(s.world, f), saved[f]), f
    assert s.world.time == pytest.approx(0.8)
    again = steps(s, 5)
    for a, b in zip(uninterrupted, again):
        assert np.array_equal(a, b)  # the impulses came along: the warm start is the same
    s.apply(cmd.SaveState(str(tmp_path / "again.npz")))
    s.apply(cmd.Reset())  # back to the state as opened, not the scene's t = 0
    assert s.world.time == pytest.approx(0.8) and np.array_equal(s.world.x, saved["x"])
    s.apply(cmd.SetScene("column"))  # a scene of its own: the file is left behind
    assert s.state().origin == "" and s.world.time == 0.0


def test_the_state_carries_the_scene_and_its_friction(tmp_path):
    s = session("heap", n=40)
    steps(s, 3)
    s.apply(cmd.SaveState(str(tmp_path / "heap.npz")))
    snap = read_state(tmp_path / "heap.npz")
    assert snap.scene["name"] == "heap" and snap.scene["params"]["n"] == 40
    heap = resolve(scenes.get("heap").params, {}, "heap")  # the scene's own friction
    assert (snap.world.mu, snap.world.mu_roll) == (heap["mu"], heap["mu_roll"])
    other = session("bowl", solver="pcg")  # frictionless: it cannot solve the heap
    other.apply(cmd.OpenState(str(tmp_path / "heap.npz")))
    assert other.spec.solver == "pgs" and "switched to pgs" in other.message
    assert other.spec.scene == "heap" and other.state().scene_params["n"] == 40
    assert other.state().friction == (heap["mu"], heap["mu"], heap["mu_roll"], 0.0)  # one μ


def test_the_current_contact_problem_exports_for_the_bench(tmp_path):
    for scene, kw in (("column", {}), ("heap", {"n": 40})):
        s = session(scene, **kw)
        s.apply(cmd.ExportProblem(str(tmp_path / "none.npz")))
        assert s.message == "no contact problem yet: run at least one step"
        steps(s, 30)
        path = tmp_path / f"{scene}.npz"
        s.apply(cmd.ExportProblem(str(path)))
        assert f"exported: {path}" in s.message and "marbles-bench solve --lcp" in s.message
        problem, extra = load_lcp(path)
        assert problem.m == s.sim.problem.m > 0
        assert np.array_equal(extra["lam"], s.sim.lam)
        assert getattr(problem, "frictional", False) == (scene == "heap")
    assert not (tmp_path / "none.npz").exists()


def test_bad_files_are_one_line_and_change_nothing(tmp_path):
    s = session("column")
    steps(s, 3)
    generation, x = s.generation, s.world.x.copy()
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    for path in (junk, tmp_path / "missing.npz"):
        s.apply(cmd.OpenState(str(path)))
        assert str(path) in s.message and "\n" not in s.message
        assert s.generation == generation and np.array_equal(s.world.x, x)
    s.apply(cmd.SaveState(str(tmp_path / "no" / "state.npz")))
    assert "does not exist" in s.message and "\n" not in s.message
    s.apply(cmd.ExportProblem(str(tmp_path / "no" / "lcp.npz")))
    assert "does not exist" in s.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.npz"]


def test_an_hdf5_name_exports_the_frictional_problem_as_fclib(tmp_path):
    s = session("bowl", n=40, mu=0.5, mu_wall=0.5, mu_roll=0.0)
    steps(s, 40)
    path = tmp_path / "bowl.hdf5"
    s.apply(cmd.ExportProblem(str(path)))
    assert "marbles-bench solve --fclib" in s.message
    read, extras = read_fclib(path)
    built = MatrixProblem.from_problem(s.sim.problem)
    for key in ("indptr", "indices", "data", "q", "mu"):
        np.testing.assert_array_equal(getattr(read, key), getattr(built, key))
    np.testing.assert_array_equal(extras["lam"], s.sim.lam)
    # FCLIB has no rolling rows and no frictionless problems: refused in one line, no file.
    for name, kw in (("roll", {"mu": 0.5, "mu_roll": 0.01}), ("smooth", {"mu": 0.0})):
        other = session("bowl", n=40, **kw)
        steps(other, 5)
        other.apply(cmd.ExportProblem(str(tmp_path / f"{name}.hdf5")))
        assert other.message.startswith("FCLIB export: ") and "\n" not in other.message
        assert not (tmp_path / f"{name}.hdf5").exists()


def test_a_states_step_count_is_its_time_over_dt():
    from lab.session.files import steps_at

    assert steps_at(0.02 * 37, 0.02) == 37  # a time summed step by step rounds to its count
    assert steps_at(sum([0.01] * 1000), 0.01) == 1000
    assert steps_at(0.0, 0.02) == 0 and steps_at(float("nan"), 0.02) == 0
    assert steps_at(1.0, 0.0) == 0


def test_a_frozen_state_is_saved_as_it_was_however_far_the_run_went_on(tmp_path):
    """Ctrl+S keeps the state at the key press while the name is asked: the file holds that
    moment, with its impulses, not the one at which the name was given."""
    s = session("column")
    steps(s, 3)
    s.apply(cmd.FreezeState())
    x, keys, lam, t = s.world.x.copy(), *s.sim.impulses(), s.world.time
    steps(s, 5)
    s.apply(cmd.SaveState(str(tmp_path / "frozen.npz"), frozen=True))
    assert s.message.startswith(f"state saved: {tmp_path / 'frozen.npz'} (step 3, ")
    snap = read_state(tmp_path / "frozen.npz")
    assert snap.world.time == t and np.array_equal(snap.world.x, x)
    assert np.array_equal(snap.impulses[0], keys) and np.array_equal(snap.impulses[1], lam)
    s.apply(cmd.SaveState(str(tmp_path / "now.npz"), frozen=True))  # none kept: the state now
    assert read_state(tmp_path / "now.npz").world.time == s.world.time > t
    s.apply(cmd.FreezeState())
    s.apply(cmd.FreezeState(drop=True))
    assert s.frozen_state is None
