"""lab.verdicts: each claim of the sources is judged from the data it is given; synthetic tables
and exit statistics where a claim holds, fails, or cannot be checked must say so."""
import numpy as np
import pytest

from lab import verdicts
from lab.verdicts import NOT_REPRODUCED, REPRODUCED, UNCHECKED
from tests.lab.helpers import curve, exit_stats, table


@pytest.mark.parametrize("solved_at, verdict", [(7, REPRODUCED), (6, REPRODUCED),
                                                (9, NOT_REPRODUCED), (None, NOT_REPRODUCED)])
def test_column_verdict_follows_the_data(solved_at, verdict):
    rows = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.9, solved_at=solved_at)}
    found = verdicts.claim_column({"column": table(rows)})
    assert found.verdict == verdict
    assert ("not reached" if solved_at is None else f"after {solved_at} iterations") in \
        found.evidence


def test_mass_ratio_verdict_needs_pcg_fast_and_pgs_stalling():
    stall = curve(500, rate=0.999)
    fast = curve(500, rate=0.5)
    ok = {"pcg": curve(500, rate=0.9, solved_at=2), "pgs": stall}
    assert verdicts.claim_mass_ratio({"mass-ratio": table(ok, 2, 500)}).verdict == REPRODUCED
    slow_pcg = {"pcg": curve(500, rate=0.9, solved_at=3), "pgs": stall}
    assert verdicts.claim_mass_ratio({"mass-ratio": table(slow_pcg, 2, 500)}).verdict == \
        NOT_REPRODUCED
    pgs_fine = {"pcg": curve(500, rate=0.9, solved_at=2), "pgs": fast}
    found = verdicts.claim_mass_ratio({"mass-ratio": table(pgs_fine, 2, 500)})
    assert found.verdict == NOT_REPRODUCED and "pgs needs 20 iterations" in found.evidence


def test_bowl_floor_verdict():
    n = 5000
    rows = {"psor": curve(n, rate=0.99, floor=1e-14), "pcg": curve(n, rate=0.97, floor=1e-14),
            "ppcg": curve(n, rate=0.96, floor=1e-14)}
    found = verdicts.claim_bowl_floor({"bowl": table(rows, 350, n)})
    assert found.verdict == REPRODUCED
    its = {s: int(np.argmax(rows[s] <= found.numbers["floor"])) for s in rows}
    assert found.numbers["psor"] == its["psor"] and found.numbers["ppcg"] == its["ppcg"]
    close = {"psor": curve(n, rate=0.97), "pcg": curve(n, rate=0.96), "ppcg": curve(n, rate=0.96)}
    assert verdicts.claim_bowl_floor({"bowl": table(close, 350, n)}).verdict == \
        NOT_REPRODUCED
    never = {"psor": curve(n, rate=0.9999), "pcg": curve(n, rate=0.99)}
    assert verdicts.claim_bowl_floor({"bowl": table(never, 350, n)}).verdict == REPRODUCED
    assert verdicts.claim_bowl_floor({"bowl": table({"psor": curve(n)}, 350, n)}).verdict == \
        UNCHECKED


def test_pgs_after_20_verdict():
    ahead = {"pgs": curve(50, rate=0.8), "pcg": curve(50, rate=0.9)}
    assert verdicts.claim_pgs_first({"bowl": table(ahead)}).verdict == REPRODUCED
    behind = {"pgs": curve(50, rate=0.9), "pcg": curve(50, rate=0.8)}
    found = verdicts.claim_pgs_first({"bowl": table(behind)})
    assert found.verdict == NOT_REPRODUCED
    assert f"pgs {0.9 ** 20:.2e}" in found.evidence


def test_ordering_verdict():
    rates = dict(zip(verdicts.ORDER, (0.99, 0.98, 0.9, 0.8, 0.7, 0.6)))
    good = {n: curve(200, rate=r) for n, r in rates.items()}
    found = verdicts.claim_order({"a": table(good, iterations=200),
                                  "b": table(good, iterations=200)})
    assert found.verdict == REPRODUCED and found.numbers["pairs_agreeing"] == 15
    swapped = dict(good, pgs=good["psor"], psor=good["pgs"])
    found = verdicts.claim_order({"a": table(swapped, iterations=200)})
    assert found.verdict == NOT_REPRODUCED and found.numbers["pairs_agreeing"] == 14
    assert "PGS < PSOR" not in found.evidence and "PSOR < PGS" in found.evidence
    # A tie on one scene splits the rank: it neither confirms nor breaks the claimed pair.
    tied = dict(good, naive=good["jacobi"])
    order, mean = verdicts.measured_order({"a": table(tied, iterations=200)})
    assert mean["naive"] == mean["jacobi"] == 0.5 and mean["pgs"] == 2.0
    found = verdicts.claim_order({"a": table(tied, iterations=200)})
    assert found.verdict == NOT_REPRODUCED and "PJ = NAIV" in found.evidence
    assert found.numbers["pairs_agreeing"] == 14
    missing = {n: c for n, c in good.items() if n != "ppcg"}
    assert verdicts.claim_order({"a": table(missing, iterations=200)}).verdict == UNCHECKED


def test_divergence_verdict():
    gs_better = exit_stats({"prox-gs r=local": {"absolute": 10},
                            "prox-jacobi r=local": {"absolute": 7, "divergence": 3}})
    assert verdicts.claim_gs_diverges_less(gs_better).verdict == REPRODUCED
    equal = exit_stats({"prox-gs r=local": {"absolute": 10},
                        "prox-jacobi r=local": {"absolute": 10}})
    found = verdicts.claim_gs_diverges_less(equal)
    assert found.verdict == NOT_REPRODUCED and "Gauss-Seidel 0 of 10" in found.evidence
    assert verdicts.claim_gs_diverges_less(None).verdict == UNCHECKED


def test_adaptive_verdict():
    adaptive_wins = exit_stats({"prox-gs r=local": {"absolute": 9, "max_iterations": 1},
                                "prox-gs r=local fixed": {"absolute": 5, "divergence": 5},
                                "prox-gs r=global": {"relative": 10},
                                "prox-gs r=global fixed": {"relative": 10}},
                               {"prox-gs r=local": 1e-7, "prox-gs r=local fixed": 1e-3,
                                "prox-gs r=global": 1e-8, "prox-gs r=global fixed": 1e-6})
    found = verdicts.claim_adaptive(adaptive_wins)
    assert found.verdict == REPRODUCED and found.numbers == {"wins": 2, "losses": 0,
                                                             "pairs": 2}
    one_each = exit_stats({"prox-gs r=local": {"absolute": 9, "max_iterations": 1},
                           "prox-gs r=local fixed": {"absolute": 5, "divergence": 5},
                           "prox-gs r=global": {"relative": 5, "divergence": 5},
                           "prox-gs r=global fixed": {"relative": 10}})
    found = verdicts.claim_adaptive(one_each)
    assert found.verdict == NOT_REPRODUCED and "better in 1, worse in 1" in found.evidence
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


def test_time_to_measures_or_extrapolates():
    t = table({"a": curve(100, rate=0.5), "b": curve(100, rate=0.9), "c": np.full(101, 0.3)},
              iterations=100)
    assert verdicts.time_to(t, "a", 1e-6) == (20 * 1e-4, "measured")
    seconds, how = verdicts.time_to(t, "b", 1e-10)  # 0.9^k = 1e-10 at k = 218.5
    assert how == "extrapolated" and seconds == pytest.approx(218.5 * 1e-4, rel=1e-3)
    assert verdicts.time_to(t, "c", 1e-10) is None  # a flat tail gives no rate


def test_subspace_verdict_does_not_count_a_short_pgs_run_as_slow():
    # pgs-sm reaches 1e-10 at iteration 60; pgs stops at 1e-8 after 100 iterations and, at its
    # rate, would reach 1e-10 at iteration 125 (12.5 ms at 0.1 ms per iteration).
    sm = np.ones(101)
    sm[60:] = 1e-14
    pgs_curve = np.geomspace(1.0, 1e-8, 101)
    t = table({"pgs": pgs_curve, "pgs-sm": sm}, iterations=100)
    found = verdicts.claim_subspace({"bowl": t})  # pgs-sm: 6 ms, 2.1x faster
    assert found.verdict == REPRODUCED and "pgs 12.50 ms (extrapolated)" in found.evidence
    t.seconds[t.row("pgs-sm")] *= 1.5  # pgs-sm's iterations cost more: 9 ms, only 1.4x faster
    found = verdicts.claim_subspace({"bowl": t})
    assert found.verdict == NOT_REPRODUCED and "pgs-sm 9.00 ms" in found.evidence
    t.seconds[t.row("pgs-sm")] *= 2.0  # 18 ms: slower than pgs
    found = verdicts.claim_subspace({"bowl": t})
    assert found.verdict == NOT_REPRODUCED and "pgs-sm 18.00 ms" in found.evidence


def test_subspace_verdict():
    fast = {"pgs": curve(100, rate=0.9), "pgs-sm": curve(100, rate=0.5)}
    assert verdicts.claim_subspace({"bowl": table(fast, iterations=100)}).verdict == \
        REPRODUCED
    slow = {"pgs": curve(100, rate=0.5), "pgs-sm": curve(100, rate=0.9)}
    found = verdicts.claim_subspace({"bowl": table(slow, iterations=100)})
    assert found.verdict == NOT_REPRODUCED and "bowl: pgs-sm" in found.evidence
