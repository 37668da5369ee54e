"""A corpus of bad input for `marbles-bench`, run in-process: output paths that cannot be written,
parameter values out of range or not numbers, unknown names and bad flags. Every one must be
refused before any work (the functions that would start the work fail the test if called) with
SystemExit 2, exactly one line on stderr naming the bad value, no traceback, and nothing written:
no output file, no folder, no temporary file. Also: every integer parameter the program declares
has an upper bound it keeps, and a full disk during the final write is one line too."""
from __future__ import annotations

import errno
import importlib
import math
import os
import pkgutil
from pathlib import Path
from unittest import mock

import pytest

import scenes
from lab.cli import bench, solve
from lab.io.files import TEMP_PATTERN
from lab.session import compiling, spec
from solver.methods import registry
from solver.methods.driver import COMMON_PARAMS
from solver.params import INT_LIMIT, Param, ParamError
from solver.step import Simulation


# ------------------------------------------------------------------- every declared Param

def _params_in(value) -> list[Param]:
    if isinstance(value, Param):
        return [value]
    if isinstance(value, (tuple, list)):
        return [p for item in value for p in _params_in(item)]
    return []


def declared_params() -> list[Param]:
    """Every Param the program declares: module attributes (alone or in tuples) of solver,
    scenes, lab and app.main, and the parameters of every scene and solver."""
    import app.main
    import lab
    import solver

    found = _params_in([vars(app.main)[name] for name in vars(app.main)])
    for package in (solver, scenes, lab):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            found += _params_in(list(vars(module).values()))
    for scene in scenes.SCENES.values():
        found += list(scene.params)
    for method in registry.METHODS.values():
        found += list(method.all_params)
    unique = {(p.name, p.kind, p.lo, p.hi, p.default): p for p in found}
    return sorted(unique.values(), key=lambda p: (p.name, str(p.hi)))


INT_PARAMS = [p for p in declared_params() if p.kind is int]
FLOAT_PARAMS = [p for p in declared_params() if p.kind is float]


def test_the_scan_finds_the_parameters_of_every_layer():
    names = {p.name for p in INT_PARAMS}
    assert {"iterations", "steps", "settle", "repeats", "frames", "n", "seed", "k_gs", "k_sm",
            "cg_max", "dense_max", "exit-steps", "exit-iterations"} <= names


@pytest.mark.parametrize("param", INT_PARAMS, ids=lambda p: f"{p.name}<={p.hi}")
def test_every_integer_parameter_has_an_upper_bound_it_keeps(param):
    assert param.hi is not None and param.hi <= INT_LIMIT, f"{param.name} has no upper bound"
    hi = int(param.hi)
    assert param.parse(str(hi)) == hi and param.parse(f"{float(hi):e}") == hi
    for bad in (str(hi + 1), "1e308", "-1e308", "1e15" if hi < 1e15 else "1e300",
                "9" * 400, "nan", "inf", "1.5", "x", "0x10"):
        with pytest.raises(ParamError) as err:
            param.parse(bad)
        assert str(err.value).startswith(f"{param.name}={bad} is not valid")
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("param", FLOAT_PARAMS, ids=lambda p: p.name)
def test_float_parameters_take_or_refuse_huge_values_without_overflow(param):
    for text in ("1e308", "-1e308", "1e999", "nan", "inf", "-inf", "words"):
        try:
            value = param.parse(text)
        except ParamError as err:
            assert "\n" not in str(err)
        else:
            assert math.isfinite(value) and text in ("1e308", "-1e308")


# ----------------------------------------------------------------- the command-line corpus

@pytest.fixture
def no_work(monkeypatch):
    """Any function that starts the work fails the test: refusals must come first."""
    def started(*args, **kwargs):
        raise AssertionError("the work started before the input was refused")

    for module, names in ((bench, ("warmup_for", "run_steps", "compare_scene")),
                          (solve, ("warmup", "load_lcp"))):
        for name in names:
            monkeypatch.setattr(module, name, started)
    monkeypatch.setattr(spec, "Simulation", started)  # RunSpec.simulation builds them


@pytest.fixture
def corpus_dir(tmp_path):
    """A folder with the obstacles the bad paths use: a regular file, a FIFO, a link loop."""
    (tmp_path / "plain").write_text("x")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    return tmp_path


def _snapshot(folder: Path) -> list:
    return sorted((str(p.relative_to(folder)), p.is_dir()) for p in folder.rglob("*"))


def refuse(capsys, folder: Path, argv: list[str], named: str) -> str:
    """Run marbles-bench ARGV and check the refusal: exit 2, one line on stderr containing
    `named`, nothing on stdout, nothing written, and before any work: a step or a kernel's
    warm-up would raise here (the runs asked for would take hours). Returns the line."""
    before = _snapshot(folder)
    started = []

    def work(*args, **kwargs):
        started.append(True)
        raise AssertionError("work started before the refusal")

    with mock.patch.object(Simulation, "step", work), mock.patch.object(bench, "warmup_for", work), \
            mock.patch.object(solve, "warmup", work), \
            mock.patch.object(compiling, "warmup", work):
        with pytest.raises(SystemExit) as stop:
            bench.main(argv)
    out, err = capsys.readouterr()
    assert stop.value.code == 2, err
    assert err.count("\n") == 1 and err.startswith("marbles-bench: error: "), err
    assert named in err and "Traceback" not in err and out == "", err
    assert _snapshot(folder) == before, "something was written"
    assert not [p for p in folder.rglob("*") if TEMP_PATTERN.match(p.name)]
    assert not started
    return err


BAD_FILES = ["/proc/x.json", "/sys/x.npz", "/proc/self/x.json", "/dev/null", "", "{dir}",
             "{dir}/missing/x.json", "{dir}/plain/x.json", "{dir}/" + "n" * 300 + ".json",
             "{dir}/fifo", "{dir}/loop", "{dir}/missing/" + "m" * 300 + "/x.json"]
BAD_FOLDERS = ["/proc/newdir", "/sys/x", "/proc/self", "{dir}/plain", "{dir}/plain/sub",
               "{dir}/" + "d" * 300, "{dir}/new/" + "d" * 300, "{dir}/fifo", "{dir}/loop"]
FILE_OPTIONS = [("run", "--json"), ("run", "--save-state"), ("run", "--save-lcp"),
                ("solve", "--json")]


def _long_run(command: str) -> list[str]:
    if command == "run":
        return ["run", "--scene", "column", "--steps", "1000000000", "--quiet"]
    return ["solve", "--lcp", "/nonexistent/l.npz", "--iterations", "10000000"]


@pytest.mark.parametrize("template", BAD_FILES)
@pytest.mark.parametrize("command, option", FILE_OPTIONS)
def test_bad_output_files_are_refused_before_work(command, option, template, corpus_dir,
                                                  capsys, no_work):
    path = template.format(dir=corpus_dir)
    refuse(capsys, corpus_dir, _long_run(command) + [option, path], repr(path))
    assert not os.path.exists("/proc/x.json") and not os.path.exists("/sys/x.npz")


@pytest.mark.parametrize("template", BAD_FOLDERS)
def test_bad_output_folders_are_refused_before_work(template, corpus_dir, capsys, no_work):
    path = template.format(dir=corpus_dir)
    refuse(capsys, corpus_dir, ["compare", "--scene", "bowl", "--settle", "9000000", "--quiet",
                                "--out", path], path if len(path) < 200 else path[:100])


def test_a_read_only_folder_is_refused_for_those_it_stops(tmp_path, capsys, no_work):
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder; /proc and /sys cover root above")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        refuse(capsys, tmp_path, _long_run("run") + ["--json", str(locked / "x.json")], "locked")
    finally:
        locked.chmod(0o700)


def _bad_values(param: Param) -> list[str]:
    values = ["nan", "inf", "-inf", "words", "1e999"]
    if param.kind is int:
        values += ["1e308", "1e15", "2.5"] + ([] if param.hi is None else [str(int(param.hi) + 1)])
    if param.lo is not None and param.lo >= 0:
        values.append("-1")
    if param.hi is not None and param.kind is float:
        values.append(repr(float(param.hi) * 2 + 1))
    return values


def _set_cases() -> list[tuple[str, str, str, str]]:
    """(scene, solver, name, value) for every numeric scene and solver parameter."""
    cases = []
    for scene in scenes.SCENES.values():
        for p in scene.params:
            if p.kind in (int, float):
                cases += [(scene.name, "pgs", p.name, v) for v in _bad_values(p)]
    for method in registry.METHODS.values():
        for p in method.params:
            if p.kind in (int, float):
                cases += [("column", method.name, p.name, v) for v in _bad_values(p)]
    for p in COMMON_PARAMS:
        cases += [("column", "pgs", p.name, v) for v in _bad_values(p)]
    return cases


@pytest.mark.parametrize("scene, solver, name, value", _set_cases(),
                         ids=lambda v: str(v)[:12])
def test_bad_set_values_are_refused_before_work(scene, solver, name, value, tmp_path, capsys,
                                                no_work):
    argv = ["run", "--scene", scene, "--solver", solver, "--steps", "1000000000", "--quiet",
            "--json", str(tmp_path / "r.json"), "--set", f"{name}={value}"]
    refuse(capsys, tmp_path, argv, f"{name}={value}")


@pytest.mark.parametrize("argv, named", [
    (["run", "--set", "n="], "'n='"),
    (["run", "--set", "=5"], "'=5'"),
    (["run", "--set", "n"], "'n'"),
    (["run", "--set", "bogus=1"], "'bogus'"),
    (["run", "--set", "omega=1.2"], "'omega'"),  # pgs has no omega
    (["run", "--scene", "nope"], "'nope'"),
    (["run", "--solver", "nope"], "'nope'"),
    (["run", "--steps", "1e308"], "steps=1e308"),
    (["run", "--steps", "1e10"], "steps=1e10"),
    (["run", "--steps", "0"], "steps=0"),
    (["run", "--iterations", "1e308"], "iterations=1e308"),
    (["run", "--iterations", "1e15"], "iterations=1e15"),
    (["run", "--dt", "inf"], "dt=inf"),
    (["run", "--dt", "1e308"], "dt=1e308"),
    (["run", "--dt", "-0.01"], "dt=-0.01"),
    (["run", "--bogus"], "--bogus"),
    (["run", "--steps"], "--steps"),
    (["compare", "--settle", "1e308"], "settle=1e308"),
    (["compare", "--iterations", "1e15"], "iterations=1e15"),
    (["compare", "--repeats", "1e15"], "repeats=1e15"),
    (["compare", "--settle-iterations", "nan"], "iterations=nan"),
    (["compare", "--solvers", ",,"], "',,'"),
    (["compare", "--set", "pgs.nope=1"], "'nope'"),
    (["compare", "--solvers", "pgs-sm", "--set", "pgs-sm.k_gs=1e308"], "k_gs=1e308"),
    (["solve", "--iterations", "1e308", "--lcp", "x.npz"], "iterations=1e308"),
    (["solve", "--set", "k_gs=1e15", "--solver", "pgs-sm", "--lcp", "x.npz"], "k_gs=1e15"),
    (["report", "--exit-steps", "1e308"], "exit-steps=1e308"),
    (["report", "--exit-iterations", "1e15"], "exit-iterations=1e15"),
    (["nope"], "'nope'"),
])
def test_bad_flags_and_names_are_refused_before_work(argv, named, tmp_path, capsys, no_work,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)  # report and compare default to folders in the current one
    refuse(capsys, tmp_path, argv + (["--quiet"] if argv[0] in ("run", "compare") else []),
           named)


# ------------------------------------------------------------------------- a full disk

def test_a_full_disk_during_compare_is_one_line_and_leaves_no_temporary(tmp_path, capsys,
                                                                        monkeypatch):
    real_fsync = os.fsync

    def full(fd):
        if TEMP_PATTERN.match(Path(os.readlink(f"/proc/self/fd/{fd}")).name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    out = tmp_path / "bench"
    with pytest.raises(SystemExit) as stop:
        bench.main(["compare", "--scene", "column", "--settle", "2", "--iterations", "3",
                    "--solvers", "pgs", "--repeats", "1", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert str(out) in err and "No space left on device" in err
    assert list(tmp_path.iterdir()) == []  # no folder, no set, no temporary left beside it
