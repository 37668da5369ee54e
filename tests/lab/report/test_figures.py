"""lab.report.figures: headless PNGs of comparisons and exit statuses, and where the time axis
ends."""
import numpy as np
import pytest

from lab.report import figures
from lab.report.figures import time_axis_end
from tests.lab.helpers import PNG, curve, table


def test_time_axis_ends_after_the_last_useful_progress():
    t = table({"fast": curve(100, rate=0.5), "slow": curve(100, rate=0.5, solved_at=10)},
              iterations=100)
    t.seconds[1] *= 50  # 'slow' reaches its floor at iteration 10 (50 ms) then idles to 500 ms
    # fast: within 2x of its best (1e-14) at iteration 47 (4.7 ms); slow: at 10 (50 ms).
    assert time_axis_end(t) == pytest.approx(1.15 * 50e-3)
    t.seconds[1] /= 50  # both use the whole axis usefully: no cut
    assert time_axis_end(table({"a": curve(100, rate=0.9)}, iterations=100)) is None


def test_time_axis_is_not_cut_when_no_curve_is_finite():
    t = table({"a": np.full(11, np.nan), "b": np.full(11, np.inf)}, iterations=10)
    assert time_axis_end(t) is None


def test_comparison_png_draws_diverged_and_leaves_out_broken_solvers(tmp_path):
    t = table({"ok": curve(30, rate=0.5), "blowup": np.r_[curve(5, rate=2.0), np.full(25, np.inf)],
               "broken": np.full(31, np.nan), "zero": np.zeros(31)}, iterations=30)
    t.status[1], t.status[2] = "divergence", "error"
    path = figures.comparison_png(tmp_path / "c.png", t, "a title")
    assert path == tmp_path / "c.png" and path.read_bytes()[:8] == PNG
    figures.comparison_png(tmp_path / "untitled.png", t)  # the title from the table's meta
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "untitled.png"]


def test_exit_status_png_has_one_panel_per_group(tmp_path):
    counts = {"a r=local": {"absolute": 3, "divergence": 1},
              "a r=local fixed": {"max_iterations": 4}, "b r=local": {"relative": 4}}
    path = figures.exit_status_png(tmp_path / "e.png", counts,
                                   [("adaptive", ["a r=local", "b r=local"]),
                                    ("fixed", ["a r=local fixed"])], "title")
    assert path.read_bytes()[:8] == PNG and [p.name for p in tmp_path.iterdir()] == ["e.png"]


def test_forty_solvers_get_forty_different_styles():
    styles = [figures.solver_style(k) for k in range(40)]
    assert len({(tuple(s["color"]), s["linestyle"]) for s in styles}) == 40
    assert {s["linestyle"] for s in styles[:10]} == {"-"} and styles[10]["linestyle"] == "--"
