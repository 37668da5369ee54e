"""lab.report.friction_report: the frictional part as results.json has it, its tables' rows read
off the last snapshot of each scene (the measuring runs in tests/lab/report/test_results.py)."""
from __future__ import annotations

from lab.report import friction_report as fr
from lab.report.tables import friction_rows
from tests.lab.helpers import curve, frun, fsnap


def test_the_json_of_the_frictional_part_has_each_scenes_table_and_every_snapshot():
    assert fr.friction_json(None) is None
    early = fsnap("friction-box", 200, {"pgs": frun(curve(30, rate=0.5))})
    last = fsnap("friction-box", 300, {"pgs": frun(curve(30, rate=0.5)),
                                       "prox-gs": frun(curve(30, rate=0.9), rejected=2)})
    part = fr.FrictionPart(series={"friction-box": [early, last]}, exit_note="Not run.",
                           seconds=1.5)
    data = fr.friction_json(part)
    assert data["seconds"] == 1.5 and data["exit_statuses"] is None
    assert data["exit_note"] == "Not run." and data["verdicts"] == []
    rows = data["scenes"]["friction-box"]
    assert [list(r.values()) for r in rows] == friction_rows(last)
    assert list(rows[0]) == ["run", "status", "after20", "it_1e-6", "ms_1e-6", "it_1e-8",
                             "ms_1e-8", "best", "relaxation_best", "rejected"]
    assert [s["step"] for s in data["series"]["friction-box"]] == [200, 300]
