"""lab.report.friction_verdicts: the frictional claims judged from synthetic snapshots and exit
statistics whose verdicts are known, counted per comparison, with the ties, the runs that never
reached the target and the adaptation that never fired said as such."""
import numpy as np
import pytest

from lab.report import friction_verdicts as fv
from lab.report.exits import ExitStats, Solve, Variant
from lab.report.friction_verdicts import Outcome, versus
from lab.report.verdicts import NOT_REPRODUCED, PARTLY, REPRODUCED, UNCHECKED
from tests.lab.helpers import curve, diverged, frun, fsnap


def out(reached=None, best=1e-3, seconds=None, diverged=False, rejected=None):
    return Outcome(diverged, reached, best, seconds, rejected)


@pytest.mark.parametrize("a, b, expected", [
    (out(10, 1e-7), out(20, 1e-7), (1, "iterations")),            # fewer iterations to TOL
    (out(20, 1e-7), out(20, 1e-9), (0, "iterations")),            # equal: a tie, whatever after
    (out(None, 1e-5), out(900, 1e-7), (-1, "iterations")),        # only b got there
    (out(None, 1e-5), out(None, 1.1e-5), (0, "best residual")),   # the same plateau
    (out(None, 1e-5), out(None, 1.3e-5), (1, "best residual")),   # 1.3x lower: better
    (out(5, 1e-9, diverged=True), out(None, 1e-2), (-1, "divergence")),
    (out(diverged=True), out(diverged=True), (0, "divergence")),
])
def test_versus(a, b, expected):
    assert versus(a, b) == expected
    flipped = (-expected[0], expected[1])
    assert versus(b, a) == flipped


def test_versus_by_time_uses_the_seconds_to_the_target():
    slow_iterations_fast_time = out(300, 1e-4, seconds=0.09)
    fast_iterations_slow_time = out(100, 1e-4, seconds=0.1)
    assert versus(fast_iterations_slow_time, slow_iterations_fast_time) == (1, "iterations")
    assert versus(fast_iterations_slow_time, slow_iterations_fast_time, "seconds") == \
        (-1, "seconds")


def test_outcome_of_a_run_reads_the_curve_it_is_asked_for():
    run = frun(curve(100, rate=0.8), relaxation=curve(100, rate=0.5))
    coulomb, relaxed = fv.run_outcome(run, 1e-6), fv.run_outcome(run, 1e-6, relaxation=True)
    assert coulomb.reached == int(np.ceil(np.log(1e-6) / np.log(0.8)))  # 0.8^k <= 1e-6
    assert relaxed.reached == 20 and relaxed.seconds == pytest.approx(20 * 1e-4)
    never = fv.run_outcome(frun(curve(10, rate=0.9)), 1e-6)
    assert never.reached is None and never.best == pytest.approx(0.9 ** 10)
    assert fv.run_outcome(diverged(), 1e-6).diverged


def blocked_snapshots(winners):
    """Snapshots of the bowl where prox-gs r=blocked beats local (True) or not (False)."""
    good, bad = curve(200, rate=0.9), curve(200, rate=0.95)
    return {"friction-bowl": [fsnap("friction-bowl", step, {
        "prox-gs": frun(bad if w else good), "prox-gs r=blocked": frun(good if w else bad)})
        for step, w in zip((300, 400, 500), winners)]}


@pytest.mark.parametrize("winners, verdict", [((True, True, False), PARTLY),
                                              ((True, True, True), REPRODUCED),
                                              ((False, False, False), NOT_REPRODUCED)])
def test_blocked_beats_local_counts_the_snapshots(winners, verdict):
    found = fv.claim_blocked(blocked_snapshots(winners), None)
    wins = sum(winners)
    assert found.verdict == verdict
    assert (found.numbers["wins"], found.numbers["compared"]) == (wins, 3)
    assert f"prox-gs (snapshots): {wins} of 3" in found.evidence
    assert "0 decided on the best residual" in found.evidence  # both reach 1e-6: iterations


def test_blocked_on_a_plateau_is_judged_on_the_best_residual_and_a_tie_does_not_count():
    plateau = np.maximum(curve(100, rate=0.9), 4.7e-5)
    close = np.maximum(curve(100, rate=0.9), 5.0e-5)  # within 1.2x: the same plateau
    series = {"friction-bowl": [fsnap("friction-bowl", 500, {
        "prox-jacobi": frun(plateau), "prox-jacobi r=blocked": frun(close)})]}
    found = fv.claim_blocked(series, None)
    assert found.verdict == NOT_REPRODUCED  # a tie is no win
    assert "tied in 1 of 1" in found.evidence and "1 decided on the best residual" in found.evidence


def exit_stats_with_solves(solves: dict) -> ExitStats:
    """ExitStats of len(solves[...]) steps; solves: label -> list of (status, best, rejected)."""
    variants = []
    for label in solves:
        solver, r, *fixed = label.split()
        variants.append(Variant(solver, "Jacobi" if "jacobi" in solver else "Gauss-Seidel",
                                r[2:], not fixed, {}))
    steps = len(next(iter(solves.values())))
    records = {k: [Solve(s, 200 if s != "absolute" else 50, best, best, rej)
                   for s, best, rej in v] for k, v in solves.items()}
    counts = {k: {} for k in solves}
    return ExitStats("bowl", steps, 200, 1e-6, 1e-4, variants, counts,
                     {k: 1e-3 for k in solves}, {}, solves=records)


def test_adaptive_counts_only_where_the_adaptation_fired():
    # Step 1: prox-jacobi's adaptation fired and kept it finite where the fixed r diverged;
    # step 2: fired and lost; prox-gs never fired (0 rejected): not counted, but named.
    stats = exit_stats_with_solves({
        "prox-jacobi r=local": [("max_iterations", 1e-4, 5), ("max_iterations", 1e-3, 3)],
        "prox-jacobi r=local fixed": [("divergence", 1.0, 0), ("max_iterations", 1e-4, 0)],
        "prox-gs r=local": [("max_iterations", 1e-4, 0), ("max_iterations", 1e-4, 0)],
        "prox-gs r=local fixed": [("max_iterations", 1e-4, 0), ("max_iterations", 1e-4, 0)]})
    found = fv.claim_adaptive_friction({}, stats)
    assert found.verdict == PARTLY
    assert (found.numbers["wins"], found.numbers["losses"], found.numbers["compared"]) == (1, 1, 2)
    assert "prox-gs r=local (exit-status steps) in 2 of 2" in found.evidence
    assert found.numbers["never_fired"]["prox-jacobi r=local (exit-status steps)"] == [0, 2]
    # On snapshots too: prox-gs fired (rejected 4) and reached 1e-6 first.
    series = {"friction-pyramid": [fsnap("friction-pyramid", 1, {
        "prox-gs": frun(curve(100, rate=0.5), rejected=4),
        "prox-gs adapt=0": frun(curve(100, rate=0.9), rejected=0)})]}
    found = fv.claim_adaptive_friction(series, None)
    assert found.verdict == REPRODUCED and "prox-gs (snapshots): 1 of 1" in found.evidence
    idle = {"friction-pyramid": [fsnap("friction-pyramid", 1, {
        "prox-gs": frun(curve(100, rate=0.5), rejected=0),
        "prox-gs adapt=0": frun(curve(100, rate=0.5), rejected=0)})]}
    found = fv.claim_adaptive_friction(idle, None)
    assert found.verdict == UNCHECKED and "never fired" in found.evidence


def test_blocked_is_also_judged_on_every_exit_step():
    stats = exit_stats_with_solves({
        "prox-gs r=local": [("absolute", 1e-7, 0)] * 3,
        "prox-gs r=blocked": [("max_iterations", 1e-4, 0)] * 3,
        "prox-jacobi r=local": [("max_iterations", 1e-3, 2)] * 3,
        "prox-jacobi r=blocked": [("max_iterations", 1e-4, 2)] * 3})
    found = fv.claim_blocked({}, stats)
    assert found.verdict == PARTLY and (found.numbers["wins"], found.numbers["compared"]) == (3, 6)
    assert "prox-jacobi r=blocked (exit-status steps): 3 of 3" in found.evidence
    assert "prox-gs r=blocked (exit-status steps): 0 of 3, worse in 3" in found.evidence


def divergence_series(gs_status, jacobi_status):
    """One snapshot per pair of statuses: pgs and jacobi with those exit statuses."""
    def run(status):
        return diverged() if status == "divergence" else frun(curve(50))
    return {"friction-box": [fsnap("friction-box", 100 * (k + 1), {"pgs": run(g),
                                                                   "jacobi": run(j)})
                             for k, (g, j) in enumerate(zip(gs_status, jacobi_status))]}


def test_gauss_seidel_diverges_less_often():
    ok, div = "max_iterations", "divergence"
    found = fv.claim_gs_diverges_less_friction(divergence_series([ok, ok, ok], [div, ok, div]),
                                               None)
    assert found.verdict == REPRODUCED
    assert "fewer divergences on 2 of 2 problems where any diverged, more on 0" in found.evidence
    # One snapshot where Gauss-Seidel diverged and Jacobi did not: partly.
    found = fv.claim_gs_diverges_less_friction(divergence_series([div, ok, ok], [ok, div, div]),
                                               None)
    assert found.verdict == PARTLY
    # Less on one, more on the other: equal rates overall, so not reproduced.
    found = fv.claim_gs_diverges_less_friction(divergence_series([div, ok], [ok, div]), None)
    assert found.verdict == NOT_REPRODUCED
    assert found.numbers["rate_gauss_seidel"] == found.numbers["rate_jacobi"] == 0.5


def test_equal_or_no_divergence_does_not_reproduce_the_claim():
    ok, div = "max_iterations", "divergence"
    found = fv.claim_gs_diverges_less_friction(divergence_series([ok, ok], [ok, ok]), None)
    assert found.verdict == NOT_REPRODUCED and "0 of 2 runs diverged" in found.evidence
    found = fv.claim_gs_diverges_less_friction(divergence_series([div, div], [ok, div]), None)
    assert found.verdict == NOT_REPRODUCED
    assert fv.claim_gs_diverges_less_friction({}, None).verdict == UNCHECKED


def apgd_snapshot(step, apgd_its, ccp_its, apgd_per_it, ccp_per_it, pgs_its=None):
    """A box snapshot where apgd's and pgs friction=ccp's relaxation errors reach 1e-3 at the
    given iterations; Coulomb's error of apgd stays at 1e-2; pgs (Coulomb) reaches 1e-3 at
    `pgs_its` (or never); jacobi never."""
    def reaching(k, n=1000):
        return np.where(np.arange(n + 1) < k, 1.0, 1e-4)
    return fsnap("friction-box", step, {
        "apgd": frun(np.full(1001, 1e-2), apgd_per_it, relaxation=reaching(apgd_its)),
        "pgs friction=ccp": frun(np.full(1001, 1e-1), ccp_per_it, relaxation=reaching(ccp_its)),
        "pgs": frun(reaching(pgs_its) if pgs_its else np.full(1001, 5e-3), ccp_per_it),
        "jacobi": frun(np.full(1001, 5e-3), ccp_per_it)}, contacts=6000)


def test_apgd_is_judged_on_time_to_the_relaxations_tolerance():
    # 1: apgd 100 it x 0.3 ms = 30 ms, ccp 300 x 0.2 ms = 60 ms: apgd first in both.
    # 2: apgd 100 x 1 ms = 100 ms, ccp 300 x 0.2 ms = 60 ms: first in iterations only.
    # 3: pgs by Coulomb's error in 50 x 0.2 ms = 10 ms: apgd first in neither.
    series = {"friction-box": [apgd_snapshot(200, 100, 300, 3e-4, 2e-4),
                               apgd_snapshot(300, 100, 300, 1e-3, 2e-4),
                               apgd_snapshot(400, 100, 300, 3e-4, 2e-4, pgs_its=50)]}
    found = fv.claim_apgd(series)
    assert found.verdict == PARTLY
    assert found.numbers["holds_time"] == [True, False, False]
    assert found.numbers["holds_iterations"] == [True, True, False]
    assert "apgd first in time on 1 of 3, in iterations on 2 of 3" in found.evidence
    assert "apgd 100 it, 30 ms" in found.evidence  # the median over the three
    assert "By Coulomb's error apgd gets no lower than 1.00e-02" in found.evidence
    only_first = {"friction-box": series["friction-box"][:1]}
    assert fv.claim_apgd(only_first).verdict == REPRODUCED
    # On the bowl it is not judged: the claim is about the large problem.
    assert fv.claim_apgd({"friction-bowl": []}).verdict == UNCHECKED


def test_every_frictional_claim_is_judged_and_missing_data_says_why():
    found = fv.friction_verdicts({}, None)
    assert len(found) == 4 and {v.verdict for v in found} == {UNCHECKED}
    assert all(v.evidence for v in found)
