"""The `marbles-bench` program (pyproject's [project.scripts]): Ctrl-C is held (one line, exit
130) before the front end's heavy imports start, then lab.cli.bench runs the command."""
from __future__ import annotations

from .interrupt import finish, hold


def main() -> int:
    hold()
    from .bench import main as bench_main

    return finish(bench_main())
