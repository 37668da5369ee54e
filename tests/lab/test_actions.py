"""The one action table: unique keys, matching rules, what each action does, and the README
table generated from it."""
from __future__ import annotations

from pathlib import Path

import pytest

from lab.session import commands as cmd

from lab import actions

README = Path(__file__).resolve().parents[2] / "README.md"

REQUIRED = {"pause", "step", "reset", "next_scene", "prev_scene", "next_solver", "prev_solver",
            "more_iterations", "fewer_iterations", "omega_up", "omega_down", "warm_start",
            "colour", "friction", "benchmark", "screenshot", "camera", "help", "quit",
            "recover", "controls", "save_state", "open_state", "export_problem",
            "network", "record", "readouts", "side_by_side", "history_back", "history_forward",
            "cancel"}


def test_table_has_every_required_action_once():
    assert sorted(actions.NAMES) == sorted(REQUIRED)
    keys = [k for h in actions.TABLE for k in h.keys]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("key, mods, action", [
    ("Space", {}, "pause"),
    ("N", {}, "next_scene"),
    ("N", {"shift": True}, "prev_scene"),
    ("M", {"shift": True}, "prev_solver"),
    ("Up", {"shift": True}, "more_iterations"),   # Shift is ignored on non-letters
    ("F1", {}, "help"),
    ("Esc", {}, "cancel"),
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
    assert actions.action_for(key, **mods) == action


def test_every_hotkey_resolves_to_its_action():
    for h in actions.TABLE:
        for key in h.keys:
            parts = key.split("+")
            mods = {m.lower(): True for m in parts[:-1]}
            assert actions.action_for(parts[-1], **mods) == h.action, key


def test_markdown_table_lists_every_key():
    table = actions.markdown_table()
    lines = table.strip().splitlines()
    assert lines[0] == "| key | action |"
    assert len(lines) == 2 + len(actions.TABLE)
    for h, line in zip(actions.TABLE, lines[2:]):
        assert h.help in line and all(f"`{k}`" in line for k in h.keys)


def _block(text: str, header: str) -> str:
    """The Markdown table starting at `header` up to the blank line after it."""
    start = text.index(header)
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end + 1]


def test_readme_contains_exactly_the_generated_tables():
    text = README.read_text(encoding="utf-8")
    assert text.count("| key | action |") == 1
    assert _block(text, "| key | action |") == actions.markdown_table()
    assert _block(text, "| mouse | action |") == actions.mouse_markdown_table()


def test_help_html_mentions_every_key():
    html = actions.help_html()
    for h in actions.TABLE:
        assert actions.keys_text(h) in html


def test_help_html_gives_the_current_solvers_declared_parameters():
    from solver.methods import registry

    html = actions.help_html("psor")
    for p in registry.get("psor").all_params:
        assert f"{p.name} = {p.default_text()}" in html and p.range_text() in html
    assert "gamma" not in html and "gamma" in actions.help_html("prox-gs")


def _readme_keys() -> list[str]:
    """Every key the README's key table lists, as written between backticks in its first column."""
    text = README.read_text(encoding="utf-8")
    rows = _block(text, "| key | action |").splitlines()[2:]
    return [k.strip() for row in rows for k in row.split("|")[1].replace("`", "").split(" / ")]


def test_every_key_the_readme_lists_is_a_row_of_the_table():
    keys = _readme_keys()
    assert len(keys) == sum(len(a.keys) for a in actions.TABLE) and "Ctrl+Q" in keys
    for key in keys:
        *mods, name = key.split("+")
        flags = {m.lower(): True for m in mods}
        action = actions.BY_NAME[actions.action_for(name, **flags)]
        assert key in action.keys


def test_each_action_sends_one_session_command_or_names_one_window_action():
    for a in actions.TABLE:
        assert (a.command is None) != (a.window is None), a.name
        if a.command is not None:
            assert type(a.command).__module__ == cmd.__name__, a.name
    assert actions.BY_NAME["more_iterations"].command == cmd.CycleIterations(1)
    assert actions.BY_NAME["quit"].window == "quit"
    with pytest.raises(ValueError, match="both"):
        actions.Action("x", ("X",), "neither", None, None)
    with pytest.raises(ValueError, match="both"):
        actions.Action("x", ("X",), "both", cmd.Step(), "step")


def test_keys_of_gives_the_dock_its_hints():
    assert actions.keys_of("pause") == "Space"
    assert actions.keys_of("next_solver", "prev_solver") == "M / Shift+M"
    assert actions.keys_of("quit") == "Q / Ctrl+Q"
