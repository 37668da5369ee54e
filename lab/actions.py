"""The one action table of the desktop program: each action's keys, its help and what it does.

An action either sends one Session command (lab.session.commands) or names a window action,
which the window (app.window) maps to a method of one of its parts. `ACTIONS` drives the key
handling of the main window (`action_for`, and the window's dispatch is built from it alone),
the on-screen help toggled by F1 (`help_html`, which adds the current solver's declared
parameters), the controls dock's key hints (`keys_of`) and the README's hotkey table
(`markdown_table`; a test checks the README contains exactly its output). Qt-free.

A new key is one row here and, for a window action, one handler in the window's map.

Keys are written the way `QKeySequence` spells them ("Space", "Shift+N", "F1"). Letters with
Shift are distinct keys; Shift on other keys (symbols, arrows) is ignored when matching, so the
table stays independent of the keyboard layout.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from lab.session import commands as cmd
from solver.methods import registry


@dataclass(frozen=True)
class Action:
    """name: the stable name the window dispatches on; keys: QKeySequence texts; help: what it
    does, one line; command: the Session command it sends (lab.session.commands), or None;
    window: else the name of the window action it runs (a method of one of the window's parts)."""

    name: str
    keys: tuple[str, ...]
    help: str
    command: object = None
    window: str | None = None

    def __post_init__(self) -> None:
        if (self.command is None) == (self.window is None):
            raise ValueError(f"action {self.name}: give a command or a window action, not both")

    @property
    def action(self) -> str:
        return self.name


TABLE: tuple[Action, ...] = (
    Action("pause", ("Space",), "pause / resume the simulation",
           cmd.Pause()),
    Action("step", ("S",), "single step (pauses first)",
           cmd.Step()),
    Action("reset", ("R",), "reset the scene (a pause stays; a divergence's pause ends)",
           cmd.Reset()),
    Action("recover", ("X",), "reset with settings that hold the scene: out of a divergence",
           cmd.Recover()),
    Action("next_scene", ("N",), "next scene (friction that `F` turned on or off stays so; "
           "with friction, a solver without it: pgs)",
           cmd.CycleScene(1)),
    Action("prev_scene", ("Shift+N",), "previous scene",
           cmd.CycleScene(-1)),
    Action("next_solver", ("M",), "next solver (method; with friction, those that solve it)",
           cmd.CycleSolver(1)),
    Action("prev_solver", ("Shift+M",), "previous solver (method)",
           cmd.CycleSolver(-1)),
    Action("more_iterations", ("Up",), "more iterations per step (1, 2, 5, 10, 20, 50, ...)",
           cmd.CycleIterations(1)),
    Action("fewer_iterations", ("Down",), "fewer iterations per step",
           cmd.CycleIterations(-1)),
    Action("omega_up", ("Right",), "relaxation up by 0.1 (ω of psor, β of jacobi...)",
           cmd.Relax(0.1)),
    Action("omega_down", ("Left",), "relaxation down by 0.1",
           cmd.Relax(-0.1)),
    Action("warm_start", ("W",), "warm start: off, half, full (of last step's impulses)",
           cmd.CycleWarmStart()),
    Action("friction", ("F",), "friction off / on (μ = 0, or back to the scene's; 0.5 if "
           "it has none), for this scene and the next; a solver without friction switches to "
           "pgs; the warm start follows it unless set; the history restarts",
           cmd.ToggleFriction()),
    Action("colour", ("C",), "colour mode: by marble / speed / contact impulse / slip speed",
           cmd.SetColourMode()),
    Action("network", ("K",), "contact network on / off: every contact a ribbon between the "
           "marbles, width and colour by its normal impulse (force chains)",
           cmd.ToggleNetwork()),
    Action("benchmark", ("B",), "compare every solver on the frozen problem of the step "
           "shown",
           window="benchmark"),
    Action("history_back", (",",), "history: one step back, paused (hold to scrub, or drag "
           "the bar below, which solves the step shown)",
           cmd.HistoryStep(-1)),
    Action("history_forward", (".",), "history: one step forward; S or Space go on from the "
           "step shown, dropping the later steps",
           cmd.HistoryStep(1)),
    Action("side_by_side", ("T",), "solvers side by side on / off: the current solver and the "
           "one used before it (else the next), overlaid in two colours, a residual curve each;"
           " no history then (`--side-by-side pgs,jacobi,...`: up to 4)",
           cmd.ToggleSideBySide()),
    Action("screenshot", ("P",), "save a screenshot (marbles-YYYYmmdd-HHMMSS.png)",
           window="screenshot"),
    Action("save_state", ("Ctrl+S",), "save the state (.npz; `marbles --state FILE` opens it)",
           window="save_state"),
    Action("open_state", ("Ctrl+O",), "open a saved state (R then goes back to it)",
           window="open_state"),
    Action("export_problem", ("Ctrl+E",), "export this step's contact problem (.npz for "
           "`marbles-bench solve --lcp`, .hdf5: `--fclib`)",
           window="export_problem"),
    Action("record", ("Ctrl+R",), "start / stop recording the 3D view to an MP4 "
           "(marbles-YYYYmmdd-HHMMSS.mp4, a video second per simulated second)",
           window="record"),
    Action("camera", ("V",), "reset the camera",
           window="camera"),
    Action("controls", ("D",), "show / hide the controls dock",
           window="controls"),
    Action("readouts", ("H",), "hide / show the readouts over the view (HUD, colour bar, "
           "card, warning)",
           window="readouts"),
    Action("help", ("F1",), "show / hide this help",
           window="help"),
    Action("cancel", ("Esc",), "hide the help; cancel a benchmark (keeps the solvers done)",
           window="cancel"),
    Action("quit", ("Q", "Ctrl+Q"), "quit (runs the benchmark on close unless --no-benchmark "
           "or the scene has friction)",
           window="quit"),
)

NAMES: tuple[str, ...] = tuple(a.name for a in TABLE)
BY_NAME: dict[str, Action] = {a.name: a for a in TABLE}

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
    for h in TABLE:
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


_BY_KEY = {_normalise(k): h.action for h in TABLE for k in h.keys}


def action_for(key: str, ctrl: bool = False, alt: bool = False, shift: bool = False
               ) -> str | None:
    """The action bound to `key` (QKeySequence text of the key alone: "N", "Space", "F1")
    with the given modifiers, or None. Shift only counts on letters."""
    if shift and len(key) != 1 or (len(key) == 1 and not key.isalpha()):
        shift = False
    combo = ("Ctrl+" if ctrl else "") + ("Alt+" if alt else "") + ("Shift+" if shift else "") + key
    return _BY_KEY.get(_normalise(combo))


def keys_text(action: Action) -> str:
    return " / ".join(action.keys)


def keys_of(*names: str) -> str:
    """The keys of the actions `names`, as a hint: keys_of("next_solver", "prev_solver") is
    "M / Shift+M"."""
    return " / ".join(k for name in names for k in BY_NAME[name].keys)


def markdown_table() -> str:
    """The README's hotkey table (Markdown), generated from TABLE."""
    rows = ["| key | action |", "|---|---|"]
    rows += [f"| {' / '.join(f'`{k}`' for k in h.keys)} | {h.help} |" for h in TABLE]
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

    body = "".join(row(keys_text(h), h.help) for h in TABLE)
    body += "".join(row(what, does) for what, does in MOUSE)
    method = registry.METHODS.get(solver) if solver else None
    if method is not None:
        body += (f"<tr><td colspan='2'><br><b>{escape(method.name)}</b>: "
                 f"{escape(method.label)} (marbles-bench list: all parameters)</td></tr>")
        body += "".join(row(f"{p.name} = {p.default_text()}{' ' + p.unit if p.unit else ''}",
                            f"{p.help}; {p.range_text()}") for p in method.all_params)
    return f"<table cellspacing='2'>{body}</table>"


def dispatch(table, send, window_actions: dict) -> dict:
    """Action name -> what its key runs, from the action table alone: an action with a Session
    command sends it (`send`), a window action runs `window_actions[name]`. Every window action
    of the table needs its method and every method its row: the two cannot drift apart."""
    named = {a.window for a in table if a.window is not None}
    if named != set(window_actions):
        raise AssertionError("window actions without a method (or the reverse): "
                             f"{sorted(named ^ set(window_actions))}")
    return {a.name: (lambda c=a.command: send(c)) if a.command is not None
            else window_actions[a.window] for a in table}
