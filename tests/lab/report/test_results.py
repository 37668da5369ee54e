"""lab.report.results (`marbles-bench report`): the results section is produced from measurements,
and RESULTS.md and results.json carry the measured numbers and the verdicts."""
import json

import numpy as np
import pytest

from lab.cli import bench
from lab.cli.report import DEFAULT_SCENES
from lab.report import friction_verdicts
from lab.report import results as report
from lab.report import verdicts
from tests.lab.helpers import run_cli


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
    # No frictional scenes and no profiles: this is about the frictionless part's chart, and
    # the profiles alone take minutes.
    assert bench.main(["report", "--out", str(out), "--scenes", "column", "--iterations", "5",
                       "--solvers", "pgs,psor", "--repeats", "1", "--quiet",
                       "--series", "none", "--friction-scenes", "none",
                       "--profiles", "none"]) == 0
    text = (out / "RESULTS.md").read_text()
    assert "Not measured (`--series none`" in text
    assert "Skipped: no proximal solver" in text and "![exit statuses]" not in text
    assert not (out / "exit-status.png").exists()  # a stale chart is not left to mislead


@pytest.mark.slow
def test_full_report_on_the_seed_scenes(tmp_path):
    """The documented command, as the lead runs it (minutes; `-m slow`)."""
    out = tmp_path / "results"
    code, text, err = run_cli("report", "--out", str(out))
    assert code == 0, err
    md = (out / "RESULTS.md").read_text()
    for scene in DEFAULT_SCENES:
        assert f"### {scene}" in md and (out / scene / "benchmark.png").exists()
    assert md.count("| **") >= len(verdicts.verdicts({}, None))


def test_the_frictional_part_alone(tmp_path, capsys):
    """`--part friction` on the pyramid and a frictional column: the frictional claims, tables,
    files and exit statuses, and the frictionless part said not run."""
    out = tmp_path / "res"
    assert bench.main(["report", "--out", str(out), "--part", "friction", "--friction-scenes",
                       "friction-pyramid", "--iterations", "30", "--exit-scene", "column",
                       "--exit-steps", "3", "--exit-iterations", "10", "--repeats", "1",
                       "--solvers", "pgs,pcg,jacobi,prox-gs,prox-jacobi,apgd",
                       "--profiles", "none"]) == 0
    err = capsys.readouterr().err
    assert "[1/2] frictional snapshots: friction-pyramid x 3" in err
    assert "[2/2] exit statuses with friction: 3 steps of column (mu=0.5, mu_wall=0.5)" in err
    text = (out / "RESULTS.md").read_text()
    assert "### Claims of the sources\n\nNot run (`--part friction`)." in text
    for fragment in ("### Claims of the sources, with friction", "### Frictional snapshots",
                     "### friction-pyramid", "| `pgs friction=ccp` |", "it to 1e-08",
                     "### Exit statuses with friction", "(mu = 0.5, mu_wall = 0.5)",
                     "warm start 1", "![exit statuses](exit-status-friction.png)",
                     "### How the frictional verdicts are computed",
                     "### Performance profiles with friction\n\nNot measured (`--profiles none`)."):
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


def test_the_profiles_alone_replace_their_section_and_keep_the_rest(tmp_path, monkeypatch,
                                                                    capsys):
    """`--part profiles` on a tiny collection: the figure, the section put into the RESULTS.md
    already there (the rest of it kept) and, run again, in place of the old one; results.json
    keeps its other numbers."""
    from lab.report import profiles

    monkeypatch.setattr(profiles, "COLLECTION", (
        profiles.ProfileScene("incline", {"mu": 0.3}, (2,)),
        profiles.ProfileScene("pyramid", {"layers": 2, "mu": 0.73}, (1,))))
    out = tmp_path / "res"
    out.mkdir()
    (out / "RESULTS.md").write_text("## Results\n\nkept\n\n### How the frictional verdicts are "
                                    "computed\n\nkept too\n")
    (out / "results.json").write_text(json.dumps({"header": {"part": "all"}, "friction": None}))
    args = ["report", "--out", str(out), "--part", "profiles", "--profile-budget", "0.05",
            "--solvers", "pgs,pcg,jacobi"]
    for _ in range(2):
        assert bench.main(args) == 0
    assert "[1/1] performance profiles: 4 runs" in capsys.readouterr().err
    text = (out / "RESULTS.md").read_text()
    assert text.startswith("## Results\n\nkept\n\n### Performance profiles with friction\n")
    assert text.count("### Performance profiles with friction") == 1
    assert text.endswith("### How the frictional verdicts are computed\n\nkept too\n")
    assert "| incline angle=20 μ=0.3 step 2 | 1 |" in text
    assert "--solvers pgs,pcg,jacobi --part profiles --profile-budget 0.05` on" in text
    assert (out / profiles.FOLDER / profiles.FIGURE).read_bytes()[:4] == b"\x89PNG"
    data = json.loads((out / "results.json").read_text())
    assert data["header"] == {"part": "all"}
    measured = data["friction"]["profiles"]
    assert measured["solvers"] == ["pgs", "jacobi"] and len(measured["problems"]) == 2
    assert measured["profiles"]["1e-08"]["verdict"] in text
