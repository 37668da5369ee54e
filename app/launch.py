"""The `marbles` command's entry point: says at once, on a terminal, that the program is
starting, before the seconds (a minute on a cold Numba cache and a busy machine) of importing
and building the simulation core that come before the window appears; then runs app.main.
Only the standard library is imported here, so the first line costs nothing."""
from __future__ import annotations

import sys

STARTING = ("marbles: starting: loading the simulation core (a first run compiles Numba "
            "kernels: up to a minute; the window shows the rest)")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if sys.stderr.isatty() and not {"-h", "--help", "--version"} & set(args):
        sys.stderr.write(STARTING + "\n")
        sys.stderr.flush()
    from app.main import main as run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
