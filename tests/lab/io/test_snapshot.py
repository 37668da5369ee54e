"""lab.io.snapshot: state and LCP snapshots written and read back, and every unusable LCP file
refused with a one-line message naming it before a compiled kernel indexes with its contents
(the full corpus of bad files: test_corpus_files.py)."""
import json
import tracemalloc

import numpy as np
import pytest

import scenes
from solver.params import resolve
from lab.io import snapshot
from lab.io.snapshot import load_lcp
from lab.report.compare import settle
from solver.methods import registry
from solver.step import Simulation


def _column_arrays():
    frozen = settle(scenes.build("column"), 1, registry.settings("pgs", 20, False))
    p = frozen.problem
    return p, dict(q=p.rhs, W=p.dense(), pairs=np.stack([p.body_a, p.body_b], 1),
                   normal=p.normal, gap=p.gap, dt=np.float64(p.dt), inv_mass=p.inv_mass,
                   v_pred=p.v_pred, lam=frozen.report.result.lam)


def test_a_complete_snapshot_rebuilds_the_same_problem(tmp_path):
    problem, arrays = _column_arrays()
    np.savez(tmp_path / "ok.npz", **arrays)
    loaded, extras = load_lcp(tmp_path / "ok.npz")
    np.testing.assert_array_equal(loaded.rhs, problem.rhs)
    np.testing.assert_allclose(loaded.dense(), arrays["W"])
    assert loaded.residual(extras["lam"]) == problem.residual(arrays["lam"])


@pytest.mark.parametrize("edit, fragment", [
    (lambda a: {"q": a["q"], "W": a["W"]}, "no contact geometry"),
    (lambda a: {k: v for k, v in a.items() if k != "normal"}, "missing normal"),
    (lambda a: {**a, "pairs": a["pairs"] + 100}, "outside"),
    (lambda a: {**a, "pairs": a["pairs"].astype(float)}, "integers"),
    (lambda a: {**a, "normal": a["normal"][:-1]}, "normal has shape"),
    (lambda a: {**a, "gap": np.full_like(a["gap"], np.nan)}, "gap must be finite, got nan"),
    (lambda a: {**a, "q": a["q"] + 1.0}, "q does not match"),
    (lambda a: {**a, "dt": np.float64(0.0)}, "dt=0"),
    (lambda a: {**a, "mu": np.full(a["q"].size, 0.5)}, "has mu but misses radius, w_pred"),
])
def test_unusable_snapshots_are_refused_with_one_line(tmp_path, edit, fragment):
    _, arrays = _column_arrays()
    np.savez(tmp_path / "bad.npz", **edit(arrays))
    with pytest.raises(ValueError) as err:
        load_lcp(tmp_path / "bad.npz")
    message = str(err.value)
    assert fragment in message and "\n" not in message and "bad.npz" in message


@pytest.mark.parametrize("content", [b"", b"not an archive at all", b"PK\x03\x04broken"])
def test_files_that_are_not_archives_are_refused(tmp_path, content):
    path = tmp_path / "junk.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="junk.npz"):
        load_lcp(path)
    with pytest.raises(ValueError, match="no such"):
        load_lcp(tmp_path / "absent.npz")


def test_a_single_array_file_is_refused(tmp_path):
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ValueError, match="not an .npz"):
        load_lcp(tmp_path / "one.npy")


# ------------------------------------------------------------- written by save_lcp, save_state

def _settled_column(steps=2):
    frozen = settle(scenes.build("column"), steps, registry.settings("pgs", 20, False))
    return frozen.sim


def test_save_lcp_round_trip_keeps_the_problem_and_impulses(tmp_path):
    sim = _settled_column()
    path = snapshot.save_lcp(tmp_path / "l.npz", sim.problem, sim.lam, sim.world)
    loaded, extras = load_lcp(path)
    assert loaded.m == sim.problem.m == 7 and loaded.n == sim.world.n
    np.testing.assert_array_equal(loaded.rhs, sim.problem.rhs)
    np.testing.assert_array_equal(extras["q"], sim.problem.rhs)
    np.testing.assert_array_equal(extras["lam"], sim.lam)
    assert loaded.residual(extras["lam"]) == sim.problem.residual(sim.lam)
    with np.load(path, allow_pickle=False) as z:
        dense = np.zeros((loaded.m, loaded.m))
        np.add.at(dense, (z["W_row"], z["W_col"]), z["W_val"])
        np.testing.assert_allclose(z["W"], dense, atol=1e-12)
    assert [p.name for p in tmp_path.iterdir()] == ["l.npz"]  # no temporary file left


def test_large_lcp_snapshots_carry_only_the_triplets(tmp_path, monkeypatch):
    sim = _settled_column()
    monkeypatch.setattr(snapshot, "DENSE_LIMIT", 6)  # 7 contacts: above the limit
    snapshot.save_lcp(tmp_path / "l.npz", sim.problem, sim.lam, sim.world)
    with np.load(tmp_path / "l.npz", allow_pickle=False) as z:
        assert "W" not in z.files and {"W_row", "W_col", "W_val"} <= set(z.files)
    loaded, _ = load_lcp(tmp_path / "l.npz")  # the solvers need the geometry, not W
    np.testing.assert_array_equal(loaded.rhs, sim.problem.rhs)


def test_stored_impulses_that_do_not_fit_are_dropped(tmp_path):
    problem, arrays = _column_arrays()
    np.savez(tmp_path / "short.npz", **{**arrays, "lam": arrays["lam"][:-1]})
    np.savez(tmp_path / "nan.npz", **{**arrays, "lam": np.full(problem.m, np.nan)})
    for name in ("short.npz", "nan.npz"):
        loaded, extras = load_lcp(tmp_path / name)
        assert extras["lam"] is None and loaded.m == problem.m


def test_state_round_trip(tmp_path):
    sim = _settled_column(3)
    world = sim.world
    world.damping = 0.25
    scene = {"name": "column",
             "params": resolve(scenes.get("column").params, {"damping": 0.25}, "")}
    snapshot.save_state(tmp_path / "s.npz", world, sim.impulses(), scene)
    snap = snapshot.read_state(tmp_path / "s.npz")
    back = snap.world
    for key in ("x", "v", "radius", "inv_mass", "gravity", "colour"):
        np.testing.assert_array_equal(getattr(back, key), getattr(world, key))
    assert (back.dt, back.time, back.damping) == (world.dt, world.time, 0.25)
    assert back.container == world.container
    keys, lam = sim.impulses()
    assert np.array_equal(snap.contact_key, keys) and np.array_equal(snap.contact_impulse, lam)
    assert snap.contact_key.dtype == np.int64 and keys.size == 7
    assert snap.scene == scene
    assert snap.origin("s.npz") == {"scene": "column", "state": "s.npz",
                                    "scene_params": scene["params"]}
    with np.load(tmp_path / "s.npz", allow_pickle=False) as z:
        assert json.loads(str(z["container"]))["kind"] == "tube"
        assert json.loads(str(z["scene"])) == scene


def test_a_state_saved_without_impulses_or_scene_says_so(tmp_path):
    snapshot.save_state(tmp_path / "s.npz", _settled_column(1).world)
    snap = snapshot.read_state(tmp_path / "s.npz")
    assert snap.contact_key.shape == (0,) and snap.scene is None
    with np.load(tmp_path / "s.npz", allow_pickle=False) as z:
        assert "contact_key" not in z.files and "scene" not in z.files


def test_loading_an_lcp_never_reads_its_matrix(tmp_path):
    sim = _settled_column()
    path = snapshot.save_lcp(tmp_path / "l.npz", sim.problem, sim.lam, sim.world)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    # An unused 3000 x 3000 W (72 MB, compressed to a few hundred kB) next to the geometry.
    np.savez_compressed(tmp_path / "big.npz", **{**arrays, "W": np.zeros((3000, 3000))})
    tracemalloc.start()
    problem, _ = load_lcp(tmp_path / "big.npz")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert problem.m == 7 and peak < 2_000_000


def test_unusable_state_files_are_refused_naming_the_file(tmp_path):
    (tmp_path / "junk.npz").write_text("x")
    np.savez(tmp_path / "partial.npz", x=np.zeros((2, 3)))
    for name in ("junk.npz", "partial.npz"):
        with pytest.raises(ValueError, match=name):
            snapshot.load_state(tmp_path / name)


@pytest.mark.parametrize("name, content", [("empty.npz", b""),
                                           ("broken.npz", b"PK\x03\x04broken"),
                                           ("one.npy", None)])
def test_state_files_that_are_not_archives_are_refused(tmp_path, name, content):
    path = tmp_path / name
    if content is None:
        np.save(path, np.zeros(3))
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=name):
        snapshot.load_state(path)


def test_a_frictional_problem_round_trips_with_its_matrix(tmp_path):
    world = scenes.build("column", {"mu": 0.5, "mu_roll": 0.001})
    world.v[::2, 0] = 1.0  # every other marble sliding: the tangent rows carry impulses
    sim = Simulation(world, registry.settings("pgs", 20), warm_start=1.0)
    sim.step()
    problem = sim.problem
    snapshot.save_lcp(tmp_path / "f.npz", problem, sim.lam, world)
    back, extras = snapshot.load_lcp(tmp_path / "f.npz")
    assert back.frictional and back.rows == 6 and back.m == problem.m
    np.testing.assert_array_equal(back.rhs, problem.rhs)
    assert back.residual(sim.lam) == problem.residual(sim.lam)
    np.testing.assert_array_equal(extras["lam"], sim.lam)
    with np.load(tmp_path / "f.npz", allow_pickle=False) as z:
        W, q, lam = z["W"], z["q"], z["lam"]
    assert W.shape == (6 * problem.m,) * 2
    # W is the operator the solvers apply: e = W λ + q, row by row in FCLIB's order.
    np.testing.assert_allclose(W @ lam + q, problem.error(lam), atol=1e-12)
    assert np.abs(lam[1::6]).max() > 0.0 and np.abs(lam[4::6]).max() > 0.0  # t1, rolling t2


# Every scene, small, at its own friction: a few steps of every solver that solves it, saved
# with its impulses as `marbles-bench run --save-state` and Ctrl+S save them.
SMALL = {"bowl": {"n": 40}, "disk": {"n": 20}, "column": {}, "mass-ratio": {},
         "box": {"n": 40}, "incline": {}, "pyramid": {"layers": 3}, "heap": {"n": 40}}


def _state_cases():
    for scene, params in SMALL.items():
        frictional = scenes.has_friction(resolve(scenes.get(scene).params, params, scene))
        for solver, method in registry.METHODS.items():
            if method.friction or not frictional:
                yield scene, solver


@pytest.mark.parametrize("scene, solver", list(_state_cases()))
def test_every_state_a_run_writes_reads_back(tmp_path, scene, solver):
    """What a run writes (its world and last impulses) opens again, whatever the solver left
    in its last answer: a normal impulse below zero by rounding was refused on reading."""
    from scenes import default_warm_start

    params = resolve(scenes.get(scene).params, SMALL[scene], scene)
    world = scenes.get(scene).world_of(params)
    sim = Simulation(world, registry.settings(solver, 20, False),
                     warm_start=default_warm_start(params))
    for _ in range(4):
        sim.step()
    path = snapshot.save_state(tmp_path / "state.npz", world, sim.impulses(),
                               {"name": scene, "params": params})
    back = snapshot.read_state(path)
    assert np.array_equal(back.contact_impulse, sim.impulses()[1])
    np.testing.assert_array_equal(back.world.x, world.x)
