"""The colour modes' numbers against answers found another way: the slip of a marble sliding
down an incline (Coulomb's law in closed form), of a spinning marble on a frictionless floor
(rigid-body kinematics), and the normal impulses of a resting column with friction."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from lab.session.colours import (IMPULSE_SCALE, SLIP_RANGE, contact_slip, heat, marble_colours,
                         marble_maximum, slip_heat)
from lab.session.session import Session
from lab.session.spec import RunSpec

G = 9.81


def stepped(scene: str, steps: int, **assignments) -> Session:
    s = Session(RunSpec.create(scene, "pgs", 20, assignments=assignments))
    s.start()
    for _ in range(steps):
        s.step()
    return s


def test_a_marble_sliding_down_an_incline_slips_at_the_rate_coulomb_gives():
    """tan θ > 7/2 μ: friction μ m g cos θ slows the centre and spins the marble up, so the
    contact point slides faster and faster at g (sin θ − 7/2 μ cos θ); after t it slips at that
    times t. It is the hottest colour; a rolling marble and one at rest slip not at all."""
    steps = 25
    s = stepped("incline", steps, angle=45.0, mu=0.1)
    theta, t = math.radians(45.0), steps * s.world.dt
    slip = contact_slip(s.sim.problem, s.sim.lam, s.world)
    assert slip.shape == (1,)
    assert slip[0] == pytest.approx(G * (math.sin(theta) - 3.5 * 0.1 * math.cos(theta)) * t,
                                    rel=1e-3)
    np.testing.assert_array_equal(marble_colours("slip", s.world, s.sim.problem, s.sim.lam),
                                  heat(np.ones(1)))
    for angle in (20.0, 0.0):  # tan 20° = 0.36 <= 7/2 0.3: rolls; level: rests
        s = stepped("incline", steps, angle=angle, mu=0.3)
        assert contact_slip(s.sim.problem, s.sim.lam, s.world)[0] < 1e-9
        np.testing.assert_array_equal(
            marble_colours("slip", s.world, s.sim.problem, s.sim.lam), heat(np.zeros(1)))


@pytest.mark.parametrize("omega_y, want", [(2.0, 0.8), (10.0, 0.0), (-3.0, 1.3)])
def test_the_slip_of_a_spinning_marble_on_a_frictionless_floor(omega_y, want):
    """Without friction the floor exerts no torque: the marble keeps v = 1 m/s along x and
    ω about y, and its lowest point moves at v + ω × (−r z) = 1 − r ω_y (r = 0.1 m)."""
    s = stepped("pyramid", 1, layers=1, mu=0.0)
    w = s.world
    w.v[0], w.omega[0] = [1.0, 0.0, 0.0], [0.0, omega_y, 0.0]
    s.step()
    assert s.sim.problem.m == 1 and not w.frictional
    assert contact_slip(s.sim.problem, s.sim.lam, w)[0] == pytest.approx(want, abs=1e-12)


def test_each_marble_takes_the_largest_value_of_its_contacts():
    problem = SimpleNamespace(body_a=np.array([-1, 0, 1, 0]), body_b=np.array([0, 1, 2, 2]))
    per_contact = np.array([5.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(marble_maximum(problem, per_contact, 4), [5.0, 3.0, 3.0, 0.0])


def test_slip_heat_is_logarithmic_between_the_ends_of_its_range():
    lo, hi = SLIP_RANGE
    values = slip_heat(np.array([0.0, lo, math.sqrt(lo * hi), hi, 10 * hi]))
    np.testing.assert_allclose(values[:4], [0.0, 0.0, 0.5, 1.0], atol=1e-12)
    assert values[4] > 1.0   # clamped by heat


def test_impulse_colours_take_the_normal_rows_of_a_frictional_problem():
    """A resting column with friction: each marble carries the weight above it and its own,
    so its contacts' normal impulses add up to (2 k + 1) weights per step (k marbles above);
    the tangent rows, zero here, must not be mistaken for contacts."""
    s = Session(RunSpec.create("column", "pgs", 5000, assignments={"mu": 0.5,
                                                                    "abs_tol": 1e-10}))
    s.start()
    s.step()
    p, lam, w = s.sim.problem, s.sim.lam, s.world
    assert p.frictional and lam.size == 3 * p.m
    weight = G * w.dt * w.mass
    above = np.arange(w.n - 1, -1, -1)
    want = (2 * above + 1) * weight
    colours = marble_colours("impulse", w, p, lam)
    np.testing.assert_allclose(colours, heat(want / (IMPULSE_SCALE * weight)), atol=1e-6)


# Machado, Oliveira & Fernandes (2009), severity 1: how protanopes, deuteranopes and
# tritanopes see a colour, as a matrix on linear RGB.
VISIONS = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def cielab(hex_colours, vision) -> np.ndarray:
    """(k, 3) CIELAB (D65) of #rrggbb colours as `vision` sees them."""
    srgb = np.array([[int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)] for h in hex_colours])
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(linear @ VISIONS[vision].T, 0.0, 1.0)
    xyz = linear @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                             [0.0193, 0.1192, 0.9505]]).T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])],
                    axis=1)


def closest_pair(hex_colours, vision) -> float:
    lab = cielab(hex_colours, vision)
    d = np.linalg.norm(lab[:, None] - lab[None], axis=2)
    return float(d[~np.eye(len(hex_colours), dtype=bool)].min())


@pytest.mark.parametrize("vision", sorted(VISIONS))
def test_the_palettes_colours_stay_apart_in_every_vision(vision):
    """One colour per registered solver; every pair of the palette is 25 or more CIELAB units
    apart in normal vision and 15 or more in the three dichromacies, and 45 or more from the
    plots' background (a hue wheel gives pairs such as naive/mprgp and jacobi/pcg colours only
    4.7 apart)."""
    from lab.report.palette import PALETTE, PLOT_BACKGROUND
    from solver.methods.registry import METHODS

    assert len(PALETTE) == len(METHODS) == len(set(PALETTE)) >= 12
    assert closest_pair(PALETTE, vision) >= (25.0 if vision == "normal" else 15.0)
    hue_wheel = ["#ff3737", "#ffaf37", "#d7ff37", "#5fff37", "#37ff87", "#37ffff", "#3787ff",
                 "#5f37ff", "#d737ff", "#ff37af"]  # pyqtgraph.intColor(k, hues=10, ...) before
    assert min(closest_pair(hue_wheel, v) for v in VISIONS) < 5.0
    lab = cielab(PALETTE, vision)
    background = cielab([PLOT_BACKGROUND], vision)[0]
    assert np.linalg.norm(lab - background, axis=1).min() >= 45.0


def test_series_beyond_the_palette_change_their_dash():
    from lab.report.palette import LINE_STYLES, PALETTE, series_style

    styles = [series_style(k) for k in range(2 * len(PALETTE))]
    assert len(set(styles)) == len(styles)
    assert styles[0] == (PALETTE[0], LINE_STYLES[0])
    assert styles[len(PALETTE)] == (PALETTE[0], LINE_STYLES[1])


def test_each_colour_mode_has_the_scale_its_colours_use():
    """The colour bar's ticks sit where heat() puts their values: speed linear in m/s up to
    SPEED_SCALE, impulses in weights per step up to IMPULSE_SCALE, slip log from 1 mm/s."""
    from lab.session.colours import SPEED_SCALE, colour_scale

    assert colour_scale("marble") is None
    speed = colour_scale("speed")
    assert speed.title == "speed (m/s)" and speed.ticks[0] == (0.0, "0")
    assert speed.ticks[-1] == (1.0, f"{SPEED_SCALE:g}")
    impulse = colour_scale("impulse")
    assert impulse.ticks[-1] == (1.0, f"{IMPULSE_SCALE:g}")
    slip = colour_scale("slip")
    assert [text for _, text in slip.ticks] == ["0.001", "0.01", "0.1", "1"]
    positions = [t for t, _ in slip.ticks]
    np.testing.assert_allclose(positions, [0.0, 1 / 3, 2 / 3, 1.0])
    np.testing.assert_allclose(positions, slip_heat(np.array([1e-3, 1e-2, 1e-1, 1.0])))
