"""lab.report.palette: each solver's colour by name, the dashes of coinciding curves, and the
residual range a comparison plot shows."""
import numpy as np
import pytest

from lab.report.palette import (DASH, MARGIN, coincident_groups, residual_range, solver_colours,
                                solver_styles)
from lab.report.palette import PALETTE
from solver.methods.registry import METHODS
from tests.lab.session.test_colours import VISIONS, cielab

NAMES = list(METHODS)


@pytest.mark.parametrize("vision", sorted(VISIONS))
def test_every_registered_solver_has_a_colour_of_its_own(vision):
    colours = solver_colours(NAMES)
    assert len(colours) == len(NAMES) >= 12 and len(set(colours)) == len(colours)
    lab = cielab(colours, vision)
    d = np.linalg.norm(lab[:, None] - lab[None], axis=2)[~np.eye(len(colours), dtype=bool)]
    assert d.min() >= (25.0 if vision == "normal" else 15.0)


def test_a_solvers_colour_is_fixed_by_its_name_whatever_the_table_holds():
    everyone = dict(zip(NAMES, solver_colours(NAMES)))
    assert list(everyone.values()) == list(PALETTE)  # registry order
    picked = ["mprgp", "pgs", "nsgs"]
    assert solver_colours(picked) == [everyone[n] for n in picked]
    assert solver_colours(NAMES[::-1]) == [everyone[n] for n in NAMES[::-1]]
    # Names the registry does not know take colours no solver of the table has.
    mixed = solver_colours(["pgs", "mine", "naive", "theirs"])
    assert mixed[0] == everyone["pgs"] and mixed[2] == everyone["naive"]
    assert mixed[1] == everyone["psor"] and mixed[3] == everyone["jacobi"]


def _on(style, s):
    """Whether a line of `style` is drawn at arc length `s` (line widths)."""
    if style.dashes is None:
        return np.ones_like(s, dtype=bool)
    on, off = style.dashes
    return np.mod(s + style.offset, on + off) < on


def test_coinciding_curves_share_their_line_in_turns():
    """pgs, prox-gs and nsgs make the same iterates on a frictionless problem: the first is
    solid, the other two dashed so that along the curve each of the three is on top for a
    third of every period (a dashed line covers what is under it only where it is on)."""
    base = 0.5 ** np.arange(31)
    other = 0.7 ** np.arange(31)
    shifted = base.copy()
    shifted[1:] *= 1.0 + 1e-6  # close, but not the same iterates
    rows = np.array([base, other, base, shifted, base * (1 + 1e-13)])
    assert coincident_groups(rows) == [(0, 3), (0, 1), (1, 3), (0, 1), (2, 3)]
    styles = solver_styles(["pgs", "jacobi", "prox-gs", "mprgp", "nsgs"], rows)
    assert [s.dashes is None for s in styles] == [True, True, False, True, False]
    group = [styles[0], styles[2], styles[4]]
    s = np.arange(0.0, 60.0, 0.01) + 0.005  # arc length, line widths (midpoints)
    # What shows at s: the last drawn member that is on there (table order = drawing order).
    top = np.zeros(s.size, dtype=int)
    for k, style in enumerate(group):
        top[_on(style, s)] = k
    shares = np.bincount(top, minlength=3) / s.size
    np.testing.assert_allclose(shares, 1 / 3, atol=0.01)
    # ... in parts of DASH line widths each.
    changes = np.flatnonzero(np.diff(top)).size
    assert changes == pytest.approx(60.0 / DASH, abs=1)


def test_a_curve_that_coincides_half_the_time_is_dashed_and_a_broken_one_is_not():
    base = 0.5 ** np.arange(11)
    half = base.copy()
    half[6:] = 1.0  # the same for 5 of 10 iterations
    broken = np.full(11, np.nan)
    assert coincident_groups(np.array([base, half, broken, broken])) == [
        (0, 2), (1, 2), (0, 1), (0, 1)]


def test_the_clipped_range_leaves_out_a_curve_alone_beyond_the_others():
    """pgs-sm at 1e-14 against floors of 1e-4 and 1e-3: the bottom is a decade below 1e-4;
    everything else shows."""
    its = np.arange(51)
    curves = [np.maximum(0.5 ** its, 1e-14), np.maximum(0.8 ** its, 1e-4),
              np.maximum(0.9 ** its, 1e-3)]
    assert residual_range(curves) == pytest.approx((1e-4 / MARGIN, 1.0))
    assert residual_range(curves, clip=False) == pytest.approx((1e-14, 1.0))
    # Two solvers down there: where they still differ, nothing is cut.
    two = curves + [np.maximum(0.4 ** its, 3e-14)]
    assert residual_range(two) == pytest.approx((1e-14, 1.0))
    # Within a decade of the next: no cut either.
    near = [curves[0], np.maximum(0.5 ** its, 5e-14)]
    assert residual_range(near) == pytest.approx((1e-14, 1.0))
    # A diverging solver alone at the top is cut a decade above the next highest.
    diverged = curves + [np.r_[1.0, 10.0 ** np.arange(1, 51)]]
    assert residual_range(diverged) == pytest.approx((1e-5, 10.0))
    assert residual_range(diverged, clip=False) == pytest.approx((1e-14, 1e50))
    # Zeros, NaN and inf are not drawn on a log axis and take no part.
    holes = [np.array([1.0, 0.0, np.nan, 1e-3, np.inf]), np.array([2.0, 1e-2])]
    assert residual_range(holes) == pytest.approx((1e-3, 2.0))


def test_nothing_is_cut_with_one_curve_or_two_that_never_meet():
    assert residual_range([np.array([1.0, 1e-12])]) == (1e-12, 1.0)
    assert residual_range([np.full(5, 1e-10), np.full(5, 1.0)]) == (1e-10, 1.0)
    assert residual_range([np.full(3, np.nan), np.zeros(3)]) is None
    assert residual_range([]) is None
