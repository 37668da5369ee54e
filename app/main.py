"""`marbles`: the desktop program. Options are those of `marbles-bench run` (lab.cli.options) plus
the window's own; they are validated, and the scene built, before the QApplication exists: bad input
is one line on stderr, exit code 2, no window."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

import scenes
from lab.cli import options as cli
from lab.io.files import OutputError, check_folder, check_writable
from lab.io.snapshot import read_state
from lab.report.compare import COMPARE_ITERATIONS
from lab.report.job import SOLVER_BUDGET
from lab.session.session import FRICTION_ON
from lab.session.history import DEFAULT_BUDGET, MIB
from lab.session.side_by_side import MAX_COPIES, parse_copies
from lab.session.spec import SCENE
from solver.methods import registry
from solver.params import Param, ParamError, parse_assignments
from solver.version import VERSION

BENCH_ITERATIONS = COMPARE_ITERATIONS.but(name="benchmark-iterations")
BENCH_BUDGET = SOLVER_BUDGET.but(name="benchmark-budget")
# Without --scene the window opens on the bowl with friction, its marbles on the highest sites
# (the bowl's `pour`): they pour in, roll and come to rest (with friction the warm start is full, lab.session.spec; a rolling resistance of 1% of the
# radius stops the last marble rocking in its hollow, docs/friction.md). The article's
# frictionless bowl is `--scene bowl`, or the friction key. A solver that cannot solve friction
# gets that frictionless bowl. --set values win over these.
WINDOW_FRICTION = {"mu": FRICTION_ON, "mu_wall": FRICTION_ON, "mu_roll": 0.001}
SCENE_HELP = (f"the scene, one of {'|'.join(SCENE.choices)} (default: the {SCENE.default} with "
              f"friction, {', '.join(f'{k}={v:g}' for k, v in WINDOW_FRICTION.items())}, where "
              f"the solver solves friction; --scene {SCENE.default} is the article's "
              "frictionless one)")
HISTORY = Param("history", DEFAULT_BUDGET / MIB, float, "memory for the steps the history keeps, "
                "to go back to with , and . (MiB; 0 keeps none)", lo=0.0,
                hi=1e6)
FRAMES = Param("frames", 120, int, "scripted run: draw N frames with the simulation running, "
               "then close (with --screenshot, save the window first)", lo=1, hi=10**9)


def build_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(
        prog="marbles",
        description="Real-time marble stacking with live solver convergence plots. "
                    "Press F1 in the window for the keys. " + cli.SOLVER_MODULE_HELP + ".")
    parser.add_argument("--version", action="version", version=f"marbles {VERSION}")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile (or load from Numba's cache) the kernels these options "
                             "step first, with a progress bar, and exit without a window "
                             "(install.sh run does it, so that the first window moves at once)")
    cli.add_run_options(parser, speed=True, scene_default=None, scene_help=SCENE_HELP)
    parser.add_argument("--benchmark-out", default=".", metavar="DIR",
                        help="folder for the comparisons (B key, Solve this step, on close: "
                             "benchmark-YYYYmmdd-HHMMSS.npy, .json and .png, each its own) and "
                             "screenshots from the P key, created when first written (default: "
                             "current directory)")
    cli.option(parser, BENCH_ITERATIONS, "N")
    cli.option(parser, BENCH_BUDGET, "S")
    parser.add_argument("--no-benchmark", action="store_true",
                        help="do not run the solver comparison when the window closes")
    parser.add_argument("--screenshot", metavar="FILE",
                        help="scripted run: save the window as FILE (PNG) after --frames frames, "
                             "then exit")
    cli.option(parser, FRAMES, "N", default=None,
               help_text=FRAMES.help_text().replace("(default", "(default with --screenshot"))
    cli.option(parser, HISTORY, "MIB")
    parser.add_argument("--side-by-side", metavar="A,B,...",
                        help=f"solvers side by side: 2 to {MAX_COPIES} copies of the scene from "
                             "the same start, one per solver (name or name:param=value:...), "
                             "overlaid in one colour each; the first is the --solver (the T "
                             "key starts it with the current solver and the next)")
    parser.add_argument("--state", metavar="FILE",
                        help="open a state snapshot (saved with Ctrl+S, or `marbles-bench run "
                             "--save-state`) instead of building the scene; R goes back to it")
    return parser


def check_state_options(args: argparse.Namespace) -> None:
    """With --state the world comes from the file: --scene and scene parameters are refused
    (they would be ignored), and the file is read now, so a bad one is refused before any
    window opens (ParamError / ValueError, one line)."""
    if args.scene is not None:
        raise ParamError(f"--scene {args.scene}: with --state the world comes from {args.state}")
    names = {p.name for p in scenes.get(SCENE.default).params}
    given = [name for name in parse_assignments(args.assignments) if name in names]
    if given:
        raise ParamError(f"--set {given[0]}: a scene parameter, but with --state the world "
                         f"comes from {args.state}")
    read_state(args.state)


def window_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """`args` with the window's default scene when --scene is not given: the bowl poured in
    (pour=1), with the friction of WINDOW_FRICTION under the --set values if the solver solves
    friction."""
    if args.scene is not None:
        return args
    solvers = [args.solver] + [c.method for c in getattr(args, "copies", ())]
    frictional = all(registry.get(name).friction for name in solvers)
    friction = [] if not frictional else [
        f"{name}={value:g}" for name, value in WINDOW_FRICTION.items()]
    return argparse.Namespace(**{**vars(args), "scene": SCENE.default,
                                 "assignments": ["pour=1"] + friction + list(args.assignments)})


def side_by_side_args(args: argparse.Namespace) -> argparse.Namespace:
    """`args` with `copies`, the parsed --side-by-side (lab.session.side_by_side.parse_copies;
    ParamError, one line, when bad), whose first solver becomes --solver."""
    copies = parse_copies(args.side_by_side) if args.side_by_side is not None else ()
    solver = copies[0].method if copies else args.solver
    return argparse.Namespace(**{**vars(args), "copies": copies, "solver": solver})


def options_from(args: argparse.Namespace):
    """Validate everything and build the world; raises ParamError/OutputError (one line)."""
    from .window import Options

    if args.state:
        check_state_options(args)
        args = argparse.Namespace(**{**vars(args), "scene": SCENE.default})
    args = side_by_side_args(args)
    spec = cli.spec_from_args(window_defaults(args))
    for choice in args.copies:  # one line naming the copy that cannot solve the friction
        registry.check_friction(choice.method, scenes.has_friction(spec.scene_params))
    bench_iterations = int(BENCH_ITERATIONS.parse(args.benchmark_iterations))
    bench_budget = float(BENCH_BUDGET.parse(args.benchmark_budget))
    history_bytes = int(float(HISTORY.parse(args.history)) * MIB)
    frames = None if args.frames is None else int(FRAMES.parse(args.frames))
    if args.screenshot:
        check_writable(args.screenshot)
        if Path(args.screenshot).suffix.lower() not in (".png", ".jpg", ".jpeg", ".bmp"):
            raise OutputError(f"--screenshot {args.screenshot!r}: use a .png, .jpg or .bmp name")
        if frames is None:
            frames = FRAMES.default
    out = check_folder(args.benchmark_out, "--benchmark-out")
    world = spec.build_world()  # scene parameters that only the build can check (n too big)
    return Options(spec=spec, benchmark_out=str(out), benchmark_iterations=bench_iterations,
                   benchmark_budget=bench_budget,
                   benchmark_on_close=not args.no_benchmark, screenshot=args.screenshot,
                   frames=frames, show_dialogs=frames is None, history_bytes=history_bytes,
                   world=world, state=args.state,
                   side_by_side=tuple(args.side_by_side.split(",")) if args.copies else ())


def compile_only(args: argparse.Namespace) -> int:
    """--compile-only: compile (or load) the kernels the window would step first, for these
    options, with a bar on stderr; no Qt. install.sh runs it so that the first window moves at
    once."""
    try:
        if args.state:
            check_state_options(args)
            world, spec = read_state(args.state).world, cli.spec_from_args(
                window_defaults(argparse.Namespace(**{**vars(args), "scene": SCENE.default})))
        else:
            spec = cli.spec_from_args(window_defaults(side_by_side_args(args)))
            world = spec.build_world()
    except (ParamError, OutputError, ValueError) as err:
        cli.fail(str(err))
    from lab.report.progress import KernelBar
    from solver.warmup import warmup_for

    solvers = [spec.solver] + [c.method for c in side_by_side_args(args).copies]
    bar = KernelBar(f"marbles: compiling the Numba kernels of {spec.scene}/{spec.solver}")
    seconds = warmup_for(world, dict.fromkeys(solvers), spec.options.threads, kernels=bar)
    bar.finish(seconds)
    return 0


def _set_up_qt():
    """Attributes that must precede the QApplication, then the application itself."""
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtWidgets import QApplication

    # The 3D view renders off screen with a context of its own, so no widget here needs this;
    # it is set (it must be, before the application exists) for any QOpenGLWidget, whose
    # resources survive re-parenting into a floating dock only with shared contexts.
    QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "marbles"])
    app.setApplicationName("marbles")
    from .qt_compat import collect_garbage_in_gui_thread

    app._marbles_gc = collect_garbage_in_gui_thread()  # lives as long as the application
    return app


PROBE_RETRIES, PROBE_RETRY_WAIT = 2, 0.5  # more tries of a refused display, s between them
PROBE_SECONDS = 5.0  # an X server that has not answered by then is taken as not answering
XCB_ERRORS = {1: "no X server answers there, or it refused the connection",
              2: "the X server lacks a required extension", 3: "out of memory",
              5: "not a valid display name", 6: "no such screen on that X server"}
HEADLESS_HINT = ("on a machine without a screen run `xvfb-run -a marbles ...`, or use "
                 "marbles-bench for headless runs")


def _uses_xcb(environ) -> bool:
    """Whether Qt will start its xcb (X11) platform plugin: QT_QPA_PLATFORM names it first, or
    is unset outside a Wayland session."""
    platform = environ.get("QT_QPA_PLATFORM", "").strip()
    if platform:
        return platform.split(";")[0].split(":")[0].strip() == "xcb"
    return not (environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland")


def x_display_error(display: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why X display `display` cannot be opened, or None when it answers (or when libxcb, which
    Qt's xcb plugin needs anyway, is missing: then Qt says it). Connects with libxcb as Qt will,
    in a thread, so that a server that never answers costs `timeout` seconds, not a hang."""
    import ctypes
    import ctypes.util
    import threading

    name = ctypes.util.find_library("xcb")
    if name is None:
        return None
    try:
        xcb = ctypes.CDLL(name)
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    xcb.xcb_connection_has_error.restype = ctypes.c_int
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    result = []

    def probe() -> None:
        connection = xcb.xcb_connect(display.encode(), None)
        result.append(xcb.xcb_connection_has_error(connection))
        xcb.xcb_disconnect(connection)  # also safe on libxcb's static error connection

    thread = threading.Thread(target=probe, name="display probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if not result:
        return f"it did not answer within {timeout:g} s"
    return None if result[0] == 0 else XCB_ERRORS.get(result[0], f"xcb error {result[0]}")


def display_problem(environ=os.environ) -> str | None:
    """Why Qt could not open a window here, or None. Qt aborts the whole process (a core dump,
    no exception) when its platform plugin cannot start, so this is checked first: no display
    at all, or an X display (on the xcb platform) that does not answer. Other platforms
    (offscreen, wayland, ...) are left to Qt."""
    if not sys.platform.startswith("linux"):
        return None
    platform = environ.get("QT_QPA_PLATFORM", "").strip()
    display = environ.get("DISPLAY", "")
    if not platform and not display and not environ.get("WAYLAND_DISPLAY"):
        return f"no display: DISPLAY is not set ({HEADLESS_HINT})"
    if not _uses_xcb(environ):
        return None
    if not display:
        return f"no display: DISPLAY is not set and QT_QPA_PLATFORM is xcb ({HEADLESS_HINT})"
    why = x_display_error(display)
    # A busy X server (a machine under load, many clients starting at once) may refuse one
    # connection and take the next: tried again before the program gives up, so a launch is
    # not refused, or aborted later by Qt's own connection, for a moment's refusal.
    for _ in range(PROBE_RETRIES):
        if why is None:
            break
        time.sleep(PROBE_RETRY_WAIT)
        why = x_display_error(display)
    return None if why is None else f"cannot open display {display} ({why}; {HEADLESS_HINT})"


def main(argv: list[str] | None = None) -> int:
    cli.set_prog("marbles")
    argv = cli.take_solver_modules(sys.argv[1:] if argv is None else list(argv))
    args = build_parser().parse_args(argv)
    if args.compile_only:
        return compile_only(args)
    try:
        options = options_from(args)
    except (ParamError, OutputError) as err:
        cli.fail(str(err))
    except ValueError as err:
        cli.fail(str(err))
    problem = display_problem()
    if problem:
        cli.fail(problem)  # one line, exit code 2, before Qt could abort the process
    if sys.stderr.isatty():
        sys.stderr.write("marbles: the world is built; opening the window\n")

    app = _set_up_qt()
    from PySide6.QtCore import QTimer

    from .window import MainWindow

    window = MainWindow(options)
    window.finished.connect(lambda code: QTimer.singleShot(0, app.quit))
    # Ctrl+C in the terminal closes the window the normal way; the timer lets Python's signal
    # handler run while Qt's event loop is busy in C++.
    signal.signal(signal.SIGINT, lambda *_: window.close())
    tick = QTimer()
    tick.timeout.connect(lambda: None)
    tick.start(200)
    window.show()
    app.exec()
    tick.stop()
    return window.exit_code


if __name__ == "__main__":
    sys.exit(main())
