"""FCLIB exchange: a round trip gives the same problem and identical traces; a two-contact file
written here with h5py directly, as another tool would, is read in each sparse form and solved
to its known answer; `marbles-bench run --save-fclib` and `solve --fclib`; malformed files,
2D, global and bilateral problems refused in one line with exit code 2."""
import json

import h5py
import numpy as np
import pytest

import scenes
from lab.cli import bench
from lab.io.fclib import read_fclib, save_fclib
from solver import metrics
from solver.explicit import MatrixProblem
from solver.methods import registry
from solver.step import Simulation


@pytest.fixture(scope="module")
def frictional_step():
    sim = Simulation(scenes.build("bowl", {"n": 40, "mu": 0.5, "mu_wall": 0.5}),
                     registry.settings("pgs", 20), warm_start=1.0)
    for _ in range(60):
        sim.step()
    return sim


def trace(name, problem, iterations=30):
    return registry.get(name).solve(problem, np.zeros(problem.size),
                                    registry.settings(name, iterations, True, {"abs_tol": 0.0}))


@pytest.mark.parametrize("name", registry.friction_solvers())
def test_a_round_trip_gives_identical_traces(name, frictional_step, tmp_path):
    path = tmp_path / "p.hdf5"
    save_fclib(path, frictional_step.problem, frictional_step.lam, title="bowl")
    read, extras = read_fclib(path)
    built = MatrixProblem.from_problem(frictional_step.problem)
    for key in ("indptr", "indices", "data", "q", "mu"):
        np.testing.assert_array_equal(getattr(read, key), getattr(built, key))
    np.testing.assert_array_equal(extras["lam"], frictional_step.lam)
    assert extras["title"] == "bowl"
    np.testing.assert_array_equal(trace(name, read).trace, trace(name, built).trace)
    if name == "mass-split":
        return  # W names no marbles to split: on a file it splits by W's coupled contacts
    # ...and the geometry it came from, up to the order of the sums.
    np.testing.assert_allclose(trace(name, read).trace,
                               trace(name, frictional_step.problem).trace, rtol=1e-8,
                               atol=1e-13)


def write_two_contacts(path, form):
    """Two contacts a test knows the answer of, written with h5py as FCLIB's C library does:
    a block-diagonal W (no coupling between them), contact 0 sticking (q_t within reach) and
    contact 1 sliding (q_t beyond it), μ = 0.5. In compressed columns, rows or triplets."""
    W = np.diag([1.0, 3.5, 3.5, 2.0, 7.0, 7.0])
    W[0, 3] = W[3, 0] = 0.0
    q = np.array([-1.0, 0.7, 0.0, -2.0, 0.0, -20.0])
    rows, cols = np.nonzero(W)
    with h5py.File(path, "w") as f:
        local = f.create_group("fclib_local")
        local.create_dataset("spacedim", data=np.array([3], np.int32))
        g = local.create_group("W")
        if form == "csc":
            p, i, nz = np.array([0, 1, 2, 3, 4, 5, 6]), rows, -1
        elif form == "csr":
            p, i, nz = np.array([0, 1, 2, 3, 4, 5, 6]), cols, -2
        else:
            p, i, nz = cols, rows, rows.size
        for key, value in (("m", 6), ("n", 6), ("nzmax", rows.size), ("nz", nz)):
            g.create_dataset(key, data=np.array([value], np.int32))
        g.create_dataset("p", data=p.astype(np.int32))
        g.create_dataset("i", data=i.astype(np.int32))
        g.create_dataset("x", data=W[rows, cols])
        v = local.create_group("vectors")
        v.create_dataset("q", data=q)
        v.create_dataset("mu", data=np.array([0.5, 0.5]))
        local.create_group("info").create_dataset("title", data=np.bytes_(b"two contacts"))
    # Stick: λ = (1, -0.2, 0) (|q_t|/3.5 = 0.2 <= 0.5); slide: λ_n = 1, λ_t = 0.5 against q_t.
    return np.array([1.0, -0.2, 0.0, 1.0, 0.0, 0.5])


@pytest.mark.parametrize("form", ["csc", "csr", "triplets"])
def test_a_file_written_by_another_tool_is_read_and_solved(form, tmp_path):
    path = tmp_path / "two.hdf5"
    answer = write_two_contacts(path, form)
    problem, extras = read_fclib(path)
    assert problem.m == 2 and extras["title"] == "two contacts" and extras["lam"] is None
    for name in registry.friction_solvers():
        if name == "apgd":
            continue  # its relaxation lifts the sliding contact off (tests/solver/methods)
        result = registry.get(name).solve(problem, np.zeros(6), registry.settings(
            name, 5000, True, {"abs_tol": 1e-13}))
        assert result.status == metrics.ABSOLUTE, name
        np.testing.assert_allclose(result.lam, answer, rtol=1e-10, atol=1e-13, err_msg=name)


def test_run_writes_and_solve_reads_with_fclibs_error_per_iteration(tmp_path, capsys):
    path, out = tmp_path / "b.hdf5", tmp_path / "s.json"
    assert bench.main(["run", "--scene", "bowl", "--set", "n=30", "--set", "mu=0.5", "--steps",
                       "30", "--save-fclib", str(path), "--quiet"]) == 0
    assert bench.main(["solve", "--fclib", str(path), "--solver", "nsgs", "--iterations", "12",
                       "--start", "stored", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "fclib_error" in text and "nsgs:" in text
    solved = json.loads(out.read_text())
    problem, extras = read_fclib(path)
    assert len(solved["fclib_error"]) == len(solved["trace"]) == 13
    assert solved["fclib_error"][0] == pytest.approx(problem.fclib_error(extras["lam"]), rel=1e-12)
    assert solved["fclib_error"][-1] == pytest.approx(
        problem.fclib_error(np.array(solved["lam"])), rel=1e-12)


def edit(path, key, value=None):
    with h5py.File(path, "a") as f:
        del f[key]
        if value is not None:
            f.create_dataset(key, data=value)


BAD = [
    (lambda p: edit(p, "fclib_local/spacedim", np.array([2], np.int32)), "2D problem"),
    (lambda p: edit(p, "fclib_local/vectors/q", np.array([1.0, np.nan, 0, 0, 0, 0])),
     "must be finite"),
    (lambda p: edit(p, "fclib_local/vectors/mu", np.array([0.5, -1.0])), "mu must be >= 0"),
    (lambda p: edit(p, "fclib_local/vectors/mu", np.array([0.5])), "shape (1,)"),
    (lambda p: edit(p, "fclib_local/W/p", np.array([0, 1, 2, 9, 4, 5, 6], np.int32)),
     "outside"),
    (lambda p: edit(p, "fclib_local/W/nz", np.array([-3], np.int32)), "nz = -3"),
    (lambda p: edit(p, "fclib_local/W/m", np.array([5], np.int32)), "W is 5 x 6"),
    (lambda p: edit(p, "fclib_local/W/nzmax", np.array([10**9], np.int32)), "nzmax"),
    (lambda p: edit(p, "fclib_local/W/x", np.array(["a"] * 6, dtype="S1")), "dtype"),
    (lambda p: edit(p, "fclib_local/W/x", -np.ones(6)), "diagonal must be >= 0"),
    (lambda p: edit(p, "fclib_local/vectors/q"), "missing fclib_local/vectors/q"),
    (lambda p: edit(p, "fclib_local/vectors/mu"), "missing fclib_local/vectors/mu"),
    (lambda p: edit(p, "fclib_local/vectors/mu", np.array([0.5, np.nan])),
     "vectors/mu must be finite, got nan at [1]"),
    (lambda p: edit(p, "fclib_local/vectors/q", np.array([1.0, np.inf, 0, 0, 0, 0])),
     "vectors/q must be finite, got inf at [1]"),
    (lambda p: edit(p, "fclib_local/vectors/mu", np.array([0.5, -0.25])),
     "vectors/mu must be >= 0, got -0.25 at [1]"),
    (lambda p: edit(p, "fclib_local/W/x", np.array([1.0, 3.5, -3.5, 2.0, 7.0, 7.0])),
     "W's diagonal must be >= 0 (a Delassus operator), got -3.5 at row 2"),
    (lambda p: h5py.File(p, "a").create_group("fclib_local/R").file.close(), "bilateral"),
]


@pytest.mark.parametrize("damage, message", BAD, ids=[m for _, m in BAD])
def test_malformed_files_are_refused_in_one_line(damage, message, tmp_path, capsys):
    path = tmp_path / "bad.hdf5"
    write_two_contacts(path, "csc")
    damage(path)
    with pytest.raises(SystemExit) as exit_:
        bench.main(["solve", "--fclib", str(path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "bad.hdf5" in err and "\n" not in err
    assert "np." not in err  # plain numbers, not numpy's reprs


def test_a_w_that_is_not_symmetric_is_refused_naming_the_largest_asymmetry(tmp_path, capsys):
    """W[0, 3] = 0.5 against W[3, 0] = 0.2 (and a smaller one elsewhere): refused, naming the
    largest; a difference at rounding level (1e-12 of max |W|) is read as it is."""
    W = np.diag([1.0, 3.5, 3.5, 2.0, 7.0, 7.0])
    W[0, 3], W[3, 0] = 0.5, 0.2
    W[1, 4], W[4, 1] = 0.1, 0.05
    q, mu = np.array([-1.0, 0.7, 0.0, -2.0, 0.0, -20.0]), np.full(2, 0.5)
    path = save_fclib(tmp_path / "skew.hdf5", MatrixProblem.from_dense(W, q, mu))
    with pytest.raises(SystemExit) as exit_:
        bench.main(["solve", "--fclib", str(path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "skew.hdf5" in err
    assert "W is not symmetric: W[0, 3] = 0.5 but W[3, 0] = 0.2 (difference 0.3 > 1e-08" in err
    W[0, 3], W[3, 0], W[1, 4], W[4, 1] = 0.5, 0.5 * (1 + 1e-12), 0.0, 0.0
    path = save_fclib(tmp_path / "round.hdf5", MatrixProblem.from_dense(W, q, mu))
    problem, _ = read_fclib(path)
    np.testing.assert_array_equal(problem.dense(), W)


def test_other_files_are_refused(tmp_path, capsys):
    text = tmp_path / "t.hdf5"
    text.write_text("hello")
    empty = tmp_path / "e.hdf5"
    empty.write_bytes(b"")
    global_ = tmp_path / "g.hdf5"
    with h5py.File(global_, "w") as f:
        f.create_group("fclib_global")
    for path, message in ((tmp_path / "absent.hdf5", "no such"), (text, "not an HDF5 file"),
                          (empty, "empty"), (tmp_path, "not a regular file"),
                          (global_, "global problem")):
        with pytest.raises(SystemExit) as exit_:
            bench.main(["solve", "--fclib", str(path)])
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err


def test_export_is_refused_without_friction_or_with_rolling_rows(tmp_path, capsys):
    for extra, message in ((["--set", "mu=0.3", "--set", "mu_roll=0.01"], "rolling rows"),
                           ([], "no friction")):
        with pytest.raises(SystemExit) as exit_:
            bench.main(["run", "--scene", "bowl", "--steps", "1", "--save-fclib",
                        str(tmp_path / "x.hdf5"), "--quiet", *extra])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
        assert not (tmp_path / "x.hdf5").exists()
