"""lab.campaign.collect: the grid's runs, deterministic FCLIB files (LCP snapshots for rolling
rows) plus an index, and any folder of FCLIB files read as a collection."""
from __future__ import annotations

import json

import numpy as np
import pytest

import scenes
from lab.campaign.collect import (INDEX, collect, file_name, grid_runs, read_collection,
                                  read_problem)
from lab.io.fclib import read_fclib
from lab.report.friction_series import frozen_steps
from solver.params import ParamError, resolve


def test_a_seed_and_a_size_go_only_to_scenes_that_have_them():
    runs = grid_runs(["heap", "pyramid", "incline"], [1, 2], [0.3], [3], {"damping": 1.0})
    # heap: seed and n; pyramid: no seed, size is layers; incline: neither, and no mu_wall
    assert runs == [
        ("heap", {"mu_roll": 0.0, "mu_spin": 0.0, "damping": 1.0, "mu": 0.3, "seed": 1, "n": 3}),
        ("heap", {"mu_roll": 0.0, "mu_spin": 0.0, "damping": 1.0, "mu": 0.3, "seed": 2, "n": 3}),
        ("pyramid", {"mu_roll": 0.0, "mu_spin": 0.0, "damping": 1.0, "mu": 0.3, "layers": 3}),
        ("incline", {"mu_roll": 0.0, "mu_spin": 0.0, "damping": 1.0, "mu": 0.3})]


def test_file_names_name_the_overrides_but_not_the_rolling_that_is_off():
    assert file_name("heap", {"mu_roll": 0.0, "mu": 0.5, "seed": 2, "n": 40}, 50) == \
        "heap-mu0.5-n40-seed2-step50.hdf5"


def test_the_same_grid_writes_the_same_bytes(tiny_collection, tmp_path):
    again = tmp_path / "again"
    again.mkdir()
    collect(again, grid_runs(["heap"], [1, 2], [0.5], [3], {}), [10])
    names = sorted(p.name for p in tiny_collection.iterdir())
    assert names == sorted(p.name for p in again.iterdir())
    assert names == ["heap-mu0.5-n3-seed1-step10.hdf5", "heap-mu0.5-n3-seed2-step10.hdf5", INDEX]
    for name in names:
        assert (tiny_collection / name).read_bytes() == (again / name).read_bytes(), name


def test_the_index_agrees_with_the_files(tiny_collection):
    for entry in read_collection(tiny_collection):
        problem, _ = read_fclib(tiny_collection / entry.file)
        assert entry.size == problem.size == 3 * entry.contacts > 0
        assert entry.mu == 0.5
    assert [e.label for e in read_collection(tiny_collection)] == [
        "heap n=3 μ=0.5 step 10 seed 1", "heap n=3 μ=0.5 step 10 seed 2"]


def test_a_folder_of_fclib_files_without_an_index_is_a_collection(tiny_collection, tmp_path):
    for path in tiny_collection.glob("*.hdf5"):
        (tmp_path / path.name.replace(".hdf5", ".h5")).write_bytes(path.read_bytes())
    indexed = read_collection(tiny_collection)
    found = read_collection(tmp_path)
    assert [e.file for e in found] == [e.file.replace(".hdf5", ".h5") for e in indexed]
    assert [(e.size, e.mu) for e in found] == [(e.size, e.mu) for e in indexed]


def test_what_is_no_collection_is_refused_in_one_line(tmp_path):
    with pytest.raises(ParamError, match="no FCLIB files"):
        read_collection(tmp_path)
    with pytest.raises(ParamError, match="not a folder"):
        read_collection(tmp_path / "missing")
    (tmp_path / INDEX).write_text(json.dumps({"problems": [{"file": "x.hdf5"}]}))
    with pytest.raises(ParamError, match="unreadable index.json"):
        read_collection(tmp_path)


def test_rolling_rows_go_into_lcp_snapshots_the_same_bytes_each_time(rolling_collection,
                                                                     tmp_path):
    """Rolling resistance makes 6 rows per contact, which FCLIB's local problem cannot hold:
    the problem is the lab's LCP snapshot, read back as the problem frozen, rolling rows and
    all, and written to the same bytes by the same grid."""
    [entry] = read_collection(rolling_collection)
    assert entry.file == "heap-mu0.5-muroll0.01-n3-seed1-step10.npz"
    problem, _ = read_problem(rolling_collection / entry.file)
    assert problem.rows == 6 and entry.size == problem.size == 6 * entry.contacts > 0
    assert np.all(problem.mu_roll == 0.01)
    [(_, _, frozen)] = frozen_steps("heap", resolve(scenes.get("heap").params, {
        "mu_roll": 0.01, "mu_spin": 0.0, "mu": 0.5, "seed": 1, "n": 3},
        "heap"), (10,))
    lam = np.random.default_rng(3).normal(size=problem.size)
    np.testing.assert_array_equal(problem.error(lam), frozen.error(lam))
    collect(tmp_path, grid_runs(["heap"], [1], [0.5], [3], {"mu_roll": 0.01}), [10])
    for name in (entry.file, INDEX):
        assert (tmp_path / name).read_bytes() == (rolling_collection / name).read_bytes()
    # without an index, the snapshot is found by its suffix
    (tmp_path / INDEX).unlink()
    assert [(e.file, e.size) for e in read_collection(tmp_path)] == [(entry.file, entry.size)]


def test_an_lcp_snapshot_without_friction_is_no_collection_problem(tmp_path):
    from lab.io.snapshot import save_lcp
    from solver.step import Simulation
    from solver.methods import registry

    world = scenes.build("bowl", {"n": 10})
    sim = Simulation(world, registry.settings("pgs", 20), 0.0)
    for _ in range(30):
        sim.step()
    save_lcp(tmp_path / "plain.npz", sim.problem, sim.lam, world)
    with pytest.raises(ValueError, match="plain.npz: an LCP snapshot without friction"):
        read_problem(tmp_path / "plain.npz")
    with pytest.raises(ParamError, match="no FCLIB files"):
        read_collection(tmp_path)


def test_the_profiles_collection_is_the_profiles_problems(tmp_path):
    """`collect --profiles`: the 16 problems `report --part profiles` freezes, with its labels,
    each file the same problem (the same velocities for any impulses; rolling rows kept)."""
    from lab.campaign.collect import collect_runs, profile_runs
    from lab.report.profiles import freeze

    entries = collect_runs(tmp_path, profile_runs())
    frozen = freeze()
    assert [e.label for e in entries] == [f.label for f in frozen] and len(entries) == 16
    assert len({e.file for e in entries}) == 16 and "pyramid-step1.hdf5" in {e.file
                                                                             for e in entries}
    rng = np.random.default_rng(5)
    for entry, f in zip(entries, frozen):
        problem, _ = read_problem(tmp_path / entry.file)
        assert problem.size == f.problem.size and entry.contacts == f.contacts
        lam = rng.normal(size=problem.size)
        np.testing.assert_allclose(problem.error(lam), f.problem.error(lam), rtol=0,
                                   atol=1e-12 * (1 + np.abs(f.problem.error(lam)).max()))
