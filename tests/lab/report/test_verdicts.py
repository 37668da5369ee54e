"""lab.report.verdicts: each claim of the sources is judged from the snapshots and statistics it is
given; synthetic series where a claim holds on every snapshot, on some, on none, or cannot be
checked must say so, with the counts."""
import numpy as np
import pytest

from lab.report import verdicts
from lab.report.verdicts import NOT_REPRODUCED, PARTLY, REPRODUCED, UNCHECKED
from tests.lab.helpers import curve, exit_stats, snapshot


@pytest.mark.parametrize("holds, total, verdict", [(5, 5, REPRODUCED), (3, 5, PARTLY),
                                                   (0, 5, NOT_REPRODUCED), (0, 0, UNCHECKED)])
def test_graded(holds, total, verdict):
    assert verdicts.graded(holds, total) == verdict


def column_series(*solved_at):
    return {"column": [snapshot("column", step, {"pgs": curve(50, rate=0.9),
                                                 "pcg": curve(50, rate=0.9, solved_at=k)})
                       for step, k in zip((1, 10, 150), solved_at)]}


@pytest.mark.parametrize("solved_at, verdict, count", [
    ((7, 6, 7), REPRODUCED, "holds in 3 of 3"), ((7, 9, 7), PARTLY, "holds in 2 of 3"),
    ((None, 9, 12), NOT_REPRODUCED, "holds in 0 of 3")])
def test_column_verdict_counts_the_snapshots(solved_at, verdict, count):
    found = verdicts.claim_column(column_series(*solved_at))
    assert found.verdict == verdict and count in found.evidence
    its = ", ".join("not reached" if k is None else str(k) for k in solved_at)
    assert f"after {its} iterations at steps 1, 10, 150" in found.evidence


def test_mass_ratio_verdict_needs_pcg_fast_and_pgs_stalling():
    stall = curve(500, rate=0.999)
    fast = curve(500, rate=0.5)

    def judge(pcg, pgs):
        return verdicts.claim_mass_ratio({"mass-ratio": [snapshot("mass-ratio", 1, {
            "pcg": pcg, "pgs": pgs}, marbles=2)]})

    assert judge(curve(500, rate=0.9, solved_at=2), stall).verdict == REPRODUCED
    assert judge(curve(500, rate=0.9, solved_at=3), stall).verdict == NOT_REPRODUCED
    found = judge(curve(500, rate=0.9, solved_at=2), fast)
    assert found.verdict == NOT_REPRODUCED and "pgs needs 20 iterations" in found.evidence
    assert verdicts.claim_mass_ratio({}).verdict == UNCHECKED


def test_bowl_floor_verdict_per_snapshot():
    n = 5000
    far = {"psor": curve(n, rate=0.99, floor=1e-14), "pcg": curve(n, rate=0.97, floor=1e-14),
           "ppcg": curve(n, rate=0.96, floor=1e-14)}
    close = {"psor": curve(n, rate=0.97), "pcg": curve(n, rate=0.96), "ppcg": curve(n, rate=0.96)}
    never = {"psor": curve(n, rate=0.9999), "pcg": curve(n, rate=0.99),
             "ppcg": curve(n, rate=0.99)}
    race = verdicts.floor_race(snapshot("bowl", 1, far))
    its = {s: int(np.argmax(far[s] <= race["floor"])) for s in far}
    assert race["iterations"] == its and race["holds"]
    assert race["floor"] == pytest.approx(1e-13)  # 10 x the best residual
    assert not verdicts.floor_race(snapshot("bowl", 1, close))["holds"]
    assert verdicts.floor_race(snapshot("bowl", 1, never))["holds"]  # PSOR never gets there
    series = {"bowl": [snapshot("bowl", k, c) for k, c in enumerate((far, close, never, far))]}
    found = verdicts.claim_bowl_floor(series)
    assert found.verdict == PARTLY and "holds in 3 of 4 snapshots" in found.evidence
    assert verdicts.claim_bowl_floor({"bowl": [snapshot("bowl", 1, {"psor": curve(n)})]}
                                     ).verdict == UNCHECKED


def test_pgs_ahead_in_3_of_5_snapshots_is_partly_reproduced():
    ahead = {"pgs": curve(50, rate=0.8), "pcg": curve(50, rate=0.9)}
    behind = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.8)}
    bowl = [snapshot("bowl", s, c) for s, c in zip((150, 200, 250, 300, 350),
                                                   (ahead, behind, ahead, ahead, behind))]
    found = verdicts.claim_pgs_first({"bowl": bowl})
    assert found.verdict == PARTLY and "bowl: holds in 3 of 5 snapshots" in found.evidence
    assert found.numbers["bowl"]["pgs_ahead_at"] == [150, 250, 300]
    assert verdicts.claim_pgs_first({"bowl": bowl[:1]}).verdict == REPRODUCED
    disk = [snapshot("disk", s, behind) for s in (100, 200)]
    found = verdicts.claim_pgs_first({"bowl": bowl[:1], "disk": disk})
    assert found.verdict == PARTLY and "disk: holds in 0 of 2 snapshots" in found.evidence
    found = verdicts.claim_pgs_first({"disk": disk})
    assert found.verdict == NOT_REPRODUCED and f"pgs {0.9 ** 20:.2e}" in found.evidence
    assert verdicts.claim_pgs_first({"column": bowl}).verdict == UNCHECKED


RATES = dict(zip(verdicts.ORDER, (0.99, 0.98, 0.9, 0.8, 0.7, 0.6)))


def ordered(**changes):
    """Curves in the article's order (pcg, ppcg also as the sources' runs), with `changes`."""
    curves = {n: curve(200, rate=r) for n, r in RATES.items()}
    curves.update({"pcg safeguard=0": curves["pcg"], "ppcg safeguard=0": curves["ppcg"]})
    curves.update(changes)
    return curves


def test_ordering_verdict_counts_pairs_over_snapshots_and_names_the_flips():
    good = ordered()
    series = {"a": [snapshot("a", 1, good), snapshot("a", 2, good)]}
    found = verdicts.claim_order(series)
    assert found.verdict == REPRODUCED and (found.numbers["held"], found.numbers["checks"]) == \
        (30, 30)
    # Damped Jacobi ahead of naive on every snapshot of one scene: the pair flips there only.
    flipped = ordered(jacobi=good["naive"], naive=good["jacobi"])
    series["b"] = [snapshot("b", 1, flipped), snapshot("b", 2, flipped)]
    found = verdicts.claim_order(series)
    assert found.verdict == PARTLY and (found.numbers["held"], found.numbers["checks"]) == \
        (58, 60)
    assert "b (2): NAIV < PJ < PGS < PSOR < PCG < PPCG" in found.evidence
    assert "NAIV < PJ in 2 of 2" in found.evidence
    assert "a (2): PJ < NAIV < PGS < PSOR < PCG < PPCG;" in found.evidence
    assert "the whole order holds in 2 of 4 snapshots" in found.evidence


def test_ordering_ties_do_not_confirm_a_pair():
    # Equal iterations to 1e-10 tie, whatever the rounding after: PCG = PPCG, not PCG < PPCG.
    solved = curve(200, rate=0.5, solved_at=7)
    later = solved.copy()
    later[7:] = 1e-16
    found = verdicts.claim_order({"c": [snapshot("c", 1, ordered(
        pcg=solved, ppcg=later, **{"pcg safeguard=0": solved, "ppcg safeguard=0": later}))]})
    assert found.verdict == PARTLY and found.numbers["held"] == 14
    assert "PCG = PPCG in 1 of 1" in found.evidence and "PJ < NAIV < PGS < PSOR < PCG = PPCG" \
        in found.evidence


def test_ordering_of_the_sources_pcg_is_judged_on_their_runs():
    # The sources' PPCG needs more iterations than their PCG; ours keeps the article's order.
    slow = curve(200, rate=0.75)
    series = {"a": [snapshot("a", 1, ordered(**{"ppcg safeguard=0": slow}))]}
    ours, theirs = verdicts.claim_order(series), verdicts.claim_order(series, sources=True)
    assert ours.verdict == REPRODUCED and "our PCG" in ours.claim
    assert theirs.verdict == PARTLY and "safeguard=0" in theirs.claim
    assert theirs.numbers["held"] == 14 and "PPCG < PCG in 1 of 1" in theirs.evidence
    missing = {"a": [snapshot("a", 1, {n: c for n, c in ordered().items() if n != "ppcg"})]}
    assert verdicts.claim_order(missing).verdict == UNCHECKED


def test_divergence_verdict():
    gs_better = exit_stats({"prox-gs r=local": {"absolute": 10},
                            "prox-jacobi r=local": {"absolute": 7, "divergence": 3}})
    assert verdicts.claim_gs_diverges_less(gs_better).verdict == REPRODUCED
    equal = exit_stats({"prox-gs r=local": {"absolute": 10},
                        "prox-jacobi r=local": {"absolute": 10}})
    found = verdicts.claim_gs_diverges_less(equal)
    assert found.verdict == NOT_REPRODUCED and "Gauss-Seidel 0 of 10" in found.evidence
    assert verdicts.claim_gs_diverges_less(None).verdict == UNCHECKED


def test_adaptive_verdict_over_the_comparable_pairs():
    counts = {"prox-gs r=local": {"max_iterations": 10},
              "prox-gs r=local fixed": {"max_iterations": 10},
              "prox-jacobi r=local": {"absolute": 9, "max_iterations": 1},
              "prox-jacobi r=local fixed": {"absolute": 5, "divergence": 5},
              "prox-jacobi r=global": {"relative": 5, "divergence": 5},
              "prox-jacobi r=global fixed": {"relative": 10}}
    rejected = {"prox-gs r=local": 0.0, "prox-gs r=local fixed": 0.0,
                "prox-jacobi r=local": 4.0, "prox-jacobi r=local fixed": 0.0,
                "prox-jacobi r=global": 2.5, "prox-jacobi r=global fixed": 0.0}
    found = verdicts.claim_adaptive(exit_stats(counts, rejected=rejected))
    # The Gauss-Seidel pair ran identically (no rejection): not a tie in favour of anyone.
    assert found.verdict == PARTLY
    assert found.numbers == {"wins": 1, "losses": 1, "compared": 2,
                             "not_comparable": ["prox-gs r=local"]}
    assert "of 2 comparable" in found.evidence
    assert "not comparable: the adaptation never fired in prox-gs r=local" in found.evidence
    wins = {k: v for k, v in counts.items() if "global" not in k}
    assert verdicts.claim_adaptive(exit_stats(wins, rejected=rejected)).verdict == REPRODUCED
    idle = {k: v for k, v in counts.items() if k.startswith("prox-gs")}
    found = verdicts.claim_adaptive(exit_stats(idle, rejected=rejected))
    assert found.verdict == UNCHECKED and "adaptation never fired" in found.evidence
    # Without the solvers' rejection counts every pair is compared.
    found = verdicts.claim_adaptive(exit_stats(counts))
    assert found.numbers["compared"] == 3 and found.numbers["not_comparable"] == []
    fixed_wins = exit_stats({"prox-gs r=local": {"max_iterations": 10},
                             "prox-gs r=local fixed": {"absolute": 10}})
    assert verdicts.claim_adaptive(fixed_wins).verdict == NOT_REPRODUCED
    # Running out of iterations is better than diverging, however many solves it concerns.
    no_divergence = exit_stats({"prox-jacobi r=local": {"max_iterations": 10},
                                "prox-jacobi r=local fixed": {"absolute": 9, "divergence": 1}})
    found = verdicts.claim_adaptive(no_divergence)
    assert found.verdict == REPRODUCED and "0 diverged, 10 not converged" in found.evidence
    only_adaptive = exit_stats({"prox-gs r=local": {"absolute": 10}})
    assert verdicts.claim_adaptive(only_adaptive).verdict == UNCHECKED


def test_subspace_verdict_per_bowl_snapshot():
    def snap(step, pgs, sm):
        return snapshot("bowl", step, {}, subspace={"pgs": pgs, "pgs-sm": sm})

    series = {"bowl": [snap(1, (6000, 0.060, 6000), (40, 0.015, 900)),     # 4x: holds
                       snap(2, (6000, 0.060, 6000), (40, 0.040, 900)),     # 1.5x: does not
                       snap(3, (None, 0.200, 40000), (40, 0.020, 900)),    # pgs ran 10x longer
                       snap(4, (6000, 0.060, 6000), (None, 0.010, 900))]}  # pgs-sm never got there
    found = verdicts.claim_subspace(series)
    assert found.verdict == PARTLY and "holds in 2 of 4 snapshots" in found.evidence
    assert found.numbers["holds"] == [True, False, True, False]
    assert "pgs did not reach it within its budget in 1" in found.evidence
    assert verdicts.claim_subspace({"bowl": series["bowl"][:1]}).verdict == REPRODUCED
    assert verdicts.claim_subspace({"disk": series["bowl"]}).verdict == UNCHECKED


def test_every_claim_is_judged_and_missing_data_says_why():
    found = verdicts.verdicts({}, None)
    assert len(found) == 9 and {v.verdict for v in found} == {UNCHECKED}
    assert all(v.evidence for v in found)
