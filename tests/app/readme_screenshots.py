"""The README's screenshots, made by the program itself:

    xvfb-run -a -s "-screen 0 1920x1080x24" python -m tests.app.readme_screenshots [--out docs]

Opens the window as `marbles` does (the bowl with friction), lets the marbles pour in and
settle, and saves: the whole window (docs/screenshot.png), the controls dock
(screenshot-controls.png), the 3D view with the contact network and a clicked marble's card
(screenshot-network.png), the window showing the step 50 steps back with its history bar
(screenshot-history.png) and, with friction off, the comparison window of the B key
(screenshot-comparison.png); then, in a window of its own, pgs and jacobi side by side on the
frictionless bowl (screenshot-side-by-side.png; `--only side-by-side` makes just that one). Each
PNG is reduced to 256 colours (Pillow), which keeps it a few hundred kilobytes.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

from lab.io.files import atomic_write
from lab.session import commands as cmd

SETTLE_SECONDS = 6.0  # simulated seconds flat out before the first picture
SIDE_SECONDS = 4.0  # simulated seconds of pouring before the side-by-side picture


def wait(app, seconds: float, until=None) -> None:
    """Run the event loop for `seconds` (or until `until()` holds)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end and not (until is not None and until()):
        app.processEvents()
        time.sleep(0.005)


def save(image, path: Path) -> None:
    """A QImage as a 256-colour PNG, written atomically."""
    from PIL import Image

    from app.images import image_bytes

    picture = Image.open(io.BytesIO(image_bytes(image, path))).convert("RGB")
    small = picture.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    small.save(buffer, "PNG", optimize=True)
    atomic_write(path, lambda f: f.write(buffer.getvalue()))
    print(f"{path}: {picture.width}x{picture.height}, {len(buffer.getvalue()) // 1024} KB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.app.readme_screenshots",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs", help="folder of the PNG files (default docs)")
    parser.add_argument("--only", choices=("side-by-side",), help="make just this screenshot")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    from app.main import _set_up_qt

    app = _set_up_qt()
    if args.only is None:
        screenshots(app, out)
    side_by_side(app, out)
    return 0


def screenshots(app, out: Path) -> None:
    """The window, the controls, the contact network and the comparison window."""
    from app.main import build_parser, options_from
    from app.window import MainWindow

    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # the comparison window names its files `bench/benchmark-<time>.npy`
        options = options_from(build_parser().parse_args(
            ["--benchmark-out", "bench", "--no-benchmark", "--speed", "0"]))
        options.show_dialogs = False
        window = MainWindow(options)
        window.resize(1280, 800)
        window.show()
        send = window.sim.send
        wait(app, 600, lambda: window.latest is not None and window.latest.time >= SETTLE_SECONDS)
        send(cmd.SetSpeed(1.0))
        wait(app, 5.0)
        save(window.grab_image(), out / "screenshot.png")
        save(window.controls_dock.grab().toImage(), out / "screenshot-controls.png")
        send(cmd.ToggleNetwork())
        send(cmd.Pick(int(window.latest.x[:, 2].argmin())))  # the lowest marble: the most load
        wait(app, 4.0)
        save(window.stack.grab().toImage(), out / "screenshot-network.png")
        send(cmd.ToggleNetwork())
        send(cmd.Pick(-1))
        send(cmd.HistoryStep(-50))  # the history bar: a step of the past shown, paused
        wait(app, 3.0)
        save(window.grab_image(), out / "screenshot-history.png")
        send(cmd.Pause(False))  # on from there
        send(cmd.ToggleFriction())  # the article's frictionless bowl: every solver compares
        wait(app, 4.0)
        send(cmd.Pause(True))
        wait(app, 0.5)
        window.benchmarks.run()
        wait(app, 900, lambda: bool(window.benchmarks.windows))
        comparison = window.benchmarks.windows[-1]
        comparison.resize(1100, 560)
        wait(app, 2.0)
        save(comparison.grab().toImage(), out / "screenshot-comparison.png")
        window._close_benchmark = "skip"
        window.close()
        wait(app, 10, lambda: window._shut_down)
        os.chdir(out)  # out of the folder before it goes


def side_by_side(app, out: Path) -> None:
    """pgs and jacobi side by side as the marbles pour into the frictionless bowl: the two
    solvers' piles part ways, and jacobi's residual stays orders of magnitude above pgs'."""
    from app.main import build_parser, options_from
    from app.window import MainWindow

    options = options_from(build_parser().parse_args(
        ["--scene", "bowl", "--side-by-side", "pgs,jacobi", "--no-benchmark", "--speed", "0"]))
    options.show_dialogs = False
    window = MainWindow(options)
    window.resize(1280, 800)
    window.show()
    wait(app, 600, lambda: window.latest is not None and window.latest.time >= SIDE_SECONDS)
    window.sim.send(cmd.SetSpeed(1.0))
    wait(app, 5.0)
    save(window.grab_image(), out / "screenshot-side-by-side.png")
    window.close()
    wait(app, 10, lambda: window._shut_down)


if __name__ == "__main__":
    sys.exit(main())
