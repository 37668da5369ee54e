"""Axes whose tick labels never overlap: the labels they choose at a given length, on log and
linear scales (the drawn result is checked in test_plots.py)."""
from __future__ import annotations

import math

import pytest

from app.axes import FitAxis, linear_label, log_label


def pixel_gaps(axis, lo, hi, size):
    """Labelled values and the pixel distance between neighbours, at axis length `size`."""
    levels = axis.tickValues(lo, hi, size)
    values = levels[0][1]
    scale = size / (hi - lo)
    return values, [(b - a) * scale for a, b in zip(values, values[1:])]


@pytest.mark.parametrize("lo, hi", [(-16.0, 2.0), (-1.0, 0.0), (-0.3, 0.0), (-4.02, -3.9)])
@pytest.mark.parametrize("size", [40, 80, 160, 400])
def test_log_labels_keep_a_labels_height_apart(qtbot, lo, hi, size):
    axis = FitAxis("left")
    axis.setLogMode(False, True)
    values, gaps = pixel_gaps(axis, lo, hi, size)
    assert all(gap >= axis._extent("1") - 1e-9 for gap in gaps)
    if size >= 80:
        assert len(values) >= 2  # something to read the scale by
    assert all(lo <= v <= hi for v in values)


def test_log_labels_prefer_powers_of_ten_and_thin_them_when_crowded(qtbot):
    axis = FitAxis("left")
    axis.setLogMode(False, True)
    wide, _ = pixel_gaps(axis, -16.5, 2.5, 600)
    assert wide == [float(d) for d in range(-16, 3)]  # every decade
    narrow, _ = pixel_gaps(axis, -16.5, 2.5, 120)
    assert all(v == round(v) for v in narrow) and 2 <= len(narrow) < 10
    assert len({round(b - a) for a, b in zip(narrow, narrow[1:])}) == 1  # evenly thinned
    inside, _ = pixel_gaps(axis, -1.0, 0.0, 300)  # one decade: its multiples too
    assert {log_label(v) for v in inside} >= {"0.2", "0.5"}


def test_a_small_part_of_a_decade_gets_plain_numbers(qtbot):
    axis = FitAxis("left")
    axis.setLogMode(False, True)
    values, _ = pixel_gaps(axis, math.log10(1.26e-4), math.log10(1.78e-4), 80)
    assert len(values) >= 2
    texts = axis.tickStrings(values, 1.0, 1.0)
    assert all(0.0001 <= float(t) <= 0.0002 for t in texts)


@pytest.mark.parametrize("lo, hi", [(-10.2, 0.2), (-0.4, 20.4), (0.0, 2000.0), (0.0, 1e-3)])
@pytest.mark.parametrize("size", [60, 150, 300])
def test_linear_labels_keep_a_labels_width_apart(qtbot, lo, hi, size):
    axis = FitAxis("bottom")
    levels = axis.tickValues(lo, hi, size)
    spacing, values = levels[0]
    texts = axis.tickStrings(values, 1.0, spacing)
    scale = size / (hi - lo)
    widest = max(axis._extent(t) for t in texts)
    assert len(values) == 1 or spacing * scale >= widest
    assert levels[1][0] < 0 and axis.tickStrings(levels[1][1], 1.0, levels[1][0]) == [""] * len(
        levels[1][1])  # minor ticks carry no text


def test_labels_read_plainly():
    assert [log_label(v) for v in (-16.0, -3.0, -2.0, 0.0, 3.0, 4.0)] == [
        "1e-16", "1e-3", "0.01", "1", "1000", "1e4"]
    assert [log_label(math.log10(x)) for x in (0.3, 500.0, 2500.0, 2e4, 5e-5)] == [
        "0.3", "500", "2500", "2e4", "5e-5"]
    assert linear_label(0.0, 0.0002) == "0" and linear_label(-10.0, 5.0) == "-10"
    assert linear_label(0.0004, 0.0002) == "0.0004"
