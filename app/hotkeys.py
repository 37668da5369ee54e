"""The one key map of the desktop program.

`HOTKEYS` drives three things, so they can never disagree: the key handling of the main window
(`action_for`), the on-screen help toggled by F1 (`help_html`, which adds the current solver's
declared parameters) and the README's hotkey table (`markdown_table`; a test checks the README
contains exactly its output). Qt-free.

Keys are written the way `QKeySequence` spells them ("Space", "Shift+N", "F1"). Letters with
Shift are distinct keys; Shift on other keys (symbols, arrows) is ignored when matching, so the
table stays independent of the keyboard layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from solver.methods import registry


@dataclass(frozen=True)
class Hotkey:
    """action: the stable command name the window dispatches on; keys: QKeySequence texts;
    help: what it does, one line."""

    action: str
    keys: tuple[str, ...]
    help: str


HOTKEYS: tuple[Hotkey, ...] = (
    Hotkey("pause", ("Space",), "pause / resume the simulation"),
    Hotkey("step", ("S",), "single step (pauses first)"),
    Hotkey("reset", ("R",), "reset the scene (a pause stays; a divergence's pause ends)"),
    Hotkey("recover", ("X",), "reset with settings that hold the scene: out of a divergence"),
    Hotkey("next_scene", ("N",), "next scene (friction that `F` turned on or off stays so; "
           "with friction on a solver without: pgs)"),
    Hotkey("prev_scene", ("Shift+N",), "previous scene"),
    Hotkey("next_solver", ("M",), "next solver (method; with friction, those that solve it)"),
    Hotkey("prev_solver", ("Shift+M",), "previous solver (method)"),
    Hotkey("more_iterations", ("Up",), "more iterations per step (1, 2, 5, 10, 20, 50, ...)"),
    Hotkey("fewer_iterations", ("Down",), "fewer iterations per step"),
    Hotkey("omega_up", ("Right",), "relaxation up by 0.1 (ω of psor, β of jacobi, ...)"),
    Hotkey("omega_down", ("Left",), "relaxation down by 0.1"),
    Hotkey("warm_start", ("W",), "warm start: off, half, full (of last step's impulses)"),
    Hotkey("friction", ("F",), "friction off / on (μ = 0, or back to the scene's; 0.5 where "
           "it has none), for this scene and the next ones; a solver without friction switches "
           "to pgs"),
    Hotkey("colour", ("C",), "colour mode: by marble / speed / contact impulse / slip speed"),
    Hotkey("network", ("K",), "contact network on / off: every contact a ribbon between the "
           "marbles, width and colour by its normal impulse (force chains); click a marble "
           "for its card"),
    Hotkey("benchmark", ("B",), "compare every solver on the current frozen problem (the "
           "step shown)"),
    Hotkey("history_back", (",",), "history: one step back, paused (hold to scrub; the bar "
           "under the view drags through the steps kept and solves the step shown)"),
    Hotkey("history_forward", (".",), "history: one step forward; S or Space go on from the "
           "step shown, dropping the later steps"),
    Hotkey("side_by_side", ("T",), "solvers side by side on / off: the current solver and the "
           "one used before it (else the next) from the current state, overlaid in two colours, "
           "one residual curve each (`marbles --side-by-side pgs,jacobi,...`: up to 4)"),
    Hotkey("screenshot", ("P",), "save a screenshot (marbles-YYYYmmdd-HHMMSS.png)"),
    Hotkey("save_state", ("Ctrl+S",), "save the state (.npz; `marbles --state FILE` opens it)"),
    Hotkey("open_state", ("Ctrl+O",), "open a saved state (R then goes back to it)"),
    Hotkey("export_problem", ("Ctrl+E",), "export this step's contact problem (.npz for "
           "`marbles-bench solve --lcp`, .hdf5 for `--fclib`)"),
    Hotkey("record", ("Ctrl+R",), "start / stop recording the 3D view to an MP4 "
           "(marbles-YYYYmmdd-HHMMSS.mp4, one second of video per simulated second)"),
    Hotkey("camera", ("V",), "reset the camera"),
    Hotkey("controls", ("D",), "show / hide the controls dock"),
    Hotkey("readouts", ("H",), "hide / show the readouts over the view (HUD, colour bar, "
           "marble card, physics warning)"),
    Hotkey("help", ("F1",), "show / hide this help (Esc hides it too)"),
    Hotkey("quit", ("Q", "Ctrl+Q"), "quit (runs the benchmark on close unless --no-benchmark "
           "or the scene has friction)"),
)

ACTIONS: tuple[str, ...] = tuple(h.action for h in HOTKEYS)

MOUSE: tuple[tuple[str, str], ...] = (
    ("left drag", "orbit the camera"),
    ("right drag (or Shift + left drag)", "pan"),
    ("wheel", "zoom; over the controls dock, scroll it (a field takes the wheel once clicked)"),
    ("Ctrl + left drag on a marble", "pull the marble with a damped spring"),
    ("left click on a marble", "outline it and show its card: its contacts with their normal "
     "and tangential impulses, gap and slip (a click on empty space: none)"),
)


def _check_unique() -> None:
    seen: dict[str, str] = {}
    for h in HOTKEYS:
        for key in h.keys:
            if key in seen:
                raise AssertionError(f"key {key} bound to {seen[key]} and {h.action}")
            seen[key] = h.action


_check_unique()


def _normalise(text: str) -> str:
    """'shift+n' -> 'Shift+N': modifiers in a fixed order, the key as the table writes it."""
    parts = [p for p in text.replace(" ", "").split("+") if p] or ["+"]
    key = parts[-1]
    mods = {p.lower() for p in parts[:-1]}
    key = key.upper() if len(key) == 1 else key[:1].upper() + key[1:]
    prefix = "".join(m for m, name in (("Ctrl+", "ctrl"), ("Alt+", "alt"), ("Shift+", "shift"))
                     if name in mods)
    return prefix + key


_BY_KEY = {_normalise(k): h.action for h in HOTKEYS for k in h.keys}


def action_for(key: str, ctrl: bool = False, alt: bool = False, shift: bool = False
               ) -> str | None:
    """The action bound to `key` (QKeySequence text of the key alone: "N", "Space", "F1")
    with the given modifiers, or None. Shift only counts on letters."""
    if shift and len(key) != 1 or (len(key) == 1 and not key.isalpha()):
        shift = False
    combo = ("Ctrl+" if ctrl else "") + ("Alt+" if alt else "") + ("Shift+" if shift else "") + key
    return _BY_KEY.get(_normalise(combo))


def keys_text(hotkey: Hotkey) -> str:
    return " / ".join(hotkey.keys)


def markdown_table() -> str:
    """The README's hotkey table (Markdown), generated from HOTKEYS."""
    rows = ["| key | action |", "|---|---|"]
    rows += [f"| {' / '.join(f'`{k}`' for k in h.keys)} | {h.help} |" for h in HOTKEYS]
    return "\n".join(rows) + "\n"


def mouse_markdown_table() -> str:
    rows = ["| mouse | action |", "|---|---|"]
    rows += [f"| {what} | {does} |" for what, does in MOUSE]
    return "\n".join(rows) + "\n"


def help_html(solver: str | None = None) -> str:
    """The F1 overlay: keys and mouse controls, then the parameters of `solver` (from their
    declarations), as an HTML table."""
    def row(a: str, b: str) -> str:
        return f"<tr><td><b>{escape(a)}</b>&nbsp;&nbsp;</td><td>{escape(b)}</td></tr>"

    body = "".join(row(keys_text(h), h.help) for h in HOTKEYS)
    body += "".join(row(what, does) for what, does in MOUSE)
    method = registry.METHODS.get(solver) if solver else None
    if method is not None:
        body += (f"<tr><td colspan='2'><br><b>{escape(method.name)}</b>: "
                 f"{escape(method.label)} (marbles-bench list: all parameters)</td></tr>")
        body += "".join(row(f"{p.name} = {p.default_text()}{' ' + p.unit if p.unit else ''}",
                            f"{p.help}; {p.range_text()}") for p in method.all_params)
    return f"<table cellspacing='2'>{body}</table>"
