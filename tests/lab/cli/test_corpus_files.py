"""A corpus of malformed input files (tests/lab/bad_files.py: state snapshots for `run --state`
and `compare --state`, LCP snapshots for `solve --lcp`), each refused by `marbles-bench` with
exit code 2 and one line on stderr naming the file: no traceback, no output, nothing unpickled,
no output folder made. And the valid edge cases that must load."""
import json

import numpy as np
import pytest

from lab.cli import bench
from lab.io import snapshot
from tests.lab import bad_files
from tests.lab.bad_files import INF, Case, corpus, lcp_arrays, state_arrays, write_arrays
from tests.lab.helpers import run_cli

CORPUS = corpus()


def refusal(case: Case, folder, capsys) -> str | None:
    """None when `case` is refused as it must be, else what went wrong."""
    folder.mkdir(parents=True, exist_ok=True)
    path = case.build(folder)
    out = folder / "out"
    try:
        code = bench.main(case.argv(path, out))
    except SystemExit as stop:
        code = stop.code
    except Exception as err:  # noqa: BLE001 - the corpus reports every escape
        return f"raised {type(err).__name__}: {err}"
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    problems = [
        f"exit code {code}" if code != 2 else "",
        f"{len(lines)} lines on stderr: {captured.err!r}" if len(lines) != 1 else "",
        "the message does not name the file" if lines and str(path) not in lines[0] else "",
        "a traceback" if "Traceback" in captured.err else "",
        f"output {captured.out!r}" if captured.out else "",
        "an object array was unpickled" if (folder / "UNPICKLED").exists() else "",
        "the output folder was made" if out.exists() else "",
    ]
    return "; ".join(p for p in problems if p) or None


def test_the_corpus_is_large_and_named_uniquely():
    names = [case.name for case in CORPUS]
    assert len(names) == len(set(names)) and len(names) >= 250
    assert {case.kind for case in CORPUS} == {"state", "compare", "lcp"}


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_each_bad_file_is_refused_in_one_line(case, tmp_path, capsys):
    assert refusal(case, tmp_path, capsys) is None


def test_the_whole_corpus_is_refused(tmp_path, capsys):
    failures = {}
    for k, case in enumerate(CORPUS):
        problem = refusal(case, tmp_path / f"c{k}", capsys)
        if problem:
            failures[case.name] = problem
    refused = len(CORPUS) - len(failures)
    with capsys.disabled():
        print(f"\nbad input files: {refused} of {len(CORPUS)} refused cleanly "
              f"({sum(c.kind == 'state' for c in CORPUS)} state via run, "
              f"{sum(c.kind == 'compare' for c in CORPUS)} via compare, "
              f"{sum(c.kind == 'lcp' for c in CORPUS)} LCP via solve)")
    assert not failures, failures


@pytest.mark.parametrize("name", ["state: empty file", "state: CRC mismatch",
                                  "state: x declares 3e10 elements",
                                  "state: container nested 100000 deep", "state: dt 0",
                                  "lcp: mass nan", "compare: a folder"])
def test_a_real_process_prints_one_line_and_no_traceback(name, tmp_path):
    case = next(c for c in CORPUS if c.name == name)
    path = case.build(tmp_path)
    code, out, err = run_cli(*case.argv(path, tmp_path / "out"))
    assert code == 2 and out == "" and err.count("\n") == 1 and str(path) in err
    assert "Traceback" not in err and err.startswith("marbles-bench: error: ")


@pytest.mark.parametrize("name, says", [
    ("lcp: q inf", "q must be finite, got inf at [3]"),
    ("lcp: q nan", "q must be finite, got nan at [3]"),
    ("friction lcp: missing mu", "mu missing: the member mu of a frictional snapshot is absent"),
    ("friction lcp: mu nan", "mu must be finite, got nan at [3]"),
    ("lcp: mass nan", "mass must be > 0 kg (inf for a fixed marble), got nan at [3]")])
def test_a_bad_value_is_named_with_its_array_and_index_in_plain_numbers(name, says, tmp_path):
    """A real process, so that a numpy warning printed on the way would show on stderr."""
    case = next(c for c in CORPUS if c.name == name)
    path = case.build(tmp_path)
    code, out, err = run_cli(*case.argv(path, tmp_path / "out"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert says in err and "np." not in err and "Warning" not in err


def test_the_corpus_checks_can_fail(tmp_path, capsys):
    """A valid file run through the same checks is reported, not counted as refused."""
    good = Case("state: valid", "state",
                lambda d: write_arrays(d / "ok.npz", state_arrays()))
    assert "exit code 0" in refusal(good, tmp_path, capsys)


# ------------------------------------------------------------------------ what must load

def _saved(tmp_path, name, arrays):
    return snapshot.read_state(write_arrays(tmp_path / name, arrays))


def test_a_fixed_marble_of_infinite_mass_loads(tmp_path):
    arrays = state_arrays()
    arrays["mass"][0] = INF
    snap = _saved(tmp_path, "fixed.npz", arrays)
    assert snap.world.inv_mass[0] == 0.0 and np.all(snap.world.inv_mass[1:] > 0)
    lcp = lcp_arrays()
    lcp["mass"][0], lcp["inv_mass"][0] = INF, 0.0
    problem, _ = snapshot.load_lcp(write_arrays(tmp_path / "lcp.npz", lcp))
    assert problem.inv_mass[0] == 0.0


def test_a_file_without_the_optional_members_loads_cold_and_unnamed(tmp_path):
    arrays = state_arrays()
    for key in ("contact_key", "contact_impulse", "scene", "damping", "colour"):
        del arrays[key]
    snap = _saved(tmp_path, "old.npz", arrays)
    assert snap.contact_key.size == 0 and snap.contact_impulse.size == 0
    assert snap.scene is None and snap.world.damping == 0.0
    assert snap.origin("old.npz") == {"scene": "state", "state": "old.npz"}


def test_other_real_dtypes_and_layouts_load_as_the_same_world(tmp_path):
    arrays = state_arrays()
    base = _saved(tmp_path, "base.npz", arrays)
    arrays["x"] = np.asfortranarray(arrays["x"]).astype(">f8")  # big-endian, Fortran order
    arrays["radius"] = arrays["radius"].astype(np.float32).astype(np.float64)
    arrays["gravity"] = np.array([0, 0, -10], dtype=np.int16)
    arrays["contact_key"] = arrays["contact_key"].astype(np.uint32)
    snap = _saved(tmp_path, "other.npz", arrays)
    np.testing.assert_array_equal(snap.world.x, base.world.x)
    assert snap.world.gravity.tolist() == [0.0, 0.0, -10.0]
    np.testing.assert_array_equal(snap.contact_key, base.contact_key)
    assert snap.contact_key.dtype == np.int64


def test_lcp_members_that_are_never_used_are_never_read(tmp_path):
    arrays = lcp_arrays()
    # A W whose header declares 14000 x 14000 (1.5 GB) over 64 bytes, and an x that is text:
    # refused if read, so loading proves they are not.
    raw = {"W": bad_files.raw_npy("<f8", (14000, 14000), b"\0" * 64),
           "x": bad_files.npy_bytes(np.array("not positions"))}
    problem, extras = snapshot.load_lcp(write_arrays(tmp_path / "lcp.npz", arrays, raw))
    assert problem.m == 7 and extras["lam"] is not None


def test_the_snapshot_round_trip_keeps_everything(tmp_path):
    arrays = state_arrays()
    snap = _saved(tmp_path, "s.npz", arrays)
    again = snapshot.save_state(tmp_path / "again.npz", snap.world, snap.impulses, snap.scene)
    with np.load(again, allow_pickle=False) as z:
        assert set(z.files) == set(arrays)
        for key in arrays:
            if key in ("container", "scene"):
                assert json.loads(str(z[key])) == json.loads(str(arrays[key]))
            else:
                assert np.array_equal(z[key], arrays[key]) and z[key].dtype == arrays[key].dtype


def test_a_file_name_with_a_line_break_still_gives_one_line(tmp_path, capsys):
    path = tmp_path / "two\nlines.npz"
    path.write_bytes(b"")
    with pytest.raises(SystemExit) as stop:
        bench.main(["run", "--state", str(path), "--quiet"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "two lines.npz" in err
