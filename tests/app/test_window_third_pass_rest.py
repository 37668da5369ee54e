"""More of what the third pass over the window found, each driven through the real program:
the window's benchmark.json against compare's, friction that N dropped, a state file that names
no scene shown as the last scene, and the convergence plot after a divergence."""
from __future__ import annotations

import json

from PySide6.QtCore import Qt

from lab.cli import bench
from tests.app.conftest import HANG_MS
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_third_pass import activate


def test_the_b_keys_benchmark_json_has_the_keys_of_compares(qtbot, make_window, tmp_path):
    """docs/cli.md promises the window writes compare's files: the same keys, top level and
    settings, with the numbers of the frozen step."""
    window = make_window(scene="column", benchmark_iterations=5)
    activate(qtbot, window)
    _press(qtbot, window, "Space")
    paused = wait_state(qtbot, window, lambda f: f.state.paused)
    with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS):
        _press(qtbot, window, "B")
    mine = json.loads((tmp_path / "benchmark.json").read_text())
    assert bench.main(["compare", "--scene", "column", "--settle", "3", "--iterations", "5",
                       "--solvers", "pgs,jacobi", "--repeats", "1", "--quiet",
                       "--out", str(tmp_path / "compare")]) == 0
    theirs = json.loads((tmp_path / "compare" / "benchmark.json").read_text())
    assert set(mine) == set(theirs)
    assert set(mine["settings"]) == set(theirs["settings"])
    assert mine["n_marbles"] == 7 and mine["contact_count"] == paused.contacts
    assert mine["step"] == paused.steps and mine["wall_seconds"] > 0
    assert mine["time"] == (paused.steps - 1) * paused.dt  # at the start of the frozen step
    assert mine["settings"]["settle_solver"] == "pgs" and "B key" in mine["source"]
