"""The comparison benchmark from the GUI: the B key, on close, the plot window, and
files that are complete or absent even when the program is killed while writing them."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.window import MainWindow
from tests.app.conftest import HANG_MS, window_options
from solver.methods import registry
from lab.io.files import TEMP_PATTERN
from lab.report.compare import NO_STOP

ROOT = Path(__file__).resolve().parents[2]
META_KEYS = {"scene", "step", "time", "contacts", "metric", "settings"}


def benchmark_sets(folder: Path) -> list[Path]:
    """The comparisons written in `folder`, each a path without its suffix (benchmark-<time>),
    in order of their names; each set is whole (its .npy, .json and .png)."""
    stems = sorted({p.with_suffix("") for p in folder.glob("benchmark-*.*")})
    for stem in stems:
        assert all(stem.with_suffix(s).exists() for s in (".npy", ".json", ".png")), stem
    return stems


def load_benchmark(folder: Path, iterations: int) -> tuple[np.ndarray, dict]:
    [stem] = benchmark_sets(folder)
    table = np.load(stem.with_suffix(".npy"), allow_pickle=False)
    meta = json.loads(stem.with_suffix(".json").read_text())
    assert list(table["solver"]) == list(registry.METHODS)  # one row per registered solver
    assert table["residual"].shape == (len(registry.METHODS), iterations + 1)
    assert table["seconds"].shape == table["residual"].shape
    assert META_KEYS <= set(meta)
    return table, meta


@pytest.fixture
def make_window(qtbot, tmp_path):
    made = []

    def make(**kw):
        kw.setdefault("benchmark_out", str(tmp_path))
        kw.setdefault("benchmark_iterations", 30)
        kw.setdefault("show_dialogs", False)
        window = MainWindow(window_options(**kw))
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        qtbot.waitUntil(lambda: window.latest is not None and window.latest.contacts > 0,
                        timeout=HANG_MS)
        return window

    yield make
    for window in made:
        if not window._shut_down:
            window._close_benchmark = "skip"
            window.close()
        for plot in window.benchmarks.windows:
            plot.close()
        assert window.sim.thread.isFinished()


def test_b_key_writes_a_valid_benchmark_and_shows_the_curves(qtbot, make_window, tmp_path):
    window = make_window(scene="bowl", benchmark_on_close=False)
    qtbot.keyClick(window, Qt.Key.Key_Space)  # pause, so the frozen problem stays readable
    qtbot.waitUntil(lambda: window.latest.state.paused, timeout=10000)
    qtbot.wait(100)
    problem = window.sim.worker.session.sim.problem
    with qtbot.waitSignal(window.benchmarkShown, timeout=HANG_MS) as shown:
        qtbot.keyClick(window, Qt.Key.Key_B)
    table, meta = load_benchmark(tmp_path, 30)
    assert meta["scene"] == "bowl" and meta["contacts"] == problem.m
    assert meta["step"] == window.latest.steps
    # Every solver starts from the same impulses (zero), so every curve starts at one value.
    assert np.all(table["residual"][:, 0] == table["residual"][0, 0])
    # The curves are what each solver produces on that problem when run directly.
    for name in ("pgs", "jacobi"):
        settings = registry.settings(name, 30, True, NO_STOP)
        direct = registry.METHODS[name].solve(problem.copy(), np.zeros(problem.m), settings)
        row = list(table["solver"]).index(name)
        np.testing.assert_allclose(table["residual"][row, :direct.trace.size], direct.trace,
                                   rtol=1e-9, atol=1e-15)
    plot = shown.args[0]
    assert plot.isVisible() and set(plot.curves) == set(registry.METHODS)
    assert all(np.isfinite(plot.curves[n][0].getData()[1]).all() for n in plot.curves)
    # The window goes on: benchmark done, the simulation resumes when asked.
    qtbot.keyClick(window, Qt.Key.Key_Space)
    steps = window.latest.steps
    qtbot.waitUntil(lambda: window.latest.steps > steps + 3, timeout=10000)
    assert not list(tmp_path.glob(".mb-*"))  # no temporary file left behind
    [stem] = benchmark_sets(tmp_path)
    assert stem.with_suffix(".png").read_bytes().startswith(b"\x89PNG")  # the same set


def test_close_writes_the_benchmark_then_joins_the_worker(qtbot, make_window, tmp_path):
    window = make_window(scene="column", benchmark_on_close=True)
    window.close()
    assert window.isVisible()  # still open while the comparison runs
    qtbot.waitUntil(lambda: window._shut_down, timeout=HANG_MS)
    assert not window.isVisible() and window.sim.thread.isFinished()
    table, meta = load_benchmark(tmp_path, 30)
    assert meta["scene"] == "column" and "on close" in meta["source"]
    assert window.exit_code == 0


def test_no_benchmark_writes_nothing(qtbot, make_window, tmp_path):
    window = make_window(scene="column", benchmark_on_close=False)
    window.close()
    qtbot.waitUntil(lambda: window._shut_down, timeout=5000)
    assert not any(tmp_path.iterdir())


def _kill_while_writing(folder: Path) -> bool:
    """Run `marbles` with a benchmark on close big enough that writing it takes a while; kill
    it with SIGKILL as soon as the temporary file appears. True if it was seen (mid-write)."""
    cmd = [sys.executable, "-m", "app.main", "--scene", "column", "--frames", "3",
           "--benchmark-out", str(folder), "--benchmark-iterations", "40000"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = False
    deadline = time.monotonic() + 240
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            names = os.listdir(folder)
            if any(TEMP_PATTERN.match(n) for n in names):
                os.kill(proc.pid, signal.SIGKILL)
                seen = True
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stderr.close()
    return seen


def test_killed_mid_write_leaves_complete_files_or_none(tmp_path):
    mid_write = 0
    for attempt in range(3):
        folder = tmp_path / f"run{attempt}"
        folder.mkdir()
        mid_write += _kill_while_writing(folder)
        found = sorted(folder.glob("benchmark-*.json")) or [folder / "benchmark-none.json"]
        npy = found[0].with_suffix(".npy")
        if npy.exists():  # complete: loads without pickle and has every row
            table = np.load(npy, allow_pickle=False)
            assert table["residual"].shape == (len(registry.METHODS), 40001)
        jsn = found[0]
        if jsn.exists():  # the set's index: the other two are there, from the same comparison
            info = json.loads(jsn.read_text())
            assert info["iterations"] == 40000 and jsn.with_suffix(".png").exists()
        if mid_write:
            break
    assert mid_write, "the temporary file was never seen: the kill never hit the write"


def fake_table(solvers=tuple(registry.METHODS), iterations=50):
    """A ComparisonTable of made-up curves: solver k falls by 10^-(k+1)/iteration and takes
    (k + 1)^3 µs per iteration, so the slowest is a thousand times the fastest (as pgs-sm's
    300-1250 ms against the others' few)."""
    from lab.report.compare import ComparisonTable

    k = np.arange(len(solvers))[:, None]
    it = np.arange(iterations + 1)[None, :]
    residual = 10.0 ** (-(k + 1) * it / iterations)
    seconds = 1e-6 * (k + 1) ** 3 * it
    return ComparisonTable(list(solvers), residual, seconds, ["max_iterations"] * len(solvers),
                           {"contacts": 1270, "metric": "natural map"})


def test_the_comparison_reads_on_a_log_time_axis_in_the_palette(qtbot, tmp_path):
    from lab.report.palette import solver_colours
    from lab.report.palette import PLOT_BACKGROUND
    from app.benchmark_window import BenchmarkWindow

    table = fake_table()
    plot = BenchmarkWindow(table, [str(tmp_path / "benchmark.npy")], {"scene": "bowl"})
    qtbot.addWidget(plot)
    plot.show()
    qtbot.waitExposed(plot)
    assert plot.by_time.getAxis("bottom").logMode and plot.by_time.getAxis("left").logMode
    colours = []
    for k, name in enumerate(table.solvers):
        by_iteration, by_time = plot.curves[name]
        assert np.all(by_time.xData > 0)  # t = 0 has no place on a log axis: left out
        assert by_time.xData.size == table.residual.shape[1] - 1
        colours.append((by_time.opts["pen"].color().name(), by_time.opts["pen"].style()))
        assert by_iteration.opts["pen"].color().name() == colours[-1][0]
    # Every solver its own colour, the one its name has (registry order).
    assert [c for c, _ in colours] == solver_colours(list(table.solvers))
    assert len({c for c, _ in colours}) == len(colours) == len(registry.METHODS)
    assert plot.canvas.backgroundBrush().color().name() == PLOT_BACKGROUND
    # Each solver's curve spans its own decades of time, none squashed against the axis.
    box = plot.by_time.getViewBox()
    qtbot.waitUntil(lambda: box.viewRange()[0][1] - box.viewRange()[0][0] > 3.0, timeout=5000)
    legend = plot.legend.sceneBoundingRect()
    assert legend.width() > 100
    for item in (plot.by_iteration, plot.by_time):
        assert not legend.intersects(item.getViewBox().sceneBoundingRect())
    assert {label.text for _, label in plot.legend.items} == set(table.solvers)


def test_save_figure_writes_the_window_atomically_or_says_why(qtbot, tmp_path, monkeypatch):
    from PySide6.QtGui import QImage

    import app.benchmark_window as bw
    from app import dialogs

    plot = bw.BenchmarkWindow(fake_table(), [str(tmp_path / "benchmark.npy")], {"scene": "x"})
    qtbot.addWidget(plot)
    plot.show()
    qtbot.waitExposed(plot)
    asked = []
    monkeypatch.setattr(dialogs, "ask_save_path",
                        lambda parent, caption, start, filters: asked.append(start) or "")
    plot.save_button.click()  # cancelled: nothing written
    assert asked == [str(tmp_path / "benchmark-window.png")] and not list(tmp_path.iterdir())
    monkeypatch.setattr(dialogs, "ask_save_path", lambda *a: str(tmp_path / "fig.png"))
    plot.save_button.click()
    image = QImage(str(tmp_path / "fig.png"))
    assert image.width() >= plot.width() - 2 and plot.status.text().startswith("figure saved")
    assert not plot.save_figure(str(tmp_path / "no" / "fig.png"))
    assert plot.status.text().startswith("figure not saved: ") and "does not exist" in \
        plot.status.text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]


@pytest.fixture
def pointer():
    from tests.app.x_pointer import XPointer

    p = XPointer()
    yield p
    p.close()


def open_window(qtbot, table):
    """A comparison window of `table` at the top left of pytest-xvfb's 800x600 screen."""
    from app.benchmark_window import BenchmarkWindow

    plot = BenchmarkWindow(table, [], {"scene": "bowl"})
    qtbot.addWidget(plot)
    plot.move(0, 0)
    plot.resize(790, 560)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def window_point(plot, item, x, y):
    """Where data point (x, y) (m/s; x in ms on the time plot) of `item` is in `plot`."""
    from PySide6.QtCore import QPointF

    box = item.getViewBox()
    if item is plot.by_time:
        x = np.log10(x)
    scene = box.mapViewToScene(QPointF(float(x), float(np.log10(y))))
    return plot.canvas.viewport().mapTo(plot, plot.canvas.mapFromScene(scene))


def pixels(image, point, radius=2) -> np.ndarray:
    """(k, 3) RGB of the pixels of QImage `image` within `radius` of `point`."""
    return np.array([image.pixelColor(point.x() + dx, point.y() + dy).getRgb()[:3]
                     for dx in range(-radius, radius + 1) for dy in range(-radius, radius + 1)],
                    dtype=float)


def test_the_window_and_benchmark_png_draw_each_solver_in_one_colour(qtbot, tmp_path):
    """Every registered solver a colour of its own, the same on the window's pens, on its
    screen and in benchmark.png (read back from the file); the time axes log in both."""
    from lab.report import figures
    from lab.report.palette import solver_colours
    from tests.lab.report.test_figures import level_table, png_image, png_pixel, rgb

    names = list(registry.METHODS)
    # One level a solver, spread over 13 decades: the residual axis stops near rounding.
    level = {n: 10.0 ** (-13.0 * k / (len(names) - 1)) for k, n in enumerate(names)}
    table = level_table(level)
    plot = open_window(qtbot, table)
    fig = figures.comparison_figure(table)
    png = png_image(fig, tmp_path / "benchmark.png")
    assert plot.by_time.getAxis("bottom").logMode and fig.axes[1].get_xscale() == "log"
    qtbot.wait(50)
    screen = plot.grab().toImage()
    colours = solver_colours(names)
    assert len(set(colours)) == len(names)
    for k, name in enumerate(names):
        pens = {curve.opts["pen"].color().name() for curve in plot.curves[name]}
        assert pens == {colours[k]}, name
        row, col = png_pixel(fig, fig.axes[0], png, 20, level[name])
        in_png = png[row - 2:row + 3, col - 2:col + 3].reshape(-1, 3)
        on_screen = pixels(screen, window_point(plot, plot.by_iteration, 20, level[name]))
        for found in (in_png, on_screen):
            assert np.linalg.norm(found - rgb(colours[k]), axis=1).min() < 12.0, name


def test_coinciding_curves_all_show_in_the_window(qtbot):
    """pgs, prox-gs and nsgs on one line: each colour makes up a good part of it on screen."""
    from lab.report.palette import solver_colours
    from tests.lab.report.test_figures import level_table, rgb

    group = ["pgs", "prox-gs", "nsgs"]
    table = level_table({"naive": 1.0, "pgs": 1e-2, "prox-gs": 1e-2, "nsgs": 1e-2,
                         "jacobi": 1e-4})
    plot = open_window(qtbot, table)
    qtbot.wait(50)
    screen = plot.grab().toImage()
    left = window_point(plot, plot.by_iteration, 2, 1e-2)
    right = window_point(plot, plot.by_iteration, 38, 1e-2)
    palette = np.array([rgb(c) for c in solver_colours(group)])
    # Per column along the line, its pixel (of the rows it straddles) nearest a group colour.
    band = np.array([[screen.pixelColor(x, left.y() + dy).getRgb()[:3] for dy in (-1, 0, 1)]
                     for x in range(left.x(), right.x())], dtype=float)
    d = np.linalg.norm(band[:, :, None] - palette[None, None], axis=3).min(axis=1)
    which = np.where(d.min(axis=1) < 30.0, d.argmin(axis=1), -1)
    assert np.mean(which >= 0) > 0.8
    shares = np.bincount(which[which >= 0], minlength=3) / np.sum(which >= 0)
    assert shares.min() > 0.2, shares


def _entry(plot, name):
    return next((sample, label) for sample, label in plot.legend.items
                if sample.item is plot.curves[name][0])


def _click(pointer, plot, item):
    """A click of the X pointer in the middle of legend item `item` (its line or name)."""
    pointer.click(plot.canvas.viewport(),
                  plot.canvas.mapFromScene(item.sceneBoundingRect().center()))


def test_a_click_on_a_legend_entry_hides_the_solver_everywhere_and_rescales(qtbot, pointer):
    """The last registered solver falls lowest and takes longest (fake_table): hidden, it
    leaves both plots and the residual axis stops a decade below the next lowest, the time axis
    at the next slowest; a click on its name brings it back."""
    table = fake_table(tuple(registry.METHODS)[:15])  # the lowest at 1e-15, above FLOOR
    plot = open_window(qtbot, table)
    last, k = table.solvers[-1], len(table.solvers)
    box_it, box_t = plot.by_iteration.getViewBox(), plot.by_time.getViewBox()
    before = box_it.viewRange()[1], box_t.viewRange()
    assert before[0][0] < -k < 1 - k < before[0][1]  # the last one's 10^-k shows
    sample, label = _entry(plot, last)
    _click(pointer, plot, sample)
    qtbot.waitUntil(lambda: not plot.curves[last][0].isVisible(), timeout=5000)
    assert not any(curve.isVisible() for curve in plot.curves[last])
    assert last not in plot.shown() and len(plot.shown()) == len(table.solvers) - 1
    low, high = box_it.viewRange()[1]
    assert 0.5 - k < low < 1 - k  # the next one's floor, 10^(1-k), now the lowest
    assert box_t.viewRange()[1] == pytest.approx(box_it.viewRange()[1])
    slowest = np.log10(1e3 * table.seconds[-2, -1])  # the next one's last iteration, ms
    assert box_t.viewRange()[0][1] == pytest.approx(slowest, abs=0.2)
    assert box_t.viewRange()[0][1] < before[1][0][1] - 0.05  # ((k-1)/k)^3 of the time: about -0.1
    _click(pointer, plot, label)
    qtbot.waitUntil(lambda: plot.curves[last][1].isVisible(), timeout=5000)
    assert box_it.viewRange()[1] == pytest.approx(before[0])
    assert np.allclose(box_t.viewRange(), before[1])


def test_the_residual_axis_leaves_out_a_lone_curve_until_all_residuals_is_checked(qtbot,
                                                                                  pointer):
    """pgs-sm alone at 1e-14, the others' floors at 1e-4 and 1e-3: the axis ends a decade
    below 1e-4 until "all residuals" shows everything."""
    from tests.lab.helpers import table

    its = np.arange(51)
    plot = open_window(qtbot, table({"pgs": np.maximum(0.8 ** its, 1e-4),
                                     "apgd": np.maximum(0.7 ** its, 1e-3),
                                     "pgs-sm": np.maximum(0.5 ** its, 1e-14)}))
    box = plot.by_iteration.getViewBox()
    low, high = box.viewRange()[1]
    assert -5.3 < low < -5.0 and 0.0 < high < 0.3
    assert plot.by_time.getViewBox().viewRange()[1] == pytest.approx([low, high])
    pointer.click(plot.show_all, plot.show_all.rect().center())
    qtbot.waitUntil(plot.show_all.isChecked, timeout=5000)
    assert box.viewRange()[1][0] < -14.0
    pointer.click(plot.show_all, plot.show_all.rect().center())
    qtbot.waitUntil(lambda: not plot.show_all.isChecked(), timeout=5000)
    assert box.viewRange()[1][0] == pytest.approx(low)


def test_a_solver_with_no_timed_point_leaves_the_time_axis_to_the_others(qtbot):
    """A solver whose every time is 0 or nan (too quick for the clock, or stopped) has no
    point on the log time axis; the window still opens, scaled to the other solvers."""
    from tests.lab.report.test_figures import level_table

    table = level_table({"pgs": 1e-2, "jacobi": 1e-4})
    table.seconds[0, :] = 0.0
    table.seconds[0, 5:] = np.nan
    plot = open_window(qtbot, table)
    assert plot.times_ms["pgs"].size == 0
    (left, right), _ = plot.by_time.viewRange()
    timed = 1e3 * table.seconds[1, 1:]
    assert left <= np.log10(timed.min()) and right >= np.log10(timed.min())
    plot.toggle("jacobi")  # only the untimed one left: the time axis stays as it was
    assert plot.shown() == ["pgs"]
