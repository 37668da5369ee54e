"""lab.io.files: output paths refused before any work starts (one line naming the path, exit code
2 from `marbles-bench`, nothing left behind), even as root; files written atomically with their
permission bits and symlinks kept; a full disk a one-line error; sets of files (the benchmark)
never mixed, whatever moment a kill hits; leftovers of killed writes cleaned up."""
import errno
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lab.io import files
from lab.io.files import OutputError
from tests.lab.helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if files.TEMP_PATTERN.match(p.name))


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def age(path: Path, seconds: float = 3600.0) -> None:
    old = os.stat(path).st_mtime - seconds
    os.utime(path, (old, old), follow_symlinks=False)


# ------------------------------------------------------------- through the command line

def test_unwritable_output_fails_before_the_run_and_leaves_nothing(tmp_path):
    good = tmp_path / "r.json"
    code, _, err = run_cli("run", "--steps", "1000000", "--json", str(good),
                           "--save-lcp", str(tmp_path / "missing" / "l.npz"))
    assert code == 2 and "missing" in err
    assert list(tmp_path.iterdir()) == []


def test_unwritable_system_folders_are_refused_before_work_even_as_root(tmp_path, run_main,
                                                                        monkeypatch):
    # os.access says yes to root everywhere; the real probe (create the temporary file the
    # write would use) does not. The run would take hours: the refusal must come first.
    def no_work(*args, **kwargs):
        raise AssertionError("the run started before the output was checked")

    monkeypatch.setattr("lab.cli.bench.run_steps", no_work)
    monkeypatch.setattr("lab.cli.bench.warmup_for", no_work)
    cases = ["/proc/x.json", "/sys/x.npz", "/proc/self/x.json"]
    if os.geteuid() != 0:  # a read-only folder stops only someone who is not root
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        cases.append(str(locked / "x.json"))
    for path in cases:
        code, out, err = run_main("run", "--scene", "column", "--steps", "1000000000",
                                  "--quiet", "--json", path)
        assert code == 2 and out == "" and err.count("\n") == 1, (path, err)
        assert path in err and ("cannot be written" in err or "not writable" in err), err
    assert not os.path.exists("/proc/x.json") and not os.path.exists("/sys/x.npz")


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
    # SIGINT as a terminal delivers it: a suite started as a background job of a
    # non-interactive shell inherits SIGINT ignored, and so would the child without this.
    proc = subprocess.Popen([sys.executable, "-m", "lab.cli.bench", "compare", "--scene", "bowl",
                             "--settle", "1000000", "--out", str(out)],
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Interrupt only once the settle loop reports progress: a signal that lands while Numba is
    # still compiling tests Numba, not us.
    first = proc.stderr.readline()
    assert "bowl" in first or "settl" in first.lower(), first
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, err[-2000:])
    assert not out.exists()  # a new folder is built under a temporary name, renamed whole
    assert list(tmp_path.iterdir()) == []


def _fill_the_disk(monkeypatch) -> None:
    """Every temporary file (files.TEMP_PATTERN) hits a full disk when it is synced."""
    real_fsync = os.fsync

    def full(fd):
        if files.TEMP_PATTERN.match(Path(os.readlink(f"/proc/self/fd/{fd}")).name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)


def test_a_full_disk_is_one_line_and_leaves_no_temporary(tmp_path, run_main, monkeypatch):
    _fill_the_disk(monkeypatch)
    report = tmp_path / "r.json"
    code, out, err = run_main("run", "--scene", "column", "--steps", "2", "--quiet", "--json",
                              str(report))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert str(report) in err and "No space left on device" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("out", ["new", "new/deeper"])
def test_a_compare_that_fills_the_disk_leaves_no_folder(tmp_path, run_main, monkeypatch, out):
    """The comparison runs, then its first file hits a full disk: one line, exit code 2, and
    neither the output folder (nor a folder above it that the compare created) nor the
    temporary folder it was being built in remains."""
    _fill_the_disk(monkeypatch)
    code, stdout, err = run_main("compare", "--scene", "column", "--settle", "2", "--iterations",
                                 "3", "--repeats", "1", "--solvers", "pgs,jacobi", "--quiet",
                                 "--out", str(tmp_path / out))
    assert code == 2 and stdout == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "No space left on device" in err and "benchmark" in err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ the checks

def test_check_writable_names_the_path_that_cannot_be_written(tmp_path):
    assert files.check_writable(tmp_path / "new.json") == tmp_path / "new.json"
    inside_a_file = tmp_path / "plain"
    inside_a_file.write_text("x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    cases = [(tmp_path, "is a directory"),
             (tmp_path / "missing" / "x.json", "does not exist"),
             (inside_a_file / "x.json", "is not a folder"),
             (tmp_path / ("n" * 300 + ".json"), "file name too long"),
             (fifo, "not a regular file"),
             (loop, "not a regular file"),
             ("/proc/x.json", "does not accept new files"),
             ("/sys/x.npz", "cannot be written"),
             ("/dev/null", "not a regular file"),  # root could rename over /dev/null
             ("", "empty")]
    for path, fragment in cases:
        with pytest.raises(OutputError, match=fragment) as err:
            files.check_writable(path)
        assert "\n" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "loop", "plain"]
    assert not os.path.exists("/proc/x.json") and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_name_that_fits_name_max_is_written_whatever_its_length(tmp_path):
    # The temporary name is short and fixed: a target of 250 characters (NAME_MAX is 255)
    # passes the check and is written.
    long = tmp_path / ("x" * 246 + ".json")
    files.check_writable(long)
    files.write_json(long, {"ok": True})
    assert json.loads(long.read_text()) == {"ok": True} and temps(tmp_path) == []
    assert all(len(files.temp_name()) < 30 for _ in range(20))


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


def test_a_refused_out_dir_leaves_no_folder_it_created(tmp_path):
    with pytest.raises(OutputError, match="too long"):
        files.prepare_out_dir(tmp_path / ("d" * 300), ())
    with pytest.raises(OutputError, match="too long"):
        files.prepare_out_dir(tmp_path / "new" / "deeper" / ("d" * 300), ("x.json",))
    with pytest.raises(OutputError, match="too long"):
        files.prepare_out_dir(tmp_path / "new" / "deeper", ("n" * 300,))
    with pytest.raises(OutputError, match="does not accept new files"):
        files.prepare_out_dir("/proc/marbles-out", ())
    assert list(tmp_path.iterdir()) == [] and not os.path.exists("/proc/marbles-out")


def test_check_folder_refuses_a_folder_that_could_not_be_written_later(tmp_path):
    assert files.check_folder(tmp_path) == tmp_path
    assert files.check_folder(tmp_path / "later") == tmp_path / "later"  # made when written
    (tmp_path / "plain").write_text("x")
    cases = [(tmp_path / "plain", "is not a folder"),
             (tmp_path / "a" / "b", "does not exist"),
             (tmp_path / ("d" * 300), "too long"),
             ("/proc/new", "does not accept new files"),
             ("/sys/new", "cannot be written")]
    for path, fragment in cases:
        with pytest.raises(OutputError, match=fragment) as err:
            files.check_folder(path, "--benchmark-out")
        assert str(err.value).startswith(f"--benchmark-out {str(path)!r}")
    assert [p.name for p in tmp_path.iterdir()] == ["plain"]


# ------------------------------------------------------------------------------ the writes

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


def test_an_os_error_while_writing_is_one_line_naming_the_path(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    for code in (errno.ENOSPC, errno.EIO, errno.EDQUOT):
        def failing(f, code=code):
            f.write(b"{")
            raise OSError(code, os.strerror(code))

        with pytest.raises(OutputError) as err:
            files.atomic_write(path, failing)
        message = str(err.value)
        assert "\n" not in message and str(path) in message and os.strerror(code) in message
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


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


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path):
    kept = tmp_path / "secret.json"
    kept.write_text("{}")
    kept.chmod(0o600)
    files.write_json(kept, {"a": 1})
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and json.loads(kept.read_text()) == {"a": 1}
    kept.chmod(0o640)
    files.write_npz(kept, x=np.zeros(2))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    old = os.umask(0o027)
    try:
        files.write_json(tmp_path / "new.json", {})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640  # 0666 & ~027
    files.write_json(tmp_path / "usual.json", {})
    assert stat.S_IMODE((tmp_path / "usual.json").stat().st_mode) == 0o666 & ~old
    if os.geteuid() == 0:  # root replacing someone else's file leaves it theirs
        os.chown(kept, 12345, 23456)
        files.write_json(kept, {"b": 2})
        st = kept.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "elsewhere" / "data.json"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    files.check_writable(link)
    files.write_json(link, {"new": 1})
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text()) == {"new": 1}
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "elsewhere" / "created.json")
    files.write_json(dangling, {"made": 1})  # like open(): the link's target is created
    assert dangling.is_symlink() and json.loads(dangling.read_text()) == {"made": 1}
    assert temps(tmp_path) == [] and temps(real.parent) == []


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


# ------------------------------------------------------------------------- leftovers

def test_leftovers_of_dead_writers_are_removed_and_nothing_else(tmp_path):
    dead = dead_pid()
    stale_file = tmp_path / f".mb-{dead}-abc123.tmp"
    stale_dir = tmp_path / f".mb-{dead}-def456.tmp"
    stale_file.write_bytes(b"half")
    stale_dir.mkdir()
    (stale_dir / "benchmark.npy").write_bytes(b"half")
    keep = {
        f".mb-{dead}-0a0a0a.tmp": "fresh",  # dead writer, but touched just now
        f".mb-{os.getpid()}-111111.tmp": "ours, alive",
        f".mb-{dead}-nothex.tmp": "not our pattern",
        ".mb-1.tmp": "not our pattern",
        f"mb-{dead}-222222.tmp": "not our pattern",
        "results.json": "a user's file"}
    for name in keep:
        (tmp_path / name).write_text("x")
    odd_dir = tmp_path / f".mb-{dead}-333333.tmp"  # ours by name, but holds a folder: kept
    (odd_dir / "sub").mkdir(parents=True)
    for path in (stale_file, stale_dir / "benchmark.npy", stale_dir, odd_dir / "sub", odd_dir,
                 *(tmp_path / name for name in keep if name != f".mb-{dead}-0a0a0a.tmp")):
        age(path)
    files.write_json(tmp_path / "out.json", {})
    left = {p.name for p in tmp_path.iterdir()}
    assert left == set(keep) | {"out.json", odd_dir.name}


# ------------------------------------------------------------------------------ sets

PARTS = ("set.npy", "set.png", "set.json")


def write_set(folder, generation: str):
    return files.write_group(folder, [(name, lambda f, n=name: f.write(f"{generation} {n}"
                                                                       .encode()))
                                      for name in PARTS])


def set_state(folder: Path) -> str:
    """'old' or 'new' for a complete set of one generation, 'incomplete' without its index;
    a mixed set fails the test."""
    if not (folder / "set.json").exists():
        return "incomplete"
    gens = {(folder / name).read_text().split()[0] for name in PARTS}
    assert len(gens) == 1, f"a mixed set: {gens}"
    return gens.pop()


KILLER = textwrap.dedent("""
    import os, sys
    from lab.io import files
    folder, die_at = sys.argv[1], int(sys.argv[2])
    calls = [0]
    def checkpoint(real):
        def call(*args, **kwargs):
            if calls[0] == die_at:
                os._exit(9)  # a kill: no cleanup runs
            calls[0] += 1
            return real(*args, **kwargs)
        return call
    files.os.replace = checkpoint(os.replace)
    files.os.rename = checkpoint(os.rename)
    files.os.unlink = checkpoint(os.unlink)
    files.write_group(folder, [(n, lambda f, n=n: f.write(("new " + n).encode()))
                               for n in ("set.npy", "set.png", "set.json")])
""")


def kill_at(folder: Path, die_at: int) -> int:
    proc = subprocess.run([sys.executable, "-c", KILLER, str(folder), str(die_at)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 9), proc.stderr
    return proc.returncode


def test_a_kill_between_the_renames_never_leaves_a_mixed_set(tmp_path):
    # Into an existing set: remove the old index, rename three files in. A kill before each of
    # these four steps, and none.
    seen = []
    for die_at in range(5):
        folder = tmp_path / f"k{die_at}"
        write_set(folder, "old")
        code = kill_at(folder, die_at)
        seen.append(set_state(folder))
        assert (code == 9) == (die_at < 4)
        # The next write removes the dead writer's leftovers (once they are old enough).
        for name in temps(folder):
            age(folder / name)
        write_set(folder, "again")
        assert set_state(folder) == "again" and temps(folder) == []
    assert seen == ["old", "incomplete", "incomplete", "incomplete", "new"]


def test_a_new_folder_appears_whole_or_not_at_all(tmp_path):
    for die_at in range(5):
        folder = tmp_path / f"k{die_at}" / "out"
        code = kill_at(folder, die_at)
        if code == 9:
            assert not folder.exists()  # built under a temporary name: nothing to see
        else:
            assert set_state(folder) == "new"
        for name in temps(folder.parent):
            for inner in (folder.parent / name).iterdir():
                age(inner)
            age(folder.parent / name)
        write_set(folder, "again")
        assert set_state(folder) == "again" and temps(folder.parent) == []
        assert sorted(p.name for p in folder.parent.iterdir()) == ["out"]


def test_a_failed_rename_in_process_cleans_up_and_leaves_no_index(tmp_path, monkeypatch):
    write_set(tmp_path, "old")
    real, calls = os.replace, []

    def fail_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", fail_second)
    with pytest.raises(OutputError, match="Input/output error") as err:
        write_set(tmp_path, "new")
    assert "\n" not in str(err.value)
    assert set_state(tmp_path) == "incomplete" and temps(tmp_path) == []


def test_a_set_keeps_symlinks_and_modes_of_its_files(tmp_path):
    write_set(tmp_path / "out", "old")
    (tmp_path / "out" / "set.json").chmod(0o600)
    real = tmp_path / "kept.png"
    real.write_text("old set.png")
    (tmp_path / "out" / "set.png").unlink()
    (tmp_path / "out" / "set.png").symlink_to(real)
    write_set(tmp_path / "out", "new")
    assert set_state(tmp_path / "out") == "new" and real.read_text() == "new set.png"
    assert (tmp_path / "out" / "set.png").is_symlink()
    assert stat.S_IMODE((tmp_path / "out" / "set.json").stat().st_mode) == 0o600
