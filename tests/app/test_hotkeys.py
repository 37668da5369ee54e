"""The one key map: unique keys, matching rules, and the README table generated from it."""
from __future__ import annotations

from pathlib import Path

import pytest

from app import hotkeys

README = Path(__file__).resolve().parents[2] / "README.md"

REQUIRED = {"pause", "step", "reset", "next_scene", "prev_scene", "next_solver", "prev_solver",
            "more_iterations", "fewer_iterations", "omega_up", "omega_down", "warm_start",
            "colour", "friction", "benchmark", "screenshot", "camera", "help", "quit",
            "recover", "controls", "save_state", "open_state", "export_problem",
            "network", "record", "readouts", "side_by_side", "history_back", "history_forward"}


def test_table_has_every_required_action_once():
    assert sorted(hotkeys.ACTIONS) == sorted(REQUIRED)
    keys = [k for h in hotkeys.HOTKEYS for k in h.keys]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("key, mods, action", [
    ("Space", {}, "pause"),
    ("N", {}, "next_scene"),
    ("N", {"shift": True}, "prev_scene"),
    ("M", {"shift": True}, "prev_solver"),
    ("Up", {"shift": True}, "more_iterations"),   # Shift is ignored on non-letters
    ("F1", {}, "help"),
    ("F", {}, "friction"),
    ("B", {}, "benchmark"),
    (",", {}, "history_back"),
    (".", {"shift": True}, "history_forward"),  # Shift is ignored on symbols
    ("Q", {"ctrl": True}, "quit"),
    ("Q", {}, "quit"),
    ("Z", {}, None),
    ("N", {"ctrl": True}, None),
])
def test_action_for(key, mods, action):
    assert hotkeys.action_for(key, **mods) == action


def test_every_hotkey_resolves_to_its_action():
    for h in hotkeys.HOTKEYS:
        for key in h.keys:
            parts = key.split("+")
            mods = {m.lower(): True for m in parts[:-1]}
            assert hotkeys.action_for(parts[-1], **mods) == h.action, key


def test_markdown_table_lists_every_key():
    table = hotkeys.markdown_table()
    lines = table.strip().splitlines()
    assert lines[0] == "| key | action |"
    assert len(lines) == 2 + len(hotkeys.HOTKEYS)
    for h, line in zip(hotkeys.HOTKEYS, lines[2:]):
        assert h.help in line and all(f"`{k}`" in line for k in h.keys)


def _block(text: str, header: str) -> str:
    """The Markdown table starting at `header` up to the blank line after it."""
    start = text.index(header)
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end + 1]


def test_readme_contains_exactly_the_generated_tables():
    text = README.read_text(encoding="utf-8")
    assert text.count("| key | action |") == 1
    assert _block(text, "| key | action |") == hotkeys.markdown_table()
    assert _block(text, "| mouse | action |") == hotkeys.mouse_markdown_table()


def test_help_html_mentions_every_key():
    html = hotkeys.help_html()
    for h in hotkeys.HOTKEYS:
        assert hotkeys.keys_text(h) in html


def test_help_html_gives_the_current_solvers_declared_parameters():
    from solver.methods import registry

    html = hotkeys.help_html("psor")
    for p in registry.get("psor").all_params:
        assert f"{p.name} = {p.default_text()}" in html and p.range_text() in html
    assert "gamma" not in html and "gamma" in hotkeys.help_html("prox-gs")
