"""The contact network and a marble's card against a resting column, whose impulses statics
gives: each contact carries the weight of the marbles above it (times dt); with friction the
normal impulses are every third entry of λ and the same. The card's table of contacts also
against a marble rolling or sliding down the incline (friction and slip by Newton's laws)."""
from __future__ import annotations

import numpy as np
import pytest

from lab.session import commands as cmd
from lab.session.colours import IMPULSE_SCALE, heat
from lab.session.network import (CARD_ROWS, CardContact, MarbleCard, WIDTH_RANGE,
                                 contact_network, impulse_unit, marble_card, network_style,
                                 normal_impulses)
from lab.session.session import Session
from lab.session.spec import RunSpec

N = 7  # the column's marbles


def resting_column(**assignments) -> Session:
    s = Session(RunSpec.create("column", "pgs", 500, assignments=assignments))
    s.start()
    for _ in range(200):
        s.step()
    return s


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_a_columns_contacts_carry_the_weight_above_them(mu):
    s = resting_column(mu=mu, mu_wall=mu)
    w, problem = s.world, s.sim.problem
    assert bool(getattr(problem, "frictional", False)) == (mu > 0)
    ends, impulse = contact_network(problem, s.sim.lam, w)
    unit = impulse_unit(w)  # every marble has the same mass
    below = np.where(problem.body_a < 0, -1, problem.body_a)
    above = problem.body_b
    order = np.argsort(above)
    np.testing.assert_allclose(impulse[order] / unit, N - np.arange(N), rtol=1e-6)
    for k in range(problem.m):
        assert np.array_equal(ends[k, 1], w.x[above[k]])
        if below[k] >= 0:
            assert np.array_equal(ends[k, 0], w.x[below[k]])
        else:  # the floor: the contact point under the bottom marble
            assert ends[k, 0][2] == pytest.approx(w.x[above[k], 2] - w.radius[above[k]])


def test_a_marbles_card_sums_its_contacts():
    s = resting_column()
    w = s.world
    bottom = marble_card(w, s.sim.problem, s.sim.lam, 0)
    assert bottom.contacts == 2 and bottom.weights == pytest.approx(N + (N - 1), rel=1e-6)
    assert bottom.impulse == pytest.approx((2 * N - 1) * impulse_unit(w), rel=1e-6)
    top = marble_card(w, s.sim.problem, s.sim.lam, N - 1)
    assert top.contacts == 1 and top.weights == pytest.approx(1.0, rel=1e-6)
    assert top.speed == pytest.approx(np.linalg.norm(w.v[N - 1]))
    assert marble_card(w, s.sim.problem, s.sim.lam, N) is None
    assert "marble 6\n" in top.text() and "1 contacts" in top.text()
    s.apply(cmd.Pick(0))
    assert s.card() == bottom and s.state().picked == 0
    s.apply(cmd.Pick(99))
    assert s.card() is None and s.state().picked == -1


def test_the_ribbons_grow_with_the_impulse():
    s = resting_column()
    unit = impulse_unit(s.world)
    impulse = unit * np.array([0.0, 1.0, IMPULSE_SCALE, 10 * IMPULSE_SCALE])
    width, colour = network_style(impulse, s.world)
    r = s.world.radius.min()
    np.testing.assert_allclose(width[[0, 2, 3]], r * np.array([WIDTH_RANGE[0], WIDTH_RANGE[1],
                                                               WIDTH_RANGE[1]]))
    assert width[0] < width[1] < width[2]
    np.testing.assert_array_equal(colour, heat(np.array([0, 1 / IMPULSE_SCALE, 1, 1])))


def test_no_problem_or_a_foreign_lambda_gives_no_network():
    s = Session(RunSpec.create("column"))
    s.start()
    assert normal_impulses(None, np.zeros(0)).size == 0
    s.step()
    assert normal_impulses(s.sim.problem, np.zeros(3)).size == 0
    ends, width, colour = s.contact_network()
    assert ends.shape == (s.sim.problem.m, 2, 3) == (width.size, 2, 3) == (colour.shape[0], 2, 3)
    assert s.card() is None and not s.state().network
    s.apply(cmd.ToggleNetwork())
    assert s.state().network
    s.apply(cmd.Pick(2))
    assert isinstance(s.card(), MarbleCard) and s.card().index == 2


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_a_cards_table_lists_each_contact_of_the_resting_column(mu):
    """Each marble's rows against statics and the positions the step began from: the contact
    below marble k carries the N - k marbles from k up, the one above N - k - 1 (times weight
    times dt); the gap is the distance of the surfaces before the step (the floor at z = 0);
    nothing slides, so no friction impulse and no slip."""
    s = resting_column(mu=mu, mu_wall=mu)
    before = s.world.x.copy()
    s.step()
    w, unit, r = s.world, impulse_unit(s.world), s.world.radius[0]
    for k in range(N):
        card = marble_card(w, s.sim.problem, s.sim.lam, k)
        rows = {c.other: c for c in card.table}
        below, above = (k - 1 if k else -1), k + 1
        assert set(rows) == {below, above} - {N}
        assert [c.other for c in card.table] == sorted(rows, key=lambda o: o != below)
        assert rows[below].normal == pytest.approx((N - k) * unit, rel=1e-6)
        floor = before[k, 2] - r if k == 0 else np.linalg.norm(before[k] - before[k - 1]) - 2 * r
        assert rows[below].gap == pytest.approx(floor, abs=1e-12)
        if above < N:
            assert rows[above].normal == pytest.approx((N - k - 1) * unit, rel=1e-6)
            gap = np.linalg.norm(before[above] - before[k]) - 2 * r
            assert rows[above].gap == pytest.approx(gap, abs=1e-12)
        for c in card.table:
            assert abs(c.tangential) < 1e-9 * unit and abs(c.slip) < 1e-9
    text = marble_card(w, s.sim.problem, s.sim.lam, 3).text().splitlines()
    assert text[5].split() == ["with", "λn", "N", "s", "|λt|", "N", "s", "gap", "mm", "slip",
                               "m/s"]
    assert [line.split()[0] for line in text[6:]] == ["#2", "#4"]
    assert float(text[6].split()[1]) == pytest.approx(4 * unit, rel=1e-3)


@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_a_cards_friction_and_slip_on_the_incline(mu):
    """One marble on the 20° plane: the normal impulse carries m g cos θ dt; with μ = 0.3 it
    rolls (tan θ < 7 μ / 2), friction carrying 2/7 m g sin θ dt and the contact point at rest;
    without friction it slides without turning, its slip its speed."""
    s = Session(RunSpec.create("incline", "pgs", 500, assignments={"mu": mu}))
    s.start()
    for _ in range(50):
        s.step()
    w = s.world
    theta = np.radians(20.0)
    weight_dt = w.mass[0] * np.linalg.norm(w.gravity) * w.dt
    (row,) = marble_card(w, s.sim.problem, s.sim.lam, 0).table
    assert row.other == -1 and row.normal == pytest.approx(weight_dt * np.cos(theta), rel=1e-3)
    speed = np.linalg.norm(w.v[0])
    assert speed > 1.0
    if mu > 0:
        assert row.tangential == pytest.approx(2 / 7 * weight_dt * np.sin(theta), rel=1e-3)
        assert row.slip < 1e-6
    else:
        assert row.tangential == 0.0 and row.slip == pytest.approx(speed, rel=1e-9)
    assert "wall" in marble_card(w, s.sim.problem, s.sim.lam, 0).text().splitlines()[6]


def test_a_card_lists_at_most_card_rows_contacts():
    table = tuple(CardContact(k, 1.0 / (k + 1), 0.0, 0.0, 0.0) for k in range(CARD_ROWS + 3))
    lines = MarbleCard(20, 0.0, len(table), 1.0, 1.0, table).text().splitlines()
    assert len(lines) == 5 + 1 + CARD_ROWS + 1 and lines[-1] == "… 3 more"
    assert MarbleCard(20, 0.0, 0, 0.0, 0.0).text().count("\n") == 4  # no contacts: no table
