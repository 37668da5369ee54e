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


def test_forty_series_get_forty_different_styles():
    from lab.report.palette import PALETTE

    styles = [figures.solver_style(k) for k in range(40)]
    assert len({(s["color"], s["linestyle"]) for s in styles}) == 40
    n = len(PALETTE)
    assert {s["linestyle"] for s in styles[:n]} == {"-"} and styles[n]["linestyle"] == "--"
    assert [s["color"] for s in styles[:n]] == list(PALETTE)


def rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)


def png_image(fig, path) -> np.ndarray:
    """`fig` saved as a PNG at `path`, read back: (rows, cols, 3) RGB, 0-255."""
    from matplotlib.image import imread

    fig.savefig(path, format="png")
    return np.round(imread(path)[..., :3] * 255.0)


def png_pixel(fig, ax, image, x, y) -> tuple[int, int]:
    """(row, column) of the pixel of `image` (fig saved) at data point (x, y) of `ax`."""
    px, py = ax.transData.transform((x, y))
    return image.shape[0] - 1 - int(py), int(px)


def nearest(image, row, col, colour, radius=2) -> float:
    """How far (RGB) the pixel closest to `colour` within `radius` of (row, col) is from it."""
    window = image[row - radius:row + radius + 1, col - radius:col + radius + 1]
    return float(np.linalg.norm(window - rgb(colour), axis=2).min())


def level_table(levels: dict, iterations=40):
    """A table of constant residual curves (name -> m/s): horizontal lines."""
    return table({n: np.full(iterations + 1, v) for n, v in levels.items()},
                 iterations=iterations)


def test_benchmark_png_draws_each_solver_in_its_palette_colour_on_log_axes(tmp_path):
    from lab.report.palette import solver_colours
    from lab.report.palette import PLOT_BACKGROUND
    from solver.methods.registry import METHODS

    names = list(METHODS)
    t = level_table({n: 10.0 ** -k for k, n in enumerate(names)})
    fig = figures.comparison_figure(t)
    image = png_image(fig, tmp_path / "b.png")
    by_it, by_ms = fig.axes[:2]
    assert by_ms.get_xscale() == "log" and by_it.get_yscale() == by_ms.get_yscale() == "log"
    assert by_ms.get_xlim()[0] > 0  # the start, at 0 ms, has no place on it
    colours = solver_colours(names)
    for k, name in enumerate(names):
        for ax, x in ((by_it, 20), (by_ms, 1e3 * t.seconds[k, 20])):
            row, col = png_pixel(fig, ax, image, x, 10.0 ** -k)
            assert nearest(image, row, col, colours[k]) < 12.0, name
            others = [c for c in colours if c != colours[k]]
            assert min(nearest(image, row, col, c, 0) for c in others) > 40.0, name
    row, col = png_pixel(fig, by_it, image, 23, 10.0 ** -0.5)  # between lines and grid
    assert nearest(image, row, col, PLOT_BACKGROUND, 0) < 3.0


def test_coinciding_curves_all_show_in_the_png(tmp_path):
    """pgs, prox-gs and nsgs on one line: each colour makes up a third of it."""
    from lab.report.palette import solver_colours

    group = ["pgs", "prox-gs", "nsgs"]
    t = level_table({"naive": 1.0, "pgs": 1e-2, "prox-gs": 1e-2, "nsgs": 1e-2, "jacobi": 1e-4})
    fig = figures.comparison_figure(t)
    image = png_image(fig, tmp_path / "c.png")
    by_it = fig.axes[0]
    row, left = png_pixel(fig, by_it, image, 2, 1e-2)
    _, right = png_pixel(fig, by_it, image, 38, 1e-2)
    line = image[row, left:right]
    palette = np.array([rgb(c) for c in solver_colours(group)])
    d = np.linalg.norm(line[:, None] - palette[None], axis=2)
    which = np.where(d.min(axis=1) < 30.0, d.argmin(axis=1), -1)
    assert np.mean(which >= 0) > 0.8
    shares = np.bincount(which[which >= 0], minlength=3) / np.sum(which >= 0)
    assert shares.min() > 0.2, shares


def test_the_png_cuts_the_residual_axis_below_a_lone_curve_and_says_so():
    its = np.arange(51)
    t = table({"pgs": np.maximum(0.8 ** its, 1e-4), "apgd": np.maximum(0.7 ** its, 1e-3),
               "pgs-sm": np.maximum(0.5 ** its, 1e-14)})
    fig = figures.comparison_figure(t)
    for ax in fig.axes[:2]:
        low, high = ax.get_ylim()
        assert 1e-6 < low < 1e-5 and 1.0 < high < 2.0
    notes = [text.get_text() for text in fig.texts]
    assert any("pgs-sm reaches 1.0e-14" in note for note in notes), notes
    # With every curve within a decade of another, nothing is cut or noted.
    t = table({"pgs": np.maximum(0.8 ** its, 1e-4), "apgd": np.maximum(0.7 ** its, 1e-3)})
    fig = figures.comparison_figure(t)
    assert fig.axes[0].get_ylim()[0] < 1e-4
    assert not [text for text in fig.texts if "cut" in text.get_text()]
