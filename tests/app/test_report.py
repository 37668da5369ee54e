"""`marbles-bench report`: the results section is produced from measurements, and each verdict
follows the data it is given (synthetic tables where a claim fails must say so)."""
import json

import numpy as np
import pytest

from app import bench, report
from solver import compare as cmp
from solver import jacobi, metrics, pgs, registry
from solver.method import Method
from solver.params import Param, resolve

R_CHOICES = ("local", "global", "blocked")


def _prox_gs(problem, lam0, settings):
    # Stands in for prox-gs until it lands: PSOR with ω set by the strategy, so the r choices
    # give different (real) solves; without adaptation the 'global' ω = 1.9 stays as is.
    omega = {"local": 1.0, "global": 1.9, "blocked": 1.0}[settings.get("r")]
    if settings.get("adaptation"):
        omega = min(omega, 1.5)
    return pgs.solve_relaxed(problem, lam0, settings, omega)


def _prox_jacobi(problem, lam0, settings):
    beta = {"local": 0.3, "global": 1.0, "blocked": 0.3}[settings.get("r")]
    if settings.get("adaptation"):
        beta = min(beta, 0.5)
    return jacobi.solve(problem, lam0, type(settings)(settings.iterations, settings.trace,
                                                      {**settings.params, "beta": beta}))


PROX_PARAMS = (Param("r", "local", str, "r strategy", choices=R_CHOICES),
               Param("adaptation", True, bool, "adaptive r"))


@pytest.fixture
def fake_prox(monkeypatch):
    monkeypatch.setitem(registry.METHODS, "prox-gs",
                        Method("prox-gs", "fake", _prox_gs, "test stand-in", PROX_PARAMS))
    monkeypatch.setitem(registry.METHODS, "prox-jacobi",
                        Method("prox-jacobi", "fake", _prox_jacobi, "test stand-in", PROX_PARAMS))


def test_variants_are_read_from_the_declared_parameters(fake_prox):
    variants = report.proximal_variants({n: registry.METHODS[n]
                                         for n in ("pgs", "prox-gs", "prox-jacobi")})
    assert {(v.solver, v.form, v.r, v.adaptive) for v in variants} == {
        (s, f, r, a) for s, f in (("prox-gs", "Gauss-Seidel"), ("prox-jacobi", "Jacobi"))
        for r in R_CHOICES for a in (True, False)}
    assert next(v for v in variants if not v.adaptive).params["adaptation"] is False


def test_variants_with_choice_or_nu_switches():
    choice = Method("prox-x", "x", _prox_gs, "", (
        Param("r", "local", str, "", choices=("local", "global")),
        Param("adaptation", "shrink", str, "", choices=("none", "shrink", "shrink-grow"))))
    nu_only = Method("prox-y-jacobi", "y", _prox_gs, "", (
        Param("r", "local", str, "", choices=("local",)),
        Param("nu", 0.9, float, "", lo=0.0, hi=1.0, lo_open=True)))
    nu_open = Method("prox-z", "z", _prox_gs, "", (
        Param("r", "local", str, "", choices=("local",)),
        Param("nu", 0.9, float, "", lo=0.0, hi=1.0, hi_open=True)))
    found = report.proximal_variants({"prox-x": choice, "prox-y-jacobi": nu_only,
                                      "prox-z": nu_open, "pgs": registry.METHODS["pgs"]})
    by = {(v.solver, v.r, v.adaptive): v for v in found}
    assert by[("prox-x", "local", True)].params["adaptation"] == "shrink"
    assert by[("prox-x", "global", False)].params["adaptation"] == "none"
    assert by[("prox-y-jacobi", "local", False)].params == {"r": "local", "nu": 1.0}
    assert by[("prox-y-jacobi", "local", True)].form == "Jacobi"
    assert ("prox-z", "local", False) not in by and ("prox-z", "local", True) in by
    assert not any(v.solver == "pgs" for v in found)


def test_report_on_a_tiny_configuration(tmp_path, fake_prox, capsys):
    out = tmp_path / "res"
    chosen = ["naive", "pgs", "psor", "jacobi", "prox-gs", "prox-jacobi"]
    assert bench.main(["report", "--out", str(out), "--scenes", "column,mass-ratio",
                       "--iterations", "30", "--exit-scene", "disk", "--exit-steps", "4",
                       "--exit-iterations", "15", "--repeats", "1",
                       "--solvers", ",".join(chosen)]) == 0
    err = capsys.readouterr().err
    assert "[1/3] column" in err and "[3/3] exit statuses" in err  # progress on stderr
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
    verdicts = {v["claim"]: v["verdict"] for v in results["verdicts"]}
    assert verdicts[report.claim_bowl_floor({}).claim] == report.UNCHECKED
    gs = next(v for v in results["verdicts"] if v["claim"].startswith("Gauss-Seidel"))
    assert gs["verdict"] in (report.REPRODUCED, report.NOT_REPRODUCED)


def test_report_without_proximal_solvers_skips_the_chart_with_a_note(tmp_path):
    out = tmp_path / "res"
    (out).mkdir()
    (out / "exit-status.png").write_bytes(b"stale")
    assert bench.main(["report", "--out", str(out), "--scenes", "column", "--iterations", "5",
                       "--solvers", "pgs,psor", "--repeats", "1", "--quiet"]) == 0
    text = (out / "RESULTS.md").read_text()
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
])
def test_report_bad_input_is_one_line_and_exit_2(tmp_path, args, fragment):
    code, out, err = _run("report", "--out", str(tmp_path / "o"), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err
    assert not (tmp_path / "o").exists()


def _run(*args):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "app.bench", *args], capture_output=True,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


# ---------------------------------------------------------------- verdicts from synthetic data

def curve(n, start=1.0, rate=0.5, solved_at=None, floor=1e-14):
    """A residual curve of n + 1 values: geometric decay, dropping to `floor` at `solved_at`."""
    r = start * rate ** np.arange(n + 1)
    if solved_at is not None:
        r[solved_at:] = floor
    return np.maximum(r, floor)


def table(rows: dict, marbles=7, iterations=50):
    names = list(rows)
    res = np.array([rows[n] for n in names])
    secs = np.tile(np.arange(iterations + 1) * 1e-4, (len(names), 1))
    return cmp.ComparisonTable(names, res, secs, ["max_iterations"] * len(names),
                               {"marbles": marbles, "contacts": marbles, "rhs_norm": 0.2})


@pytest.mark.parametrize("solved_at, verdict", [(7, report.REPRODUCED), (6, report.REPRODUCED),
                                                (9, report.NOT_REPRODUCED),
                                                (None, report.NOT_REPRODUCED)])
def test_column_verdict_follows_the_data(solved_at, verdict):
    rows = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.9, solved_at=solved_at)}
    found = report.claim_column({"column": table(rows)})
    assert found.verdict == verdict
    assert ("not reached" if solved_at is None else f"after {solved_at} iterations") in \
        found.evidence


def test_mass_ratio_verdict_needs_pcg_fast_and_pgs_stalling():
    stall = curve(500, rate=0.999)
    fast = curve(500, rate=0.5)
    ok = {"pcg": curve(500, rate=0.9, solved_at=2), "pgs": stall}
    assert report.claim_mass_ratio({"mass-ratio": table(ok, 2, 500)}).verdict == report.REPRODUCED
    slow_pcg = {"pcg": curve(500, rate=0.9, solved_at=3), "pgs": stall}
    assert report.claim_mass_ratio({"mass-ratio": table(slow_pcg, 2, 500)}).verdict == \
        report.NOT_REPRODUCED
    pgs_fine = {"pcg": curve(500, rate=0.9, solved_at=2), "pgs": fast}
    found = report.claim_mass_ratio({"mass-ratio": table(pgs_fine, 2, 500)})
    assert found.verdict == report.NOT_REPRODUCED and "pgs needs 20 iterations" in found.evidence


def test_bowl_floor_verdict():
    n = 5000
    rows = {"psor": curve(n, rate=0.99, floor=1e-14), "pcg": curve(n, rate=0.97, floor=1e-14),
            "ppcg": curve(n, rate=0.96, floor=1e-14)}
    found = report.claim_bowl_floor({"bowl": table(rows, 350, n)})
    assert found.verdict == report.REPRODUCED
    its = {s: int(np.argmax(rows[s] <= found.numbers["floor"])) for s in rows}
    assert found.numbers["psor"] == its["psor"] and found.numbers["ppcg"] == its["ppcg"]
    close = {"psor": curve(n, rate=0.97), "pcg": curve(n, rate=0.96), "ppcg": curve(n, rate=0.96)}
    assert report.claim_bowl_floor({"bowl": table(close, 350, n)}).verdict == \
        report.NOT_REPRODUCED
    never = {"psor": curve(n, rate=0.9999), "pcg": curve(n, rate=0.99)}
    assert report.claim_bowl_floor({"bowl": table(never, 350, n)}).verdict == report.REPRODUCED
    assert report.claim_bowl_floor({"bowl": table({"psor": curve(n)}, 350, n)}).verdict == \
        report.UNCHECKED


def test_pgs_after_20_verdict():
    ahead = {"pgs": curve(50, rate=0.8), "pcg": curve(50, rate=0.9)}
    assert report.claim_pgs_first({"bowl": table(ahead)}).verdict == report.REPRODUCED
    behind = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.8)}
    found = report.claim_pgs_first({"bowl": table(behind)})
    assert found.verdict == report.NOT_REPRODUCED
    assert f"pgs {0.9 ** 20:.2e}" in found.evidence


def test_ordering_verdict():
    rates = dict(zip(report.ORDER, (0.99, 0.98, 0.9, 0.8, 0.7, 0.6)))
    good = {n: curve(200, rate=r) for n, r in rates.items()}
    found = report.claim_order({"a": table(good, iterations=200), "b": table(good, iterations=200)})
    assert found.verdict == report.REPRODUCED and found.numbers["pairs_agreeing"] == 15
    swapped = dict(good, pgs=good["psor"], psor=good["pgs"])
    found = report.claim_order({"a": table(swapped, iterations=200)})
    assert found.verdict == report.NOT_REPRODUCED and found.numbers["pairs_agreeing"] == 14
    assert "PGS < PSOR" not in found.evidence and "PSOR < PGS" in found.evidence
    # A tie on one scene splits the rank: it neither confirms nor breaks the claimed pair.
    tied = dict(good, naive=good["jacobi"])
    order, mean = report.measured_order({"a": table(tied, iterations=200)})
    assert mean["naive"] == mean["jacobi"] == 0.5 and mean["pgs"] == 2.0
    found = report.claim_order({"a": table(tied, iterations=200)})
    assert found.verdict == report.NOT_REPRODUCED and "PJ = NAIV" in found.evidence
    assert found.numbers["pairs_agreeing"] == 14
    missing = {n: c for n, c in good.items() if n != "ppcg"}
    assert report.claim_order({"a": table(missing, iterations=200)}).verdict == report.UNCHECKED


def exits(counts: dict, residual: dict | None = None):
    variants = []
    for label in counts:
        solver, r, *fixed = label.split()
        variants.append(report.Variant(solver, "Jacobi" if "jacobi" in solver else "Gauss-Seidel",
                                       r[2:], not fixed, {}))
    full = {k: {s: c.get(s, 0) for s in metrics.STATUSES} for k, c in counts.items()}
    return report.ExitStats("bowl", 10, 50, 1e-6, 1e-4, variants, full,
                            residual or {k: 1e-3 for k in counts})


def test_divergence_verdict():
    gs_better = exits({"prox-gs r=local": {"absolute": 10},
                       "prox-jacobi r=local": {"absolute": 7, "divergence": 3}})
    assert report.claim_gs_diverges_less(gs_better).verdict == report.REPRODUCED
    equal = exits({"prox-gs r=local": {"absolute": 10}, "prox-jacobi r=local": {"absolute": 10}})
    found = report.claim_gs_diverges_less(equal)
    assert found.verdict == report.NOT_REPRODUCED and "Gauss-Seidel 0 of 10" in found.evidence
    assert report.claim_gs_diverges_less(None).verdict == report.UNCHECKED


def test_adaptive_verdict():
    adaptive_wins = exits({"prox-gs r=local": {"absolute": 9, "max_iterations": 1},
                           "prox-gs r=local fixed": {"absolute": 5, "divergence": 5},
                           "prox-gs r=global": {"relative": 10},
                           "prox-gs r=global fixed": {"relative": 10}},
                          {"prox-gs r=local": 1e-7, "prox-gs r=local fixed": 1e-3,
                           "prox-gs r=global": 1e-8, "prox-gs r=global fixed": 1e-6})
    found = report.claim_adaptive(adaptive_wins)
    assert found.verdict == report.REPRODUCED and found.numbers == {"wins": 2, "losses": 0,
                                                                    "pairs": 2}
    one_each = exits({"prox-gs r=local": {"absolute": 9, "max_iterations": 1},
                      "prox-gs r=local fixed": {"absolute": 5, "divergence": 5},
                      "prox-gs r=global": {"relative": 5, "divergence": 5},
                      "prox-gs r=global fixed": {"relative": 10}})
    found = report.claim_adaptive(one_each)
    assert found.verdict == report.NOT_REPRODUCED and "better in 1, worse in 1" in found.evidence
    fixed_wins = exits({"prox-gs r=local": {"max_iterations": 10},
                        "prox-gs r=local fixed": {"absolute": 10}})
    assert report.claim_adaptive(fixed_wins).verdict == report.NOT_REPRODUCED
    # Running out of iterations is better than diverging, however many solves it concerns.
    no_divergence = exits({"prox-jacobi r=local": {"max_iterations": 10},
                           "prox-jacobi r=local fixed": {"absolute": 9, "divergence": 1}})
    found = report.claim_adaptive(no_divergence)
    assert found.verdict == report.REPRODUCED and "0 diverged, 10 not converged" in found.evidence
    only_adaptive = exits({"prox-gs r=local": {"absolute": 10}})
    assert report.claim_adaptive(only_adaptive).verdict == report.UNCHECKED


def test_time_to_measures_or_extrapolates():
    t = table({"a": curve(100, rate=0.5), "b": curve(100, rate=0.9), "c": np.full(101, 0.3)},
              iterations=100)
    assert report.time_to(t, "a", 1e-6) == (20 * 1e-4, "measured")
    seconds, how = report.time_to(t, "b", 1e-10)  # 0.9^k = 1e-10 at k = 218.5
    assert how == "extrapolated" and seconds == pytest.approx(218.5 * 1e-4, rel=1e-3)
    assert report.time_to(t, "c", 1e-10) is None  # a flat tail gives no rate


def test_subspace_verdict_does_not_count_a_short_pgs_run_as_slow():
    # pgs-sm reaches 1e-10 at iteration 60; pgs stops at 1e-8 after 100 iterations and, at its
    # rate, would reach 1e-10 at iteration 125 (12.5 ms at 0.1 ms per iteration).
    sm = np.ones(101)
    sm[60:] = 1e-14
    pgs_curve = np.geomspace(1.0, 1e-8, 101)
    t = table({"pgs": pgs_curve, "pgs-sm": sm}, iterations=100)
    found = report.claim_subspace({"bowl": t})  # pgs-sm: 6 ms, 2.1x faster
    assert found.verdict == report.REPRODUCED and "pgs 12.50 ms (extrapolated)" in found.evidence
    t.seconds[t.row("pgs-sm")] *= 1.5  # pgs-sm's iterations cost more: 9 ms, only 1.4x faster
    found = report.claim_subspace({"bowl": t})
    assert found.verdict == report.NOT_REPRODUCED and "pgs-sm 9.00 ms" in found.evidence
    t.seconds[t.row("pgs-sm")] *= 2.0  # 18 ms: slower than pgs
    found = report.claim_subspace({"bowl": t})
    assert found.verdict == report.NOT_REPRODUCED and "pgs-sm 18.00 ms" in found.evidence


def test_subspace_verdict():
    fast = {"pgs": curve(100, rate=0.9), "pgs-sm": curve(100, rate=0.5)}
    assert report.claim_subspace({"bowl": table(fast, iterations=100)}).verdict == \
        report.REPRODUCED
    slow = {"pgs": curve(100, rate=0.5), "pgs-sm": curve(100, rate=0.9)}
    found = report.claim_subspace({"bowl": table(slow, iterations=100)})
    assert found.verdict == report.NOT_REPRODUCED and "bowl: pgs-sm" in found.evidence


def test_failed_claims_reach_the_markdown():
    rows = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.9, solved_at=12)}
    tables = {"column": table(rows)}
    found = report.verdicts(tables, None)
    meta = {"column": {"why": "test", "step": 1, "time": 0.0, "n_marbles": 7}}
    text = report.markdown(tables, meta, None, found,
                           {"command": "x", "date": "d", "machine": "m", "seconds": 1.0,
                            "solvers": ["pgs", "pcg"]}, "no prox")
    line = next(ln for ln in text.splitlines() if ln.startswith("| PCG solves the 7-marble"))
    assert "**not reproduced**" in line and "after 12 iterations" in line
    assert "no prox" in text


@pytest.mark.slow
def test_full_report_on_the_seed_scenes(tmp_path):
    """The documented command, as the lead runs it (minutes; `-m slow`)."""
    out = tmp_path / "results"
    code, text, err = _run("report", "--out", str(out))
    assert code == 0, err
    md = (out / "RESULTS.md").read_text()
    for scene in report.DEFAULT_SCENES:
        assert f"### {scene}" in md and (out / scene / "benchmark.png").exists()
    assert md.count("| **") >= len(report.verdicts({}, None))


def test_exit_tolerances_use_the_merit_test_when_a_solver_declares_it():
    merit = Method("prox-m", "m", _prox_gs, "", PROX_PARAMS + (
        Param("rho_rel_tol", 0.0, float, "", lo=0.0),))
    tol, kind = report.exit_tolerances(merit, 1e-6, 1e-4)
    assert kind == "merit" and tol == {"abs_tol": 1e-6, "rel_tol": 0.0, "rho_rel_tol": 1e-4}
    resolve(merit.all_params, tol, "test")  # the method accepts these overrides
    tol, kind = report.exit_tolerances(registry.METHODS["pgs"], 1e-6, 1e-4)
    assert kind == "iterates" and tol == {"abs_tol": 1e-6, "rel_tol": 1e-4}
    stats = exits({"prox-m r=local": {"absolute": 1}})
    stats.relative = {"prox-m r=local": "merit"}
    assert "merit test" in report._relative_text(stats)
    stats.relative = {"prox-m r=local": "merit", "x": "iterates"}
    assert "where the solver has it" in report._relative_text(stats)


def test_time_axis_ends_after_the_last_useful_progress():
    from app.figures import time_axis_end
    t = table({"fast": curve(100, rate=0.5), "slow": curve(100, rate=0.5, solved_at=10)},
              iterations=100)
    t.seconds[1] *= 50  # 'slow' reaches its floor at iteration 10 (50 ms) then idles to 500 ms
    # fast: within 2x of its best (1e-14) at iteration 47 (4.7 ms); slow: at 10 (50 ms).
    assert time_axis_end(t) == pytest.approx(1.15 * 50e-3)
    t.seconds[1] /= 50  # both use the whole axis usefully: no cut
    assert time_axis_end(table({"a": curve(100, rate=0.9)}, iterations=100)) is None
