"""The window's readouts with real events: a click on a marble outlines it in the drawn image
(around its silhouette, as a numpy ray cast gives it) and its card lists its contacts with the
impulses statics gives; the mass-ratio scene's marble crushed through the floor raises the
warning badge and the status bar's message while the run goes on; H hides the HUD, colour bar,
card and warning, and shows them again."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from scipy.ndimage import distance_transform_edt

from app.view.outline import OUTLINE_COLOUR, OUTLINE_PIXELS
from app.view.picking import ray_spheres
from scenes.seed import RADIUS
from solver.world import marble_mass
from tests.app.test_window import _press, make_window, wait_state  # noqa: F401 (fixture)
from tests.app.test_window_e2e import activate, screen_point

WAIT_MS = 20_000  # for what a few renderings bring, on a busy machine
BGR = np.round(255 * np.array(OUTLINE_COLOUR[2::-1])).astype(int)  # the view's pixels: BGRA


def outline_pixels(view) -> np.ndarray:
    """(h, w) bool: the view's drawn pixels of the outline's colour."""
    return np.abs(view.pixels[..., :3].astype(int) - BGR).max(axis=-1) <= 2


def silhouette(view, centre, radius) -> np.ndarray:
    """(h, w) bool: the pixels whose ray meets the sphere (numpy)."""
    h, w = view.pixels.shape[:2]
    cam = view.camera
    rays = cam.pixel_rays(w, h).reshape(-1, 3)
    return (ray_spheres(cam.eye(), rays, np.asarray(centre)[None], np.array([radius]))[0]
            >= 0).reshape(h, w)


def test_a_clicked_marble_is_outlined_and_its_card_lists_its_contacts(qtbot, make_window):
    window = make_window(scene="column", iterations=500)  # converged: statics' impulses
    activate(qtbot, window)
    view = window.view
    wait_state(qtbot, window, lambda f: f.steps > 20, since=0)
    _press(qtbot, window, "Space")
    f = wait_state(qtbot, window, lambda f: f.state.paused)
    qtbot.waitUntil(view.idle, timeout=WAIT_MS)
    assert not outline_pixels(view).any()
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=screen_point(view, f.x[3]))
    qtbot.waitUntil(lambda: window.readouts.card.isVisible() and outline_pixels(view).any(),
                    timeout=WAIT_MS)
    assert view.picked == 3 and view.devicePixelRatioF() == 1.0
    ring = outline_pixels(view)
    away = distance_transform_edt(~silhouette(view, f.x[3], RADIUS))
    assert (away[ring] <= OUTLINE_PIXELS + 1.5).all()
    band = (away >= 1.5) & (away <= OUTLINE_PIXELS - 0.5)
    assert band.sum() > 50 and ring[band].mean() > 0.97
    # Marble 3 of the resting column of 7: 4 marbles' weight (times dt) from #2 below, 3 from
    # #4 above, the strongest first.
    weight_dt = marble_mass(RADIUS) * 9.81 * f.dt
    rows = [line.split() for line in window.readouts.card.text().splitlines()[6:]]
    assert [r[0] for r in rows] == ["#2", "#4"]
    assert [float(r[1]) / weight_dt for r in rows] == pytest.approx([4.0, 3.0], rel=0.01)
    assert all(float(r[2]) == 0.0 for r in rows)  # frictionless: no tangential impulse
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(3, 3))  # nothing there
    qtbot.waitUntil(lambda: not window.readouts.card.isVisible() and view.picked == -1
                    and view.idle() and not outline_pixels(view).any(), timeout=WAIT_MS)


def test_the_mass_ratio_warning_and_the_key_that_hides_the_readouts(qtbot, make_window):
    window = make_window(scene="mass-ratio")
    activate(qtbot, window)
    f = wait_state(qtbot, window, lambda f: f.state.warning.startswith("PHYSICS ESCAPED"),
                   since=0)
    qtbot.waitUntil(lambda: window.readouts.warning.isVisible()
                    and window.readouts.warning.text().startswith("PHYSICS ESCAPED: 1 marble"),
                    timeout=WAIT_MS)
    assert "PHYSICS ESCAPED: 1 marble outside the container" in window.status_label.text()
    assert "the run goes on" in window.status_label.text()
    badge, hud = window.readouts.warning.geometry(), window.hud.geometry()
    assert badge.top() > hud.bottom() and badge.left() == hud.left()  # under the HUD
    assert badge.right() < window.stack.width()
    # It goes on: not paused, not diverged, and steps on.
    assert not f.state.paused and not f.state.diverged
    wait_state(qtbot, window, lambda g: g.steps > f.steps + 5 and not g.state.paused)
    assert "DIVERGED" not in window.hud.text()

    _press(qtbot, window, "C")  # the colour bar shows
    _press(qtbot, window, "Space")
    g = wait_state(qtbot, window, lambda g: g.state.paused and g.state.colour_mode == "speed")
    qtbot.mouseClick(window.view, Qt.MouseButton.LeftButton,
                     pos=screen_point(window.view, g.x[1]))
    readouts = [window.hud, window.colour_bar, window.readouts.card, window.readouts.warning]
    qtbot.waitUntil(lambda: all(w.isVisible() for w in readouts) and window.view.picked >= 0,
                    timeout=WAIT_MS)
    _press(qtbot, window, "H")
    assert not any(w.isVisible() for w in readouts)
    assert window.view.isVisible() and "readouts hidden" in window.status_label.text()
    _press(qtbot, window, "S")  # a new frame: its card and warning stay hidden
    # The window takes each frame before the test's log does (connected first).
    wait_state(qtbot, window, lambda h: h.steps == g.steps + 1)
    assert not any(w.isVisible() for w in readouts)
    _press(qtbot, window, "H")
    assert all(w.isVisible() for w in readouts)
    assert window.readouts.card.text().startswith(f"marble {window.view.picked}\n")
