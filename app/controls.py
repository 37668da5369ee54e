"""The controls dock, like MuJoCo's `simulate`: run buttons, the speed as a real-time factor,
warm start and damping, the scene and the solver with every parameter they declare, the
stopping tests, and the view's colour mode.

Every parameter row is generated from its declaration (app.params_ui), so a new solver, scene
or friction parameter appears here without GUI code. A change goes to the Session as a typed
command (lab.session.commands), exactly what the keys send; a refusal comes back as the Session's
message in the status bar, and the widget shows the Session's value again with the next
frame. After an edit the keyboard goes back to the 3D view, so the hotkeys keep working.
"""
from __future__ import annotations

import math
from typing import Callable

from . import qt_compat  # noqa: F401  (before any signal is emitted: see its docstring)
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (QAbstractSlider, QAbstractSpinBox, QCheckBox, QComboBox,
                               QFormLayout, QGroupBox, QHBoxLayout, QLabel, QPushButton,
                               QScrollArea, QSlider, QVBoxLayout, QWidget)

import scenes
from lab.actions import keys_of
from lab.session import commands as cmd
from lab.session.colours import COLOUR_MODES
from scenes import FRICTION_NAMES, MATERIAL_NAMES
from lab.session.spec import SIM_PARAMS
from lab.session.state import source_text
from solver.methods import registry
from solver.methods.driver import COMMON_PARAMS
from solver.options import ITERATIONS

from .params_ui import ParamEditor, tooltip

# The speed slider's stops: multiples of real time, 0 = as fast as possible (the last stop).
SPEED_LADDER = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 0.0)
_COMMON = {p.name for p in COMMON_PARAMS}
SIDE_BY_SIDE_OFF = "Side by side with the solver before"
SIDE_BY_SIDE_ON = "End side by side"
MIN_WIDTH = 300  # px: the dock's least width (more when its rows need it: _fit_width)


def speed_text(speed: float) -> str:
    if speed <= 0:
        return "as fast as possible"
    if speed == 1:
        return "1× (real time)"
    return f"{speed:g}×" + (" (slow motion)" if speed < 1 else "")


def speed_stop(speed: float) -> int:
    """The slider stop nearest to `speed` (as fast as possible: the last one)."""
    if speed <= 0:
        return len(SPEED_LADDER) - 1
    steps = SPEED_LADDER[:-1]
    return min(range(len(steps)), key=lambda k: abs(math.log(steps[k] / speed)))


class WheelScrolls(QObject):
    """An event filter for the dock's value widgets: the wheel over one that does not have the
    keyboard focus scrolls the dock instead of changing its value (a notch over `seed` would
    rebuild the scene, one over the scene list switch scenes, where the user means to scroll).
    The widgets take the focus by a click or Tab only (Qt.StrongFocus), not by the wheel."""

    KINDS = (QAbstractSpinBox, QComboBox, QAbstractSlider)

    def guard(self, widget: QWidget) -> None:
        if isinstance(widget, self.KINDS):
            widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.Wheel and not watched.hasFocus():
            event.ignore()  # not for this widget: Qt hands it on to its parents, the scroll area
            return True
        return False


class ControlsPanel(QScrollArea):
    """The dock's content. `send(command)` posts a command to the Session; `done()` is called
    after each edit (the window gives the keyboard back to the view). `show_state(state)`
    shows a lab.session.session.SessionState."""

    def __init__(self, send: Callable[[object], None], done: Callable[[], None]):
        super().__init__()
        self._send = send
        self._done = done
        self.editors: dict[str, ParamEditor] = {}
        self._shown_key: tuple | None = None  # (scene, solver) whose rows are built
        self._state = None
        self.wheel = WheelScrolls(self)
        body = QWidget()
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(4, 4, 4, 4)
        self._run_group()
        self.simulation = self._group("Simulation")
        self.scene_box = self._choice(list(scenes.SCENES), "the scene (N / Shift+N); a new one "
                                      "starts from t = 0", lambda name: cmd.SetScene(name))
        self.scene = self._group("Scene", (("scene", self.scene_box),))
        self.friction = self._group("Friction")
        self.solver_box = self._choice(list(registry.METHODS), "the contact solver ("
                                       f"{keys_of('next_solver', 'prev_solver')}); with "
                                       "friction only those that solve it",
                                       lambda name: cmd.SetSolver(name))
        self.side_by_side_button = self._button(
            SIDE_BY_SIDE_OFF, f"solvers side by side ({keys_of('side_by_side')}): copies of the "
            "world as it is, one "
            "stepped by the current solver and one by the next, overlaid in two colours with a "
            "residual curve each; pressed again, the current solver goes on alone",
            cmd.ToggleSideBySide())
        self.side_by_side_button.setCheckable(True)
        # The copies' labels ("jacobi beta=0.67", up to four) in a label of their own that
        # wraps: in the button's text they would widen the dock past the window.
        self.side_by_side_label = QLabel()
        self.side_by_side_label.setWordWrap(True)
        self.side_by_side_label.hide()
        self.solver = self._group("Solver", (("solver", self.solver_box),
                                             ("", self.side_by_side_button),
                                             ("", self.side_by_side_label)))
        self.stopping = self._group("Stopping tests")
        self.colour_box = self._choice(list(COLOUR_MODES), "what the marbles' colours show "
                                       f"({keys_of('colour')})",
                                       lambda mode: cmd.SetColourMode(mode))
        self.network_box = QCheckBox(f"contact network ({keys_of('network')})")
        self.network_box.setToolTip("every contact a ribbon between the marbles, its width and "
                                    "colour by the normal impulse: the force chains")
        self.network_box.clicked.connect(lambda: self._post(cmd.ToggleNetwork()))
        self.view_group = self._group("View", (("colour by", self.colour_box),
                                               ("", self.network_box)))
        self._layout.addStretch(1)
        self.setWidget(body)
        self.setWidgetResizable(True)
        self.setMinimumWidth(MIN_WIDTH)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    # -------------------------------------------------------------------------- building
    def _group(self, title: str, fixed: tuple[tuple[str, QWidget], ...] = ()) -> QFormLayout:
        """A titled box with `fixed` rows, then a form for generated rows (returned)."""
        box = QGroupBox(title)
        column = QVBoxLayout(box)
        column.setContentsMargins(6, 4, 6, 4)
        forms = []
        for _ in range(2):
            form = QFormLayout()
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            column.addLayout(form)
            forms.append(form)
        for label, widget in fixed:
            if label:
                forms[0].addRow(label, widget)
            else:  # the whole width, not the field column beside an empty label
                forms[0].addRow(widget)
        self._layout.addWidget(box)
        return forms[1]

    def _button(self, text: str, tip: str, command) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys stay with the view
        button.clicked.connect(lambda: self._post(command))
        return button

    def _run_group(self) -> None:
        form = self._group("Run")
        self.pause_button = self._button("Pause", f"pause / resume ({keys_of('pause')})",
                                         cmd.Pause())
        row = QHBoxLayout()
        row.addWidget(self.pause_button)
        row.addWidget(self._button("Step", f"one step, paused ({keys_of('step')})",
                                   cmd.Step()))
        row.addWidget(self._button("Reset", f"the scene from t = 0 ({keys_of('reset')})",
                                   cmd.Reset()))
        form.addRow(row)
        form.addRow(self._button("Stable solver and reset", "pgs from t = 0: out of a "
                                 f"divergence ({keys_of('recover')})", cmd.Recover()))
        self.speed_slider = QSlider(Qt.Orientation.Horizontal)
        self.speed_slider.setRange(0, len(SPEED_LADDER) - 1)
        self.speed_slider.setPageStep(1)
        self.speed_slider.setToolTip("simulated seconds per second of wall time: slow motion "
                                     "down to 0.05×, real time, up to as fast as possible")
        self.speed_label = QLabel()
        self.speed_slider.valueChanged.connect(self._speed_moved)
        self.speed_slider.sliderReleased.connect(self._done)
        self.wheel.guard(self.speed_slider)
        form.addRow("speed", self.speed_slider)
        form.addRow("", self.speed_label)

    def _choice(self, names: list[str], tip: str, command_of) -> QComboBox:
        box = QComboBox()
        box.addItems(names)
        box.setToolTip(tip)
        box.activated.connect(lambda k: self._post(command_of(names[k])))
        self.wheel.guard(box)
        return box

    def _speed_moved(self, stop: int) -> None:
        speed = SPEED_LADDER[stop]
        self.speed_label.setText(speed_text(speed))
        if self._state is None or speed != self._state.speed:
            self._send(cmd.SetSpeed(speed))

    def _post(self, command) -> None:
        self._send(command)
        self._done()

    def _changed(self, name: str, text: str) -> None:
        if name == ITERATIONS.name:
            self._post(cmd.SetIterations(text))
        else:
            self._post(cmd.SetParameter(name, text))

    def _rows(self, form: QFormLayout, params) -> None:
        """Replace `form`'s rows by one editor per parameter."""
        while form.rowCount():
            form.removeRow(0)
        for p in params:
            editor = ParamEditor(p, self._changed)
            self.wheel.guard(editor.widget)
            self.editors[p.name] = editor
            label = QLabel(p.name)
            label.setToolTip(tooltip(p))
            form.addRow(label, editor.widget)

    def _build(self, scene: str, solver: str) -> None:
        """The parameter rows of `scene` and `solver`, from their declarations."""
        self.editors = {}
        scene_params = scenes.get(scene).params
        method = registry.get(solver)
        material = {p.name: p for p in scene_params if p.name in MATERIAL_NAMES}
        self._rows(self.simulation, [*SIM_PARAMS, *(p for p in scene_params
                                                    if p.name == "damping")])
        self._rows(self.scene, [p for p in scene_params if p.name not in MATERIAL_NAMES])
        self._rows(self.friction, [material[name] for name in FRICTION_NAMES if name in material])
        self.solver_box.setToolTip(f"{method.name}: {method.description}")
        self._rows(self.solver, [ITERATIONS, *method.params])
        self._rows(self.stopping, [p for p in method.all_params if p.name in _COMMON])
        self._shown_key = (scene, solver)

    # --------------------------------------------------------------------------- showing
    def _show_source(self, state) -> None:
        """A world from a state file that names no scene is not the scene its parameters
        belong to: the list shows the file and no scene, the scene's own rows are hidden
        (their values are another world's); choosing a scene replaces the file's world."""
        named = state.scene_named
        if not named:
            self.scene_box.blockSignals(True)
            self.scene_box.setCurrentIndex(-1)
            self.scene_box.blockSignals(False)
            self.scene_box.setPlaceholderText(f"{source_text(state)}: {state.marbles} marbles")
        for row in range(self.scene.rowCount()):
            self.scene.setRowVisible(row, named)
    def show_state(self, state) -> None:
        """Show what the Session says (a SessionState), rebuilding the rows when the scene or
        the solver changed."""
        if (state.scene, state.solver) != self._shown_key:
            self._build(state.scene, state.solver)
        self._state = state
        values = {**state.scene_params, **state.solver_params,
                  ITERATIONS.name: state.iterations, "warm_start": state.warm_start,
                  "stabilise": state.stabilise}
        for name, editor in self.editors.items():
            if name in values:
                editor.show(values[name])
        for box, value in ((self.scene_box, state.scene), (self.solver_box, state.solver),
                           (self.colour_box, state.colour_mode)):
            box.blockSignals(True)
            box.setCurrentText(value)
            box.blockSignals(False)
        self._show_source(state)
        frictional = any(value > 0 for value in state.friction)
        model = self.solver_box.model()
        for k in range(model.rowCount()):
            # Choosing one of these would be refused: greyed out while there is friction.
            method = registry.METHODS.get(self.solver_box.itemText(k))
            model.item(k).setEnabled(method is not None and (method.friction or not frictional))
        if not self.speed_slider.isSliderDown():
            self.speed_slider.blockSignals(True)
            self.speed_slider.setValue(speed_stop(state.speed))
            self.speed_slider.blockSignals(False)
            self.speed_label.setText(speed_text(state.speed))
        self.pause_button.setText("Run" if state.paused else "Pause")
        self.network_box.setChecked(state.network)
        self.side_by_side_button.setChecked(bool(state.side_by_side))
        self.side_by_side_button.setText(SIDE_BY_SIDE_ON if state.side_by_side
                                         else SIDE_BY_SIDE_OFF)
        self.side_by_side_label.setText(" | ".join(state.side_by_side))
        self.side_by_side_label.setVisible(bool(state.side_by_side))
        self._fit_width()

    def _fit_width(self) -> None:
        """At least as wide as the rows need: the dock has no horizontal scroll bar, so rows
        wider than its viewport would be cut on the right (a long parameter name, a field)."""
        needed = (self.widget().minimumSizeHint().width()
                  + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth())
        if max(MIN_WIDTH, needed) != self.minimumWidth():
            self.setMinimumWidth(max(MIN_WIDTH, needed))
