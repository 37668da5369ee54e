"""lab.files: output paths refused before any work starts (one line naming the path, exit code
2 from `marbles-bench`, nothing left behind), and files written atomically (an interrupted or
failing write leaves no partial file)."""
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from lab import files
from lab.files import OutputError
from tests.lab.helpers import run_cli


# ------------------------------------------------------------- through the command line

def test_unwritable_output_fails_before_the_run_and_leaves_nothing(tmp_path):
    good = tmp_path / "r.json"
    code, _, err = run_cli("run", "--steps", "1000000", "--json", str(good),
                           "--save-lcp", str(tmp_path / "missing" / "l.npz"))
    assert code == 2 and "missing" in err
    assert list(tmp_path.iterdir()) == []


def test_compare_unwritable_out_fails_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    # A huge settle would take minutes: failing at once shows the check comes first.
    for out in (blocker, blocker / "sub"):
        code, _, err = run_cli("compare", "--scene", "bowl", "--settle", "9000000", "--out",
                               str(out))
        assert code == 2 and err.count("\n") == 1 and str(blocker) in err
    (tmp_path / "d" / "benchmark.png").mkdir(parents=True)
    code, _, err = run_cli("compare", "--settle", "9000000", "--out", str(tmp_path / "d"))
    assert code == 2 and "benchmark.png" in err and "is a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "file"]
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["benchmark.png"]


def test_an_interrupted_compare_leaves_no_file(tmp_path):
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "lab.bench", "compare", "--scene", "bowl",
                             "--settle", "1000000", "--out", str(out)],
                            stderr=subprocess.PIPE, text=True)
    # Interrupt only once the settle loop reports progress: a signal that lands while Numba is
    # still compiling tests Numba, not us.
    first = proc.stderr.readline()
    assert "bowl" in first or "settl" in first.lower(), first
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    assert list(out.iterdir()) == []


# ------------------------------------------------------------------------------ direct calls

def test_check_writable_names_the_path_that_cannot_be_written(tmp_path):
    assert files.check_writable(tmp_path / "new.json") == tmp_path / "new.json"
    cases = [(tmp_path, "is a directory"),
             (tmp_path / "missing" / "x.json", "does not exist")]
    for path, fragment in cases:
        with pytest.raises(OutputError, match=fragment) as err:
            files.check_writable(path)
        assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []  # checking creates nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_writable_refuses_a_read_only_folder(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="not writable"):
            files.check_writable(locked / "x.json")
    finally:
        locked.chmod(0o700)


def test_prepare_out_dir_creates_nested_folders_and_checks_each_file(tmp_path):
    out = files.prepare_out_dir(tmp_path / "a" / "b", ("x.json", "y.npy"))
    assert out == tmp_path / "a" / "b" and out.is_dir() and list(out.iterdir()) == []
    (out / "y.npy").mkdir()
    with pytest.raises(OutputError, match="y.npy.*is a directory"):
        files.prepare_out_dir(out, ("x.json", "y.npy"))
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="is not a directory"):
        files.prepare_out_dir(tmp_path / "f", ())
    with pytest.raises(OutputError, match="cannot be created"):
        files.prepare_out_dir(tmp_path / "f" / "sub", ())


def test_atomic_write_replaces_whole_files_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"old")
    files.atomic_write(path, lambda f: f.write(b"new contents"))
    assert path.read_bytes() == b"new contents"

    def broken(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        files.atomic_write(path, broken)
    assert path.read_bytes() == b"new contents"  # the old file survives a failed write
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]


def test_interrupted_write_leaves_the_previous_file(tmp_path):
    path = tmp_path / "r.json"
    files.write_json(path, {"a": 1})

    def interrupted(f):
        f.write(b"{")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        files.atomic_write(path, interrupted)
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_json_has_null_for_inf_and_nan_and_plain_numbers_for_numpy(tmp_path):
    data = {"r": [1.5, np.inf, -np.inf, np.nan], "k": np.int64(3), "ok": np.bool_(True),
            "x": np.float64(0.25), "t": (np.float32(2.0),), "nested": {"d": float("nan")}}
    assert files.json_safe(data) == {"r": [1.5, None, None, None], "k": 3, "ok": True,
                                     "x": 0.25, "t": [2.0], "nested": {"d": None}}
    files.write_json(tmp_path / "d.json", data)
    text = (tmp_path / "d.json").read_text()
    assert "NaN" not in text and "Infinity" not in text and text.endswith("\n")
    assert json.loads(text)["r"] == [1.5, None, None, None]


def test_write_npz_round_trips_without_pickle(tmp_path):
    path = files.write_npz(tmp_path / "a.npz", x=np.arange(3.0), name=np.array("tube"))
    with np.load(path, allow_pickle=False) as z:
        np.testing.assert_array_equal(z["x"], [0.0, 1.0, 2.0])
        assert str(z["name"]) == "tube"
    assert [p.name for p in tmp_path.iterdir()] == ["a.npz"]
