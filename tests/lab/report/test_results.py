"""lab.report.results (`marbles-bench report`): the results section is produced from measurements,
RESULTS.md and results.json carry the measured numbers and the verdicts, bad options are refused
in one line before any work."""
import json

import numpy as np
import pytest

from lab.cli import bench
from lab.report import friction_verdicts
from lab.report import results as report
from lab.report import verdicts
from tests.lab.helpers import curve, exit_stats, run_cli, snapshot


def test_report_on_a_tiny_configuration(tmp_path, fake_prox, capsys):
    out = tmp_path / "res"
    chosen = ["naive", "pgs", "psor", "jacobi", "prox-gs", "prox-jacobi"]
    assert bench.main(["report", "--out", str(out), "--scenes", "column,mass-ratio",
                       "--iterations", "30", "--exit-scene", "disk", "--exit-steps", "4",
                       "--exit-iterations", "15", "--repeats", "1", "--part", "frictionless",
                       "--solvers", ",".join(chosen)]) == 0
    err = capsys.readouterr().err
    assert "[1/4] column" in err and "[3/4] snapshots" in err  # progress on stderr
    assert "[4/4] exit statuses" in err
    text = (out / "RESULTS.md").read_text()
    for fragment in ("### column", "### mass-ratio", "| solver | status | residual after 20 it",
                     "it to 1e-06", "ms to 1e-10", "![column", "(column/benchmark.png)",
                     "### Claims of the sources", "exit-status.png", "`prox-jacobi` | Jacobi"):
        assert fragment in text, fragment
    for scene in ("column", "mass-ratio"):
        data = np.load(out / scene / "benchmark.npy", allow_pickle=False)
        assert list(data["solver"]) == chosen
        assert (out / scene / "benchmark.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "exit-status.png").read_bytes()[:4] == b"\x89PNG"
    results = json.loads((out / "results.json").read_text())
    counts = results["exit_statuses"]["counts"]
    assert len(counts) == 12 and all(sum(c.values()) == 4 for c in counts.values())
    # Table cells are the measured numbers: psor's residual after 20 iterations on the column.
    data = np.load(out / "column" / "benchmark.npy", allow_pickle=False)
    row = list(data["solver"]).index("psor")
    assert f"| `psor` | max_iterations | {data['residual'][row, 20]:.2e} |" in text
    # The verdicts the data allow are given; the ones needing absent solvers or scenes say so.
    given = {v["claim"]: v["verdict"] for v in results["verdicts"]}
    assert given[verdicts.claim_bowl_floor({}).claim] == verdicts.UNCHECKED
    # The series: the column's steps with the chosen solvers' runs, in results.json.
    column = results["series"]["column"]
    assert [s["step"] for s in column] == list(report.SERIES_STEPS["column"])
    assert set(column[0]["after_20"]) == {"naive", "pgs", "psor", "jacobi"}
    assert "### Snapshots" in text
    gs = next(v for v in results["verdicts"] if v["claim"].startswith("Gauss-Seidel"))
    assert gs["verdict"] in (verdicts.REPRODUCED, verdicts.NOT_REPRODUCED)


def test_report_without_proximal_solvers_skips_the_chart_with_a_note(tmp_path):
    out = tmp_path / "res"
    (out).mkdir()
    (out / "exit-status.png").write_bytes(b"stale")
    assert bench.main(["report", "--out", str(out), "--scenes", "column", "--iterations", "5",
                       "--solvers", "pgs,psor", "--repeats", "1", "--quiet",
                       "--series", "none"]) == 0
    text = (out / "RESULTS.md").read_text()
    assert "Not measured (`--series none`" in text
    assert "Skipped: no proximal solver" in text and "![exit statuses]" not in text
    assert not (out / "exit-status.png").exists()  # a stale chart is not left to mislead


@pytest.mark.parametrize("args, fragment", [
    (["--scenes", "bowl,nope"], "unknown scene 'nope'"),
    (["--scenes", "bowl,,disk"], "empty name"),
    (["--solvers", "pgs,zzz"], "unknown solver 'zzz'"),
    (["--iterations", "0"], "iterations=0"),
    (["--settle", "-2"], "settle=-2"),
    (["--exit-steps", "0"], "exit-steps=0"),
    (["--exit-scene", "nope"], "unknown scene 'nope'"),
    (["--series", "some"], "--series"),
    (["--part", "half"], "--part"),
    (["--friction-scenes", "friction-bowl,nope"], "unknown frictional scene 'nope'"),
    (["--friction-scenes", "friction-box,friction-box"], "lists a scene twice"),
])
def test_report_bad_input_is_one_line_and_exit_2(tmp_path, args, fragment):
    code, out, err = run_cli("report", "--out", str(tmp_path / "o"), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err
    assert not (tmp_path / "o").exists()


HEADER = {"command": "x", "date": "d", "machine": "m", "seconds": 1.0, "solvers": ["pgs", "pcg"]}


def test_failed_claims_reach_the_markdown():
    series = {"column": [snapshot("column", 1, {"pgs": curve(50, rate=0.9),
                                                "pcg": curve(50, rate=0.9, solved_at=12)})]}
    found = verdicts.verdicts(series, None)
    text = report.markdown({}, {}, None, found, HEADER, "no prox", series)
    line = next(ln for ln in text.splitlines() if ln.startswith("| PCG solves the 7-marble"))
    assert "**not reproduced**" in line and "after 12 iterations" in line
    assert "no prox" in text
    assert "0 of 9 reproduced, 0 partly, 1 not, 8 could not be checked" in text
    assert "Not fully reproduced: PCG solves the 7-marble column in 7 iterations." in text


def test_the_snapshot_tables_show_every_snapshot_behind_a_partial_verdict():
    ahead = {"pgs": curve(50, rate=0.8), "pcg": curve(50, rate=0.9), "ppcg": curve(50, rate=0.9)}
    behind = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.8), "ppcg": curve(50, rate=0.8)}
    series = {"bowl": [snapshot("bowl", s, c) for s, c in ((150, ahead), (200, behind),
                                                           (250, ahead))],
              "disk": [snapshot("disk", 100, behind)]}
    found = verdicts.verdicts(series, None)
    text = report.markdown({}, {}, None, found, HEADER, None, series)
    pgs_first = next(v for v in found if v.claim.startswith("After 20"))
    assert pgs_first.verdict == verdicts.PARTLY
    assert f"| After 20 iterations PGS is ahead of CG (the article's bowl and disk) | " \
           f"**partly reproduced** |" in text
    assert f"| bowl | 200 | 7 | {0.9 ** 20:.2e} | {0.8 ** 20:.2e} | {0.8 ** 20:.2e} | no |" in text
    assert f"| bowl | 250 | 7 | {0.8 ** 20:.2e} | {0.9 ** 20:.2e} | {0.9 ** 20:.2e} | yes |" in text
    assert "| disk | 100 |" in text and "Not fully reproduced: After 20 iterations" in text
    assert "bowl: steps 150, 200, 250 (50 iterations per run)" in text


def test_without_a_series_the_snapshot_section_says_so():
    text = report.markdown({}, {}, None, verdicts.verdicts({}, None), HEADER, None, {})
    assert "### Snapshots" in text and "Not measured" in text


@pytest.mark.slow
def test_full_report_on_the_seed_scenes(tmp_path):
    """The documented command, as the lead runs it (minutes; `-m slow`)."""
    out = tmp_path / "results"
    code, text, err = run_cli("report", "--out", str(out))
    assert code == 0, err
    md = (out / "RESULTS.md").read_text()
    for scene in report.DEFAULT_SCENES:
        assert f"### {scene}" in md and (out / scene / "benchmark.png").exists()
    assert md.count("| **") >= len(verdicts.verdicts({}, None))


def test_the_relative_test_is_named_as_each_solver_has_it():
    """The exit-status paragraph of RESULTS.md says which relative test applied (split from the
    exit_tolerances test of tests/lab/report/test_exits.py, whose stats these are)."""
    stats = exit_stats({"prox-m r=local": {"absolute": 1}})
    stats.relative = {"prox-m r=local": "iterates"}
    assert "‖Δλ‖∞ ≤ 0.0001 ‖λ‖∞" in report._relative_text(stats)
    stats.relative = {"prox-m r=local": "merit"}
    assert "merit test" in report._relative_text(stats)
    stats.relative = {"prox-m r=local": "merit", "x": "iterates"}
    assert "where the solver has it" in report._relative_text(stats)


def test_the_recorded_command_names_only_the_options_that_differ():
    parse = bench.build_parser().parse_args
    args = parse(["report"])
    assert args.func is report.main
    assert report._command_line(args) == "marbles-bench report"
    args = parse(["report", "--out", "r2", "--scenes", "column", "--iterations", "5",
                  "--exit-scene", "none", "--repeats", "3", "--series", "none"])
    assert report._command_line(args) == ("marbles-bench report --out r2 --scenes column "
                                          "--iterations 5 --exit-scene none --series none")
    args = parse(["report", "--part", "friction", "--friction-scenes", "friction-box",
                  "--exit-steps", "300"])
    assert report._command_line(args) == ("marbles-bench report --exit-steps 300 --part "
                                          "friction --friction-scenes friction-box")


def test_help_gives_each_scene_its_budget(capsys):
    assert set(report.DEFAULT_SCENES) <= set(report.BUDGETS)
    with pytest.raises(SystemExit) as stop:
        bench.main(["report", "--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("per scene, bowl 5000, disk 2000, column 200, mass-ratio 3000" in text
            and "per scene, bowl 500, disk 300, column 1, mass-ratio 1" in text)
    assert "bowl: steps 150, 200, 250, 300, 350, 400, 450, 500, 550, 600" in text
    assert "friction-box: steps 200, 300, 400" in text and "--part {all,frictionless,friction}" \
        in text
    assert "(default 300 without friction, 100 with)" in text


def test_the_frictional_part_alone(tmp_path, capsys):
    """`--part friction` on the pyramid and a frictional column: the frictional claims, tables,
    files and exit statuses, and the frictionless part said not run."""
    out = tmp_path / "res"
    assert bench.main(["report", "--out", str(out), "--part", "friction", "--friction-scenes",
                       "friction-pyramid", "--iterations", "30", "--exit-scene", "column",
                       "--exit-steps", "3", "--exit-iterations", "10", "--repeats", "1",
                       "--solvers", "pgs,pcg,jacobi,prox-gs,prox-jacobi,apgd"]) == 0
    err = capsys.readouterr().err
    assert "[1/2] frictional snapshots: friction-pyramid x 3" in err
    assert "[2/2] exit statuses with friction: 3 steps of column (mu=0.5, mu_wall=0.5)" in err
    text = (out / "RESULTS.md").read_text()
    assert "### Claims of the sources\n\nNot run (`--part friction`)." in text
    for fragment in ("### Claims of the sources, with friction", "### Frictional snapshots",
                     "### friction-pyramid", "| `pgs friction=ccp` |", "it to 1e-08",
                     "### Exit statuses with friction", "(mu = 0.5, mu_wall = 0.5)",
                     "warm start 1", "![exit statuses](exit-status-friction.png)",
                     "### How the frictional verdicts are computed"):
        assert fragment in text, fragment
    assert "### bowl" not in text and "### Snapshots" not in text
    data = np.load(out / "friction-pyramid" / "benchmark.npy", allow_pickle=False)
    assert list(data["solver"]) == ["pgs", "pgs friction=ccp", "jacobi", "prox-gs",
                                    "prox-gs r=blocked", "prox-gs r=global", "prox-gs adapt=0",
                                    "prox-jacobi", "prox-jacobi r=blocked",
                                    "prox-jacobi r=global", "prox-jacobi adapt=0", "apgd"]
    assert data["residual"].shape == (12, 31)
    # The table's cell is the measured number: jacobi's Coulomb error after 20 iterations.
    row = list(data["solver"]).index("jacobi")
    assert f"| `jacobi` | max_iterations | {data['residual'][row, 20]:.2e} |" in text
    assert (out / "exit-status-friction.png").read_bytes()[:4] == b"\x89PNG"
    results = json.loads((out / "results.json").read_text())
    assert results["verdicts"] == [] and results["header"]["part"] == "friction"
    friction = results["friction"]
    assert [v["claim"] for v in friction["verdicts"]] == [
        v.claim for v in friction_verdicts.friction_verdicts({}, None)]
    assert friction["exit_statuses"]["scene_params"] == {"mu": 0.5, "mu_wall": 0.5}
    assert [s["step"] for s in friction["series"]["friction-pyramid"]] == [1, 25, 50]
    assert not (out / "bowl").exists() and not (out / "exit-status.png").exists()


def test_the_frictionless_part_alone_says_the_frictional_one_was_not_run():
    text = report.markdown({}, {}, None, verdicts.verdicts({}, None), HEADER, None, {},
                           None, "frictionless")
    assert "### Claims of the sources, with friction\n\nNot run (`--part frictionless`)." \
        in text
    assert "Frictional snapshots" not in text and "### Snapshots" in text
