"""lab.cli.campaign (`marbles-bench collect`, `campaign`, and `report --campaign`): a collection
and a campaign from the command line, bad values refused in one line with exit code 2 before
anything is written, and Ctrl-C leaving a table that reads."""
from __future__ import annotations

import pytest

from lab.campaign.table import read_rows
from lab.cli import bench
from lab.cli import campaign as cc


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "collection"
    assert bench.main(["collect", str(out), "--scenes", "heap,pyramid", "--sizes", "3,2",
                       "--seeds", "1", "--steps", "5,10", "--quiet"]) == 0
    return out


def refused(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exit_:
        bench.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_collect_writes_a_problem_per_run_and_step(collection, capsys):
    # heap n=3 and pyramid layers=2 (heap's size 2 and pyramid's 3 too): 4 runs × 2 steps
    assert len(list(collection.glob("*.hdf5"))) == 8
    assert (collection / "pyramid-layers2-mu0.5-step5.hdf5").is_file()


def test_a_campaign_and_its_report(collection, tmp_path, capsys):
    out = tmp_path / "run"
    assert bench.main(["campaign", str(collection), "--out", str(out), "--solvers", "pgs,nsgs",
                       "--budget", "5", "--cap", "20", "--scheduler", "sync", "--quiet"]) == 0
    assert "campaign: 16 tasks, 0 already in the table, 16 run (0 errors)" in \
        capsys.readouterr().out
    assert len(read_rows(out)) == 16
    assert bench.main(["campaign", str(collection), "--out", str(out), "--solvers", "pgs,nsgs",
                       "--budget", "5", "--cap", "20", "--scheduler", "sync", "--quiet"]) == 0
    assert "16 already in the table, 0 run" in capsys.readouterr().out
    assert bench.main(["report", "--campaign", str(out)]) == 0
    assert "profiles of 2 runs on 8 problems" in capsys.readouterr().out
    assert "| `nsgs` | 8 |" in (out / "REPORT.md").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--budget", "0"], "budget=0 is not valid"),
    (["--scheduler", "dask"], "--scheduler dask: one of processes"),
    (["--solvers", "pgs,ppcg"], "solver ppcg solves frictionless contacts only"),
    (["--set", "omega=9"], "omega"),
    (["--workers", "-1"], "workers=-1 is not valid"),
])
def test_bad_campaign_options_are_refused_before_anything_is_written(collection, tmp_path,
                                                                     capsys, argv, message):
    out = tmp_path / "run"
    solvers = [] if argv[0] == "--solvers" else ["--solvers", "pgs,psor"]
    err = refused(capsys, ["campaign", str(collection), "--out", str(out), *solvers, *argv])
    assert message in err and not out.exists()


def test_a_missing_collection_is_refused(tmp_path, capsys):
    err = refused(capsys, ["campaign", str(tmp_path / "none"), "--out", str(tmp_path / "r")])
    assert "not a folder" in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("argv, message", [
    (["--mu", "0"], "mu=0 is not valid"),
    (["--scenes", "heap,nope"], "nope"),
    (["--set", "mu_roll=-0.1"], "mu_roll"),
    (["--steps", "1,,2"], "empty value"),
    (["--profiles", "--mu", "0.3"], "--profiles takes the profiles' own problems: --mu"),
])
def test_bad_collect_options_are_refused_before_anything_is_written(tmp_path, capsys, argv,
                                                                    message):
    err = refused(capsys, ["collect", str(tmp_path / "c"), *argv])
    assert message in err and not (tmp_path / "c").exists()


def test_ctrl_c_leaves_the_rows_written_whole(collection, tmp_path, capsys, monkeypatch):
    real = cc.run_campaign

    def interrupted_after_two(*args, **kw):
        def stop(row, client):
            if len(read_rows(tmp_path / "run")) == 2:
                raise KeyboardInterrupt
        return real(*args, **kw, on_row=stop)

    monkeypatch.setattr(cc, "run_campaign", interrupted_after_two)
    assert bench.main(["campaign", str(collection), "--out", str(tmp_path / "run"),
                       "--solvers", "pgs", "--cap", "5", "--scheduler", "sync",
                       "--quiet"]) == 130
    assert "holds the 2 tasks finished" in capsys.readouterr().err
    assert len(read_rows(tmp_path / "run")) == 2


def test_help_explains_the_commands(capsys):
    for command, words in (("collect", "same files"), ("campaign", "tcp://HOST:8786")):
        with pytest.raises(SystemExit):
            bench.main([command, "--help"])
        assert words in " ".join(capsys.readouterr().out.split())
