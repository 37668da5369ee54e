"""lab.report.markdown: RESULTS.md carries the measured numbers and the verdicts, with and without
friction, and the cells of the frictional tables are read off runs whose numbers are known."""
from __future__ import annotations

import numpy as np

from lab.report import markdown as md
from lab.report import verdicts
from lab.report.friction_series import FrictionRun, FrictionSnapshot
from lab.report.friction_verdicts import BLOCKED_PAIRS, Outcome
from tests.lab.helpers import curve, exit_stats, snapshot


def run(residual, seconds=None, status="max_iterations", rejected=None, relaxation=None):
    residual = np.asarray(residual, dtype=np.float64)
    seconds = (np.arange(residual.size) * 1e-3 if seconds is None
               else np.asarray(seconds, dtype=np.float64))
    return FrictionRun(residual, seconds, status, relaxation, rejected)


HEADER = {"command": "x", "date": "d", "machine": "m", "seconds": 1.0, "solvers": ["pgs", "pcg"]}


def test_failed_claims_reach_the_markdown():
    series = {"column": [snapshot("column", 1, {"pgs": curve(50, rate=0.9),
                                                "pcg": curve(50, rate=0.9, solved_at=12)})]}
    found = verdicts.verdicts(series, None)
    text = md.markdown(HEADER, md.FrictionlessPart(found, series=series, exit_note="no prox"))
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
    text = md.markdown(HEADER, md.FrictionlessPart(found, series=series))
    pgs_first = next(v for v in found if v.claim.startswith("After 20"))
    assert pgs_first.verdict == verdicts.PARTLY
    assert f"| After 20 iterations PGS is ahead of CG (the article's bowl and disk) | " \
           f"**partly reproduced** |" in text
    assert f"| bowl | 200 | 7 | {0.9 ** 20:.2e} | {0.8 ** 20:.2e} | {0.8 ** 20:.2e} | no |" in text
    assert f"| bowl | 250 | 7 | {0.8 ** 20:.2e} | {0.9 ** 20:.2e} | {0.9 ** 20:.2e} | yes |" in text
    assert "| disk | 100 |" in text and "Not fully reproduced: After 20 iterations" in text
    assert "bowl: steps 150, 200, 250 (50 iterations per run)" in text


def test_without_a_series_the_snapshot_section_says_so():
    text = md.markdown(HEADER, md.FrictionlessPart(verdicts.verdicts({}, None)))
    assert "### Snapshots" in text and "Not measured" in text


def test_the_relative_test_is_named_as_each_solver_has_it():
    """The exit-status paragraph of RESULTS.md says which relative test applied (split from the
    exit_tolerances test of tests/lab/report/test_exits.py, whose stats these are)."""
    stats = exit_stats({"prox-m r=local": {"absolute": 1}})
    stats.relative = {"prox-m r=local": "iterates"}
    assert "‖Δλ‖∞ ≤ 0.0001 ‖λ‖∞" in md._relative_text(stats)
    stats.relative = {"prox-m r=local": "merit"}
    assert "merit test" in md._relative_text(stats)
    stats.relative = {"prox-m r=local": "merit", "x": "iterates"}
    assert "where the solver has it" in md._relative_text(stats)


def test_the_frictionless_part_alone_says_the_frictional_one_was_not_run():
    text = md.markdown(HEADER, md.FrictionlessPart(verdicts.verdicts({}, None)), None,
                       "frictionless")
    assert "### Claims of the sources, with friction\n\nNot run (`--part frictionless`)." \
        in text
    assert "Frictional snapshots" not in text and "### Snapshots" in text


def test_outcome_cells_say_iterations_best_or_diverged():
    assert md.outcome_cell(Outcome(False, 412, 1e-9)) == "412 it"
    assert md.outcome_cell(Outcome(False, None, 4.7e-5)) == "best 4.70e-05"
    assert md.outcome_cell(Outcome(True, None, np.inf)) == "diverged"


def test_the_blocked_pair_row_says_which_won():
    curve = 10.0 ** -np.arange(12.0)           # reaches 1e-6 at 6
    slower = 10.0 ** (-np.arange(12.0) / 2)    # reaches 1e-6 at 12: not within 11
    snap = FrictionSnapshot("friction-box", "box", 200, 2000, 5000, 1.0, 1.0,
                            {"prox-gs r=blocked": run(curve), "prox-gs": run(slower)})
    rows = md._pair_rows({"friction-box": [snap]}, BLOCKED_PAIRS)
    assert rows == [["friction-box", "200", "prox-gs", "best 3.16e-06", "6 it", "yes"]]


def test_the_profiles_section_gives_the_verdicts_and_times_of_the_numbers():
    from lab.report.friction_report import FrictionPart
    from tests.lab.report.test_profiles import TIMES, given_profiles

    profiles = given_profiles(TIMES, ["pgs", "psor", "apgd"])
    lines = md.profile_lines(profiles, HEADER)
    text = "\n".join(lines)
    assert lines[1] == md.PROFILE_HEADING
    # The verdict follows the numbers: pgs is fastest on 3 of 4, one problem solved by none.
    assert ("- **FCLIB's error 1e-08: fastest on the most problems: `pgs` (3 of 4); solves the "
            "most within the budget: `pgs` (3 of 4); 1 problem solved by none.**") in lines
    assert "![performance profiles](friction-profiles/profile.png)" in lines
    assert "| `psor` | 1 | 2 | 1 | 2 |" in lines  # fastest, solves; at 1e-4 then 1e-8
    assert "| p0 | 10 | 1000 | 2000 | — |" in lines  # ms to 1e-8; —: not within budget
    assert "| p2 | 30 | — | — | — |" in lines and "| p3 | 40 | 500 | — | 1000 |" in lines
    assert [md.ms_cell(t) for t in (0.0123456, 0.000123456, 0.0, None)] == [
        "12.3", "0.123", "0", "—"]
    assert "1 s of solve time (at most 100 iterations)" in text and "`x`" in text
    part = FrictionPart(profiles=profiles)
    assert md.PROFILE_HEADING in md.markdown(HEADER, None, part, "friction")
    assert "Not measured (`--profiles none`)." in md.markdown(HEADER, None, FrictionPart())


def test_the_profiles_section_replaces_its_old_self_and_keeps_the_rest():
    section = ["", md.PROFILE_HEADING, "", "new numbers"]
    old = ("## Results\n\nintro\n\n### friction-box\n\nbox table\n\n" + md.PROFILE_HEADING
           + "\n\nold numbers\nmore old\n\n### How the verdicts are computed\n\nhow\n")
    assert md.splice_section(old, section) == (
        "## Results\n\nintro\n\n### friction-box\n\nbox table\n\n" + md.PROFILE_HEADING
        + "\n\nnew numbers\n\n### How the verdicts are computed\n\nhow\n")
    # None yet: before the method sections, where a whole report puts it; else at the end.
    fresh = "## Results\n\nintro\n\n### How the frictional verdicts are computed\n\nhow\n"
    assert md.splice_section(fresh, section) == (
        "## Results\n\nintro\n\n" + md.PROFILE_HEADING + "\n\nnew numbers\n\n"
        "### How the frictional verdicts are computed\n\nhow\n")
    assert md.splice_section("## Results\n\nintro\n", section) == (
        "## Results\n\nintro\n\n" + md.PROFILE_HEADING + "\n\nnew numbers\n")
    assert md.splice_section(md.splice_section(old, section), section) == md.splice_section(
        old, section)
